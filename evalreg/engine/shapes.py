"""Detections remembered by the shape of a record, for `evalreg.engine.detect`.

A record's shape is the values at its marker keys (with their types), then the keys present of
those that tell families apart. Where those alone decided a record (no file name, validity or
era had a say), any record of the same shape is decided alike: two dictionary lookups.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class Shapes(Generic[T]):
    """What records of each shape were decided as, at most `size` values and shapes of each."""

    def __init__(
        self, keys: tuple[str, ...] | None, plain: tuple[type, ...], missing: Any, size: int
    ):
        self.keys = keys
        """The marker keys (None: a marker is not a top-level key, and nothing is remembered)."""
        self._plain, self._missing, self._size = plain, missing, size
        self._found: dict[Hashable, tuple[frozenset[str], dict[frozenset[str], T]]] = {}

    def find(self, record: Any) -> T | None:
        """Return what a record of the shape of `record` was decided as, or None."""
        if self.keys is None or type(record) is not dict:
            return None
        values = []
        for key in self.keys:
            value = record.get(key, self._missing)
            if type(value) not in self._plain:
                return None
            values.append((type(value), value))
        known = self._found.get(tuple(values))
        return None if known is None else known[1].get(known[0].intersection(record))

    def keep(
        self, values: Hashable, keys: frozenset[str], present: frozenset[str], found: T
    ) -> None:
        """Remember `found` for the records whose marker values are `values` (as `find` makes
        them) and whose keys of `keys` are `present`."""
        known = self._found.get(values)
        if known is None or len(known[1]) >= self._size:
            if len(self._found) >= self._size:
                self._found.clear()
            known = self._found[values] = (keys, {})
        known[1][present] = found
