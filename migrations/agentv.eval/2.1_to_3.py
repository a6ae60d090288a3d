"""Rename the case list to `tests` and its fields to criteria, input, expected_output, assert.

Era 3 (2026-02-18 .. 2026-02-21) renamed `evalcases` to `tests` (through `eval_cases` and
`cases`), `expected_outcome` to `criteria` (`outcome`, still accepted in 2.1, too), and
`input_messages` / `expected_messages` to `input` / `expected_output`; the turns themselves are
carried unchanged. One `assert` list replaces the evaluators: a case's `execution.evaluators`,
then its case-level `evaluators`, then its `rubrics` as one `type: rubrics` item (the rubric items
under `criteria`). The file-level `execution.evaluators` become the suite-level `assert`, which
era 3 applies to every test. What else `execution` holds (the target) stays in it.

Evaluator types and fields that era 3 renamed are renamed: `code` -> `code_judge`, `rubric` ->
`rubrics` with its `rubrics` -> `criteria`, and a composite's inner `evaluators` -> `assert`.

Values era 3 has no field for are kept under the `metadata` of their test or suite, by their
old name, and reported as kept: a case `note`, the file-level `dataset`. The file-level default
`evaluator` becomes a check of every test that has none, which is what a default does; a
default that is no evaluator type (e.g. `heuristic`) is lost (only with allow-loss).
`$schema: agentv-eval-v2(.1)` is kept and relabelled `agentv-eval-v3`; none is added.

Downgrade: the renames back, the kept values back to their places; an evaluator without a name
is named after its type (2.1 requires names). Lost, only with allow-loss: pack metadata (name,
version, author, tags, license, requires), workspace, other metadata, test tags and
skip_defaults, checks of types 2.1 does not know, and `execution.targets` of several targets.
"""

from __future__ import annotations

from typing import Any

from evalreg import StepContext
from evalreg.stepkit import clone

FROM = "2.1"
TO = "3"
PARAMS = ()

_TYPES_21 = (
    "code",
    "llm_judge",
    "code_judge",
    "tool_trajectory",
    "expected_tool_calls",
    "rubric",
    "composite",
    "field_accuracy",
    "latency",
    "cost",
    "token_usage",
)
_CONTAINERS = ("tests", "cases", "eval_cases")
_PACK = ("name", "version", "author", "tags", "license", "requires", "workspace")


def _check(item: Any) -> Any:
    """Return one 2.1 evaluator as an era-3 check."""
    if not isinstance(item, dict):
        return clone(item)
    out: dict[str, Any] = {}
    for key, value in item.items():
        if key == "type":
            out[key] = {"code": "code_judge", "rubric": "rubrics"}.get(value, value)
        elif key == "rubrics" and item.get("type") == "rubric":
            out["criteria"] = clone(value)
        elif key == "evaluators" and item.get("type") == "composite" and isinstance(value, list):
            out["assert"] = [_check(inner) for inner in value]
        else:
            out[key] = clone(value)
    return out


def _default_check(record: dict[str, Any], ctx: StepContext) -> dict[str, Any] | None:
    if "evaluator" not in record:
        return None
    kind = record["evaluator"]
    if kind in _TYPES_21:
        ctx.moved("/evaluator", "/tests/*/assert")
        check: dict[str, Any] = _check({"name": kind, "type": kind})
        return check
    ctx.lose("/evaluator", f"era 3 has no default evaluator and no {kind!r} check type")
    return None


def _test(case: Any, where: str, default: dict[str, Any] | None, ctx: StepContext) -> Any:
    if not isinstance(case, dict):
        return clone(case)
    out: dict[str, Any] = {}
    listed: list[Any] = []
    own: list[Any] = []
    rubrics: list[Any] = []
    metadata: dict[str, Any] = {}
    for key, value in case.items():
        if key == "expected_outcome" or (key == "outcome" and "expected_outcome" not in case):
            out["criteria"] = clone(value)
        elif key == "outcome":
            if value != case["expected_outcome"]:
                ctx.lose(f"{where}/outcome", "the case also has expected_outcome")
        elif key == "input_messages":
            out["input"] = clone(value)
        elif key == "expected_messages":
            out["expected_output"] = clone(value)
        elif key == "execution" and isinstance(value, dict):
            rest = {k: clone(v) for k, v in value.items() if k != "evaluators"}
            if rest:
                out["execution"] = rest
            listed = [_check(item) for item in value.get("evaluators") or ()]
            out.setdefault("assert", None)
        elif key == "evaluators" and isinstance(value, list):
            own = [_check(item) for item in value]
            out.setdefault("assert", None)
        elif key == "rubrics":
            rubrics = [{"type": "rubrics", "criteria": clone(value)}]
            out.setdefault("assert", None)
        elif key == "note":
            metadata["note"] = clone(value)
            ctx.kept(f"{where}/metadata/note", "era 3 has no note field; kept in the metadata")
        else:
            out[key] = clone(value)
    # One list where the first of its sources was, in a fixed order.
    checks = listed + own + rubrics
    if not checks and default is not None:
        checks = [clone(default)]
    if checks:
        out["assert"] = checks
    else:
        out.pop("assert", None)
    if metadata:
        out["metadata"] = metadata
    return out


def upgrade(record: dict[str, Any], ctx: StepContext) -> dict[str, Any]:
    """Return `record` at era 3."""
    default = _default_check(record, ctx)
    out: dict[str, Any] = {}
    metadata: dict[str, Any] = {}
    for key, value in record.items():
        if key == "evalcases" and isinstance(value, list):
            out["tests"] = [
                _test(case, f"/tests/{i}", default, ctx) for i, case in enumerate(value)
            ]
        elif key == "evaluator":
            continue
        elif key == "dataset":
            metadata["dataset"] = clone(value)
            ctx.kept("/metadata/dataset", "era 3 has no dataset field; kept in the metadata")
        elif key == "execution" and isinstance(value, dict):
            rest = {k: clone(v) for k, v in value.items() if k != "evaluators"}
            if rest:
                out["execution"] = rest
            if value.get("evaluators"):
                out["assert"] = [_check(item) for item in value["evaluators"]]
        else:
            out[key] = clone(value)
    if metadata:
        out["metadata"] = metadata
    return out


# -- downgrade -----------------------------------------------------------------------------


def _evaluator(item: Any, where: str, index: int, ctx: StepContext) -> Any:
    """Return one era-3 check as a 2.1 evaluator, or None when it is lost."""
    if not isinstance(item, dict):
        return clone(item)
    kind = item.get("type")
    if kind == "rubrics":
        kind = "rubric"
    if kind not in _TYPES_21:
        ctx.lose(f"{where}/{index}", f"era 2.1 has no {kind!r} evaluator type")
        return None
    out: dict[str, Any] = {}
    if "name" not in item:
        out["name"] = kind
    for key, value in item.items():
        if key == "type":
            out[key] = kind
        elif key == "criteria" and kind == "rubric":
            out["rubrics"] = clone(value)
        elif key == "assert" and kind == "composite" and isinstance(value, list):
            inner = [_evaluator(v, f"{where}/{index}/assert", i, ctx) for i, v in enumerate(value)]
            out["evaluators"] = [v for v in inner if v is not None]
        else:
            out[key] = clone(value)
    return out


def _evaluators(checks: list[Any], where: str, ctx: StepContext) -> list[Any]:
    found = [_evaluator(item, where, i, ctx) for i, item in enumerate(checks)]
    return [item for item in found if item is not None]


def _turns(value: Any, role: str) -> Any:
    """Return `value` as turns: a text or an object is one turn of `role`."""
    if isinstance(value, (str, dict)):
        return [{"role": role, "content": clone(value)}]
    return clone(value)


def _execution(value: Any, where: str, ctx: StepContext) -> Any:
    if not isinstance(value, dict) or "targets" not in value:
        return clone(value)
    out = {k: clone(v) for k, v in value.items() if k != "targets"}
    targets = value["targets"]
    if isinstance(targets, list) and len(targets) == 1 and "target" not in value:
        out["target"] = targets[0]
    else:
        ctx.lose(f"{where}/targets", "era 2.1 runs one target")
    return out


def _down_test(test: Any, where: str, ctx: StepContext) -> Any:
    if not isinstance(test, dict):
        return clone(test)
    out: dict[str, Any] = {}
    for key, value in test.items():
        if key == "criteria":
            out["expected_outcome"] = clone(value)
        elif key == "input":
            out["input_messages"] = _turns(value, "user")
        elif key == "expected_output":
            out["expected_messages"] = _turns(value, "assistant")
        elif key == "assert" and isinstance(value, list):
            plain = [
                i
                for i, item in enumerate(value)
                if isinstance(item, dict)
                and item.get("type") == "rubrics"
                and set(item) == {"type", "criteria"}
            ]
            rubrics = plain[0] if len(plain) == 1 else None
            others = [item for i, item in enumerate(value) if i != rubrics]
            execution = out.setdefault("execution", {})
            if isinstance(execution, dict):
                listed = execution.setdefault("evaluators", [])
                listed += _evaluators(others, f"{where}/assert", ctx)
            if rubrics is not None:
                out["rubrics"] = clone(value[rubrics]["criteria"])
        elif key == "execution":
            execution = _execution(value, f"{where}/execution", ctx)
            if isinstance(execution, dict) and isinstance(out.get("execution"), dict):
                execution = {**execution, **out["execution"]}
            out["execution"] = execution
        elif key == "metadata" and isinstance(value, dict):
            for name, kept in value.items():
                if name == "note":
                    out["note"] = clone(kept)
                else:
                    ctx.lose(f"{where}/metadata/{name}", "era 2.1 cases have no metadata")
        elif key in ("tags", "skip_defaults"):
            ctx.lose(f"{where}/{key}", f"era 2.1 cases have no {key}")
        else:
            out[key] = clone(value)
    return out


def downgrade(record: dict[str, Any], ctx: StepContext) -> dict[str, Any]:
    """Return `record` at era 2.1, losing (only with allow-loss) what 2.1 cannot hold."""
    out: dict[str, Any] = {}
    for key, value in record.items():
        if key in _CONTAINERS and isinstance(value, list):
            out["evalcases"] = [_down_test(t, f"/{key}/{i}", ctx) for i, t in enumerate(value)]
        elif key == "assert" and isinstance(value, list):
            execution = out.setdefault("execution", {})
            if isinstance(execution, dict):
                listed = execution.setdefault("evaluators", [])
                listed += _evaluators(value, "/assert", ctx)
        elif key == "execution":
            execution = _execution(value, "/execution", ctx)
            if isinstance(execution, dict) and isinstance(out.get("execution"), dict):
                execution = {**execution, **out["execution"]}
            out["execution"] = execution
        elif key == "metadata" and isinstance(value, dict):
            for name, kept in value.items():
                if name == "dataset":
                    out["dataset"] = clone(kept)
                else:
                    ctx.lose(f"/metadata/{name}", "era 2.1 has no suite metadata")
        elif key in _PACK:
            ctx.lose(f"/{key}", f"era 2.1 has no {key} field")
        else:
            out[key] = clone(value)
    return out
