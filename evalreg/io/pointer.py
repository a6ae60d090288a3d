"""JSON pointers (RFC 6901): build them from paths and look them up in records."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final = _Missing()
"""Returned by `resolve` where a pointer leads nowhere."""


def escape(token: str | int) -> str:
    """Escape one reference token."""
    return str(token).replace("~", "~0").replace("/", "~1")


def to_pointer(path: Iterable[str | int]) -> str:
    """Join path segments into a JSON pointer (`""` is the whole document)."""
    return "".join("/" + escape(token) for token in path)


def split(pointer: str) -> list[str]:
    """Split a JSON pointer into unescaped reference tokens."""
    if not pointer:
        return []
    if not pointer.startswith("/"):
        raise ValueError(f"JSON pointer {pointer!r} must start with '/'")
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/")]


def resolve(document: Any, pointer: str) -> Any:
    """Return the value at `pointer` in `document`, or `MISSING`."""
    node = document
    for token in split(pointer):
        if isinstance(node, dict):
            if token not in node:
                return MISSING
            node = node[token]
        elif isinstance(node, list):
            if not token.isdigit() or int(token) >= len(node):
                return MISSING
            node = node[int(token)]
        else:
            return MISSING
    return node
