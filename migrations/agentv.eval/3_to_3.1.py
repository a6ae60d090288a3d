"""Rename `assert` to `assertions`, settle the test list as `tests` and the fields' new names.

On 2026-03-30 AgentV dropped the names era 3 still accepted: the checks are `assertions` (those
of every test, the suite-level ones, those under `execution` and the inner checks of a
composite), the test list is `tests` (era 3 also accepted `cases` and `eval_cases`), and a
test's `expected_outcome`, `input_messages` and `expected_messages` are `criteria`, `input` and
`expected_output`. Where a test has both names with different values, the old one is kept under
the test's `metadata` and reported as kept. The file-level `dataset` and default `evaluator`,
which era 3.1 has no field for, and a test's fields that era 3.1 does not list (`eval_set`, and
the other fields the first schemas of era 3 allowed) are kept the same way. Nothing else
changes; era 3.1 adds keys an era-3 file does not have. `$schema` is kept as it is (AgentV's
own label, `agentv-eval-v2`); none is added.

Downgrade: `assertions` back to `assert`, the kept values back to their places, a one-turn
input object as a list of that turn. Lost, only with allow-loss: what era 3 has no place for,
the keys AgentV added from 2026-03-30 on (category, preprocessors, governance, experiment,
imports, run policy, default_test, evaluate_options, conversation tests, test `vars` and
`run`, include entries, a target given as an object rather than by its name). A file of
imports only, or of both `tests` and `eval_cases`, has no era-3 form: the downgrade fails for
it.
"""

from __future__ import annotations

from typing import Any

from evalreg import StepContext
from evalreg.errors import MigrationError
from evalreg.stepkit import at, clone, rename_key, rename_key_each

FROM = "3"
TO = "3.1"
PARAMS = ()

_CONTAINERS = ("tests", "cases", "eval_cases")
_RENAMED = {
    "expected_outcome": "criteria",
    "input_messages": "input",
    "expected_messages": "expected_output",
}
_TEST_31 = (
    "id",
    "criteria",
    "input",
    "expected_output",
    "assertions",
    "conversation_id",
    "execution",
    "metadata",
    "workspace",
    "input_files",
    "evaluators",
    "rubrics",
    "note",
    "dataset",
)
_KEPT_SUITE = ("dataset", "evaluator")
_LATER_SUITE = (
    "category",
    "preprocessors",
    "governance",
    "experiment",
    "imports",
    "policy",
    "model",
    "budget_usd",
    "early_exit",
    "on_run_complete",
    "runs",
    "threshold",
    "timeout_seconds",
    "repeat",
    "default_test",
    "evaluate_options",
)
_LATER_TEST = (
    "suite",
    "aggregation",
    "depends_on",
    "mode",
    "on_dependency_failure",
    "on_turn_failure",
    "turns",
    "window_size",
    "vars",
    "run",
    "experiment",
)


def _renamed(value: Any, where: str, to: str, ctx: StepContext, *, each: bool) -> Any:
    """Return `value` (a check list, or one object) with `assert` renamed `assertions`."""
    rename = rename_key_each if each else rename_key
    return rename(value, "assert", "assertions", nested=True, ctx=ctx, source=where, target=to)


def _both(holder: dict[str, Any], where: str, ctx: StepContext) -> bool:
    """Return whether `holder` has `assertions` beside its `assert`, which then goes (reported).

    Era 3 read either name; 3.1 only `assertions`, which keeps its checks.
    """
    if "assertions" not in holder:
        return False
    if holder["assert"] == holder["assertions"]:
        ctx.dropped(where, "the same checks as assertions")
    else:
        ctx.lose(where, "the checks are under assertions, the name era 3.1 keeps")
    return True


def _test(test: Any, where: str, to: str, ctx: StepContext) -> Any:
    if not isinstance(test, dict):
        return clone(test)
    out: dict[str, Any] = {}
    metadata: dict[str, tuple[Any, str, str]] = {}
    for key, value in test.items():
        at_key = at(where, key)
        if key in _RENAMED:
            new = _RENAMED[key]
            if new not in test:
                out[new] = clone(value)
                ctx.renamed(at_key, at(to, new))
            elif test[new] != value:
                metadata[key] = (clone(value), at_key, f"the test also has {new}; kept")
            else:
                ctx.dropped(at_key, f"the same as {new}")
        elif key == "assert":
            if _both(test, at_key, ctx):
                continue
            out["assertions"] = _renamed(value, at_key, f"{to}/assertions", ctx, each=True)
            ctx.renamed(at_key, f"{to}/assertions")
        elif key == "execution":
            out[key] = _renamed(value, at_key, at(to, key), ctx, each=False)
        elif key in _TEST_31:
            out[key] = clone(value)
        else:
            metadata[key] = (clone(value), at_key, f"era 3.1 tests have no {key}; kept")
    return _with_metadata(out, metadata, to, ctx)


def _with_metadata(
    out: dict[str, Any], kept: dict[str, tuple[Any, str, str]], where: str, ctx: StepContext
) -> dict[str, Any]:
    """Return `out` with the `kept` values added to its metadata, never over another value.

    `kept`: by name, the value, where it was in the input and why it is kept (each reported).
    """
    if not kept:
        return out
    metadata = out.get("metadata", {})
    if not isinstance(metadata, dict):
        raise MigrationError(
            "agentv.eval",
            f"{FROM} -> {TO}",
            f"{where}/metadata: it is no object, so {', '.join(kept)} cannot be kept in it",
        )
    merged = dict(metadata)
    for name, (value, source, reason) in kept.items():
        place = at(where, "metadata", name)
        if name in merged and merged[name] != value:
            ctx.lose(source, f"{place} already holds another value")
        else:
            merged[name] = value
            ctx.moved(source, place, reason)
    out["metadata"] = merged
    return out


def upgrade(record: dict[str, Any], ctx: StepContext) -> dict[str, Any]:
    """Return `record` at era 3.1."""
    out: dict[str, Any] = {}
    metadata: dict[str, tuple[Any, str, str]] = {}
    for key, value in record.items():
        at_key = at("", key)
        if key in _CONTAINERS:
            name = "tests" if key == "tests" or "tests" not in record else key
            if name != key:
                ctx.renamed(at_key, f"/{name}")
            if isinstance(value, list):
                out[name] = [
                    _test(t, f"{at_key}/{i}", f"/{name}/{i}", ctx) for i, t in enumerate(value)
                ]
            else:
                out[name] = clone(value)
        elif key == "assert":
            if _both(record, at_key, ctx):
                continue
            out["assertions"] = _renamed(value, at_key, "/assertions", ctx, each=True)
            ctx.renamed(at_key, "/assertions")
        elif key == "execution":
            out[key] = _renamed(value, at_key, at_key, ctx, each=False)
        elif key in _KEPT_SUITE:
            metadata[key] = (clone(value), at_key, f"era 3.1 has no file-level {key}; kept")
        else:
            out[key] = clone(value)
    return _with_metadata(out, metadata, "", ctx)


# -- downgrade -----------------------------------------------------------------------------


def _down_metadata(
    value: dict[str, Any],
    names: tuple[str, ...] | dict[str, str],
    out: dict[str, Any],
    where: str,
    to: str,
    ctx: StepContext,
) -> dict[str, Any]:
    """Put the kept values named `names` back into `out` (at `to`); return what else `value`
    (the metadata at `where`) holds."""
    rest = {}
    for name, kept in value.items():
        if name in names and name not in out:
            out[name] = clone(kept)
            ctx.moved(at(where, name), at(to, name), "back to its place")
        else:
            rest[name] = clone(kept)
    return rest


def _down_checks(value: Any, where: str, to: str, ctx: StepContext) -> Any:
    """Return 3.1 checks as era-3 checks; entries that include checks from a file are lost."""
    if not isinstance(value, list):
        return clone(value)
    out: list[Any] = []
    for index, item in enumerate(value):
        source, target = f"{where}/{index}", f"{to}/{len(out)}"
        if isinstance(item, dict) and "include" in item:
            ctx.lose(source, "era 3 has no include entries among checks")
            continue
        if isinstance(item, dict):
            converted = {}
            for k, v in item.items():
                name = "assert" if k == "assertions" else k
                if k in ("assertions", "evaluators"):
                    converted[name] = _down_checks(v, at(source, k), at(target, name), ctx)
                else:
                    converted[name] = clone(v)
                if name != k:
                    ctx.renamed(at(source, k), at(target, name))
            item = converted
        else:
            item = clone(item)
        if source != target:
            ctx.moved(source, target)
        out.append(item)
    return out


def _down_execution(value: Any, where: str, to: str, ctx: StepContext) -> Any:
    if not isinstance(value, dict):
        return clone(value)
    out: dict[str, Any] = {}
    for key, setting in value.items():
        if key in ("assertions", "evaluators"):
            name = "assert" if key == "assertions" else key
            out[name] = _down_checks(setting, at(where, key), at(to, name), ctx)
            if name != key:
                ctx.renamed(at(where, key), at(to, name))
        elif key == "targets" and isinstance(setting, list):
            out[key] = []
            for index, target in enumerate(setting):
                if isinstance(target, str):
                    if len(out[key]) != index:
                        ctx.moved(f"{where}/targets/{index}", f"{to}/targets/{len(out[key])}")
                    out[key].append(target)
                else:
                    ctx.lose(f"{where}/targets/{index}", "era 3 names its targets")
        else:
            out[key] = clone(setting)
    return out


def _one_turn(value: Any, where: str, ctx: StepContext) -> list[Any]:
    """Return a one-turn input object as the list of that turn era 3 takes."""
    turns = [clone(value)]
    ctx.converted(where, value, turns, "a list of that one turn")
    return turns


def _down_test(test: Any, where: str, to: str, ctx: StepContext) -> Any:
    if not isinstance(test, dict):
        return clone(test)
    if "include" in test and "id" not in test:
        ctx.lose(where, "era 3 has no include entries")
        return None
    out: dict[str, Any] = {}
    metadata: dict[str, Any] | None = None
    for key, value in test.items():
        at_key = at(where, key)
        if key in ("assertions", "evaluators"):
            name = "assert" if key == "assertions" else key
            out[name] = _down_checks(value, at_key, at(to, name), ctx)
            if name != key:
                ctx.renamed(at_key, at(to, name))
        elif key == "execution":
            out[key] = _down_execution(value, at_key, at(to, key), ctx)
        elif key == "input" and isinstance(value, dict):
            out[key] = _one_turn(value, at(to, key), ctx)
        elif key == "metadata" and isinstance(value, dict):
            metadata = value
        elif key in _LATER_TEST:
            ctx.lose(at_key, f"era 3 tests have no {key}")
        else:
            out[key] = clone(value)
    if metadata is not None:
        rest = _down_metadata(metadata, _RENAMED, out, f"{where}/metadata", to, ctx)
        if rest or not metadata:
            out["metadata"] = rest
    return out


def downgrade(record: dict[str, Any], ctx: StepContext) -> dict[str, Any]:
    """Return `record` at era 3, losing (only with allow-loss) what era 3 cannot hold."""
    if not any(key in record for key in _CONTAINERS):
        raise MigrationError(
            "agentv.eval",
            f"{TO} -> {FROM}",
            "/imports: the file only imports its tests, and era 3 lists them (or names one "
            "file of them); keep the file at era 3.1",
        )
    if sum(key in record for key in _CONTAINERS) > 1:
        raise MigrationError(
            "agentv.eval",
            f"{TO} -> {FROM}",
            "/eval_cases: the file has both tests and eval_cases, and era 3 takes one test "
            "list; merge them, or keep the file at era 3.1",
        )
    out: dict[str, Any] = {}
    metadata: dict[str, Any] | None = None
    for key, value in record.items():
        at_key = at("", key)
        if key in _CONTAINERS and isinstance(value, list):
            tests: list[Any] = []
            for i, test in enumerate(value):
                converted = _down_test(test, f"{at_key}/{i}", f"{at_key}/{len(tests)}", ctx)
                if converted is not None:
                    tests.append(converted)
            out[key] = tests
            if not tests:
                raise MigrationError(
                    "agentv.eval",
                    f"{TO} -> {FROM}",
                    f"/{key}: every entry includes tests from elsewhere, which era 3 cannot; "
                    "keep the file at era 3.1",
                )
        elif key == "assertions":
            out["assert"] = _down_checks(value, at_key, "/assert", ctx)
            ctx.renamed(at_key, "/assert")
        elif key == "execution":
            out[key] = _down_execution(value, at_key, at_key, ctx)
        elif key == "input" and isinstance(value, dict):
            out[key] = _one_turn(value, at_key, ctx)
        elif key == "target" and not isinstance(value, str):
            ctx.lose("/target", "era 3 names the target; its definition has no place")
        elif key == "metadata" and isinstance(value, dict):
            metadata = value
        elif key in _LATER_SUITE:
            ctx.lose(at_key, f"era 3 has no {key}")
        else:
            out[key] = clone(value)
    if metadata is not None:
        rest = _down_metadata(metadata, _KEPT_SUITE, out, "/metadata", "", ctx)
        if rest or not metadata:
            out["metadata"] = rest
    return out
