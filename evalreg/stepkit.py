"""Tools for writing migration steps: copy a record, relabel it, convert values, rename keys.

Every function here is pure: it returns new objects and never changes the ones it is given,
which is what a step's `upgrade` and `downgrade` must do too (`carry` puts a value into an
object the step has made). Given the step's context and where the value is, the helpers that
change something report it too (`to_text` and `strings_only` a conversion, `rename_key` a rename,
`carry` a move, `gather` the moves of list items), so the step need not.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

from evalreg.engine.steps import Relabel, StepContext
from evalreg.io.codec import clone, dumps, holds_exact
from evalreg.io.pointer import MISSING, escape, to_pointer

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


def at(pointer: str, *tokens: str | int) -> str:
    """Return the pointer of a place inside the one at `pointer` (`at("/a", "b/c", 0)` is
    `/a/b~1c/0`): each token escaped, as keys may hold `/` and `~`."""
    return pointer + "".join("/" + escape(token) for token in tokens)


def to_text(value: Any, ctx: StepContext, pointer: str) -> str:
    """Return `as_text(value)`, reporting the conversion at `pointer` unless it was a string."""
    text = as_text(value)
    if not isinstance(value, str):
        ctx.converted(pointer, value, text)
    return text


def strings_only(mapping: dict[str, Any], ctx: StepContext, pointer: str) -> dict[str, Any]:
    """Return `mapping` with every value as text (`to_text`), each conversion reported.

    `mapping` itself is returned when it holds only strings; otherwise a new dict.
    """
    for value in mapping.values():
        if not isinstance(value, str):
            break
    else:
        return mapping
    return {key: to_text(item, ctx, at(pointer, key)) for key, item in mapping.items()}


def rename_key(
    value: Any,
    old: str,
    new: str,
    *,
    nested: bool = False,
    ctx: StepContext | None = None,
    source: str = "",
    target: str | None = None,
) -> Any:
    """Return a copy of `value` with the key `old` of an object named `new`, in the same place.

    A value that is no object is copied as it is. With `nested`, the list under `old` gets
    `rename_key_each(..., nested=True)`: the shape of checks that hold inner checks. With `ctx`,
    each rename is reported: `source` is where `value` is in the step's input, `target` where
    its copy goes in the output (by default the same place). Where the object holds both keys,
    `new` keeps its value and `old` is dropped when it holds the same, else lost (allow-loss).

    Raises:
        DataLossError: `old` and `new` hold different values and loss is not allowed.
    """
    if not isinstance(value, dict):
        return clone(value)
    target = source if target is None else target
    out: dict[str, Any] = {}
    for key, item in value.items():
        if key == old and new in value and old != new:
            if ctx is not None:
                if item == value[new]:
                    ctx.dropped(at(source, old), f"the same value is under {new}")
                else:
                    ctx.lose(at(source, old), f"{new} holds another value")
            continue
        name = new if key == old else key
        if nested and key == old:
            place, to = at(source, key), at(target, name)
            out[name] = rename_key_each(
                item, old, new, nested=True, ctx=ctx, source=place, target=to
            )
        else:
            out[name] = clone(item)
        if key == old and ctx is not None:
            ctx.renamed(at(source, old), at(target, new))
    return out


def rename_key_each(
    items: Any,
    old: str,
    new: str,
    *,
    nested: bool = False,
    ctx: StepContext | None = None,
    source: str = "",
    target: str | None = None,
) -> Any:
    """Return a copy of a list with `rename_key` applied to each item (`source`, `target`: the
    list's places, for the reports).

    A value that is no list is copied as it is.
    """
    if not isinstance(items, list):
        return clone(items)
    target = source if target is None else target
    return [
        rename_key(
            item, old, new, nested=nested, ctx=ctx, source=f"{source}/{i}", target=f"{target}/{i}"
        )
        for i, item in enumerate(items)
    ]


def gather(parts: Iterable[tuple[str, Any]], target: str, ctx: StepContext) -> list[Any]:
    """Return the items of several lists as one list at `target`, each move reported.

    `parts`: each list with its place in the step's input, in order; a part that is no list is
    skipped. A list that becomes the whole of the new one is reported as one move; otherwise
    each item is reported moved to its new index. The items are the same objects as in the
    lists (copy them first where they must not be shared).
    """
    lists = [(where, part) for where, part in parts if isinstance(part, list)]
    out: list[Any] = []
    nonempty = [part for part in lists if part[1]]
    for where, part in lists:
        if len(nonempty) == 1 and part is nonempty[0][1]:
            ctx.moved(where, target)
        elif part:
            for index in range(len(part)):
                ctx.moved(f"{where}/{index}", f"{target}/{len(out) + index}")
        out.extend(part)
    return out


def carry(
    holder: dict[str, Any],
    key: str,
    value: Any,
    ctx: StepContext,
    *,
    source: str,
    target: str,
    clash: str | None = None,
    original: Any = MISSING,
) -> bool:
    """Put `value` at `holder[key]` and report it moved from `source` to `target`.

    Where `holder[key]` already holds a different value, nothing is overwritten: the value is
    reported lost at `source`, with `clash` as the reason (by default "<target> already holds
    another value"); where it holds the same value, the value is reported dropped. Return
    whether the value is at `holder[key]`. `original`: the value as it was at
    `source`, when `value` is a conversion of it (`as_text(original)`, say); the conversion is
    then reported too, unless both have the same type.

    Raises:
        DataLossError: the value clashes and the user did not allow loss.
    """
    if key in holder and holder[key] != value:
        ctx.lose(source, f"{target} already holds another value" if clash is None else clash)
        return False
    if key in holder:  # the same value: nothing to put, nothing lost
        ctx.dropped(source, f"{target} holds the same value")
        return True
    holder[key] = value
    ctx.moved(source, target)
    if original is not MISSING and type(original) is not type(value):
        ctx.converted(target, original, value)
    return True


__all__ = [
    "as_text",
    "at",
    "carry",
    "clone",
    "gather",
    "insert_after",
    "relabel",
    "rename_key",
    "rename_key_each",
    "strings_only",
    "to_pointer",
    "to_text",
    "unchanged",
]
