"""A migration step generated from the diff of two versions, as readable Python on `stepkit`.

Only what breaks BACKWARD (old data the new schema rejects) needs a step; what only widens
the schema needs nothing. Each such change becomes one action, in this order:

1. a property renamed or moved (the diff pairs them by equal schemas): `rename_member` or
   `move_value`; a move between places of different shapes is a TODO;
2. a property removed where the new schema rejects it: `drop_member`, a loss (refused
   without `--allow-loss`), unless a property of its name was added elsewhere in another shape
   (it may have moved): a TODO;
3. a narrowed type: `convert_types`, whose conversions lose nothing (a value to a list of it,
   a value to its JSON text, a boolean to 1 or 0); a value with none refuses the record;
4. a value newly required: its `default`, else a step parameter (`--set`) per member or for
   the whole value, with the schema's description as its help;
5. anything else (a tighter constraint, a removed enum value, a closed object, changed
   branches, what the diff could not decide): a `TODO`, listed in `TODOS`, whose check refuses
   exactly the records whose value there is not valid at the new version, naming the TODO.

A generated step thus either does what a careful hand-written step does, or refuses the record
naming what is left to decide. `evalreg check` reports a step whose `TODOS` is not empty.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from evalreg.io.pointer import split, to_pointer
from evalreg.registry.schemawalk import schema_at

if TYPE_CHECKING:
    from evalreg.diff import Change, SchemaDiff

_QUIET = frozenset(
    {
        "description-changed",
        "annotation-changed",
        "property-renamed",
        "property-moved",
        "required-removed",
    }
)
_SCALARS = frozenset({"string", "number", "integer", "boolean"})


@dataclass(frozen=True)
class StepParam:
    """A parameter of a generated step: a value old records lack and the schema gives none."""

    name: str
    help: str
    types: tuple[str, ...] = ("string",)


@dataclass(frozen=True)
class GeneratedStep:
    """A generated step: its source text and what it does, in words."""

    source: str
    target: str
    text: str
    changes: tuple[str, ...]
    """Each change, in plain words, as the docstring lists them."""
    todos: tuple[str, ...]
    params: tuple[StepParam, ...]
    losses: tuple[str, ...]
    """What the step may lose (each refused without `--allow-loss`)."""

    @property
    def finished(self) -> bool:
        """Return whether the step has no TODO left."""
        return not self.todos


@dataclass
class _Plan:
    code: list[str] = field(default_factory=list)
    words: list[str] = field(default_factory=list)
    todos: list[str] = field(default_factory=list)
    params: dict[str, StepParam] = field(default_factory=dict)
    losses: list[str] = field(default_factory=list)

    def todo(self, pointer: str, text: str) -> None:
        number = len(self.todos) + 1
        label = f"TODO {number}: {_show(pointer)}: {text}"
        self.todos.append(label)
        self.words.append(label + " (records whose value there is not valid at the new "
                          "version are refused until this is decided)")  # fmt: skip
        self.code.append(
            f"    kit.require_target(out, {_lit(pointer)}, __file__, TO, TODOS[{number - 1}])"
        )


def _show(pointer: str) -> str:
    return f"`{pointer or '/'}`"


def _parent_key(pointer: str) -> tuple[str, str]:
    tokens = split(pointer)
    return to_pointer(tokens[:-1]), tokens[-1]


def _local(document: Mapping[str, Any], schema: Any) -> Any:
    for _ in range(16):
        if not isinstance(schema, Mapping) or not isinstance(schema.get("$ref"), str):
            return schema
        ref = schema["$ref"]
        if not ref.startswith("#"):
            return schema
        node: Any = document
        for token in split(ref[1:]):
            node = node.get(token) if isinstance(node, Mapping) else None
        schema = node
    return schema


def _types(schema: Any) -> tuple[str, ...]:
    if not isinstance(schema, Mapping):
        return ()
    found = schema.get("type")
    if isinstance(found, str):
        return (found,)
    if isinstance(found, list):
        return tuple(t for t in found if isinstance(t, str))
    return ()


def _enum_types(schema: Any) -> tuple[str, ...]:
    """Return the types of an `enum`'s values when all are scalars of one type."""
    values = schema.get("enum") if isinstance(schema, Mapping) else None
    if not isinstance(values, list) or not values:
        return ()
    kinds = {"string" if isinstance(v, str) else "" for v in values}
    return ("string",) if kinds == {"string"} else ()


def _identifier(text: str) -> str:
    name = re.sub(r"\W+", "_", text).strip("_").lower()
    return name if name and not name[0].isdigit() else f"p_{name}"


def _describe(schema: Any) -> str:
    text = schema.get("description") if isinstance(schema, Mapping) else None
    return " ".join(str(text).split()) if text else "no description in the schema"


def generate_step(
    diff: SchemaDiff,
    new_document: Mapping[str, Any],
    source: str,
    target: str,
    *,
    markers: Iterable[str] = (),
) -> GeneratedStep:
    """Return the step from `source` to `target` that `diff` (between them) calls for.

    `new_document` is the target schema (for defaults and descriptions); `markers` are the
    pointers where records state their version, which the engine writes itself.
    """
    plan = _Plan()
    skip = set(markers)
    consumed: set[str] = set()
    changes = [c for c in diff.changes if c.path not in skip]
    moves = sorted(
        (c for c in changes if c.kind in ("property-renamed", "property-moved")),
        key=lambda c: len(split(c.before)),
    )
    for change in moves:
        _move(plan, change)
        consumed |= {change.before, change.after}
    added = {c.path for c in changes if c.kind == "property-added" and c.path not in consumed}
    fills: list[Change] = []
    for change in changes:
        if change.path in consumed or change.kind in _QUIET:
            continue
        if "BACKWARD" not in change.breaks:
            continue
        namesakes = sorted(
            p for p in added if p.rpartition("/")[2] == change.path.rpartition("/")[2]
        )
        if change.kind == "property-removed" and namesakes:
            plan.todo(
                change.path,
                f"removed, while {', '.join(namesakes)} {'was' if len(namesakes) == 1 else 'were'} "
                "added in another shape: carry its value there, or drop it with ctx.lose",
            )
        elif change.kind == "property-removed":
            parent, key = _parent_key(change.path)
            reason = f"{target} has no place for it"
            plan.code.append(
                f"    out = kit.drop_member(out, {_lit(parent)}, {_lit(key)}, ctx, {_lit(reason)})"
            )
            plan.words.append(f"{_show(change.path)} is removed: its value is dropped ({reason}).")
            plan.losses.append(f"{change.path or '/'}: {reason}")
        elif change.kind in ("type-narrowed", "type-changed") and not change.undecided:
            _convert(plan, change)
        elif _members_narrowed(change):
            types = change.after["type"]
            member = replace(
                change,
                path=change.path + "/*",
                before=None if change.before in (True, None, {}) else change.before,
                after=[types] if isinstance(types, str) else list(types),
            )
            _convert(plan, member)
        elif change.kind in ("property-added", "required-added"):
            fills.append(change)
        else:
            plan.todo(change.path, f"{change.kind}, {change.summary}")
    # Members before the objects that hold them: an object made from parameters reuses theirs.
    for change in sorted(fills, key=lambda c: -len(split(c.path))):
        _fill(plan, change, new_document)
    text = _render(plan, source, target, diff)
    return GeneratedStep(
        source,
        target,
        text,
        tuple(plan.words),
        tuple(plan.todos),
        tuple(plan.params.values()),
        tuple(plan.losses),
    )


def _move(plan: _Plan, change: Change) -> None:
    old, new = str(change.before), str(change.after)
    old_parent, old_key = _parent_key(old)
    _, new_key = _parent_key(new)
    if change.kind == "property-renamed":
        plan.code.append(
            f"    out = kit.rename_member(out, {_lit(old_parent)}, {_lit(old_key)}, "
            f"{_lit(new_key)}, ctx)"
        )
        plan.words.append(f"{_show(old)} is renamed {_show(new)}.")
        return
    a, b = split(old), split(new)
    stars = [i for i, t in enumerate(a) if t == "*"] + [i for i, t in enumerate(b) if t == "*"]
    cut = 1 + max(stars) if stars else 0
    if a[:cut] == b[:cut] and "*" not in a[cut:] + b[cut:] and a[cut:] and b[cut:]:
        plan.code.append(f"    out = kit.move_value(out, {_lit(old)}, {_lit(new)}, ctx)")
        plan.words.append(f"{_show(old)} moves to {_show(new)}.")
        return
    plan.todo(old, f"moved to {new}, between places of different shapes; carry it by hand")
    plan.code.append(
        f"    out = kit.drop_member(out, {_lit(old_parent)}, {_lit(old_key)}, ctx, "
        f"{_lit('moved to ' + new)})"
    )


def _members_narrowed(change: Change) -> bool:
    """Tell whether undeclared members went from any value to values of some types only."""
    after = change.after
    return (
        change.kind == "additional-properties-tightened"
        and change.before in (True, None, {})
        and isinstance(after, Mapping)
        and set(after) == {"type"}
        and isinstance(after["type"], (str, list))
    )


def _convert(plan: _Plan, change: Change) -> None:
    types = change.after
    if not isinstance(types, list) or not types:
        plan.todo(change.path, f"{change.kind}, {change.summary}")
        return
    before = change.before if isinstance(change.before, list) else None
    kinds = before if before is not None else list(_ANY)
    missing = [t for t in kinds if not _convertible(t, types)]
    shown = "any type" if before is None else "|".join(before or ["nothing"])
    if not missing:
        refusal = f"{_show(change.path)}: a value with no lossless conversion to {'|'.join(types)}"
        plan.code.append(
            f"    out = kit.convert_types(out, {_lit(change.path)}, {_lit(tuple(types))}, "
            f"{_lit(refusal)}, ctx=ctx)"
        )
        plan.words.append(
            f"{_show(change.path)} is now {'|'.join(types)} (was {shown}): other values are "
            f"converted without loss ({_how(kinds, types)})."
        )
        return
    number = len(plan.todos) + 1
    label = (
        f"TODO {number}: {_show(change.path)}: a value of a type outside "
        f"{'|'.join(types)} with no lossless conversion"
    )
    plan.todos.append(label)
    plan.code.append(
        f"    out = kit.convert_types(out, {_lit(change.path)}, {_lit(tuple(types))}, "
        f"TODOS[{number - 1}], ctx=ctx)"
    )
    plan.words.append(
        f"{_show(change.path)} is now {'|'.join(types)} (was {shown}): values that convert "
        f"without loss are converted; a record with any other value is refused (TODO {number})."
    )


_ANY = ("string", "integer", "number", "boolean", "null", "object", "array")
_CONVERSIONS = {
    ("string", "array"): "a string to a list of it",
    ("integer", "array"): "a number to a list of it",
    ("number", "array"): "a number to a list of it",
    ("boolean", "array"): "a boolean to a list of it",
    ("object", "array"): "an object to a list of it",
    ("integer", "string"): "a number to its text",
    ("number", "string"): "a number to its text",
    ("boolean", "string"): "a boolean to its JSON text",
    ("null", "string"): "null to its JSON text",
    ("object", "string"): "an object to its JSON text",
    ("array", "string"): "an array to its JSON text",
    ("boolean", "number"): "a boolean to 1.0 or 0.0",
    ("boolean", "integer"): "a boolean to 1 or 0",
    ("integer", "number"): "",
}


def _convertible(kind: str, types: Sequence[str]) -> bool:
    return kind in types or any((kind, t) in _CONVERSIONS for t in types)


def _how(before: Sequence[str], types: Sequence[str]) -> str:
    found = [
        _CONVERSIONS[(kind, t)]
        for kind in before
        if kind not in types
        for t in types
        if _CONVERSIONS.get((kind, t))
    ]
    return "; ".join(dict.fromkeys(found)) or "nothing to convert"


def _lit(value: Any) -> str:
    """Return a Python literal of a JSON value, strings in double quotes."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, tuple):
        inner = ", ".join(_lit(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(_lit(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_lit(k)}: {_lit(v)}" for k, v in value.items()) + "}"
    return repr(value)


def _fill(plan: _Plan, change: Change, document: Mapping[str, Any]) -> None:
    if change.kind == "property-added":
        after = change.after if isinstance(change.after, Mapping) else {}
        if not after.get("required"):
            return
        schema = _local(document, after.get("schema"))
    else:
        schema = schema_at(document, change.path)
    parent, key = _parent_key(change.path)
    if isinstance(schema, Mapping) and "default" in schema:
        value = schema["default"]
        plan.code.append(
            f"    out = kit.set_missing(out, {_lit(parent)}, {_lit(key)}, {_lit(value)}, ctx=ctx)"
        )
        plan.words.append(
            f"{_show(change.path)} is required: records without it get its default {_lit(value)}."
        )
        return
    members = _member_params(schema, document, key, plan.params)
    if members is not None:
        for member in members.values():
            plan.params.setdefault(member.name, member)
        mapping = {m: p.name for m, p in members.items()}
        names = ", ".join(mapping.values())
        plan.code.append(
            f"    out = kit.set_missing(out, {_lit(parent)}, {_lit(key)}, "
            f"kit.param_object(ctx, {_lit(mapping)}), needs={_lit(names)}, ctx=ctx)"
        )
        plan.words.append(
            f"{_show(change.path)} is required and has no default: records without it get an "
            f"object of the parameters {names} (--set NAME=VALUE)."
        )
        return
    name = _identifier(key)
    types = _types(schema) or _enum_types(schema) or ("string",)
    plan.params.setdefault(name, StepParam(name, _describe(schema), types))
    plan.code.append(
        f"    out = kit.set_missing(out, {_lit(parent)}, {_lit(key)}, "
        f"kit.param_value(ctx, {_lit(name)}, {_lit(types)}), needs={_lit(name)}, ctx=ctx)"
    )
    plan.words.append(
        f"{_show(change.path)} is required and has no default: records without it get the "
        f"parameter {name} (--set {name}=VALUE)."
    )


def _member_params(
    schema: Any, document: Mapping[str, Any], key: str, known: Mapping[str, StepParam]
) -> dict[str, StepParam] | None:
    """Return a parameter per required member of an object of scalars, or None.

    A member that already has a parameter of its own name (a new member of the same object,
    found earlier) keeps it; any other is named after the object and the member.
    """
    if not isinstance(schema, Mapping) or _types(schema) != ("object",):
        return None
    required = schema.get("required")
    properties = schema.get("properties")
    if not isinstance(required, list) or not required or not isinstance(properties, Mapping):
        return None
    found: dict[str, StepParam] = {}
    for member in required:
        sub = _local(document, properties.get(member))
        types = _types(sub) or _enum_types(sub)
        if not types or not set(types) <= _SCALARS:
            return None
        name = member if member in known else _identifier(f"{key}_{member}")
        found[member] = StepParam(name, _describe(sub), types)
    return found


def _render(plan: _Plan, source: str, target: str, diff: SchemaDiff) -> str:
    summary = (
        f"Bring {source} records to {target} ({diff.compatibility} compatibility), as generated."
    )
    lines = [f'"""{summary}', "", f"Generated by `evalreg sync` from the diff of {source} and "
             f"{target}; each change, in plain words:", ""]  # fmt: skip
    words = plan.words or ["Nothing old records hold needs to change."]
    for line in words:
        lines.extend(_bullet(line))
    if plan.todos:
        lines += [
            "",
            "Finish each TODO (decide what becomes of such values, write the code, and remove",
            "the TODO from TODOS); `evalreg check` reports the step as unfinished until then.",
        ]
    lines += ['"""', "", "from __future__ import annotations", "", "from typing import Any", ""]
    lines.append("from evalreg import Param, StepContext" if plan.params else
                 "from evalreg import StepContext")  # fmt: skip
    lines += [
        "from evalreg import stepkit as kit",
        "",
        f"FROM = {_lit(source)}",
        f"TO = {_lit(target)}",
    ]
    lines += _params(plan.params.values())
    lines.append("TODOS: tuple[str, ...] = (")
    lines += [f"    {_lit(todo)}," for todo in plan.todos]
    lines.append(")")
    lines.append("LOSSES: tuple[str, ...] = (")
    lines += [f"    {_lit(loss)}," for loss in plan.losses]
    lines += [")", "", ""]
    lines.append("def upgrade(record: dict[str, Any], ctx: StepContext) -> dict[str, Any]:")
    lines.append(f'    """Return `record` at {target} (`record` itself is never changed)."""')
    lines.append("    out: Any = record")
    lines += plan.code
    lines += ["    return dict(out) if out is record else out", ""]
    return "\n".join(_wrap(lines))


def _params(params: Iterable[StepParam]) -> list[str]:
    found = list(params)
    if not found:
        return ["PARAMS = ()"]
    lines = ["PARAMS = ("]
    for item in found:
        lines.append(f"    Param({_lit(item.name)}, help={_lit(item.help)}, default=None),")
    lines.append(")")
    return lines


def _bullet(text: str, width: int = 96) -> list[str]:
    words, lines, line = text.split(), [], "-"
    for word in words:
        if len(line) + 1 + len(word) > width:
            lines.append(line)
            line = " "
        line += " " + word
    lines.append(line)
    return lines


def _wrap(lines: Sequence[str]) -> list[str]:
    """Return the lines as they are: long ones are left to the reader's editor (strings)."""
    return list(lines)
