"""Rename each case's `outcome` to `expected_outcome`, the name the later v2 files use.

Era 2.1 is the v2 format as it grew from 2025-11-22 to 2026-02-17 without a new `$schema`
(file-level `execution`, `evaluator` and `dataset`, case `rubrics` and `evaluators`, the `input`
and `expected_output` aliases, tool-call turns, more evaluator types, argv scripts, structured
content). Every v2 file is valid in it; the only
change the step makes is the rename of 2025-12-16, in place. Early v2 files also say
`version: "2.0"`: that states the format, which the file now states by its structure (and by
`$schema` when it has one), so it is dropped; any other `version` value has no place in 2.1 and
is lost (only with allow-loss).

`$schema: agentv-eval-v2` is kept: it is the one label AgentV's files and validator use in every
era since 2 (there is no `agentv-eval-v2.1`). The older `agentevo-eval-v2`, the label of the day
before the project's rename, becomes `agentv-eval-v2` (reported as converted). A file without
`$schema` gets none.

Downgrade: renames back (`expected_outcome` -> `outcome`, `code_judge` -> `code`, case-level
`evaluators` into `execution.evaluators`, `execution.target` -> `target`, the `input` /
`expected_output` aliases into the turns they stand for, plain-text content parts into text
parts). What v2 cannot hold is lost, only with allow-loss: the file-level `evaluator`, `dataset`
and `execution.evaluators`, case `rubrics` and fields v2 does not list, evaluators of types v2
does not know or with an argv `script`, a turn's `tool_calls` and `name` (and a turn that holds
only tool calls), content parts other than text and files; structured content becomes its JSON
text. A case without expected turns (an outcome-only case, which 2.1 allows) or without an
expected outcome has no v2 form, since v2 requires both: the downgrade fails for it, even with
allow-loss, rather than invent them or drop the case.
"""

from __future__ import annotations

import json
from typing import Any

from evalreg import StepContext
from evalreg.errors import MigrationError
from evalreg.stepkit import at, clone, rename_key

FROM = "2"
TO = "2.1"
PARAMS = ()

_FORMAT_VERSIONS = ("2", "2.0", 2, 2.0)
_OLD_LABEL = "agentevo-eval-v2"
_LABEL = "agentv-eval-v2"
_V2_TYPES = ("code", "llm_judge")


def upgrade(record: dict[str, Any], ctx: StepContext) -> dict[str, Any]:
    """Return `record` at era 2.1."""
    out: dict[str, Any] = {}
    for key, value in record.items():
        if key == "version":
            if value not in _FORMAT_VERSIONS or isinstance(value, bool):
                ctx.lose("/version", "era 2.1 has no top-level version field")
            else:
                ctx.dropped("/version", "it states the format, which the structure now states")
            continue
        if key == "$schema" and value == _OLD_LABEL:
            out[key] = _LABEL
            ctx.converted("/$schema", value, _LABEL, "the label since the project's rename")
            continue
        if key != "evalcases" or not isinstance(value, list):
            out[key] = clone(value)
            continue
        out[key] = [
            rename_key(case, "outcome", "expected_outcome", ctx=ctx, source=f"/evalcases/{i}")
            for i, case in enumerate(value)
        ]
    return out


def _evaluator(item: Any, where: str, to: str, ctx: StepContext) -> Any:
    """Return the v2 form of one evaluator (at `where`; at `to` in the output), or None when
    it is lost."""
    if not isinstance(item, dict):
        return clone(item)
    kind = item.get("type")
    if kind not in _V2_TYPES and kind != "code_judge":
        ctx.lose(where, f"v2 has no {kind!r} evaluator type")
        return None
    if isinstance(item.get("script"), list):
        ctx.lose(where, "v2 takes `script` as one string, not a list of argv strings")
        return None
    out = clone(item)
    if kind == "code_judge":
        out["type"] = "code"
        ctx.converted(f"{to}/type", kind, "code", "the type's v2 name")
    return out


_V2_CASE_KEYS = (
    "id",
    "conversation_id",
    "outcome",
    "note",
    "input_messages",
    "expected_messages",
    "execution",
)
_V2_ITEM_TYPES = ("text", "file")


def _content(value: Any, where: str, to: str, ctx: StepContext) -> Any:
    """Return a turn's content in v2's forms: a text, or text and file parts."""
    if isinstance(value, dict):
        text = json.dumps(value, ensure_ascii=False, default=str)  # YAML dates as text
        reason = "v2 has no structured content; kept as JSON text"
        ctx.converted(to, value, text, reason, lossy=True)
        return text
    if not isinstance(value, list):
        return clone(value)
    parts: list[Any] = []
    for index, item in enumerate(value):
        if isinstance(item, str):
            parts.append({"type": "text", "value": item})  # the same text part, spelt out
            ctx.converted(f"{to}/{len(parts) - 1}", item, parts[-1], "a text part, spelt out")
        elif isinstance(item, dict) and item.get("type") not in _V2_ITEM_TYPES:
            ctx.lose(f"{where}/{index}", f"v2 has no {item.get('type')!r} content parts")
        else:
            parts.append(clone(item))
    return parts


def _messages(value: Any, where: str, to: str, ctx: StepContext) -> Any:
    """Return turns in v2's form; a turn with no content (tool calls only) has none."""
    if not isinstance(value, list):
        return clone(value)
    turns: list[Any] = []
    for index, turn in enumerate(value):
        source, target = f"{where}/{index}", f"{to}/{len(turns)}"
        if not isinstance(turn, dict):
            turns.append(clone(turn))
            continue
        if "content" not in turn:
            ctx.lose(source, "v2 turns have content; this one holds only tool calls")
            continue
        out = {}
        for key, item in turn.items():
            if key == "content":
                out[key] = _content(item, f"{source}/content", f"{target}/content", ctx)
            elif key == "role":
                out[key] = clone(item)
            else:
                ctx.lose(at(source, key), f"v2 turns have no {key}")
        turns.append(out)
    return turns


def _turns(value: Any, role: str) -> Any:
    """Return the turns an `input` / `expected_output` alias stands for."""
    if isinstance(value, (str, dict)):
        return [{"role": role, "content": clone(value)}]
    return clone(value)


def _down_case(case: Any, where: str, to: str, ctx: StepContext) -> Any:
    if not isinstance(case, dict):
        return clone(case)
    case = dict(case)
    moved: dict[str, str] = {}  # a turn list's name -> where it was in the input
    aliases: dict[str, Any] = {}  # a turn list's name -> the text or object it was given as
    for alias, name, role in (
        ("input", "input_messages", "user"),
        ("expected_output", "expected_messages", "assistant"),
    ):
        if alias not in case:
            continue
        value = case.pop(alias)
        turns = _turns(value, role)
        if name not in case:
            case[name] = turns  # the alias names the same turns
            moved[name] = at(where, alias)
            if isinstance(value, (str, dict)):
                aliases[name] = value
                ctx.added(f"{to}/{name}/0/role", role, "derived", "the role the alias implies")
        elif case[name] != turns:
            ctx.lose(at(where, alias), f"the case also has {name}")
        else:
            ctx.dropped(at(where, alias), f"the same turns as {name}")
    expected = _case_turns(case, "expected_messages", moved, aliases, where, to, ctx)
    if not expected:
        raise MigrationError(
            "agentv.eval",
            f"{TO} -> {FROM}",
            f"{where}: the case has no expected_messages (an outcome-only case), which v2 "
            "requires; add the expected reply as expected_messages, or keep the file at 2.1",
        )
    if "outcome" not in case and "expected_outcome" not in case:
        raise MigrationError(
            "agentv.eval",
            f"{TO} -> {FROM}",
            f"{where}: the case states no expected outcome, which v2 requires; add one as "
            "expected_outcome, or keep the file at 2.1",
        )
    out: dict[str, Any] = {}
    evaluators: list[tuple[str, Any]] = []
    for key, value in case.items():
        at_key = at(where, key)
        if key == "expected_outcome":
            if "outcome" not in case:
                out["outcome"] = clone(value)
                ctx.renamed(at_key, f"{to}/outcome")
            elif case["outcome"] != value:
                ctx.lose(at_key, "the case also has outcome")
            else:
                ctx.dropped(at_key, "the same as outcome")
        elif key == "expected_messages":
            out[key] = expected
        elif key == "input_messages":
            out[key] = _case_turns(case, key, moved, aliases, where, to, ctx)
            if not out[key]:
                raise MigrationError(
                    "agentv.eval",
                    f"{TO} -> {FROM}",
                    f"{where}/input_messages: no turn has content (only tool calls), and v2 "
                    "needs at least one input turn; keep the file at 2.1",
                )
        elif key == "rubrics":
            ctx.lose(at_key, "v2 has no rubrics")
        elif key == "evaluators" and isinstance(value, list):
            evaluators += [(f"{at_key}/{i}", item) for i, item in enumerate(value)]
        elif key == "execution" and isinstance(value, dict):
            execution = {k: clone(v) for k, v in value.items() if k != "evaluators"}
            listed = value.get("evaluators")
            if isinstance(listed, list):
                evaluators = [
                    (f"{at_key}/evaluators/{i}", item) for i, item in enumerate(listed)
                ] + evaluators
            elif "evaluators" in value:
                execution["evaluators"] = clone(listed)
            out["execution"] = execution
        elif key in _V2_CASE_KEYS:
            out[key] = clone(value)
        else:
            ctx.lose(at_key, f"v2 cases have no {key}")
    execution_value = case.get("execution")
    listed = execution_value.get("evaluators") if isinstance(execution_value, dict) else None
    if evaluators or isinstance(listed, list) or isinstance(case.get("evaluators"), list):
        kept: list[Any] = []
        for source, item in evaluators:
            target = f"{to}/execution/evaluators/{len(kept)}"
            converted = _evaluator(item, source, target, ctx)
            if converted is not None:
                if source != target:
                    ctx.moved(source, target)
                kept.append(converted)
        if isinstance(case.get("evaluators"), list) and not case["evaluators"]:
            ctx.dropped(at(where, "evaluators"), "an empty list")
        holder = out.setdefault("execution", {}) if kept or isinstance(listed, list) else None
        if isinstance(holder, dict):
            holder["evaluators"] = kept
    return out


def _case_turns(
    case: dict[str, Any],
    name: str,
    moved: dict[str, str],
    aliases: dict[str, Any],
    where: str,
    to: str,
    ctx: StepContext,
) -> Any:
    """Return a case's turn list `name` in v2's form (from an alias where `moved` says so)."""
    value = case.get(name)
    source = moved.get(name, at(where, name))
    alias = aliases.get(name)
    if name in moved and isinstance(alias, (str, dict)):
        # One turn made from a text or object alias: its content came from the alias.
        ctx.moved(source, f"{to}/{name}/0/content", "as one turn")
        content = _content(alias, source, f"{to}/{name}/0/content", ctx)
        return [{"role": value[0]["role"], "content": content}]
    if name in moved:
        ctx.renamed(source, f"{to}/{name}")
    return _messages(value, source, f"{to}/{name}", ctx)


def downgrade(record: dict[str, Any], ctx: StepContext) -> dict[str, Any]:
    """Return `record` in the v2 format, losing (only with allow-loss) what v2 cannot hold."""
    out: dict[str, Any] = {}
    for key, value in record.items():
        if key == "evalcases" and isinstance(value, list):
            out[key] = [
                _down_case(case, f"/evalcases/{i}", f"/evalcases/{i}", ctx)
                for i, case in enumerate(value)
            ]
        elif key == "$schema" and value not in (_LABEL, _OLD_LABEL):
            out[key] = _LABEL  # the 2.1 schema also names agentv-eval-v2.1, which v2 does not
            ctx.converted("/$schema", value, _LABEL, "the one label of v2")
        elif key in ("evaluator", "dataset"):
            ctx.lose(f"/{key}", f"v2 has no file-level {key}")
        elif key == "execution" and isinstance(value, dict):
            for name, setting in value.items():
                if name == "target" and "target" not in record:
                    out["target"] = clone(setting)
                    ctx.moved("/execution/target", "/target")
                elif name == "target" and record["target"] == setting:
                    ctx.dropped("/execution/target", "the same as target")
                else:
                    ctx.lose(at("/execution", name), "v2 has no file-level execution settings")
            if not value:
                ctx.dropped("/execution", "an empty object")
        else:
            out[key] = clone(value)
    return out
