"""JSON encoding and decoding, exact for every number JSON can hold, and exact deep copies.

Decoding uses msgspec, which is as fast as orjson and keeps integers exact (orjson turns
integers wider than 64 bits into floats), up to `MAX_INT_DIGITS` digits. A decimal number that
a double cannot hold as written (more digits than a double keeps, `1e-400`) is read as an
`ExactNumber`: a float of the nearest value, that remembers its text and is written back as it
was. Encoding uses orjson, the fastest, and msgspec for the rare value orjson refuses (integers
wider than 64 bits). A migration must never change a number.
"""

from __future__ import annotations

import copy
import json
import math
from decimal import Decimal
from typing import Any, TypeVar, cast

import msgspec
import orjson

from evalreg.io.pointer import escape

_T = TypeVar("_T")

MAX_INT_DIGITS = 4300
"""The most digits of an integer read from JSON (Python's own limit for reading integers)."""
_INT_TOO_LONG = "Integer value out of range"
MAX_DEPTH = 254
"""The deepest arrays and objects may nest in a document (as deep as orjson writes): deeper
nesting would exhaust the stack of the code that validates, compares and writes records."""
TOO_DEEP = f"nested more than {MAX_DEPTH} levels deep"  # msgspec's words for an integer beyond that


class ExactNumber(float):
    """A JSON number that a double cannot hold as written: its value is the nearest double, its
    text (`str`, `repr`) the number as written, which is what writing it gives back."""

    __slots__ = ("text",)
    text: str

    def __new__(cls, text: str) -> ExactNumber:
        number = super().__new__(cls, text)
        number.text = text
        return number

    def __repr__(self) -> str:
        return self.text

    __str__ = __repr__

    def __reduce__(self) -> tuple[type[ExactNumber], tuple[str]]:
        return ExactNumber, (self.text,)

    def __copy__(self) -> ExactNumber:
        return self

    def __deepcopy__(self, memo: Any) -> ExactNumber:
        return self


def schema_type(value: Any) -> str:
    """Return the narrowest JSON Schema type `value` meets (a whole float is an integer)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def holds_exact(value: Any) -> bool:
    """Return whether `value` is or contains an `ExactNumber` (which `json.dumps` would round)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, ExactNumber):
            return True
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


_INFINITIES = (math.inf, -math.inf)


def _number(text: str) -> float:
    """Return the float of a JSON number with a fraction or an exponent, exact as written.

    A text of fewer than 16 characters without an exponent has at most 15 significant digits,
    which a double holds: its float, written back, is the same number. Others are compared.
    """
    value = float(text)
    if len(text) < 16 and "e" not in text and "E" not in text:
        return value
    if value in _INFINITIES:
        raise ValueError(f"number {text[:40]} is too large for a double")
    shortest = repr(value)
    if shortest == text or Decimal(shortest) == Decimal(text):
        return value
    return ExactNumber(text)


def _write_exact(value: Any) -> Any:
    if isinstance(value, ExactNumber):
        return orjson.Fragment(value.text)
    raise TypeError(f"Type is not JSON serializable: {type(value).__name__}")


def _write_exact_raw(value: Any) -> Any:
    if isinstance(value, ExactNumber):
        return msgspec.Raw(value.text.encode("ascii"))
    raise TypeError(f"Type is not JSON serializable: {type(value).__name__}")


_decoder = msgspec.json.Decoder(float_hook=_number)
_encoder = msgspec.json.Encoder(enc_hook=_write_exact_raw)

DecodeError = (msgspec.DecodeError, UnicodeDecodeError, ValueError)
"""The exceptions `loads` raises for input that is not JSON (all of them `ValueError`s)."""


class DuplicateKeyError(ValueError):
    """An object of the document names one key twice: JSON parsers keep one value silently."""

    def __init__(self, key: str, pointer: str) -> None:
        self.key = key
        self.pointer = pointer
        where = f"the object at {pointer}" if pointer else "the top-level object"
        super().__init__(f"duplicate key {key!r} in {where}")


def _decode(data: bytes | str) -> Any:
    """Parse one JSON document as msgspec does, with evalreg's errors (no duplicate check)."""
    try:
        return _decoder.decode(data)
    except UnicodeDecodeError:
        if isinstance(data, bytes):
            data.decode("utf-8")  # raises again, placed from the start of the document
        raise
    except msgspec.DecodeError as err:  # ValidationError too: "Number out of range"
        if str(err).startswith(_INT_TOO_LONG):
            raise ValueError(
                f"an integer has more than {MAX_INT_DIGITS:,} digits"
                + str(err)[len(_INT_TOO_LONG) :]
            ) from None
        if isinstance(err, msgspec.ValidationError):
            raise ValueError(str(err)) from None
        raise
    except RecursionError:
        raise ValueError(TOO_DEEP) from None


def loads(data: bytes | str) -> Any:
    """Parse one JSON document, keeping every number exact (see `ExactNumber`).

    NaN, Infinity, numbers too large for a float (`1e400`), integers of more than
    `MAX_INT_DIGITS` digits, lone surrogates, an object that names a key twice and nesting
    deeper than `MAX_DEPTH` are refused: none of them is JSON a schema could check or a
    migration could write back as it was.

    Raises:
        DuplicateKeyError: an object names a key twice (a `ValueError`).
        ValueError: `data` is not valid JSON, is not valid UTF-8, or nests too deeply.
    """
    value = _decode(data)
    if type(value) is dict or type(value) is list:
        raw = data.encode("utf-8") if isinstance(data, str) else data
        if not _checked(raw, value):
            _refuse_deep_or_duplicates(raw, value)
    return value


def loads_lines(lines: list[bytes]) -> list[Any]:
    """Parse JSON lines like `loads`, each to its value or to the `ValueError` it raises.

    The duplicate and depth check (see `_checked`) runs once for all the lines that parse: only
    when it fails for them together is each line checked alone.
    """
    values: list[Any] = []
    containers = True
    for line in lines:
        try:
            value = _decode(line)
        except ValueError as err:
            value = err
        values.append(value)
        containers = containers and (type(value) is dict or type(value) is list)
    if containers:
        checked, text = values, b"".join(lines)
    else:
        kept = [
            (line, value)
            for line, value in zip(lines, values, strict=True)
            if type(value) is dict or type(value) is list
        ]
        checked, text = [value for _, value in kept], b"".join(line for line, _ in kept)
    if not checked:
        return values
    if not _checked(text, checked):
        for index, line in enumerate(lines):
            value = values[index]
            if type(value) is dict or type(value) is list:
                try:
                    loads(line)
                except ValueError as err:
                    values[index] = err
    return values


def _encoded(value: Any) -> bytes | None:
    """Return `value` as compact JSON (orjson), or None where orjson refuses: an integer wider
    than 64 bits, or nesting deeper than `MAX_DEPTH`."""
    try:
        return orjson.dumps(value, default=_write_exact)
    except orjson.JSONEncodeError:
        return None


def _checked(raw: bytes, value: Any) -> bool:
    """Return True if the JSON text `raw` that `value` was decoded from names no key twice and
    nests no deeper than `MAX_DEPTH`; False means only that the slow check must tell.

    Every key is followed by one colon, and the encoders write colons inside strings as they
    are, so `value` encoded again has as many colons as its text unless the text held a
    duplicate (whose key and value the decoder dropped) or wrote a colon as the escape
    `\\u003a` (the text holds `\\u003`). orjson refuses to write deeper than `MAX_DEPTH`, and
    text without colons (and objects) nests no deeper than it has `[`.
    """
    colons = raw.count(b":")
    if not colons:
        return raw.count(b"[") <= MAX_DEPTH
    if b"\\u003" in raw:
        return False
    encoded = _encoded(value)
    return encoded is not None and encoded.count(b":") == colons


def _too_deep(value: Any) -> bool:
    """Return whether arrays and objects nest in `value` deeper than `MAX_DEPTH`."""
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            return True
        children = node.values() if type(node) is dict else node
        stack.extend((c, depth + 1) for c in children if type(c) is dict or type(c) is list)
    return False


def _refuse_deep_or_duplicates(raw: bytes, value: Any) -> None:
    """Raise for a document nested too deeply or naming a key twice, slowly but surely."""
    if _too_deep(value):
        raise ValueError(TOO_DEEP)
    if b"\\u003" not in raw:
        try:
            if _encoder.encode(value).count(b":") == raw.count(b":"):
                return  # orjson refused an integer wider than 64 bits; msgspec counts alike
        except (TypeError, ValueError, OverflowError, msgspec.EncodeError):
            pass
    _refuse_duplicates(raw)


def _refuse_duplicates(raw: bytes) -> None:
    """Parse a document again, slowly, and raise `DuplicateKeyError` for a key named twice."""
    found = _find_duplicate(raw)
    if found is not None:
        raise DuplicateKeyError(*found)


class _Pairs(dict[str, Any]):
    """An object as the standard parser saw it, remembering a key it saw twice."""

    duplicate: str | None = None


def _pairs(pairs: list[tuple[str, Any]]) -> _Pairs:
    built = _Pairs(pairs)
    if len(built) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                built.duplicate = key
                break
            seen.add(key)
    return built


def _find_duplicate(raw: bytes) -> tuple[str, str] | None:
    """Return the first key named twice in one object, and that object's pointer (or None)."""
    document = json.loads(raw, object_pairs_hook=_pairs)
    stack: list[tuple[str, Any]] = [("", document)]
    while stack:
        pointer, node = stack.pop()
        if isinstance(node, _Pairs):
            if node.duplicate is not None:
                return node.duplicate, pointer
            items = [(f"{pointer}/{escape(k)}", v) for k, v in node.items()]
            stack.extend(reversed(items))
        elif isinstance(node, list):
            stack.extend(reversed([(f"{pointer}/{i}", v) for i, v in enumerate(node)]))
    return None


def dumps(value: Any, *, indent: bool = False) -> bytes:
    """Serialise `value` as UTF-8 JSON, compact or indented by two spaces, keeping key order.

    Numbers are written exactly: integers of any size, and an `ExactNumber` as it was written.

    Raises:
        TypeError: `value` holds something JSON cannot represent.
    """
    try:
        option = orjson.OPT_INDENT_2 if indent else 0
        return orjson.dumps(value, default=_write_exact, option=option)
    except orjson.JSONEncodeError:
        pass
    try:
        data = _encoder.encode(value)  # integers wider than 64 bits, or nested beyond orjson
    except (msgspec.EncodeError, ValueError, OverflowError) as err:
        raise TypeError(str(err)) from None
    return msgspec.json.format(data, indent=2) if indent else data


# Values of these exact types cannot change, so a copy may hold them as they are (as
# `copy.deepcopy` does). Subclasses are not among them: they are copied by `copy.deepcopy`.
_ATOMS = frozenset({str, int, float, bool, type(None)})


def _clone(value: Any) -> Any:
    kind = type(value)
    if kind is dict:
        # Keys are hashable, so they are not changed in place either; they are kept.
        return {k: v if type(v) in _ATOMS else _clone(v) for k, v in value.items()}
    if kind is list:
        return [v if type(v) in _ATOMS else _clone(v) for v in value]
    if kind in _ATOMS:
        return value
    return copy.deepcopy(value)


def clone(value: _T) -> _T:
    """Return a deep copy of `value` that shares no dict or list with it.

    Plain dicts and lists are rebuilt and strings, numbers, booleans and null are kept, which
    is exact for any JSON value (integers of any size, NaN and infinities included) and several
    times faster than `copy.deepcopy`. Anything else (a tuple, a datetime, a subclass such as a
    YAML round-trip mapping) is copied with `copy.deepcopy`.
    """
    return cast(_T, _clone(value))
