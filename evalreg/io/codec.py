"""JSON encoding and decoding, exact for every number JSON can hold, and exact deep copies.

Reading takes one of two paths. The canonical fast path decodes a document with orjson and
writes the value again: where that gives its bytes back (compact, or indented by two spaces, as
nearly every program writes JSON), or the same tokens with other white space between them, the
bytes are proven to name no key twice and to hold no number a double cannot, and the value is
the record (see `_canonical`). Any other document
takes the exact path: msgspec decodes it, keeping integers exact up to `MAX_INT_DIGITS` digits
(orjson turns wider ones into floats); a decimal number that a double cannot hold as written
(more digits than a double keeps, `1e-400`) is read as an `ExactNumber`: a float of the nearest
value, that remembers its text and is written back as it was; then a key named twice is looked
for. Both paths give the same records and the same errors. Encoding uses orjson, the fastest,
and msgspec for the rare value orjson refuses (integers wider than 64 bits). A migration must
never change a number.
"""

from __future__ import annotations

import copy
import json
import math
import re
from typing import Any, TypeVar, cast

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
    from decimal import Decimal  # the exact path only (see `loads`): imported when needed

    if shortest == text or Decimal(shortest) == Decimal(text):
        return value
    return ExactNumber(text)


def _write_exact(value: Any) -> Any:
    if isinstance(value, ExactNumber):
        return orjson.Fragment(value.text)
    raise TypeError(f"Type is not JSON serializable: {type(value).__name__}")


class _Exact:
    """msgspec's decoder and encoder of the exact path, made when first needed: the canonical
    fast path (orjson) reads nearly every document without them, and importing msgspec costs
    more than a command line's start-up can spare."""

    def __init__(self) -> None:
        import msgspec

        self.msgspec = msgspec
        self.decoder = msgspec.json.Decoder(float_hook=_number)
        self.encoder = msgspec.json.Encoder(enc_hook=self._write_exact)

    def _write_exact(self, value: Any) -> Any:
        if isinstance(value, ExactNumber):
            return self.msgspec.Raw(value.text.encode("ascii"))
        raise TypeError(f"Type is not JSON serializable: {type(value).__name__}")

    def encode(self, value: Any) -> bytes:
        """Return `value` as compact JSON (integers of any size, nested beyond orjson).

        Raises:
            TypeError, ValueError, OverflowError: JSON cannot represent `value`.
        """
        try:
            return self.encoder.encode(value)
        except self.msgspec.EncodeError as err:
            raise TypeError(str(err)) from None


_made: list[_Exact] = []


def _exact() -> _Exact:
    if not _made:
        _made.append(_Exact())
    return _made[0]


LARGE_BYTES = 16 << 20
"""Documents and lines of more bytes than this are never written again to be checked: the
encoders (orjson's and msgspec's) cannot report that memory ran out (a process under an
address-space limit dies of a signal), so their keys and colons are counted instead (see
`_written_colons`). Decoding reports it (`MemoryError`, which becomes a `TooLargeError`)."""


class TooLargeError(ValueError):
    """A document, or a line, that does not fit in the memory available to read it."""

    def __init__(self, size: int) -> None:
        self.size = size
        super().__init__(f"{size:,} bytes do not fit in the memory available to read them")


DecodeError = (UnicodeDecodeError, ValueError)
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
    exact = _exact()
    msgspec = exact.msgspec
    try:
        return exact.decoder.decode(data)
    except UnicodeDecodeError:
        if isinstance(data, bytes):
            data.decode("utf-8")  # raises again, placed from the start of the document
        raise
    except msgspec.DecodeError as err:  # ValidationError too: "Number out of range"
        if isinstance(data, bytes):
            data.decode("utf-8")  # msgspec >= 0.23 checks UTF-8 itself, without the byte
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


_NOT_CANONICAL: Any = object()
_JSON_SPACE = b" \t\r\n"


def _canonical(data: bytes, spaced: bool = False) -> Any:
    """Return the value of `data` if `data` is its own canonical encoding, else `_NOT_CANONICAL`.

    Canonical: what orjson writes for the value it reads from `data`, compact or (a document
    whose second byte is a line end) indented by two spaces, with trailing white space. Equal
    bytes prove all that the exact path (`_exact_loads`) checks: no object names a key twice
    (the value holds each key once, and so does its encoding), every number reads back as it
    is written (its text is the shortest that gives its double: a plain float, no
    `ExactNumber`), every integer fits in 64 bits and nothing nests deeper than `MAX_DEPTH`
    (orjson writes no other). Files written by `json.dumps(indent=2)` or orjson, and JSONL
    lines written compact, are canonical unless they escape characters JSON need not escape.

    `spaced`: also take a document that is canonical but for its white space between tokens
    (indented by four, say): the same tokens, in the same order, prove the same.
    """
    try:
        value = orjson.loads(data)
        encoded = orjson.dumps(value, option=orjson.OPT_INDENT_2 if data[1:2] == b"\n" else 0)
    except (orjson.JSONDecodeError, orjson.JSONEncodeError):
        return _NOT_CANONICAL
    return value if _encodes(data, value, encoded, spaced) else _NOT_CANONICAL


def _encodes(data: bytes, value: Any, encoded: bytes, spaced: bool) -> bool:
    """Return whether `data` is `encoded` (orjson's encoding of `value`), as `_canonical` takes
    it: with trailing white space, or (`spaced`) other white space between tokens."""
    if data.startswith(encoded):
        size, written = len(data), len(encoded)
        if size == written or (size == written + 1 and data[-1] == 10):  # "\n"
            return True
        if not data[written:].strip(_JSON_SPACE):
            return True
    return spaced and _spaces_out(data) == orjson.dumps(value)


_STRING_OR_SPACE = re.compile(rb'("[^"\\]*(?:\\.[^"\\]*)*")|[ \t\r\n]+')


def _spaces_out(data: bytes) -> bytes:
    """Return valid JSON text without its white space between tokens (strings kept whole)."""
    return _STRING_OR_SPACE.sub(rb"\1", data)


def loads(data: bytes | str) -> Any:
    """Parse one JSON document, keeping every number exact (see `ExactNumber`).

    NaN, Infinity, numbers too large for a float (`1e400`), integers of more than
    `MAX_INT_DIGITS` digits, lone surrogates, an object that names a key twice and nesting
    deeper than `MAX_DEPTH` are refused: none of them is JSON a schema could check or a
    migration could write back as it was.

    A document that is its own canonical encoding (see `_canonical`: nearly every file a
    program wrote) is read by the fast path; any other by the exact path, which gives the same
    value for a canonical document (as a property test checks).

    Raises:
        DuplicateKeyError: an object names a key twice (a `ValueError`).
        TooLargeError: the document does not fit in the memory available (a `ValueError`).
        ValueError: `data` is not valid JSON, is not valid UTF-8, or nests too deeply.
    """
    if type(data) is bytes and len(data) <= LARGE_BYTES:
        value = _canonical(data, spaced=True)
        if value is not _NOT_CANONICAL:
            return value
    try:
        return _exact_loads(data)
    except MemoryError:
        raise TooLargeError(len(data)) from None


def _exact_loads(data: bytes | str) -> Any:
    """Parse one JSON document the exact way: numbers through `_number`, then the duplicate
    and depth check (`_checked`, and where it cannot tell, `_refuse_deep_or_duplicates`)."""
    value = _decode(data)
    if type(value) is dict or type(value) is list:
        raw = data.encode("utf-8") if isinstance(data, str) else data
        if not _checked(raw, value):
            _refuse_deep_or_duplicates(raw, value)
    return value


def loads_line(line: bytes) -> Any:
    """Parse one JSON line like `loads`, to its value or to the `ValueError` it raises."""
    if len(line) <= LARGE_BYTES:
        # `_canonical(line, spaced=True)` with less work per line: a line holds no line end,
        # so its canonical encoding is compact, and most lines are exactly that.
        try:
            value = orjson.loads(line)
            encoded = orjson.dumps(value)
        except (orjson.JSONDecodeError, orjson.JSONEncodeError):
            pass
        else:
            if encoded == line or _encodes(line, value, encoded, spaced=True):
                return value
    try:
        return _exact_loads(line)
    except ValueError as err:
        return err
    except MemoryError:
        return TooLargeError(len(line))


def loads_lines(lines: list[bytes]) -> list[Any]:
    """Parse JSON lines like `loads`, each to its value or to the `ValueError` it raises."""
    return [loads_line(line) for line in lines]


def _encoded(value: Any) -> bytes | None:
    """Return `value` as compact JSON (orjson), or None where orjson refuses: an integer wider
    than 64 bits, or nesting deeper than `MAX_DEPTH`."""
    try:
        return orjson.dumps(value, default=_write_exact)
    except orjson.JSONEncodeError:
        return None


def _written_colons(value: Any) -> int | None:
    """Return how many colons `value` written as JSON holds (one per key, and those of its
    strings), or None if it nests deeper than `MAX_DEPTH`, without writing it.

    Slower than writing it, but it allocates nothing: for documents too large to write again
    within the memory available (where the encoders fail by a signal, not an error).
    """
    count = 0
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            return None
        if type(node) is dict:
            count += len(node)
            for key in node:
                count += key.count(":")
            children = node.values()
        else:
            children = node
        for child in children:
            kind = type(child)
            if kind is str:
                count += child.count(":")
            elif kind is dict or kind is list:
                stack.append((child, depth + 1))
    return count


def _checked(raw: bytes, value: Any) -> bool:
    """Return True if the JSON text `raw` that `value` was decoded from names no key twice and
    nests no deeper than `MAX_DEPTH`; False means only that the slow check must tell.

    Every key is followed by one colon, and the encoders write colons inside strings as they
    are, so `value` encoded again has as many colons as its text unless the text held a
    duplicate (whose key and value the decoder dropped) or wrote a colon as the escape
    `\\u003a` (the text holds `\\u003`). orjson refuses to write deeper than `MAX_DEPTH`, and
    text without colons (and objects) nests no deeper than it has `[`. Documents larger than
    `LARGE_BYTES` are not written: their colons are counted (`_written_colons`).
    """
    colons = raw.count(b":")
    if not colons:
        return raw.count(b"[") <= MAX_DEPTH
    if b"\\u003" in raw:
        return False
    if len(raw) > LARGE_BYTES:
        return _written_colons(value) == colons
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
    if b"\\u003" not in raw and len(raw) <= LARGE_BYTES:
        try:
            if _exact().encode(value).count(b":") == raw.count(b":"):
                return  # orjson refused an integer wider than 64 bits; msgspec counts alike
        except (TypeError, ValueError, OverflowError):
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


def dumps(value: Any, *, indent: bool = False, line: bool = False) -> bytes:
    """Serialise `value` as UTF-8 JSON, compact or indented by two spaces, keeping key order.

    Numbers are written exactly: integers of any size, and an `ExactNumber` as it was written.
    `line`: end the text with a line feed (a line of a JSONL file), at no cost of a copy.

    Raises:
        TypeError: `value` holds something JSON cannot represent.
    """
    try:
        option = _OPTIONS[indent, line]
        return orjson.dumps(value, default=_write_exact, option=option)
    except orjson.JSONEncodeError:
        pass
    try:
        exact = _exact()
        data = exact.encode(value)  # integers wider than 64 bits, or nested beyond orjson
    except (ValueError, OverflowError) as err:
        raise TypeError(str(err)) from None
    if indent:
        data = exact.msgspec.json.format(data, indent=2)
    return data + b"\n" if line else data


_OPTIONS = {
    (indent, line): (orjson.OPT_INDENT_2 if indent else 0)
    | (orjson.OPT_APPEND_NEWLINE if line else 0)
    for indent in (False, True)
    for line in (False, True)
}
"""The orjson options of `dumps`, by `indent` and `line`."""


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


def as_text(value: Any) -> str:
    """Return `value` as a string: a string as it is, anything else as compact JSON text.

    Numbers, booleans and null become their JSON text (`5` -> "5", `true` -> "true"), objects
    and arrays compact JSON (integers of any size exact), so `json.loads` reads every value
    that was not a string back.
    """
    kind = type(value)
    if kind is int:
        return int.__repr__(value)  # what `json.dumps` writes, and the same limit of digits
    if kind is bool:
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, str):
        return value
    if kind is not float and holds_exact(value):  # a number a double cannot hold: as written
        return dumps(value).decode("utf-8")
    return _compact(value)


_compact = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
"""`json.dumps(value, ensure_ascii=False, separators=(",", ":"))` with one encoder for all."""
