"""Records generated at a version of a registry, for exercising its steps.

The version's schema is crawled within the registry as it would be published, its `$ref`s are
inlined (recursive ones cut after a few levels), and the composer turns the ref-free schema into
a Hypothesis strategy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urldefrag, urljoin

from evalreg.errors import EvalregError
from evalreg.publish.check.compose import VALIDATION_KEYWORDS, Composer

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy
    from referencing._core import Resolver

    from evalreg.engine.registry import Registry


_GENERATION_BASE = "https://generate.evalreg.invalid/"


class GenerationError(EvalregError):
    """Records valid at a schema cannot be generated (an unsupported or contradictory schema)."""

    def __init__(self, path: str, family: str, version: str, message: str) -> None:
        self.path = path
        self.family = family
        self.version = version
        self.detail = message
        super().__init__(f"{path}: {family} {version}: {message}")


_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "dependentSchemas"})
_SCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems", "items"})
_SCHEMA_VALUES = frozenset(
    {
        "additionalProperties",
        "additionalItems",
        "contains",
        "propertyNames",
        "not",
        "if",
        "then",
        "else",
        "items",
        "unevaluatedItems",
        "unevaluatedProperties",
    }
)
_RECURSION_LIMIT = 2


class _Inliner:
    """Replace every `$ref` by the schema it points to, cutting recursion after a few levels.

    Where a recursive `$ref` is cut, the schema becomes `false`: generation then leaves out
    the optional value, or the empty array, that would have recursed further.
    """

    def __init__(self, resolver: Resolver[Any]) -> None:
        self.resolver = resolver

    def schema(self, node: Any, base: str, stack: tuple[str, ...]) -> Any:
        if not isinstance(node, dict):
            return node
        if isinstance(node.get("$id"), str):
            base = urljoin(base, node["$id"])
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in ("$defs", "definitions", "$id", "$ref"):
                continue
            if key in _SCHEMA_MAPS and isinstance(value, dict):
                out[key] = {k: self.schema(v, base, stack) for k, v in value.items()}
            elif key == "dependencies" and isinstance(value, dict):
                out[key] = {
                    k: v if isinstance(v, list) else self.schema(v, base, stack)
                    for k, v in value.items()
                }
            elif key in _SCHEMA_LISTS and isinstance(value, list):
                out[key] = [self.schema(v, base, stack) for v in value]
            elif key in _SCHEMA_VALUES:
                out[key] = self.schema(value, base, stack)
            else:
                out[key] = value
        ref = node.get("$ref")
        if not isinstance(ref, str):
            return out
        target = urljoin(base, ref)
        if stack.count(target) >= _RECURSION_LIMIT:
            return False
        resolved = self.resolver.lookup(target)
        inlined = self.schema(resolved.contents, urldefrag(target).url, (*stack, target))
        if not any(k in VALIDATION_KEYWORDS for k in out):
            return inlined
        return {"allOf": [out, inlined]}


def record_strategy(registry: Registry, family: str, version: str) -> SearchStrategy[Any]:
    """Return a Hypothesis strategy for records of a version (most of them valid at it).

    Built on hypothesis-jsonschema; `$ref`s are resolved within the registry first, and
    recursive ones are followed a couple of levels deep. Callers should still validate each
    record: a few may not be valid.

    Raises:
        UnknownFamilyError, UnknownVersionError: the family or version is unknown.
        GenerationError: the schema cannot be turned into a strategy.
    """
    from hypothesis_jsonschema._canonicalise import canonicalish

    from evalreg.publish.site import published_registry, published_url

    entry = registry.entry(family, version)
    documents = published_registry(registry, base_url=_GENERATION_BASE).crawl()
    uri = published_url(_GENERATION_BASE, family, entry.version)
    try:
        resolver = documents.resolver(base_uri=uri)
        root = resolver.lookup(uri).contents
        inlined = _Inliner(resolver).schema(root, uri, (uri,))
        return Composer().compose(canonicalish(inlined))
    except RecursionError:
        where = (str(entry.path), family, entry.version)
        raise GenerationError(*where, "the schema nests too deeply") from None
    except Exception as err:  # hypothesis-jsonschema reports unsupported schemas in many ways
        where = (str(entry.path), family, entry.version)
        raise GenerationError(*where, f"{type(err).__name__}: {err}") from err
