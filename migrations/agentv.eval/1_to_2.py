"""Split each case's messages into input and expected turns; rename testcases to evalcases.

Era 1 kept a case's whole conversation in `messages`, the expected assistant turn last. The v2
format holds the input turns in `input_messages` and the expected turn in `expected_messages`,
and calls the case list `evalcases`. Case ids, outcomes, notes, the description and the target
are carried unchanged and in place.

The file-level `grader` has no place in v2, whose evaluators are listed per case under
`execution.evaluators`: `grader: llm_judge` becomes an `llm_judge` evaluator of every case,
which is what the grader did; any other grader (the built-in `heuristic` scorer) has no v2
counterpart and is lost (only with allow-loss). Era-1 files carry no `$schema`, so none is
written. A case whose last turn is not an assistant turn has no expected reply: the step fails
for it rather than invent one.

There is no downgrade: v2's per-case execution settings, conversation ids and tool turns have
no place in era 1.
"""

from __future__ import annotations

from typing import Any

from evalreg import StepContext
from evalreg.errors import MigrationError
from evalreg.stepkit import clone

FROM = "1"
TO = "2"
PARAMS = ()

_JUDGE = "llm_judge"


def _case(
    case: Any, where: str, to: str, evaluators: list[dict[str, Any]] | None, ctx: StepContext
) -> Any:
    """Return one era-1 case (at `where`; at `to` in the output) as a v2 case."""
    if not isinstance(case, dict):
        return clone(case)
    out: dict[str, Any] = {}
    for key, value in case.items():
        if key != "messages" or not isinstance(value, list) or not value:
            out[key] = clone(value)
            continue
        *inputs, expected = value
        if not isinstance(expected, dict) or expected.get("role") != "assistant":
            raise MigrationError(
                "agentv.eval",
                f"{FROM} -> {TO}",
                f"{where}/messages: the last turn is not an assistant turn, so the case has no "
                "expected reply; end the conversation with the expected assistant turn",
            )
        out["input_messages"] = clone(inputs)
        out["expected_messages"] = [clone(expected)]
        for index in range(len(inputs)):
            ctx.moved(f"{where}/messages/{index}", f"{to}/input_messages/{index}")
        if not inputs:
            ctx.added(f"{to}/input_messages", [], "derived", "the conversation has one turn")
        last = f"{where}/messages/{len(inputs)}"
        ctx.moved(last, f"{to}/expected_messages/0", "the expected turn")
    if evaluators is not None:
        execution = out.setdefault("execution", {})
        if isinstance(execution, dict):
            execution["evaluators"] = clone(evaluators)
            place = f"{to}/execution/evaluators"
            ctx.added(place, execution["evaluators"], "derived", "the grader", source="/grader")
    return out


def upgrade(record: dict[str, Any], ctx: StepContext) -> dict[str, Any]:
    """Return `record` in the v2 format."""
    evaluators = None
    if "grader" in record:
        grader = record["grader"]
        if grader == _JUDGE:
            evaluators = [{"name": _JUDGE, "type": _JUDGE}]
            ctx.dropped("/grader", "it is now the llm_judge evaluator of every case")
        else:
            ctx.lose("/grader", f"v2 has no file-level grader and no {grader!r} evaluator type")
    out: dict[str, Any] = {}
    for key, value in record.items():
        if key == "grader":
            continue
        if key == "testcases" and isinstance(value, list):
            ctx.renamed("/testcases", "/evalcases")
            out["evalcases"] = [
                _case(case, f"/testcases/{i}", f"/evalcases/{i}", evaluators, ctx)
                for i, case in enumerate(value)
            ]
        else:
            out[key] = clone(value)
    return out
