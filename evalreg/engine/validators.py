"""Compiled validators: every problem of a record against one schema, located by a JSON pointer.

Two validators back each schema: a compiled `jsonschema-rs` validator answers "is it valid?"
quickly, and the reference `jsonschema` implementation explains invalid records (the most
relevant problem first). Where the two disagree, the reference implementation wins. A record
that breaks only simple keywords (a type, a required property, a bound...) is explained from
jsonschema-rs's own errors, worded and ordered as the reference would (`plainerrors`), without
importing `jsonschema`. Every
explanation comes from `explain`, whichever validator found the record invalid: an `anyOf` or
`oneOf` that no branch satisfies is explained by the closest branch's own problems. Both match a
schema's patterns in linear time: jsonschema-rs by itself, the reference through RE2
(`schemaregex`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import jsonschema_rs

from evalreg.engine.plainerrors import Plain, reword
from evalreg.errors import RegistryError, one_line
from evalreg.io.pointer import to_pointer

T = TypeVar("T")

if TYPE_CHECKING:
    import jsonschema.protocols
    from jsonschema.exceptions import ValidationError

    from evalreg.registry.core import BaseRegistry, SchemaEntry

_MAX_VALUE_TEXT = 60


@dataclass(frozen=True)
class Issue:
    """One problem of a record: where it is, which rule it breaks, and what is wrong."""

    pointer: str
    """JSON pointer of the offending value in the record (`""` is the whole record)."""
    message: str
    keyword: str
    """The schema keyword that failed (`required`, `type`, ...), `detect` / `version`, or
    `rule` for a family's rule beyond the schema."""
    schema_path: str = ""
    """JSON pointer of the failing keyword in the schema."""
    rule: str = ""
    """The id of the family rule that found it (`keyword` is then `rule`)."""
    severity: Literal["error", "warning"] = "error"
    """Only a rule's finding can be a warning, which leaves the record valid."""
    line: int | None = None
    """Where the value is in its file (from 1), when the file says: YAML files do."""
    column: int | None = None

    def __str__(self) -> str:
        shown = f"{self.pointer or '/'}: {self.message}"
        return f"{shown} [{self.rule}]" if self.rule else shown


def _short(value: Any) -> str:
    if isinstance(value, dict):
        return f"object with {len(value)} keys" if value else "{}"
    if isinstance(value, list):
        return f"array of {len(value)} items" if value else "[]"
    text = repr(value)
    return text if len(text) <= _MAX_VALUE_TEXT else text[: _MAX_VALUE_TEXT - 3] + "..."


def _message(error: ValidationError | Plain) -> str:
    message = str(error.message)
    shown = repr(error.instance)
    if len(shown) > _MAX_VALUE_TEXT and message.startswith(shown):
        message = _short(error.instance) + message[len(shown) :]
    if len(message) > 300:
        message = message[:297] + "..."
    return message


_ALTERNATIVES = ("anyOf", "oneOf")
_KIND = frozenset({"type", "const", "enum"})
"""Keywords whose failure at the value itself says a branch expects another kind of value."""


def _branches(error: ValidationError) -> list[list[ValidationError]]:
    """Return the errors of each branch of a failed `anyOf` / `oneOf`, in branch order."""
    found: dict[Any, list[ValidationError]] = {}
    for inner in error.context:
        found.setdefault(inner.relative_schema_path[0], []).append(inner)
    return list(found.values())


def _distance(branch: list[ValidationError]) -> tuple[bool, int, int, int]:
    """Return how far a branch is from accepting the value: smaller is closer.

    First whether it expects another kind of value altogether (a `type`, `const` or `enum`
    failing at the value itself); then how many `const` or `enum` values inside it differ (a
    tag such as `type: feedback` telling the branches of a union apart); then how many of its
    problems are at the value itself (a required property missing) rather than inside it; then
    how many problems it has.
    """
    own = [e for e in branch if not e.relative_path]
    tags = sum(1 for e in branch if e.relative_path and e.validator in ("const", "enum"))
    return (any(e.validator in _KIND for e in own), tags, len(own), len(branch))


def _kinds(branches: list[list[ValidationError]]) -> list[str] | None:
    """Return the types every branch wants, when each fails only by the value's type."""
    wanted: list[str] = []
    for branch in branches:
        if len(branch) != 1 or branch[0].validator != "type" or branch[0].relative_path:
            return None
        types: Any = branch[0].validator_value
        wanted += [types] if isinstance(types, str) else [str(t) for t in types]
    return list(dict.fromkeys(wanted))


def explain(error: ValidationError) -> list[ValidationError]:
    """Return the errors that say what is wrong, for one error of the reference validator.

    An `anyOf` / `oneOf` that no branch satisfies is explained by the problems of its closest
    branch (see `_distance`; the first of equally close ones), recursively. When every branch
    expects another type, one error names them all; when every branch is as far as the others
    from a value of another kind, the error stays, its message listing each branch's problem.
    Any other error explains itself.
    """
    if error.validator not in _ALTERNATIVES or not error.context:
        return [error]
    branches = _branches(error)
    kinds = _kinds(branches)
    if kinds is not None:
        shown = " or ".join(repr(k) for k in kinds)
        return [_reworded(error, f"{_short(error.instance)} is not of type {shown}")]
    closest = min(branches, key=_distance)
    if _distance(closest)[0] and len(branches) > 1:
        # Every branch wants another kind of value: none is closer, say what each wants.
        problems = "; ".join(_message(min(b, key=_depth)) for b in branches)
        count = len(branches)
        message = f"{_short(error.instance)} fits none of the {count} alternatives: {problems}"
        return [_reworded(error, message)]
    return [found for inner in closest for found in explain(inner)]


def _relevance(error: ValidationError) -> tuple[int, bool]:
    """Return how relevant an error is (larger is more): nearer the root, then not `anyOf` or
    `oneOf` (the order of `jsonschema`'s `relevance`, over paths from the record's root)."""
    return (-len(error.absolute_path), error.validator not in _ALTERNATIVES)


def _depth(error: ValidationError) -> int:
    return len(error.relative_path)


def _reworded(error: ValidationError, message: str) -> ValidationError:
    """Return a copy of `error` with another message."""
    from jsonschema.exceptions import ValidationError as Error

    copy = Error(
        message,
        validator=error.validator,
        path=error.relative_path,
        schema_path=error.relative_schema_path,
        instance=error.instance,
        validator_value=error.validator_value,
        schema=error.schema,
    )
    copy.parent = error.parent
    return copy


def _to_issue(error: ValidationError) -> Issue:
    return Issue(
        pointer=to_pointer(error.absolute_path),
        message=_message(error),
        keyword=str(error.validator),
        schema_path=to_pointer(error.absolute_schema_path),
    )


def _plain_issue(error: Plain) -> Issue:
    return Issue(
        pointer=to_pointer(error.path),
        message=_message(error),
        keyword=error.keyword,
        schema_path=to_pointer(error.schema_path),
    )


def _most_relevant_first(
    errors: list[T], path: Callable[[T], list[Any]], relevance: Callable[[T], Any]
) -> list[T]:
    """Return `errors` by path (each place's in their order), the most relevant one first."""
    ordered = sorted(errors, key=path)
    best = max(ordered, key=relevance)
    return [best, *(error for error in ordered if error is not best)]


def _build_rs_registry(registry: BaseRegistry) -> Any:
    """Return one jsonschema-rs registry of every schema, or None if a `$ref` cannot resolve."""
    try:
        return jsonschema_rs.Registry([(e.id, dict(e.document)) for e in registry.entries()])
    except ValueError:
        return None  # some schema refers outside the registry: compile each one alone


_REFS = ("$ref", "$dynamicRef", "$recursiveRef")


def _refers_out(document: Any) -> bool:
    """Return whether a schema holds a reference other than into itself (`#...`)."""
    stack = [document]
    while stack:
        node = stack.pop()
        if type(node) is dict:
            for key in _REFS:
                ref = node.get(key)
                if ref is not None and not (type(ref) is str and ref.startswith("#")):
                    return True
            stack.extend(node.values())
        elif type(node) is list:
            stack.extend(node)
    return False


class Validator:
    """The compiled validators of one schema version."""

    def __init__(self, registry: BaseRegistry, entry: SchemaEntry) -> None:
        self.family = entry.family
        self.version = entry.version
        self._registry = registry
        self._entry = entry
        self._reference: jsonschema.protocols.Validator | None = None
        # The registry of every schema costs more to build than most schemas to compile, and
        # a schema that refers only into itself needs none.
        shared = None
        if _refers_out(entry.document):
            shared = registry.derived("jsonschema-rs", _build_rs_registry)
        try:
            self._fast: Any = jsonschema_rs.validator_for(
                dict(entry.document),
                offline=True,
                validate_formats=False,
                **({"registry": shared} if shared is not None else {}),
            )
        except ValueError as err:
            # A `$ref` that leads outside the registry: name it precisely.
            registry.check_refs(entry.family, entry.version)
            detail = one_line(str(err), 300)
            raise RegistryError(str(entry.path), f"cannot compile the schema: {detail}") from err
        self.surely_valid: Callable[[Any], bool] = self._fast.is_valid
        """Return True if a record is valid; False: it may not be, ask `is_valid` (jsonschema-rs
        alone, for a loop over many records; it raises on a value it cannot take)."""

    @property
    def reference(self) -> jsonschema.protocols.Validator:
        """Return the reference `jsonschema` validator (built on first use)."""
        if self._reference is None:
            from jsonschema.validators import validator_for

            from evalreg.engine.schemaregex import linear

            self._registry.check_refs(self.family, self.version)
            cls = linear(validator_for(self._entry.document))
            self._reference = cls(
                self._entry.document, registry=self._registry.referencing_registry()
            )
        return self._reference

    def is_valid(self, record: Any) -> bool:
        """Return whether `record` is valid."""
        try:
            if self._fast.is_valid(record):
                return True
            if self._plain_issues(record) is not None:
                return False
        except (ValueError, TypeError, OverflowError):
            pass  # a value jsonschema-rs cannot take (NaN, a huge integer): ask the reference
        return bool(self.reference.is_valid(record))

    def iter_issues(self, record: Any) -> Iterator[Issue]:
        """Yield every problem of `record` the reference validator finds, the most relevant
        first (see `explain`)."""
        found = [e for error in self.reference.iter_errors(record) for e in explain(error)]
        if found:
            ordered = _most_relevant_first(found, lambda e: list(e.absolute_path), _relevance)
            yield from map(_to_issue, ordered)

    def _plain_issues(self, record: Any) -> list[Issue] | None:
        """Return the problems of a record jsonschema-rs finds invalid, as `iter_issues` gives
        them, when jsonschema-rs's errors are all plain (see `plainerrors`); else None.

        Raises ValueError, TypeError or OverflowError on a value jsonschema-rs cannot take.
        """
        found = reword(self._entry.document, record, self._fast.iter_errors)
        if not found:
            return None
        ordered = _most_relevant_first(found, lambda e: e.path, lambda e: -len(e.path))
        return list(map(_plain_issue, ordered))

    def issues(self, record: Any) -> list[Issue]:
        """Return every problem of `record` (empty when valid)."""
        try:
            if self._fast.is_valid(record):
                return []
            if (plain := self._plain_issues(record)) is not None:
                return plain
        except (ValueError, TypeError, OverflowError):
            pass  # as in `is_valid`
        if not self.reference.is_valid(record):
            return list(self.iter_issues(record))
        return []


def _new_cache(registry: BaseRegistry) -> dict[tuple[str, str], Validator]:
    return {}


def validator(registry: BaseRegistry, family: str, version: str | None = None) -> Validator:
    """Return the (cached) validator of a family's version (the newest when None).

    Raises:
        UnknownFamilyError: no such family.
        UnknownVersionError: the family has no such version.
        RemoteRefError: the schema refers outside the registry.
    """
    cache = registry.derived("validators", _new_cache)
    if version is not None and (found := cache.get((family, version))) is not None:
        return found  # asked for by the registry's own spelling, as most callers do
    entry = registry.entry(family, version)
    key = (family, entry.version)
    if key not in cache:
        cache[key] = Validator(registry, entry)
    return cache[key]
