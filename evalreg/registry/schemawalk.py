"""Walking a schema document as JSON Schema: its dialect, subschemas, references and patterns.

A schema is walked by its keywords: `properties`, `items`, `allOf`, `$defs` ... lead to
subschemas, while the values of `enum`, `const`, `default`, `examples` and of any keyword
JSON Schema does not define are data, never searched for references. `check_document` refuses,
with one line naming the file and the JSON pointer, what evalreg cannot use safely: an unknown
`$schema` dialect, a `$ref` or `$dynamicRef` that is not a string, a subschema that is not an
object or a boolean, nesting deeper than `MAX_SCHEMA_DEPTH`, and a `pattern` (or a
`patternProperties` name) that RE2 cannot compile: one that needs a backtracking engine
(lookaround, a backreference) or is longer than 1,000 characters. evalreg matches the others in
linear time (`evalreg.regex`), and so does jsonschema-rs, whose regex engine RE2's syntax fits.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin

from evalreg.errors import RegistryError
from evalreg.io.pointer import split, to_pointer
from evalreg.registry.patterns import refusal, shown

MAX_SCHEMA_DEPTH = 200
"""The deepest nesting of objects and arrays a schema document may have."""

DIALECTS = {
    "http://json-schema.org/draft-04/schema": "draft-04",
    "http://json-schema.org/draft-06/schema": "draft-06",
    "http://json-schema.org/draft-07/schema": "draft-07",
    "https://json-schema.org/draft/2019-09/schema": "2019-09",
    "https://json-schema.org/draft/2020-12/schema": "2020-12",
}
"""The `$schema` URIs evalreg validates with (a trailing `#` is allowed)."""
DEFAULT_DIALECT = "2020-12"

_ONE = frozenset(
    {
        "additionalItems",
        "additionalProperties",
        "contains",
        "contentSchema",
        "else",
        "if",
        "not",
        "propertyNames",
        "then",
        "unevaluatedItems",
        "unevaluatedProperties",
    }
)
_LIST = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_MAP = frozenset({"$defs", "definitions", "dependentSchemas", "patternProperties", "properties"})
REF_KEYWORDS = ("$ref", "$dynamicRef", "$recursiveRef")


@dataclass(frozen=True)
class Ref:
    """One reference of a schema: where it is, what it says, and the base it resolves against."""

    pointer: str
    keyword: str
    ref: str
    base: str


@dataclass(frozen=True)
class SchemaPattern:
    """A regular expression of a schema (`pattern`, or a name in `patternProperties`)."""

    pointer: str
    pattern: str


def dialect_of(value: Any) -> str | None:
    """Return the dialect a `$schema` value names, or None when evalreg does not know it."""
    if not isinstance(value, str):
        return None
    return DIALECTS.get(value[:-1] if value.endswith("#") else value)


def _fail(path: str, tokens: tuple[str | int, ...], message: str) -> RegistryError:
    return RegistryError(path, f"{to_pointer(tokens) or '/'}: {message}")


def _check_depth(document: Any, path: str) -> None:
    """Refuse a document nested deeper than `MAX_SCHEMA_DEPTH` (without recursion)."""
    stack: list[tuple[Any, int]] = [(document, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_SCHEMA_DEPTH:
            raise RegistryError(path, f"nested deeper than {MAX_SCHEMA_DEPTH} levels")
        if isinstance(node, dict):
            stack.extend((value, depth + 1) for value in node.values())
        elif isinstance(node, list):
            stack.extend((value, depth + 1) for value in node)


def _subschemas(
    node: Mapping[str, Any], tokens: tuple[str | int, ...], path: str
) -> Iterator[tuple[Any, tuple[str | int, ...]]]:
    """Yield every subschema of a schema object with its path, refusing malformed ones."""
    for key, value in node.items():
        here = (*tokens, key)
        if key in _ONE or (key == "items" and not isinstance(value, list)):
            yield value, here
        elif key in _LIST or key == "items":
            if not isinstance(value, list):
                raise _fail(path, here, "must be a list of schemas")
            yield from ((item, (*here, index)) for index, item in enumerate(value))
        elif key in _MAP or (key == "dependencies" and isinstance(value, dict)):
            if not isinstance(value, dict):
                raise _fail(path, here, "must be an object of schemas")
            for name, item in value.items():
                if key == "dependencies" and isinstance(item, list):
                    continue  # property dependencies: a list of names, not a schema
                yield item, (*here, name)


def walk(document: Any, path: str, base: str) -> Iterator[tuple[str, Any]]:
    """Yield `("ref", Ref)` and `("pattern", SchemaPattern)` items of a schema document.

    Raises:
        RegistryError: the document is nested too deeply, names an unknown dialect, or has a
            malformed subschema or reference; the message names `path` and the JSON pointer.
    """
    _check_depth(document, path)
    stack: list[tuple[Any, tuple[str | int, ...], str, str]] = [
        (document, (), DEFAULT_DIALECT, base)
    ]
    while stack:
        node, tokens, dialect, base = stack.pop()
        if isinstance(node, bool):
            continue
        if not isinstance(node, dict):
            raise _fail(path, tokens, "not a schema (expected an object or a boolean)")
        if "$schema" in node:
            found = dialect_of(node["$schema"])
            if found is None:
                known = ", ".join(DIALECTS)
                raise _fail(
                    path,
                    (*tokens, "$schema"),
                    f"unknown dialect {_shown(node['$schema'])} (known: {known})",
                )
            dialect = found
        ident = node.get("id" if dialect == "draft-04" else "$id")
        if isinstance(ident, str) and not ident.startswith("#"):
            base = urljoin(base, ident)
        for keyword in REF_KEYWORDS:
            if keyword in node:
                ref = node[keyword]
                if not isinstance(ref, str):
                    raise _fail(path, (*tokens, keyword), f"{keyword} must be a string")
                yield "ref", Ref(to_pointer((*tokens, keyword)), keyword, ref, base)
        if isinstance(node.get("pattern"), str):
            yield "pattern", SchemaPattern(to_pointer((*tokens, "pattern")), node["pattern"])
        if isinstance(node.get("patternProperties"), dict):
            for name in node["patternProperties"]:
                pointer = to_pointer((*tokens, "patternProperties", name))
                yield "pattern", SchemaPattern(pointer, name)
        children = list(_subschemas(node, tokens, path))
        stack.extend((child, here, dialect, base) for child, here in reversed(children))


def _shown(value: Any) -> str:
    return shown(value) if isinstance(value, str) else shown(repr(value))


def check_document(document: Any, path: str, base: str) -> list[Ref]:
    """Check a schema document and return its references.

    Raises:
        RegistryError: see `walk`; or a pattern RE2 cannot compile (`evalreg.regex.refusal`).
    """
    refs: list[Ref] = []
    for kind, item in walk(document, path, base):
        if isinstance(item, Ref):
            refs.append(item)
        elif kind == "pattern" and isinstance(item, SchemaPattern):
            reason = refusal(item.pattern)
            if reason is not None:
                raise RegistryError(
                    path, f"{item.pointer}: pattern {shown(item.pattern)} is refused: {reason}"
                )
    return refs


def patterns(document: Any, path: str, base: str) -> list[SchemaPattern]:
    """Return every regular expression of a schema document (see `walk` for what it raises)."""
    return [item for _, item in walk(document, path, base) if isinstance(item, SchemaPattern)]


def schema_at(schema: Mapping[str, Any], pattern: str) -> dict[str, Any] | None:
    """Return the subschema of `schema` that governs the values at `pattern`, refs included.

    The subschema comes with the `definitions` / `$defs` of `schema`, so its local `$ref`s
    still resolve. None where the way is not plain: a `$ref` that leaves the document, or a
    combinator (`allOf`, `anyOf`, `oneOf`, `if`/`then`/`else`, `not`) on the way whose branches
    say something of the next step (so the step's own declaration is not all that governs it).
    """
    node: Any = schema
    for token in split(pattern):
        node = _local(schema, node)
        if not isinstance(node, Mapping) or _branches_mention(schema, node, token):
            return None
        properties = node.get("properties")
        if isinstance(properties, Mapping) and token in properties:
            node = properties[token]
        elif token == "*" and isinstance(node.get("items"), Mapping):
            node = node["items"]
        elif token == "*" and isinstance(node.get("additionalProperties"), Mapping):
            node = node["additionalProperties"]
        else:
            return None
    node = _local(schema, node)
    if not isinstance(node, Mapping):
        return None
    found = dict(node)
    for keyword in ("definitions", "$defs"):
        if keyword in schema and keyword not in found:
            found[keyword] = schema[keyword]
    return found


_COMBINATORS = ("allOf", "anyOf", "oneOf", "if", "then", "else", "not")
_MEMBER_KEYWORDS = ("patternProperties", "additionalProperties", "items", "dependentSchemas")


def _branches_mention(
    schema: Mapping[str, Any], node: Mapping[str, Any], token: str, depth: int = 0
) -> bool:
    """Tell whether a combinator of `node` constrains its member (or item) `token`."""
    if depth > 16:
        return True  # nested past reading: say it may
    branches: list[Any] = []
    for keyword in _COMBINATORS:
        value = node.get(keyword)
        branches += value if isinstance(value, list) else [value] if value is not None else []
    for branch in branches:
        branch = _local(schema, branch)
        if not isinstance(branch, Mapping):
            if branch is None or branch is False:
                return True  # a branch we cannot read, or that refuses everything
            continue
        properties = branch.get("properties")
        if isinstance(properties, Mapping) and (token in properties or token == "*"):
            return True
        if any(key in branch for key in _MEMBER_KEYWORDS) or _branches_mention(
            schema, branch, token, depth + 1
        ):
            return True
    return False


def _local(schema: Mapping[str, Any], node: Any) -> Any:
    """Follow a local `$ref` (`#/...`) from `node`, a few times at most; None if it leaves."""
    for _ in range(16):
        if not isinstance(node, Mapping) or "$ref" not in node:
            return node
        ref = node["$ref"]
        if not isinstance(ref, str) or not ref.startswith("#"):
            return None
        target: Any = schema
        for token in split(ref[1:]):
            target = target.get(token) if isinstance(target, Mapping) else None
        node = target
    return None
