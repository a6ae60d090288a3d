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


def _index(token: str) -> int:
    """Return the array index a token names (ASCII digits only).

    A token that names no index (`x`, or digits of other scripts such as `¹`) returns a number
    no array reaches.
    """
    return int(token) if token.isascii() and token.isdigit() else _NO_INDEX


_NO_INDEX = 1 << 62


def resolve(document: Any, pointer: str) -> Any:
    """Return the value at `pointer` in `document`, or `MISSING`."""
    node = document
    for token in split(pointer):
        if isinstance(node, dict):
            if token not in node:
                return MISSING
            node = node[token]
        elif isinstance(node, list):
            index = _index(token)
            if index >= len(node):
                return MISSING
            node = node[index]
        else:
            return MISSING
    return node


def find(document: Any, pointer: str) -> list[tuple[str, Any]]:
    """Return the concrete pointer and value of every place `pointer` reaches in `document`.

    A `*` token stands for every item of an array, so `/cases/*/id` reaches `/cases/0/id`,
    `/cases/1/id`, ... for each case that has an `id`. Other tokens are plain RFC 6901 tokens.
    The places come in document order; none where the pointer leads nowhere.
    """
    tokens = split(pointer)
    if "*" not in tokens:
        value = resolve(document, pointer)
        return [] if value is MISSING else [(pointer, value)]
    found: list[tuple[str, Any]] = []

    def walk(node: Any, rest: list[str], path: list[str | int]) -> None:
        if not rest:
            found.append((to_pointer(path), node))
            return
        token, tail = rest[0], rest[1:]
        if token == "*" and isinstance(node, list):
            for index, item in enumerate(node):
                walk(item, tail, [*path, index])
        elif isinstance(node, dict) and token in node:
            walk(node[token], tail, [*path, token])
        elif isinstance(node, list) and _index(token) < len(node):
            walk(node[_index(token)], tail, [*path, _index(token)])

    walk(document, tokens, [])
    return found
