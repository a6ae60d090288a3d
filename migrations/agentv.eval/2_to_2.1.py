"""Rename each case's `outcome` to `expected_outcome`, the name the later v2 files use.

Era 2.1 is the v2 format as it grew from 2025-11-22 to 2026-02-17 without a new `$schema`
(file-level `execution`, `evaluator` and `dataset`, case `rubrics` and `evaluators`, the `input`
and `expected_output` aliases, tool-call turns, more evaluator types, argv scripts, structured
content). Every v2 file is valid in it; the only
change the step makes is the rename of 2025-12-16, in place. Early v2 files also say
`version: "2.0"`: that states the format, which the file now states by its structure (and by
`$schema` when it has one), so it is dropped; any other `version` value has no place in 2.1 and
is lost (only with allow-loss).

`$schema: agentv-eval-v2` (or the older `agentevo-eval-v2`) is kept and relabelled
`agentv-eval-v2.1`, so the file keeps saying which era it is in; a file without `$schema` gets
none.

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
from evalreg.stepkit import clone, rename_key

FROM = "2"
TO = "2.1"
PARAMS = ()

_FORMAT_VERSIONS = ("2", "2.0", 2, 2.0)
_V2_TYPES = ("code", "llm_judge")


def upgrade(record: dict[str, Any], ctx: StepContext) -> dict[str, Any]:
    """Return `record` at era 2.1."""
    out: dict[str, Any] = {}
    for key, value in record.items():
        if key == "version":
            if value not in _FORMAT_VERSIONS or isinstance(value, bool):
                ctx.lose("/version", "era 2.1 has no top-level version field")
            continue
        if key != "evalcases" or not isinstance(value, list):
            out[key] = clone(value)
            continue
        cases = []
        for index, case in enumerate(value):
            if not isinstance(case, dict) or "outcome" not in case:
                cases.append(clone(case))
            elif "expected_outcome" not in case:
                cases.append(rename_key(case, "outcome", "expected_outcome"))
            else:
                if case["outcome"] != case["expected_outcome"]:
                    ctx.lose(f"/evalcases/{index}/outcome", "the case also has expected_outcome")
                cases.append({k: clone(v) for k, v in case.items() if k != "outcome"})
        out[key] = cases
    return out


def _evaluator(item: Any, where: str, ctx: StepContext) -> Any:
    """Return the v2 form of one evaluator, or None when it is lost."""
    if not isinstance(item, dict):
        return clone(item)
    kind = item.get("type")
    if kind == "code_judge":
        item = {**item, "type": "code"}
    elif kind not in _V2_TYPES:
        ctx.lose(where, f"v2 has no {kind!r} evaluator type")
        return None
    if isinstance(item.get("script"), list):
        ctx.lose(where, "v2 takes `script` as one string, not a list of argv strings")
        return None
    return clone(item)


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


def _content(value: Any, where: str, ctx: StepContext) -> Any:
    """Return a turn's content in v2's forms: a text, or text and file parts."""
    if isinstance(value, dict):
        ctx.lose(where, "v2 has no structured content; kept as JSON text")
        return json.dumps(value, ensure_ascii=False)
    if not isinstance(value, list):
        return clone(value)
    parts = []
    for index, item in enumerate(value):
        if isinstance(item, str):
            parts.append({"type": "text", "value": item})  # the same text part, spelt out
        elif isinstance(item, dict) and item.get("type") not in _V2_ITEM_TYPES:
            ctx.lose(f"{where}/{index}", f"v2 has no {item.get('type')!r} content parts")
        else:
            parts.append(clone(item))
    return parts


def _messages(value: Any, where: str, ctx: StepContext) -> Any:
    """Return turns in v2's form; a turn with no content (tool calls only) has none."""
    if not isinstance(value, list):
        return clone(value)
    turns = []
    for index, turn in enumerate(value):
        at = f"{where}/{index}"
        if not isinstance(turn, dict):
            turns.append(clone(turn))
            continue
        if "content" not in turn:
            ctx.lose(at, "v2 turns have content; this one holds only tool calls")
            continue
        out = {}
        for key, item in turn.items():
            if key == "content":
                out[key] = _content(item, f"{at}/content", ctx)
            elif key == "role":
                out[key] = clone(item)
            else:
                ctx.lose(f"{at}/{key}", f"v2 turns have no {key}")
        turns.append(out)
    return turns


def _turns(value: Any, role: str) -> Any:
    """Return the turns an `input` / `expected_output` alias stands for."""
    if isinstance(value, (str, dict)):
        return [{"role": role, "content": clone(value)}]
    return clone(value)


def _down_case(case: Any, where: str, ctx: StepContext) -> Any:
    if not isinstance(case, dict):
        return clone(case)
    case = dict(case)
    for alias, name, role in (
        ("input", "input_messages", "user"),
        ("expected_output", "expected_messages", "assistant"),
    ):
        if alias not in case:
            continue
        turns = _turns(case.pop(alias), role)
        if name not in case:
            case[name] = turns  # the alias names the same turns
        elif case[name] != turns:
            ctx.lose(f"{where}/{alias}", f"the case also has {name}")
    expected = _messages(case.get("expected_messages"), f"{where}/expected_messages", ctx)
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
    evaluators: list[Any] = []
    for key, value in case.items():
        if key == "expected_outcome":
            if "outcome" not in case:
                out["outcome"] = clone(value)
            elif case["outcome"] != value:
                ctx.lose(f"{where}/expected_outcome", "the case also has outcome")
        elif key == "expected_messages":
            out[key] = expected
        elif key == "input_messages":
            out[key] = _messages(value, f"{where}/{key}", ctx)
            if not out[key]:
                raise MigrationError(
                    "agentv.eval",
                    f"{TO} -> {FROM}",
                    f"{where}/input_messages: no turn has content (only tool calls), and v2 "
                    "needs at least one input turn; keep the file at 2.1",
                )
        elif key == "rubrics":
            ctx.lose(f"{where}/rubrics", "v2 has no rubrics")
        elif key == "evaluators" and isinstance(value, list):
            evaluators += [(f"{where}/evaluators/{i}", item) for i, item in enumerate(value)]
        elif key == "execution" and isinstance(value, dict):
            execution = clone(value)
            listed = execution.get("evaluators")
            if isinstance(listed, list):
                evaluators = [
                    (f"{where}/execution/evaluators/{i}", item) for i, item in enumerate(listed)
                ] + evaluators
            out["execution"] = execution
        elif key in _V2_CASE_KEYS:
            out[key] = clone(value)
        else:
            ctx.lose(f"{where}/{key}", f"v2 cases have no {key}")
    if evaluators:
        kept = [_evaluator(item, at, ctx) for at, item in evaluators]
        execution = out.setdefault("execution", {})
        execution["evaluators"] = [item for item in kept if item is not None]
    return out


def downgrade(record: dict[str, Any], ctx: StepContext) -> dict[str, Any]:
    """Return `record` in the v2 format, losing (only with allow-loss) what v2 cannot hold."""
    out: dict[str, Any] = {}
    for key, value in record.items():
        if key == "evalcases" and isinstance(value, list):
            out[key] = [_down_case(case, f"/evalcases/{i}", ctx) for i, case in enumerate(value)]
        elif key in ("evaluator", "dataset"):
            ctx.lose(f"/{key}", f"v2 has no file-level {key}")
        elif key == "execution" and isinstance(value, dict):
            for name, setting in value.items():
                if name == "target" and "target" not in record:
                    out["target"] = clone(setting)
                elif name != "target" or record["target"] != setting:
                    ctx.lose(f"/execution/{name}", "v2 has no file-level execution settings")
        else:
            out[key] = clone(value)
    return out
