"""Rename the case list to `tests` and its fields to criteria, input, expected_output, assert.

Era 3 (2026-02-18 .. 2026-03-29) renamed `evalcases` to `tests` (through `eval_cases` and
`cases`), `expected_outcome` to `criteria` (`outcome`, still accepted in 2.1, too), and
`input_messages` / `expected_messages` to `input` / `expected_output`, the names 2.1 already took
as aliases; the turns themselves are carried unchanged. One `assert` list replaces the
evaluators: a case's `execution.evaluators`, then its case-level `evaluators`, then its `rubrics`
as one `type: rubrics` item (the rubric items under `criteria`). The file-level
`execution.evaluators` become the suite-level `assert`, which era 3 applies to every test. What
else `execution` holds (the target) stays in it.

Evaluator types and fields that era 3 renamed are renamed: `code` -> `code_judge`, `rubric` ->
`rubrics` with its `rubrics` -> `criteria`, and a composite's inner `evaluators` -> `assert`.

A case's `note` and the file-level `dataset` are carried: era 3 reads them too. Other case
fields, which 2.1 allowed and era 3 does not (a `description`, values a judge prompt refers to),
are kept under the test's `metadata` by their old name and reported as kept. The file-level
default `evaluator` becomes a check of every test that has none, which is what a default does;
a default that is no evaluator type (e.g. `heuristic`) is lost (only with allow-loss).
`$schema: agentv-eval-v2(.1)` is kept and relabelled `agentv-eval-v3`; none is added.

Downgrade: the renames back, the kept values back to their places; an evaluator without a name
is named after its type (2.1 requires names); checks written as plain sentences (rubric
shorthand) become one `rubric` evaluator, which is how AgentV read them. Lost, only with
allow-loss: pack metadata (name, version, author, tags, license, requires), workspaces,
suite-level input and input files, other metadata, test tags and skip_defaults, checks of types
2.1 does not know, tests given as file references, and `execution.targets` of several targets.
A file whose test list is a file reference, or a test without input, has no 2.1 form: the
downgrade fails for it.
"""

from __future__ import annotations

from typing import Any

from evalreg import StepContext
from evalreg.errors import MigrationError
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
    "execution_metrics",
    "agent_judge",
)
_CASE_21 = (
    "id",
    "conversation_id",
    "expected_outcome",
    "outcome",
    "note",
    "description",
    "input_messages",
    "input",
    "expected_messages",
    "expected_output",
    "execution",
    "evaluators",
    "rubrics",
)
_TEST_3 = (
    "id",
    "criteria",
    "input",
    "expected_output",
    "assert",
    "assertions",
    "conversation_id",
    "execution",
    "metadata",
    "workspace",
    "input_files",
    "expected_outcome",
    "input_messages",
    "expected_messages",
    "evaluators",
    "rubrics",
    "note",
    "dataset",
    "eval_set",
    "skip_defaults",
    "tags",
)
_CONTAINERS = ("tests", "cases", "eval_cases")
_PACK = ("name", "version", "author", "tags", "license", "requires", "workspace")
_SUITE_ONLY = ("input", "input_files")
_ALIASES = {"input_messages": "input", "expected_messages": "expected_output"}


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
        elif key in _ALIASES:
            out[_ALIASES[key]] = clone(value)
        elif key in _ALIASES.values():
            name = next(k for k, v in _ALIASES.items() if v == key)
            if name not in case:
                out[key] = clone(value)  # the alias, under the name era 3 gives the turns
            elif _turns(value, "user" if key == "input" else "assistant") != case[name]:
                ctx.lose(f"{where}/{key}", f"the case also has {name}")
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
        elif key in ("id", "conversation_id", "note"):
            out[key] = clone(value)
        else:
            metadata[key] = clone(value)
            ctx.kept(f"{where}/metadata/{key}", f"era 3 tests have no {key}; kept in the metadata")
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
    for key, value in record.items():
        if key == "evalcases" and isinstance(value, list):
            out["tests"] = [
                _test(case, f"/tests/{i}", default, ctx) for i, case in enumerate(value)
            ]
        elif key == "evaluator":
            continue
        elif key == "execution" and isinstance(value, dict):
            rest = {k: clone(v) for k, v in value.items() if k != "evaluators"}
            if rest:
                out["execution"] = rest
            if value.get("evaluators"):
                out["assert"] = [_check(item) for item in value["evaluators"]]
        else:
            out[key] = clone(value)
    return out


# -- downgrade -----------------------------------------------------------------------------


def _evaluator(item: Any, where: str, index: int, ctx: StepContext) -> Any:
    """Return one era-3 check as a 2.1 evaluator, or None when it is lost."""
    if isinstance(item, str):
        return None  # rubric shorthand: gathered by `_evaluators`
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
        elif key in ("assert", "assertions") and kind == "composite" and isinstance(value, list):
            inner = _evaluators(value, f"{where}/{index}/{key}", ctx)
            out.setdefault("evaluators", []).extend(inner)
        else:
            out[key] = clone(value)
    return out


def _evaluators(checks: list[Any], where: str, ctx: StepContext) -> list[Any]:
    """Return era-3 checks as 2.1 evaluators; sentences become one rubric evaluator."""
    found = [_evaluator(item, where, i, ctx) for i, item in enumerate(checks)]
    sentences = [item for item in checks if isinstance(item, str)]
    if sentences:
        first = next(i for i, item in enumerate(checks) if isinstance(item, str))
        found[first] = {"name": "rubric", "type": "rubric", "rubrics": list(sentences)}
    return [item for item in found if item is not None]


def _turns(value: Any, role: str) -> Any:
    """Return `value` as turns: a text or an object is one turn of `role`."""
    if isinstance(value, (str, dict)):
        return [{"role": role, "content": clone(value)}]
    return clone(value)


def _execution(value: Any, where: str, ctx: StepContext) -> tuple[Any, list[Any]]:
    """Return a 2.1 execution and the checks it listed (as 2.1 evaluators)."""
    if not isinstance(value, dict):
        return clone(value), []
    out: dict[str, Any] = {}
    checks: list[Any] = []
    for key, setting in value.items():
        if key in ("assert", "assertions", "evaluators") and isinstance(setting, list):
            checks += _evaluators(setting, f"{where}/{key}", ctx)
        elif key == "targets":
            if isinstance(setting, list) and len(setting) == 1 and "target" not in value:
                out["target"] = setting[0]
            else:
                ctx.lose(f"{where}/targets", "era 2.1 runs one target")
        else:
            out[key] = clone(setting)
    return out, checks


def _plain_rubrics(value: list[Any]) -> int | None:
    """Return the index of the one `type: rubrics` check that holds only criteria, if any."""
    plain = [
        i
        for i, item in enumerate(value)
        if isinstance(item, dict)
        and item.get("type") == "rubrics"
        and set(item) == {"type", "criteria"}
    ]
    return plain[0] if len(plain) == 1 else None


def _down_test(test: Any, where: str, ctx: StepContext) -> Any:
    if not isinstance(test, dict) or "include" in test:
        ctx.lose(where, "era 2.1 cases are written out; there are no test file references")
        return None
    if not any(key in test for key in ("input", "input_messages")):
        raise MigrationError(
            "agentv.eval",
            f"{TO} -> {FROM}",
            f"{where}: the test has no input, which a 2.1 case requires; add one, or keep the "
            "file at era 3",
        )
    out: dict[str, Any] = {}
    evaluators: list[Any] = []
    execution: dict[str, Any] | None = None
    for key, value in test.items():
        at = f"{where}/{key}"
        if key == "criteria":
            out["expected_outcome"] = clone(value)
        elif key == "expected_outcome":
            if "criteria" not in test:
                out["expected_outcome"] = clone(value)
            elif test["criteria"] != value:
                ctx.lose(at, "the test also has criteria")
        elif key in ("input", "expected_output"):
            name = next(k for k, v in _ALIASES.items() if v == key)
            turns = _turns(value, "user" if key == "input" else "assistant")
            if name not in test:
                out[name] = turns
            elif test[name] != turns:
                ctx.lose(at, f"the test also has {name}")
        elif key in ("input_messages", "expected_messages", "id", "conversation_id", "note"):
            out[key] = clone(value)
        elif key in ("assert", "assertions", "evaluators") and isinstance(value, list):
            rubrics = _plain_rubrics(value) if "rubrics" not in test else None
            others = [item for i, item in enumerate(value) if i != rubrics]
            evaluators += _evaluators(others, at, ctx)
            if rubrics is not None and "rubrics" not in out:
                out["rubrics"] = clone(value[rubrics]["criteria"])
        elif key == "rubrics":
            out["rubrics"] = clone(value)
        elif key == "execution":
            execution, listed = _execution(value, at, ctx)
            evaluators = listed + evaluators
        elif key == "metadata" and isinstance(value, dict):
            for name, kept in value.items():
                if name in _CASE_21 or name in _TEST_3:
                    ctx.lose(f"{at}/{name}", f"a 2.1 case already has a {name} field")
                else:
                    out[name] = clone(kept)  # a case field 2.1 allowed, kept here on the way up
        elif key in ("dataset", "eval_set"):
            out[key] = clone(value)
            ctx.kept(at, f"era 2.1 cases allow other fields; {key} is kept as one")
        else:
            ctx.lose(at, f"era 2.1 cases have no {key}")
    if evaluators:
        execution = execution if isinstance(execution, dict) else {}
        execution["evaluators"] = evaluators
    if execution is not None:
        out["execution"] = execution
    return out


def downgrade(record: dict[str, Any], ctx: StepContext) -> dict[str, Any]:
    """Return `record` at era 2.1, losing (only with allow-loss) what 2.1 cannot hold."""
    out: dict[str, Any] = {}
    evaluators: list[Any] = []
    execution: Any = None
    for key, value in record.items():
        if key in _CONTAINERS:
            if not isinstance(value, list):
                raise MigrationError(
                    "agentv.eval",
                    f"{TO} -> {FROM}",
                    f"/{key}: the tests are in another file ({value!r}), and era 2.1 lists its "
                    "cases in the eval file; write them out, or keep the file at era 3",
                )
            cases = [_down_test(t, f"/{key}/{i}", ctx) for i, t in enumerate(value)]
            out["evalcases"] = [case for case in cases if case is not None]
        elif key in ("assert", "assertions") and isinstance(value, list):
            evaluators += _evaluators(value, f"/{key}", ctx)
        elif key == "execution":
            execution, listed = _execution(value, "/execution", ctx)
            evaluators = listed + evaluators
        elif key == "metadata" and isinstance(value, dict):
            for name, kept in value.items():
                if name == "dataset" and "dataset" not in record:
                    out["dataset"] = clone(kept)
                else:
                    ctx.lose(f"/metadata/{name}", "era 2.1 has no suite metadata")
        elif key in _PACK or key in _SUITE_ONLY:
            ctx.lose(f"/{key}", f"era 2.1 has no {key} field")
        else:
            out[key] = clone(value)
    if evaluators:
        execution = execution if isinstance(execution, dict) else {}
        execution["evaluators"] = evaluators
    if execution is not None:
        out["execution"] = execution
    if not out.get("evalcases"):
        raise MigrationError(
            "agentv.eval",
            f"{TO} -> {FROM}",
            "/tests: no test is written out in the file, and era 2.1 needs at least one case",
        )
    return out
