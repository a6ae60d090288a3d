"""JSON encoding and decoding: fast (orjson) where that is exact, the standard library where not.

orjson turns integers wider than 64 bits into floats when loading and refuses them when dumping.
JSON Schema allows such integers, and a migration must never change a number, so input that may
hold one is parsed with the standard library instead, which keeps them exact.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

# Any run of 19 or more digits may be an integer outside the signed 64-bit range. Such a run
# inside a string or a long fraction only costs a slower, still exact, parse. To find one,
# digits become "0" and every other byte a space: two passes in C, where a regular expression
# costs ten times as much on text full of digits.
_DIGITS = bytes(0x30 if 0x30 <= byte <= 0x39 else 0x20 for byte in range(256))
_LONG_RUN = b"0" * 19

DecodeError = (orjson.JSONDecodeError, json.JSONDecodeError, UnicodeDecodeError, ValueError)
"""The exceptions `loads` raises for input that is not JSON."""


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def loads(data: bytes | str) -> Any:
    """Parse one JSON document, keeping integers of any size exact.

    Raises:
        ValueError: `data` is not valid JSON (or not valid UTF-8).
    """
    raw = data.encode("utf-8") if isinstance(data, str) else data
    if _LONG_RUN not in raw.translate(_DIGITS):
        return orjson.loads(raw)
    return json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)


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


def wide_integer_lines(block: bytes) -> set[int]:
    """Return the indices of the lines of `block` that may hold an integer wider than 64 bits.

    One pass over a whole block of lines costs less than one per line; the other lines can be
    parsed with `loads_narrow`.
    """
    digits = block.translate(_DIGITS)
    found: set[int] = set()
    line = counted = 0
    position = digits.find(_LONG_RUN)
    while position >= 0:
        line += block.count(b"\n", counted, position)
        found.add(line)
        counted = block.find(b"\n", position)
        if counted < 0:
            break
        position = digits.find(_LONG_RUN, counted)
    return found


loads_narrow = orjson.loads
"""Parse JSON text known to hold no integer wider than 64 bits (see `wide_integer_lines`)."""
