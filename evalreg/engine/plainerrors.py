"""jsonschema-rs's errors of simple keywords, worded as the reference `jsonschema` words them.

The reference validator explains invalid records (see `validators`), at the cost of importing
`jsonschema` in every process that meets one. Most invalid records break a simple keyword: a
value of the wrong type, a required property missing, a number out of range. For those,
`reword` takes jsonschema-rs's errors and gives what the reference would give, built by the
rules of jsonschema 4's `_keywords`: the same errors, messages, schema paths, and errors at one
place in the reference's order (the order of the keywords in their schema, then of the
`required` list).

It answers only when it can vouch for that: every error is of a keyword of `_WORDED`, reached
from the root through `properties`, `items`, `prefixItems`, `additionalProperties` and `$ref`s
into the schema itself; the errors at one place of the record come from one schema object; the
schema is draft-07 or 2020-12; the record holds only JSON values (no NaN, no tuple), at most
`MAX_VALUES` of them. Anything else (`anyOf`, `oneOf`, `allOf`, `not`, `if`, formats,
`patternProperties`, another document, a larger record) gives None, and the reference explains.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from evalreg.io.pointer import MISSING, resolve
from evalreg.regex import search

Path = list[str | int]

_DRAFT_07 = "http://json-schema.org/draft-07/schema#"
_DRAFTS = {None, _DRAFT_07, "https://json-schema.org/draft/2020-12/schema"}
"""The `$schema`s whose rules `reword` follows (both validators take a schema without one as
2020-12)."""
_ITEMS = ("items", "prefixItems")
"""Keywords whose value is a schema, or a list of schemas, for the items of an array."""


@dataclass(frozen=True)
class Plain:
    """One error, as the reference validator reports it."""

    path: Path
    """Where the offending value is in the record."""
    instance: Any
    """The offending value (the object itself for `required` and `additionalProperties`)."""
    message: str
    keyword: str
    schema_path: Path
    """Where the keyword is, through the schema's `$ref`s (the `$ref`s themselves left out)."""


def _wording(keyword: str, value: Any, instance: Any) -> str | None:
    """Return the reference's message for a value that breaks `keyword: value`, or None."""
    if keyword == "type":
        types = [value] if isinstance(value, str) else value
        return f"{instance!r} is not of type {', '.join(repr(t) for t in types)}"
    if keyword == "enum":
        return f"{instance!r} is not one of {value!r}"
    if keyword == "const":
        return f"{value!r} was expected"
    if keyword in _BOUNDS:
        return f"{instance!r} is {_BOUNDS[keyword]} {value!r}"
    if keyword in ("minLength", "minItems"):
        return f"{instance!r} {'should be non-empty' if value == 1 else 'is too short'}"
    if keyword in ("maxLength", "maxItems"):
        return f"{instance!r} {'is expected to be empty' if value == 0 else 'is too long'}"
    if keyword == "pattern" and isinstance(instance, str) and not search(value, instance):
        return f"{instance!r} does not match {value!r}"  # not a match for the reference too
    return None


_BOUNDS = {
    "minimum": "less than the minimum of",
    "maximum": "greater than the maximum of",
    "exclusiveMinimum": "less than or equal to the minimum of",
    "exclusiveMaximum": "greater than or equal to the maximum of",
}
_WORDED = {
    "type",
    "enum",
    "const",
    *_BOUNDS,
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "pattern",
    "required",
    "additionalProperties",
}


def _extras(keys: Iterable[str]) -> str:
    """Return `'a', 'b' were` (or `'a' was`), as jsonschema words a list of properties."""
    listed = list(keys)
    return f"{', '.join(repr(key) for key in listed)} {'was' if len(listed) == 1 else 'were'}"


def _local(document: Any, ref: Any) -> Any:
    """Return the schema a `$ref` into `document` itself names, or MISSING."""
    if not isinstance(ref, str) or not ref.startswith("#") or ref[1:2] not in ("", "/"):
        return MISSING  # another document, or an anchor
    try:
        return resolve(document, unquote(ref[1:]))
    except ValueError:
        return MISSING


def _locate(document: Any, evaluation: Path, legacy: bool) -> tuple[Any, str, Path] | None:
    """Return the schema object holding the failing keyword, the keyword, and the reference's
    schema path, following jsonschema-rs's evaluation path; None off the plain applicators."""
    node, path, at = document, [], 0
    while at < len(evaluation) - 1:
        keyword = evaluation[at]
        if not isinstance(node, dict) or keyword not in node:
            return None
        if legacy and keyword != "$ref" and "$ref" in node:
            return None  # draft-07 ignores the siblings of `$ref`
        value = node[keyword]
        if keyword == "$ref":
            node, at = _local(document, value), at + 1
        elif keyword == "properties" or (keyword in _ITEMS and isinstance(value, list)):
            name = evaluation[at + 1]
            node, at = value[name], at + 2
            path += [keyword, name]
        elif keyword in _ITEMS or keyword == "additionalProperties":
            node, at = value, at + 1
            path.append(keyword)
        else:
            return None
        if node is MISSING or (isinstance(node, dict) and "$id" in node):
            return None  # a `$ref` to nowhere, or a schema with its own base URI
    keyword = evaluation[-1]
    if not isinstance(node, dict) or keyword not in node or (legacy and "$ref" in node):
        return None
    return node, str(keyword), [*path, keyword]


MAX_VALUES = 10_000
"""The most values a record explained from jsonschema-rs's errors may hold. Its errors carry
copies of the values they concern (the whole record, for a property missing at its root), and
memory that Rust code cannot allocate ends the process: a larger record is explained by the
reference, where running out of memory is an error like any other."""


def _plain_values(record: Any) -> bool:
    """Return whether `record` holds only values jsonschema-rs sees as the reference does
    (jsonschema-rs takes NaN and the infinities for null, and a tuple for an array; it leaves
    an empty key out of the places of its errors), and at most `MAX_VALUES` of them."""
    stack = [record]
    count = 0
    while stack:
        value = stack.pop()
        count += 1
        if count > MAX_VALUES:
            return False
        if isinstance(value, dict):
            if not all(isinstance(key, str) and key for key in value):
                return False
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
        elif isinstance(value, float):
            if not math.isfinite(value):
                return False
        elif not (value is None or isinstance(value, (str, int))):
            return False
    return True


def _at(record: Any, path: Path) -> tuple[Any, Path] | None:
    """Return the value at jsonschema-rs's `path` in `record`, and the path with each key as the
    record holds it; None where a number in `path` stands for more than one key.

    jsonschema-rs gives an object's key that reads as an unsigned number (`"0"`, `"01"`, `"+1"`)
    as that number.
    """
    keys: Path = []
    for key in path:
        if type(key) is int and isinstance(record, dict):
            named = [name for name in record if _reads_as(name, key)]
            if len(named) != 1:
                return None
            key = named[0]
        record = record[key]
        keys.append(key)
    return record, keys


def _reads_as(name: str, number: int) -> bool:
    """Return whether jsonschema-rs reads the key `name` as `number`: as Rust reads an unsigned
    integer, an optional `+` and ASCII digits (leading zeros allowed)."""
    digits = name[1:] if name[:1] == "+" else name
    if not (digits.isascii() and digits.isdigit()):
        return False  # an empty key, a lone `+` or a sign, a point, a digit of another script
    digits = digits.lstrip("0") or "0"
    return len(digits) <= 20 and int(digits) == number


def reword(
    document: Any, record: Any, errors: Callable[[Any], Iterable[Any]]
) -> list[Plain] | None:
    """Return the reference's errors for jsonschema-rs's errors of `record` against the schema
    `document` (`errors`: its validator's `iter_errors`, called only for a record it may be
    asked about), each place's in the reference's order; None when unsure.

    Raises whatever jsonschema-rs raises on a value it cannot take (ValueError, ...).
    """
    draft = document.get("$schema") if isinstance(document, dict) else MISSING
    if draft not in _DRAFTS or not _plain_values(record):
        return None
    found: list[tuple[tuple[int, int], Plain]] = []
    objects: dict[tuple[str | int, ...], tuple[str | int, ...]] = {}
    for error in errors(record):
        where = _locate(document, list(error.evaluation_path), draft == _DRAFT_07)
        if where is None or where[1] not in _WORDED or error.kind.name != where[1]:
            return None
        node, keyword, schema_path = where
        located = _at(record, list(error.instance_path))
        if located is None:
            return None  # keys that jsonschema-rs names alike: which one it means is unsure
        instance, path = located
        if objects.setdefault(tuple(path), tuple(error.evaluation_path[:-1])) != tuple(
            error.evaluation_path[:-1]
        ):
            return None  # errors at one place from two schema objects: their order is unsure
        value = node[keyword]
        order = 0
        if keyword == "required":
            missing = error.kind.property
            if not isinstance(value, list) or value.count(missing) != 1 or missing in instance:
                return None
            message, order = f"{missing!r} is a required property", value.index(missing)
        elif keyword == "additionalProperties":
            declared = node.get("properties", {})
            extras = [key for key in instance if key not in declared]
            if value is not False or "patternProperties" in node or not extras:
                return None
            if set(extras) != set(error.kind.unexpected):
                return None
            unexpected = _extras(sorted(extras))
            message = f"Additional properties are not allowed ({unexpected} unexpected)"
        else:
            worded = _wording(keyword, value, instance)
            if worded is None:
                return None
            message = worded
        plain = Plain(path, instance, message, keyword, schema_path)
        found.append(((list(node).index(keyword), order), plain))
    found.sort(key=lambda pair: pair[0])  # the order at each place; places are sorted later
    return [plain for _, plain in found]
