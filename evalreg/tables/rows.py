"""Records as rows of a version's columns, and rows back as records, losing nothing.

A row is what pyarrow builds a struct from: dicts for structs, lists for lists, dicts for
string maps (built as Arrow maps, then cast to lists of entries), JSON text (UTF-8 bytes) for
JSON columns, Python scalars otherwise. What the typed columns cannot hold as it is goes into
the row's `_extra`, a JSON object from JSON pointers to values, so that `record_of(row)` gives
the record back:

- a property the schema does not declare (of an object whose schema allows others);
- a number a double (or int64) does not hold as written: an `ExactNumber`, an integer beyond
  2**53 in a float column or beyond int64 in an int column (the column holds the nearest
  double, or null);
- a `null` written for an optional property (a missing one is null in its column too).

JSON columns hold `null` as the text `null` and a missing value as null, so they need no
`_extra`. Numbers come back as the column holds them (an integer in a float column as a
float: the same JSON number).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from evalreg.errors import TableError
from evalreg.io.codec import ExactNumber, dumps, loads
from evalreg.io.pointer import escape, split
from evalreg.tables.mapping import EXTRA, Column, Layout

Extras = dict[str, Any]
Convert = Callable[[Any, str, Extras], Any]
"""Turns a value (at a JSON pointer, for `_extra`) into what its column is built from."""

_INT64 = (-(2**63), 2**63 - 1)
_EXACT_INT = 2**53
"""Integers up to this size are doubles exactly."""


class RowError(ValueError):
    """A value does not have the type its column holds (a record not valid at the version)."""

    def __init__(self, pointer: str, expected: str, value: Any) -> None:
        self.pointer = pointer
        found = type(value).__name__
        if isinstance(value, int) and not isinstance(value, bool):
            found = (
                f"{value}" if len(str(value)) <= 40 else f"an integer of {len(str(value))} digits"
            )
        super().__init__(f"{pointer or '/'}: expected {expected}, found {found}")


# -- records to rows --------------------------------------------------------------------------


def _int64(value: Any, pointer: str, extras: Extras) -> Any:
    kind = type(value)
    if kind is int:
        if _INT64[0] <= value <= _INT64[1]:
            return value
        extras[pointer] = value
        return None
    if isinstance(value, float) and value.is_integer():  # 2.0 is an integer in JSON Schema
        held = _INT64[0] <= value <= _INT64[1]
        if kind is not float or not held:
            extras[pointer] = value
        return int(value) if held else None
    raise RowError(pointer, "an integer", value)


def _float64(value: Any, pointer: str, extras: Extras) -> Any:
    kind = type(value)
    if kind is float:
        return value
    if kind is int:
        if -_EXACT_INT <= value <= _EXACT_INT:
            return value  # pyarrow makes it a double, exactly
        extras[pointer] = value
        try:
            return float(value)
        except OverflowError:
            return None
    if kind is ExactNumber:
        extras[pointer] = value
        return float(value)
    raise RowError(pointer, "a number", value)


def _json(value: Any, pointer: str, extras: Extras) -> Any:
    return dumps(value)


_SCALARS: dict[str, Convert | None] = {
    "string": None,
    "enum": None,
    "bool": None,
    "int64": _int64,
    "float64": _float64,
    "json": _json,
}
"""The converter of each kind of scalar column; None: the value is taken as it is (a value of
another type makes pyarrow refuse the batch, and then that record alone)."""
_HELD = "a number the column can hold (it cannot be null)"
_QUICK = {"int64": int, "float64": float}
"""The type of the values a number column takes as they are, checked without a call."""


def converter(column: Column) -> Convert | None:
    """Return the function that turns a value of `column` into its row value (None: the value
    is its row value)."""
    if column.kind in _SCALARS:
        scalar = _SCALARS[column.kind]
        if not column.loose or column.kind == "json":
            return scalar
        return _loose(scalar, _TYPES[column.kind])
    found: Convert | None
    if column.kind == "list":
        found = _list_converter(column)
    elif column.kind == "map":
        found = _map_converter(column)
    else:
        found = _struct_converter(column)
    if not column.loose:
        return found
    return _loose(found, (list,) if column.kind == "list" else (dict,))


def _loose(convert: Convert | None, kinds: tuple[type, ...]) -> Convert:
    """Return `convert` for a column where a value of any type is valid (its schema says no
    type, or one branch of a union declares it and another leaves it open): a value of
    another type than `kinds` goes to `_extra`."""

    def loose(value: Any, pointer: str, extras: Extras) -> Any:
        if type(value) not in kinds:
            extras[pointer] = value
            return None
        return value if convert is None else convert(value, pointer, extras)

    return loose


_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "enum": (str,),
    "bool": (bool,),
    "int64": (int,),
    "float64": (int, float),
}
"""The Python types of the values a scalar column takes (a bool is no number here)."""


def _list_converter(column: Column) -> Convert | None:
    (item,) = column.children
    each = converter(item)
    if each is None:
        return None
    nullable = item.nullable

    def convert(value: Any, pointer: str, extras: Extras) -> Any:
        if type(value) is not list:
            raise RowError(pointer, "an array", value)
        out = value
        for index, element in enumerate(value):
            if element is None:
                if not nullable:
                    raise RowError(f"{pointer}/{index}", "a value", element)
                continue
            new = each(element, f"{pointer}/{index}", extras)
            if new is not element:
                if out is value:
                    out = list(value)
                if new is None and not nullable:
                    raise RowError(f"{pointer}/{index}", _HELD, element)
                out[index] = new
        return out

    return convert


def _map_converter(column: Column) -> Convert:
    nullable = column.children[1].nullable

    def convert(value: Any, pointer: str, extras: Extras) -> Any:
        if type(value) is not dict:
            raise RowError(pointer, "an object", value)
        for key, element in value.items():
            if type(element) is not str and not (element is None and nullable):
                raise RowError(f"{pointer}/{escape(key)}", "a string", element)
        return value  # built as an Arrow map, cast to its list of entries

    return convert


def _struct_converter(column: Column) -> Convert:
    """Return the converter of a struct: the object as it is where nothing in it needs
    converting (pyarrow takes a struct's fields from a dict by name), else a copy."""
    children = {c.name: (converter(c), "/" + escape(c.name), c) for c in column.children}
    declared = frozenset(children)
    special = [
        (name, each, suffix, child.nullable, _QUICK.get(child.kind))
        for name, (each, suffix, child) in children.items()
        if each
    ]
    is_open = column.open

    def slow(value: Any, pointer: str, extras: Extras) -> Any:
        out: dict[str, Any] = {}
        for key, element in value.items():
            found = children.get(key)
            if found is None:
                if not is_open:
                    raise RowError(f"{pointer}/{escape(key)}", "no such property", element)
                extras[f"{pointer}/{escape(key)}"] = element
                continue
            each, suffix, child = found
            if element is None and child.kind != "json":
                if not child.nullable:
                    raise RowError(pointer + suffix, "a value", element)
                if not child.required:
                    extras[pointer + suffix] = None  # a null written, not a value missing
                out[key] = None
                continue
            new = element if each is None else each(element, pointer + suffix, extras)
            if new is None and not child.nullable:
                raise RowError(pointer + suffix, _HELD, element)
            out[key] = new
        return out

    nulls = struct_nulls(column)

    def convert(value: Any, pointer: str, extras: Extras) -> Any:
        if type(value) is not dict:
            raise RowError(pointer, "an object", value)
        if not value.keys() <= declared:
            return slow(value, pointer, extras)
        out = nulls(value, pointer, extras) if None in value.values() else value
        for name, each, suffix, nullable, quick in special:
            element = value.get(name)
            if element is None:
                continue  # missing (no value is null here)
            kind = type(element)
            if kind is quick and (kind is float or _INT64[0] <= element <= _INT64[1]):
                continue  # the common number, taken as it is (the checks of _int64, inlined)
            new = each(element, pointer + suffix, extras)
            if new is not element:
                if out is value:
                    out = dict(value)
                if new is None and not nullable:
                    raise RowError(pointer + suffix, _HELD, element)
                out[name] = new
        return out

    return convert


def struct_nulls(column: Column) -> Convert:
    """Return what a struct's converter does with the nulls of an object holding declared
    properties only: JSON columns take the text `null` (in a copy of the object, returned), an
    optional property's null goes to `_extra`, a required one is refused."""
    children = {c.name: ("/" + escape(c.name), c) for c in column.children}

    def nulls(value: Any, pointer: str, extras: Extras) -> Any:
        out = value
        for key in [k for k, v in value.items() if v is None]:
            suffix, child = children[key]
            if child.kind == "json":
                if out is value:
                    out = dict(value)
                out[key] = b"null"
            elif not child.nullable:
                raise RowError(pointer + suffix, "a value", None)
            elif not child.required:
                extras[pointer + suffix] = None  # a null written, not a value missing
        return out

    return nulls


class RowMaker:
    """Turns records of one version into rows (each with its `_extra`)."""

    def __init__(self, layout: Layout, convert: Convert | None = None) -> None:
        self.layout = layout
        self._convert = convert or _struct_converter(layout.root)
        """What `_struct_converter(layout.root)` returns, or a function that does the same
        (`evalreg.tables.compiled.compile_struct`)."""

    def row(self, record: Any, *, owned: bool = False) -> dict[str, Any]:
        """Return the row of `record` (`owned`: a record no one else holds, which may become
        its row itself, rather than stay as it was).

        Raises:
            RowError: a value does not have the type of its column.
        """
        extras: Extras = {}
        row: dict[str, Any] = self._convert(record, "", extras)
        if row is record and not owned:
            row = dict(row)  # the row gets columns of its own: the record stays as it was
        row[EXTRA] = dumps(extras) if extras else None
        return row


def split_extras(text: bytes | str | None, pointer: str, index: int) -> bytes | None:
    """Return the `_extra` of the row of item `index` of the array at `pointer`: the record's
    values outside that array, and those of that item."""
    if text is None:
        return None
    extras = loads(text)
    inside = f"{pointer}/"
    mine = f"{pointer}/{index}"
    kept = {
        p: v
        for p, v in extras.items()
        if not p.startswith(inside) or p == mine or p.startswith(mine + "/")
    }
    return dumps(kept) if kept else None


# -- rows to records --------------------------------------------------------------------------

Restore = Callable[[Any], Any]


def _identity(value: Any) -> Any:
    return value


def restorer(column: Column) -> Restore:
    """Return the function that turns a value of `column` (as `to_pylist` gives it) back."""
    if column.kind == "json":
        return loads
    if column.kind in ("string", "enum", "bool", "int64", "float64"):
        return _identity
    if column.kind == "list":
        each = restorer(column.children[0])
        if each is _identity:
            return list
        return lambda value: [None if v is None else each(v) for v in value]
    if column.kind == "map":
        return lambda value: dict(
            (e["key"], e["value"]) if isinstance(e, Mapping) else (e[0], e[1]) for e in value
        )
    fields = [(c.name, restorer(c), c.required) for c in column.children]

    def restore(value: Any) -> Any:
        out: dict[str, Any] = {}
        for name, each, required in fields:
            element = value.get(name)
            if element is None:
                if required:
                    out[name] = None
                continue
            out[name] = each(element)
        return out

    return restore


class RecordMaker:
    """Turns rows of one version (dicts, as `pyarrow.Table.to_pylist` gives them) into records."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self._restore = restorer(layout.root)

    def record(self, row: Mapping[str, Any]) -> Any:
        """Return the record of `row`, its `_extra` put back in place.

        Raises:
            TableError: the `_extra` of the row names a place its record does not have.
        """
        record = self._restore(row)
        text = row.get(EXTRA)
        if text:
            for pointer, value in loads(text).items():
                _put(record, pointer, value)
        return record


def _put(record: Any, pointer: str, value: Any) -> None:
    tokens = split(pointer)
    if not tokens:
        raise TableError(f"_extra names the whole record ({pointer!r})")
    parent = record
    for token in tokens[:-1]:
        try:
            parent = parent[int(token)] if isinstance(parent, list) else parent[token]
        except (KeyError, IndexError, ValueError, TypeError):
            raise TableError(f"_extra names {pointer}, which the row does not have") from None
    last = tokens[-1]
    if isinstance(parent, list):
        parent[int(last)] = value
    elif isinstance(parent, dict):
        parent[str(last)] = value
    else:
        raise TableError(f"_extra names {pointer}, which the row does not have")


def json_equal(a: Any, b: Any) -> bool:
    """Return whether two JSON values are the same: numbers by value (`1 == 1.0`), an
    `ExactNumber` only to one written the same, booleans never to numbers, and objects
    whatever the order of their keys."""
    if type(a) is ExactNumber or type(b) is ExactNumber:
        return type(a) is type(b) and a.text == b.text
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b
