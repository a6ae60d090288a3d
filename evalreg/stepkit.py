"""Tools for writing migration steps: copy a record, relabel it, convert values, rename keys.

Every function here is pure: it returns new objects and never changes the ones it is given,
which is what a step's `upgrade` and `downgrade` must do too.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, cast

from evalreg.io.pointer import split, to_pointer

if TYPE_CHECKING:
    from evalreg.engine.migrate import StepContext

_T = TypeVar("_T")
_Step = Callable[[dict[str, Any], "StepContext"], dict[str, Any]]

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


def unchanged(record: dict[str, Any], ctx: StepContext) -> dict[str, Any]:
    """Return a copy of `record`: the step of two versions that differ only in their label.

    The engine writes the version marker (the manifest's `template`) after every step, so the
    label needs no step code. Use `relabel` where the step itself must write it. The copy is
    shallow: a step may share what it does not change with its output (the engine gives the
    chain its own copy of the caller's record), and nothing here changes.
    """
    return dict(record)


def relabel(pointer: str, label: str) -> _Step:
    """Return a step function that copies a record and sets the value at `pointer` to `label`.

    A missing key is added at the end of its object; where the object that should hold it is
    missing (or no object), the copy is returned without a label. The engine runs consecutive
    relabelling steps of one pointer as the last of them alone: the result is the same.

    Raises:
        ValueError: `pointer` is not a JSON pointer to a place inside the record.
    """
    return Relabel(pointer, label)


class Relabel:
    """The step function `relabel` returns: set the value at one pointer to a fixed label."""

    def __init__(self, pointer: str, label: str) -> None:
        tokens = split(pointer)
        if not tokens:
            raise ValueError("relabel needs a pointer to a place inside the record, not ''")
        self.pointer = pointer
        self.label = label
        *self._parents, self._last = tokens
        self.__doc__ = f"Return a copy of `record` with {pointer} set to {label!r}."

    def __call__(self, record: dict[str, Any], ctx: StepContext | None = None) -> dict[str, Any]:
        # Only the objects on the way to the label are copied; the rest is shared, unchanged.
        out = dict(record)
        holder: dict[str, Any] = out
        for token in self._parents:
            child = holder.get(token)
            if not isinstance(child, dict):
                return out
            holder[token] = holder = dict(child)
        holder[self._last] = self.label
        return out

    def __repr__(self) -> str:
        return f"relabel({self.pointer!r}, {self.label!r})"


def as_text(value: Any) -> str:
    """Return `value` as a string: a string as it is, anything else as compact JSON text.

    Numbers, booleans and null become their JSON text (`5` -> "5", `true` -> "true"), objects
    and arrays compact JSON (integers of any size exact), so `json.loads` reads every value
    that was not a string back.
    """
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def insert_after(mapping: dict[str, Any], after: str, key: str, value: Any) -> dict[str, Any]:
    """Return a new dict of `mapping`'s items with `key` set to `value` right after `after`.

    Without `after`, `key` goes last; an existing `key` moves to the new place. The values are
    the same objects as in `mapping` (copy them first where they must not be shared).
    """
    out: dict[str, Any] = {}
    for name, item in mapping.items():
        if name != key:
            out[name] = item
        if name == after:
            out[key] = value
    out[key] = value
    return out


def rename_key(value: Any, old: str, new: str, *, nested: bool = False) -> Any:
    """Return a copy of `value` with the key `old` of an object named `new`, in the same place.

    A value that is no object is copied as it is. With `nested`, the list under `old` gets
    `rename_key_each(..., nested=True)`: the shape of checks that hold inner checks.
    """
    if not isinstance(value, dict):
        return clone(value)
    return {
        (new if key == old else key): (
            rename_key_each(item, old, new, nested=True) if nested and key == old else clone(item)
        )
        for key, item in value.items()
    }


def rename_key_each(items: Any, old: str, new: str, *, nested: bool = False) -> Any:
    """Return a copy of a list with `rename_key` applied to each item.

    A value that is no list is copied as it is.
    """
    if not isinstance(items, list):
        return clone(items)
    return [rename_key(item, old, new, nested=nested) for item in items]


def carry(
    holder: dict[str, Any],
    key: str,
    value: Any,
    ctx: StepContext,
    *,
    source: str,
    target: str,
    clash: str | None = None,
) -> bool:
    """Put `value` at `holder[key]` and report it moved from `source` to `target`.

    Where `holder[key]` already holds a different value, nothing is overwritten: the value is
    reported lost at `source`, with `clash` as the reason (by default "<target> already holds
    another value"). Return whether the value was put.

    Raises:
        DataLossError: the value clashes and the user did not allow loss.
    """
    if key in holder and holder[key] != value:
        ctx.lose(source, f"{target} already holds another value" if clash is None else clash)
        return False
    holder[key] = value
    ctx.moved(source, target)
    return True


__all__ = [
    "as_text",
    "carry",
    "clone",
    "insert_after",
    "relabel",
    "rename_key",
    "rename_key_each",
    "to_pointer",
    "unchanged",
]
