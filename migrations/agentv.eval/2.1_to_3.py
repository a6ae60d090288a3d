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
`$schema` is kept as it is (AgentV's own label, `agentv-eval-v2`, in every era); none is added.

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
from evalreg.stepkit import at, clone, gather

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
_LABELS_21 = ("agentv-eval-v2", "agentv-eval-v2.1")
"""The `$schema` labels era 2.1 allows (era 3 allows any text there)."""
_ALIASES = {"input_messages": "input", "expected_messages": "expected_output"}


_CHECK_TYPES = {"code": "code_judge", "rubric": "rubrics"}


def _check(item: Any, where: str, to: str, ctx: StepContext) -> Any:
    """Return one 2.1 evaluator (at `where`; at `to` in the output) as an era-3 check."""
    if not isinstance(item, dict):
        return clone(item)
    out: dict[str, Any] = {}
    kind = item.get("type")
    for key, value in item.items():
        if key == "type" and isinstance(value, str) and value in _CHECK_TYPES:
            out[key] = _CHECK_TYPES[value]
            ctx.converted(f"{to}/type", value, out[key], "the type's era-3 name")
        elif key == "rubrics" and kind == "rubric":
            out["criteria"] = clone(value)
            ctx.renamed(at(where, key), f"{to}/criteria")
        elif key == "evaluators" and kind == "composite" and isinstance(value, list):
            out["assert"] = [
                _check(inner, f"{where}/evaluators/{i}", f"{to}/assert/{i}", ctx)
                for i, inner in enumerate(value)
            ]
            ctx.renamed(at(where, key), f"{to}/assert")
        else:
            out[key] = clone(value)
    return out


def _checks(parts: list[tuple[str, list[Any]]], to: str, ctx: StepContext) -> list[Any]:
    """Return the checks of several 2.1 evaluator lists as one era-3 `assert` list at `to`."""
    moved = gather(parts, to, ctx)
    found = []
    offset = 0
    for where, part in parts:
        for index, item in enumerate(part):
            found.append(_check(item, f"{where}/{index}", f"{to}/{offset + index}", ctx))
        offset += len(part)
    assert len(found) == len(moved)
    return found


def _default_check(record: dict[str, Any], ctx: StepContext) -> dict[str, Any] | None:
    if "evaluator" not in record:
        return None
    kind = record["evaluator"]
    if kind in _TYPES_21:
        name = _CHECK_TYPES.get(kind, kind)
        return {"name": kind, "type": name}
    ctx.lose("/evaluator", f"era 3 has no default evaluator and no {kind!r} check type")
    return None


def _test(
    case: Any, where: str, to: str, default: dict[str, Any] | None, ctx: StepContext
) -> tuple[Any, bool]:
    """Return one 2.1 case (at `where`; at `to` in the output) as an era-3 test, and whether
    it took the file's default check."""
    if not isinstance(case, dict):
        return clone(case), False
    out: dict[str, Any] = {}
    parts: list[tuple[str, list[Any]]] = []
    rubrics: Any = None
    metadata: dict[str, Any] = {}
    for key, value in case.items():
        at_key = at(where, key)
        if key == "expected_outcome" or (key == "outcome" and "expected_outcome" not in case):
            out["criteria"] = clone(value)
            ctx.renamed(at_key, f"{to}/criteria")
        elif key == "outcome":
            if value != case["expected_outcome"]:
                ctx.lose(at_key, "the case also has expected_outcome")
            else:
                ctx.dropped(at_key, "the same as expected_outcome")
        elif key in _ALIASES:
            out[_ALIASES[key]] = clone(value)
            ctx.renamed(at_key, at(to, _ALIASES[key]))
        elif key in _ALIASES.values():
            name = next(k for k, v in _ALIASES.items() if v == key)
            if name not in case:
                out[key] = clone(value)  # the alias, under the name era 3 gives the turns
            elif _turns(value, "user" if key == "input" else "assistant") != case[name]:
                ctx.lose(at_key, f"the case also has {name}")
            else:
                ctx.dropped(at_key, f"the same turns as {name}")
        elif key == "execution" and isinstance(value, dict):
            rest = {k: clone(v) for k, v in value.items() if k != "evaluators"}
            if rest:
                out["execution"] = rest
            elif "evaluators" not in value:
                out["execution"] = {}
            listed = value.get("evaluators")
            if isinstance(listed, list):
                parts.insert(0, (at_key + "/evaluators", listed))
                if not listed:
                    ctx.dropped(at_key + "/evaluators", "an empty list")
            elif "evaluators" in value:
                out.setdefault("execution", {})["evaluators"] = clone(listed)
            out.setdefault("assert", None)
        elif key == "evaluators" and isinstance(value, list):
            parts.append((at_key, value))
            if not value:
                ctx.dropped(at_key, "an empty list")
            out.setdefault("assert", None)
        elif key == "rubrics":
            rubrics = value
            out.setdefault("assert", None)
        elif key in ("id", "conversation_id", "note"):
            out[key] = clone(value)
        else:
            metadata[key] = clone(value)
            ctx.moved(at_key, at(to, "metadata", key), f"era 3 tests have no {key}; kept")
    # One list where the first of its sources was, in a fixed order.
    checks = _checks(parts, f"{to}/assert", ctx)
    if rubrics is not None:
        index = len(checks)
        checks.append({"type": "rubrics", "criteria": clone(rubrics)})
        ctx.moved(f"{where}/rubrics", f"{to}/assert/{index}/criteria")
        ctx.added(f"{to}/assert/{index}/type", "rubrics", "derived", "the rubrics, as one check")
    took_default = False
    if not checks and default is not None:
        checks = [clone(default)]
        took_default = True
        ctx.added(f"{to}/assert/0", checks[0], "derived", "the file's default", source="/evaluator")
    if checks:
        out["assert"] = checks
    else:
        out.pop("assert", None)
    if metadata:
        out["metadata"] = metadata
    return out, took_default


def upgrade(record: dict[str, Any], ctx: StepContext) -> dict[str, Any]:
    """Return `record` at era 3."""
    default = _default_check(record, ctx)
    out: dict[str, Any] = {}
    used_default = False
    for key, value in record.items():
        if key == "evalcases" and isinstance(value, list):
            ctx.renamed("/evalcases", "/tests")
            tests = []
            for i, case in enumerate(value):
                test, took = _test(case, f"/evalcases/{i}", f"/tests/{i}", default, ctx)
                tests.append(test)
                used_default = used_default or took
            out["tests"] = tests
        elif key == "evaluator":
            continue
        elif key == "execution" and isinstance(value, dict):
            rest = {k: clone(v) for k, v in value.items() if k != "evaluators"}
            listed = value.get("evaluators")
            if rest or not isinstance(listed, list):
                out["execution"] = rest
            if isinstance(listed, list) and listed:
                out["assert"] = _checks([("/execution/evaluators", listed)], "/assert", ctx)
            elif isinstance(listed, list):
                ctx.dropped("/execution/evaluators", "an empty list")
            elif "evaluators" in value:
                out["execution"]["evaluators"] = clone(listed)
        else:
            out[key] = clone(value)
    if default is not None:
        reason = (
            "it is now the check of each test that had none"
            if used_default
            else "every test has checks of its own"
        )
        ctx.dropped("/evaluator", reason)
    return out


# -- downgrade -----------------------------------------------------------------------------


Pending = tuple[str, Any]
"""A check on its way down: where it is in the input, and the check (or, for the checks
written as sentences, a list of (place, sentence) pairs that become one rubric evaluator)."""


def _pending(checks: list[Any], where: str) -> list[Pending]:
    """Return era-3 checks (a list at `where`) in the order their 2.1 evaluators take.

    Sentences (rubric shorthand) become one rubric evaluator, at the first one's place.
    """
    found: list[Pending] = []
    sentences: list[tuple[str, str]] = []
    for index, item in enumerate(checks):
        if isinstance(item, str):
            if not sentences:
                found.append(("", sentences))
            sentences.append((f"{where}/{index}", item))
        else:
            found.append((f"{where}/{index}", item))
    return found


def _place(entries: list[Pending], to: str, ctx: StepContext, start: int = 0) -> list[Any]:
    """Return the 2.1 evaluators of `entries`, placed in a list at `to` from index `start`,
    each move reported."""
    out: list[Any] = []
    for source, item in entries:
        target = f"{to}/{start + len(out)}"
        if not source:  # sentences: one rubric evaluator
            ctx.added(f"{target}/name", "rubric", "derived", "checks written as sentences")
            ctx.added(f"{target}/type", "rubric", "derived", "checks written as sentences")
            for index, (place, _) in enumerate(item):
                ctx.moved(place, f"{target}/rubrics/{index}")
            out.append({"name": "rubric", "type": "rubric", "rubrics": [s for _, s in item]})
            continue
        converted = _evaluator(item, source, target, ctx)
        if converted is _LOST:
            continue
        if source != target:
            ctx.moved(source, target)
        out.append(converted)
    return out


_LOST = object()


def _evaluator(item: Any, where: str, to: str, ctx: StepContext) -> Any:
    """Return one era-3 check (at `where`; at `to` in the output) as a 2.1 evaluator, or
    `_LOST`."""
    if not isinstance(item, dict):
        return clone(item)
    kind = item.get("type")
    if kind == "rubrics":
        kind = "rubric"
    if kind not in _TYPES_21:
        ctx.lose(where, f"era 2.1 has no {kind!r} evaluator type")
        return _LOST
    out: dict[str, Any] = {}
    if "name" not in item:
        out["name"] = kind
        ctx.added(f"{to}/name", kind, "derived", "2.1 requires names; the check's type")
    inner: list[Pending] = []
    for key, value in item.items():
        if key == "type":
            out[key] = kind
            if kind != value:
                ctx.converted(f"{to}/type", value, kind, "the type's 2.1 name")
        elif key == "criteria" and kind == "rubric":
            out["rubrics"] = clone(value)
            ctx.renamed(at(where, key), f"{to}/rubrics")
        elif key in ("assert", "assertions") and kind == "composite" and isinstance(value, list):
            inner += _pending(value, at(where, key))
            out.setdefault("evaluators", None)
        else:
            out[key] = clone(value)
    existing = out.get("evaluators")
    if existing is None:
        out.pop("evaluators", None)
        existing = []
    placed = _place(inner, f"{to}/evaluators", ctx, len(existing)) if inner else []
    if placed:
        out["evaluators"] = existing + placed
    return out


def _turns(value: Any, role: str) -> Any:
    """Return `value` as turns: a text or an object is one turn of `role`."""
    if isinstance(value, (str, dict)):
        return [{"role": role, "content": clone(value)}]
    return clone(value)


def _turns_at(value: Any, role: str, where: str, to: str, ctx: StepContext) -> Any:
    """Return `value` (at `where`) as turns at `to`, the move reported."""
    if isinstance(value, (str, dict)):
        ctx.moved(where, f"{to}/0/content", f"as one {role} turn")
        ctx.added(f"{to}/0/role", role, "derived", "the role the field implies")
    else:
        ctx.renamed(where, to)
    return _turns(value, role)


def _execution(value: Any, where: str, to: str, ctx: StepContext) -> tuple[Any, list[Pending]]:
    """Return a 2.1 execution and the checks it listed (to become 2.1 evaluators)."""
    if not isinstance(value, dict):
        return clone(value), []
    out: dict[str, Any] = {}
    checks: list[Pending] = []
    for key, setting in value.items():
        if key in ("assert", "assertions", "evaluators") and isinstance(setting, list):
            if not setting:
                ctx.dropped(at(where, key), "an empty list")
            checks += _pending(setting, at(where, key))
        elif key == "targets":
            if isinstance(setting, list) and len(setting) == 1 and "target" not in value:
                out["target"] = setting[0]
                ctx.moved(f"{where}/targets/0", f"{to}/target", "the one target")
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


def _down_test(test: Any, where: str, to: str, ctx: StepContext) -> Any:
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
    evaluators: list[Pending] = []
    execution: dict[str, Any] | None = None
    listed: list[Pending] = []
    for key, value in test.items():
        at_key = at(where, key)
        if key == "criteria":
            out["expected_outcome"] = clone(value)
            ctx.renamed(at_key, f"{to}/expected_outcome")
        elif key == "expected_outcome":
            if "criteria" not in test:
                out["expected_outcome"] = clone(value)
            elif test["criteria"] != value:
                ctx.lose(at_key, "the test also has criteria")
            else:
                ctx.dropped(at_key, "the same as criteria")
        elif key in ("input", "expected_output"):
            name = next(k for k, v in _ALIASES.items() if v == key)
            role = "user" if key == "input" else "assistant"
            turns = _turns(value, role)
            if name not in test:
                out[name] = _turns_at(value, role, at_key, f"{to}/{name}", ctx)
            elif test[name] != turns:
                ctx.lose(at_key, f"the test also has {name}")
            else:
                ctx.dropped(at_key, f"the same turns as {name}")
        elif key in ("input_messages", "expected_messages", "id", "conversation_id", "note"):
            out[key] = clone(value)
        elif key in ("assert", "assertions", "evaluators") and isinstance(value, list):
            if not value:
                ctx.dropped(at_key, "an empty list")
            rubrics = _plain_rubrics(value) if "rubrics" not in test else None
            if rubrics is not None and "rubrics" not in out:
                out["rubrics"] = clone(value[rubrics]["criteria"])
                ctx.moved(f"{at_key}/{rubrics}/criteria", f"{to}/rubrics")
                ctx.dropped(f"{at_key}/{rubrics}/type", "the case's rubrics say it")
            elif rubrics is not None:
                rubrics = None
            others = [(f"{at_key}/{i}", c) for i, c in enumerate(value) if i != rubrics]
            evaluators += _repoint(_pending([c for _, c in others], at_key), others)
        elif key == "rubrics":
            out["rubrics"] = clone(value)
        elif key == "execution":
            execution, listed = _execution(value, at_key, at(to, key), ctx)
        elif key == "metadata" and isinstance(value, dict):
            for name, kept in value.items():
                if name in _CASE_21 or name in _TEST_3:
                    ctx.lose(at(at_key, name), f"a 2.1 case already has a {name} field")
                else:
                    out[name] = clone(kept)  # a case field 2.1 allowed, kept here on the way up
                    ctx.moved(at(at_key, name), at(to, name), "a case field 2.1 allows")
        elif key in ("dataset", "eval_set"):
            out[key] = clone(value)
            ctx.kept(at(to, key), f"era 2.1 cases allow other fields; {key} is kept as one")
        else:
            ctx.lose(at_key, f"era 2.1 cases have no {key}")
    placed = _place(listed + evaluators, f"{to}/execution/evaluators", ctx)
    if placed:
        execution = execution if isinstance(execution, dict) else {}
        execution["evaluators"] = placed
    if execution is not None:
        out["execution"] = execution
    return out


def _repoint(found: list[Pending], others: list[tuple[str, Any]]) -> list[Pending]:
    """Return `found` (pending checks of the list `others` without its gaps) with the places
    the checks have in the input."""
    places = [place for place, _ in others]
    out: list[Pending] = []
    for source, item in found:
        if not source:
            out.append(("", [(places[int(p.rsplit("/", 1)[1])], s) for p, s in item]))
        else:
            out.append((places[int(source.rsplit("/", 1)[1])], item))
    return out


def downgrade(record: dict[str, Any], ctx: StepContext) -> dict[str, Any]:
    """Return `record` at era 2.1, losing (only with allow-loss) what 2.1 cannot hold."""
    out: dict[str, Any] = {}
    evaluators: list[Pending] = []
    listed: list[Pending] = []
    execution: Any = None
    for key, value in record.items():
        at_key = at("", key)
        if key in _CONTAINERS:
            if not isinstance(value, list):
                raise MigrationError(
                    "agentv.eval",
                    f"{TO} -> {FROM}",
                    f"/{key}: the tests are in another file ({value!r}), and era 2.1 lists its "
                    "cases in the eval file; write them out, or keep the file at era 3",
                )
            ctx.renamed(at_key, "/evalcases")
            cases: list[Any] = []
            for i, test in enumerate(value):
                case = _down_test(test, f"{at_key}/{i}", f"/evalcases/{len(cases)}", ctx)
                if case is not None:
                    cases.append(case)
            out["evalcases"] = cases
        elif key in ("assert", "assertions") and isinstance(value, list):
            if not value:
                ctx.dropped(at_key, "an empty list")
            evaluators += _pending(value, at_key)
        elif key == "execution":
            execution, listed = _execution(value, at_key, at_key, ctx)
        elif key == "metadata" and isinstance(value, dict):
            for name, kept in value.items():
                if name == "dataset" and "dataset" not in record:
                    out["dataset"] = clone(kept)
                    ctx.moved("/metadata/dataset", "/dataset")
                else:
                    ctx.lose(at("/metadata", name), "era 2.1 has no suite metadata")
        elif key in _PACK or key in _SUITE_ONLY:
            ctx.lose(at_key, f"era 2.1 has no {key} field")
        elif key == "$schema" and value not in _LABELS_21:
            ctx.lose(at_key, f"era 2.1 knows only the labels {' and '.join(_LABELS_21)}")
        else:
            out[key] = clone(value)
    placed = _place(listed + evaluators, "/execution/evaluators", ctx)
    if placed:
        execution = execution if isinstance(execution, dict) else {}
        execution["evaluators"] = placed
    if execution is not None:
        out["execution"] = execution
    if not out.get("evalcases"):
        raise MigrationError(
            "agentv.eval",
            f"{TO} -> {FROM}",
            "/tests: no test is written out in the file, and era 2.1 needs at least one case",
        )
    return out
