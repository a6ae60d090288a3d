"""JSON encoding and decoding, exact for every number JSON can hold, and exact deep copies.

Decoding uses msgspec, which is as fast as orjson and keeps integers of any size exact (orjson
turns integers wider than 64 bits into floats). Encoding uses orjson, the fastest, and the
standard library for the rare value orjson refuses (again: integers wider than 64 bits). A
migration must never change a number, and JSON Schema allows integers of any size.
"""

from __future__ import annotations

import copy
import json
from typing import Any, TypeVar, cast

import msgspec
import orjson

_T = TypeVar("_T")

_decoder = msgspec.json.Decoder()

DecodeError = (msgspec.DecodeError, UnicodeDecodeError, ValueError)
"""The exceptions `loads` raises for input that is not JSON (all of them `ValueError`s)."""


def loads(data: bytes | str) -> Any:
    """Parse one JSON document, keeping integers of any size exact.

    NaN, Infinity, numbers too large for a float (`1e400`) and lone surrogates are refused:
    none of them is JSON a schema could be checked against or written back.

    Raises:
        ValueError: `data` is not valid JSON, is not valid UTF-8, or nests too deeply.
    """
    try:
        return _decoder.decode(data)
    except UnicodeDecodeError:
        if isinstance(data, bytes):
            data.decode("utf-8")  # raises again, placed from the start of the document
        raise
    except msgspec.ValidationError as err:
        raise ValueError(str(err)) from None  # "Number out of range", as msgspec says
    except RecursionError:
        raise ValueError("nested too deeply") from None


def dumps(value: Any, *, indent: bool = False) -> bytes:
    """Serialise `value` as UTF-8 JSON, compact or indented by two spaces, keeping key order.

    Raises:
        TypeError: `value` holds something JSON cannot represent.
    """
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2 if indent else 0)
    except orjson.JSONEncodeError:
        text = json.dumps(
            value,
            ensure_ascii=False,
            allow_nan=False,
            indent=2 if indent else None,
            separators=(",", ": ") if indent else (",", ":"),
        )
        return text.encode("utf-8")


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
