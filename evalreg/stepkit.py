"""Tools for writing migration steps: copy a record, relabel it, convert values, rename keys.

Every function here is pure: it returns new objects and never changes the ones it is given,
which is what a step's `upgrade` and `downgrade` must do too.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from evalreg.engine.steps import Relabel, StepContext
from evalreg.io.codec import clone, dumps, holds_exact
from evalreg.io.pointer import to_pointer

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

_Step = Callable[[dict[str, Any], StepContext], dict[str, Any]]


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


def as_text(value: Any) -> str:
    """Return `value` as a string: a string as it is, anything else as compact JSON text.

    Numbers, booleans and null become their JSON text (`5` -> "5", `true` -> "true"), objects
    and arrays compact JSON (integers of any size exact), so `json.loads` reads every value
    that was not a string back.
    """
    if isinstance(value, str):
        return value
    if holds_exact(value):  # a number a double cannot hold: its text as written
        return dumps(value).decode("utf-8")
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
    reported lost at `source`, with `clash` as the reason (by default "`target` already holds
    another value", naming it). Return whether the value was put.

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
