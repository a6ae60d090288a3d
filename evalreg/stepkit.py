"""Tools for writing migration steps: copy a record, relabel it, convert values, rename keys.

A step changes the record it is given only where the engine hands it over (`ctx.owned`): it
starts from `writable(record, ctx)`, which is the record itself then and a deep copy otherwise,
and changes that. Every other function here is pure: it returns new objects and never changes
the ones it is given (`carry` puts a value into an object the step may change). Given the step's
context and where the value is, the helpers that change something report it too (`to_text` and
`strings_only` a conversion, `rename_key` a rename, `carry` a move, `gather` the moves of list
items), so the step need not.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from functools import lru_cache
from typing import Any, TypeVar

from evalreg.engine.steps import Relabel, StepContext
from evalreg.errors import UnfinishedStepError
from evalreg.io.codec import as_text, clone, schema_type
from evalreg.io.pointer import MISSING, escape, split, to_pointer
from evalreg.registry.schemawalk import schema_at

__all__ = [
    "as_text",
    "at",
    "carry",
    "clone",
    "convert_types",
    "drop_member",
    "gather",
    "insert_after",
    "move_value",
    "param_object",
    "param_value",
    "relabel",
    "rename_key",
    "rename_key_each",
    "rename_member",
    "require_target",
    "require_valid",
    "schema_at",
    "set_missing",
    "strings_only",
    "to_pointer",
    "to_text",
    "unchanged",
    "update_at",
    "values_at",
    "writable",
]

_Step = Callable[[dict[str, Any], StepContext], dict[str, Any]]
_T = TypeVar("_T")


def writable(record: _T, ctx: StepContext) -> _T:
    """Return `record` for the step to change in place: itself where the engine handed it over
    (`ctx.owned`), else a deep copy (`clone`), so that the step's input stays as it was."""
    return record if ctx.owned else clone(record)


def unchanged(record: dict[str, Any], ctx: StepContext) -> dict[str, Any]:
    """Return `record` as it is: the step of two versions that differ only in their label.

    The engine writes the version marker (the manifest's `template`) after every step, so the
    label needs no step code. Use `relabel` where the step itself must write it. Where the step
    may not change its input (`ctx.owned` false), it returns a shallow copy: what it does not
    change is shared with its output, and nothing here changes.
    """
    return record if ctx.owned else dict(record)


def relabel(pointer: str, label: str) -> _Step:
    """Return a step function that copies a record and sets the value at `pointer` to `label`.

    A missing key is added at the end of its object; where the object that should hold it is
    missing (or no object), the copy is returned without a label. Given a record it owns
    (`ctx.owned`), the step sets the label in place.

    Raises:
        ValueError: `pointer` is not a JSON pointer to a place inside the record.
    """
    return Relabel(pointer, label)


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
    for token in tokens:
        if type(token) is str and "~" not in token and "/" not in token:
            pointer += "/" + token
        else:
            pointer += "/" + escape(token)
    return pointer


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
    return {
        key: item if isinstance(item, str) else to_text(item, ctx, at(pointer, key))
        for key, item in mapping.items()
    }


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


# -- pointer patterns, for generated steps ------------------------------------------------------


def _children(node: Any, token: str) -> Iterator[tuple[str | int, Any]]:
    if token == "*":
        if isinstance(node, list):
            yield from enumerate(node)
        elif isinstance(node, dict):
            yield from node.items()
    elif isinstance(node, dict):
        if token in node:
            yield token, node[token]
    elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
        yield int(token), node[int(token)]


def values_at(record: Any, pattern: str) -> Iterator[tuple[str, Any]]:
    """Yield the pointer and value of every place `pattern` reaches in `record`, in order."""

    def walk(node: Any, rest: list[str], path: list[str | int]) -> Iterator[tuple[str, Any]]:
        if not rest:
            yield to_pointer(path), node
            return
        for key, child in _children(node, rest[0]):
            yield from walk(child, rest[1:], [*path, key])

    yield from walk(record, split(pattern), [])


def update_at(record: Any, pattern: str, change: Callable[[str, Any], Any]) -> Any:
    """Return `record` with `change(pointer, value)` put in place of every value `pattern` reaches.

    Only the objects and arrays on the way to a value that `change` replaced (returned another
    object) are copied; `record` itself is never changed.
    """

    def walk(node: Any, rest: list[str], path: list[str | int]) -> Any:
        if not rest:
            return change(to_pointer(path), node)
        updates = {}
        for key, child in _children(node, rest[0]):
            new = walk(child, rest[1:], [*path, key])
            if new is not child:
                updates[key] = new
        if not updates:
            return node
        copied: Any = list(node) if isinstance(node, list) else dict(node)
        for key, new in updates.items():
            copied[key] = new
        return copied

    return walk(record, split(pattern), [])


def rename_member(record: Any, parent: str, old: str, new: str, ctx: StepContext) -> Any:
    """Return `record` with the member `old` of every object at `parent` named `new`.

    The member keeps its place among the others; each rename is reported. Where the object
    already holds `new`, the old value is reported dropped when it is the same, else lost
    (`ctx.lose`).
    """

    def rename(where: str, node: Any) -> Any:
        if not isinstance(node, dict) or old not in node:
            return node
        source, target = where + to_pointer([old]), where + to_pointer([new])
        if new in node:
            if node[new] == node[old]:
                ctx.dropped(source, f"{target} holds the same value")
            else:
                ctx.lose(source, f"{target} already holds another value")
            return {k: v for k, v in node.items() if k != old}
        ctx.renamed(source, target)
        return {(new if k == old else k): v for k, v in node.items()}

    return update_at(record, parent, rename)


def move_value(record: Any, source: str, target: str, ctx: StepContext) -> Any:
    """Return `record` with the value at `source` moved to `target` (patterns of one shape).

    `source` and `target` must agree up to their last `*`: the value moves within each place
    the common part reaches. Objects on the way to `target` are made where missing; a value
    that would overwrite another, or whose way is blocked by a value that is no object, is
    reported lost.

    Raises:
        ValueError: the patterns do not agree up to their last `*`.
    """
    src, dst = split(source), split(target)
    stars = [i for i, t in enumerate(src) if t == "*"] + [i for i, t in enumerate(dst) if t == "*"]
    cut = 1 + max(stars) if stars else 0
    if src[:cut] != dst[:cut] or "*" in src[cut:] + dst[cut:] or not src[cut:] or not dst[cut:]:
        raise ValueError(f"cannot move {source} to {target}: their shapes differ")
    head = to_pointer(src[:cut])

    def move(where: str, node: Any) -> Any:
        holder: Any = node
        for token in src[cut:-1]:
            holder = holder.get(token) if isinstance(holder, dict) else None
        if not isinstance(holder, dict) or src[-1] not in holder:
            return node
        value = holder[src[-1]]
        was = where + to_pointer(src[cut:])
        now = where + to_pointer(dst[cut:])
        out = _without(node, src[cut:])
        place: Any = out
        for token in dst[cut:-1]:
            child = place.get(token, {}) if isinstance(place, dict) else None
            if not isinstance(child, dict):
                ctx.lose(was, f"{now} cannot be made: a value that is no object is in the way")
                return out
            place[token] = child = dict(child)
            place = child
        if dst[-1] in place:
            if place[dst[-1]] == value:
                ctx.dropped(was, f"{now} holds the same value")
            else:
                ctx.lose(was, f"{now} already holds another value")
            return out
        place[dst[-1]] = value
        ctx.moved(was, now)
        return out

    return update_at(record, head, move)


def _without(node: dict[str, Any], path: list[str]) -> dict[str, Any]:
    """Return a copy of `node` without the member at `path` (copying the objects on the way)."""
    out = dict(node)
    if len(path) == 1:
        del out[path[0]]
    else:
        out[path[0]] = _without(out[path[0]], path[1:])
    return out


def drop_member(record: Any, parent: str, key: str, ctx: StepContext, reason: str) -> Any:
    """Return `record` without the member `key` of every object at `parent`, each reported lost.

    Raises:
        DataLossError: a member is there and the user did not allow loss.
    """

    def drop(where: str, node: Any) -> Any:
        if not isinstance(node, dict) or key not in node:
            return node
        ctx.lose(where + to_pointer([key]), reason)
        return {k: v for k, v in node.items() if k != key}

    return update_at(record, parent, drop)


def set_missing(
    record: Any,
    parent: str,
    key: str,
    value: Any,
    *,
    needs: str | None = None,
    ctx: StepContext | None = None,
) -> Any:
    """Return `record` with `key` set to a copy of `value` in every object at `parent` lacking it.

    `value` None with `needs` (the name of the step parameter, or parameters, that give it)
    refuses a record that lacks the member: the value must come from `--set NEEDS=VALUE`. With
    `ctx`, each value put is reported added: a `default` of the format without `needs`, else
    from the parameter.

    Raises:
        ValueError: a record lacks the member and the parameter `needs` was not given.
    """

    def fill(where: str, node: Any) -> Any:
        if not isinstance(node, dict) or key in node:
            return node
        pointer = where + to_pointer([key])
        if value is None and needs is not None:
            raise ValueError(
                f"{pointer} is required and the record has none: give it with --set {needs}=VALUE"
            )
        if ctx is not None:
            if needs is None:
                ctx.default(pointer, value)
            else:
                ctx.param(pointer, needs.split(",")[0].strip(), value)
        return {**node, key: clone(value)}

    return update_at(record, parent, fill)


def _fits(value: Any, types: frozenset[str]) -> bool:
    kind = schema_type(value)
    return kind in types or (kind == "integer" and "number" in types)


def _converted(value: Any, types: frozenset[str]) -> tuple[bool, Any]:
    """Return a lossless conversion of `value` to one of `types`, if there is one."""
    kind = schema_type(value)
    if "array" in types and kind != "array":
        return True, [value]  # one value becomes a list of one
    if "string" in types and kind in ("integer", "number", "boolean", "null", "object", "array"):
        return True, as_text(value)  # JSON text reads back as the value
    if kind == "boolean" and types & {"number", "integer"}:
        return True, (1.0 if value else 0.0) if "number" in types else int(value)
    return False, value


def convert_types(
    record: Any,
    pattern: str,
    types: tuple[str, ...],
    todo: str,
    *,
    ctx: StepContext | None = None,
) -> Any:
    """Return `record` with every value at `pattern` of a type outside `types` converted.

    Conversions that lose nothing: one value to a list of it; a number, boolean, object or
    array to its JSON text; a boolean to 1 or 0. A value with no such conversion refuses the
    record, naming `todo`. With `ctx`, each conversion is reported.

    Raises:
        UnfinishedStepError: a value has no lossless conversion.
    """
    wanted = frozenset(types)

    def convert(where: str, value: Any) -> Any:
        if _fits(value, wanted):
            return value
        ok, new = _converted(value, wanted)
        if not ok:
            raise UnfinishedStepError(todo, where)
        if ctx is not None:
            ctx.converted(where, value, new)
        return new

    return update_at(record, pattern, convert)


@lru_cache(maxsize=256)
def _fragment_validator(text: str, dialect: str) -> Any:
    import jsonschema

    schema = json.loads(text)
    cls = jsonschema.validators.validator_for(
        {"$schema": dialect}, default=jsonschema.Draft7Validator
    )
    return cls(schema)


def require_valid(
    record: Any,
    pattern: str,
    fragment: Mapping[str, Any] | None,
    todo: str,
    dialect: str = "http://json-schema.org/draft-07/schema#",
) -> None:
    """Refuse `record`, naming `todo`, where a value at `pattern` fails `fragment`.

    `fragment` is the part of the new schema the value must meet (None: any value there is
    refused, the step not knowing what to do with it).

    Raises:
        UnfinishedStepError: a value at `pattern` fails `fragment`.
    """
    check = None
    if fragment is not None:
        text = json.dumps(fragment, sort_keys=True)
        check = _fragment_validator(text, dialect)
    for where, value in values_at(record, pattern):
        if check is None or not check.is_valid(value):
            raise UnfinishedStepError(todo, where)


def param_value(ctx: StepContext, name: str, types: tuple[str, ...] = ("string",)) -> Any:
    """Return the step parameter `name` as a value of one of `types` (None when not given).

    `--set` gives text: where `types` has no `string`, the text is read as JSON.
    """
    value = ctx.params.get(name)
    if isinstance(value, str) and "string" not in types:
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def param_object(ctx: StepContext, members: Mapping[str, str]) -> dict[str, Any] | None:
    """Return an object of step parameters, member by parameter name (None if one is missing)."""
    found = {member: ctx.params.get(name) for member, name in members.items()}
    return None if any(value is None for value in found.values()) else found


@lru_cache(maxsize=64)
def _target_schema(step_file: str, version: str) -> Any:
    from pathlib import Path

    step = Path(step_file)
    path = step.parents[2] / "schemas" / step.parent.name / f"{version}.schema.json"
    return json.loads(path.read_bytes())


def require_target(record: Any, pattern: str, step_file: str, version: str, todo: str) -> None:
    """Refuse `record`, naming `todo`, where a value at `pattern` is not valid at `version`.

    The schema of `version` is read beside the step (`schemas/<family>/<version>.schema.json`
    of the step's registry directory); where it does not say plainly what governs `pattern`,
    any value there is refused.

    Raises:
        UnfinishedStepError: a value at `pattern` is not valid at `version`.
    """
    check = _target_check(step_file, version, pattern)
    for where, value in values_at(record, pattern):
        if check is None or not check.is_valid(value):
            raise UnfinishedStepError(todo, where)


@lru_cache(maxsize=256)
def _target_check(step_file: str, version: str, pattern: str) -> Any:
    schema = _target_schema(step_file, version)
    fragment = schema_at(schema, pattern) if isinstance(schema, dict) else None
    if fragment is None:
        return None
    dialect = schema.get("$schema") or "http://json-schema.org/draft-07/schema#"
    return _fragment_validator(json.dumps(fragment, sort_keys=True), dialect)
