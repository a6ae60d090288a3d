"""Rename `assert` to `assertions`, settle the test list as `tests` and the fields' new names.

On 2026-03-30 AgentV dropped the names era 3 still accepted: the checks are `assertions` (those
of every test, the suite-level ones, those under `execution` and the inner checks of a
composite), the test list is `tests` (era 3 also accepted `cases` and `eval_cases`), and a
test's `expected_outcome`, `input_messages` and `expected_messages` are `criteria`, `input` and
`expected_output`. Where a test has both names with different values, the old one is kept under
the test's `metadata` and reported as kept. The file-level `dataset` and default `evaluator`,
which era 3.1 has no field for, and a test's fields that era 3.1 does not list (`eval_set`, and
the other fields the first schemas of era 3 allowed) are kept the same way. Nothing else
changes; era 3.1 adds keys an era-3 file does not have. `$schema: agentv-eval-v3` is kept and
relabelled `agentv-eval-v3.1`; none is added.

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
from evalreg.stepkit import clone, rename_key, rename_key_each

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


def _checks(value: Any, old: str, new: str) -> Any:
    return rename_key_each(value, old, new, nested=True)


def _execution(value: Any, old: str, new: str) -> Any:
    return rename_key(value, old, new, nested=True)


def _test(test: Any, where: str, ctx: StepContext) -> Any:
    if not isinstance(test, dict):
        return clone(test)
    out: dict[str, Any] = {}
    metadata: dict[str, Any] = {}
    for key, value in test.items():
        if key in _RENAMED:
            new = _RENAMED[key]
            if new not in test:
                out[new] = clone(value)
            elif test[new] != value:
                metadata[key] = clone(value)
                ctx.kept(f"{where}/metadata/{key}", f"the test also has {new}; kept")
        elif key == "assert":
            out["assertions"] = _checks(value, "assert", "assertions")
        elif key == "execution":
            out[key] = _execution(value, "assert", "assertions")
        elif key in _TEST_31:
            out[key] = clone(value)
        else:
            metadata[key] = clone(value)
            ctx.kept(f"{where}/metadata/{key}", f"era 3.1 tests have no {key}; kept")
    return _with_metadata(out, metadata, where, ctx)


def _with_metadata(
    out: dict[str, Any], kept: dict[str, Any], where: str, ctx: StepContext
) -> dict[str, Any]:
    """Return `out` with the `kept` values added to its metadata, never over another value."""
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
    for name, value in kept.items():
        if name in merged and merged[name] != value:
            ctx.lose(f"{where}/{name}", f"{where}/metadata/{name} already holds another value")
        else:
            merged[name] = value
    out["metadata"] = merged
    return out


def upgrade(record: dict[str, Any], ctx: StepContext) -> dict[str, Any]:
    """Return `record` at era 3.1."""
    out: dict[str, Any] = {}
    metadata: dict[str, Any] = {}
    for key, value in record.items():
        if key in _CONTAINERS:
            name = "tests" if key == "tests" or "tests" not in record else key
            if isinstance(value, list):
                out[name] = [_test(t, f"/{name}/{i}", ctx) for i, t in enumerate(value)]
            else:
                out[name] = clone(value)
        elif key == "assert":
            out["assertions"] = _checks(value, "assert", "assertions")
        elif key == "execution":
            out[key] = _execution(value, "assert", "assertions")
        elif key in _KEPT_SUITE:
            metadata[key] = clone(value)
            ctx.kept(f"/metadata/{key}", f"era 3.1 has no file-level {key}; kept")
        else:
            out[key] = clone(value)
    return _with_metadata(out, metadata, "", ctx)


# -- downgrade -----------------------------------------------------------------------------


def _down_metadata(
    value: dict[str, Any], names: tuple[str, ...], out: dict[str, Any]
) -> dict[str, Any]:
    """Put the kept values named `names` back into `out`; return what else `value` holds."""
    rest = {}
    for name, kept in value.items():
        if name in names and name not in out:
            out[name] = clone(kept)
        else:
            rest[name] = clone(kept)
    return rest


def _down_checks(value: Any, where: str, ctx: StepContext) -> Any:
    """Return 3.1 checks as era-3 checks; entries that include checks from a file are lost."""
    if not isinstance(value, list):
        return clone(value)
    out = []
    for index, item in enumerate(value):
        if isinstance(item, dict) and "include" in item:
            ctx.lose(f"{where}/{index}", "era 3 has no include entries among checks")
            continue
        if isinstance(item, dict):
            item = {
                ("assert" if k == "assertions" else k): (
                    _down_checks(v, f"{where}/{index}/{k}", ctx)
                    if k in ("assertions", "evaluators")
                    else clone(v)
                )
                for k, v in item.items()
            }
        out.append(clone(item))
    return out


def _down_execution(value: Any, where: str, ctx: StepContext) -> Any:
    if not isinstance(value, dict):
        return clone(value)
    out: dict[str, Any] = {}
    for key, setting in value.items():
        if key in ("assertions", "evaluators"):
            name = "assert" if key == "assertions" else key
            out[name] = _down_checks(setting, f"{where}/{key}", ctx)
        elif key == "targets" and isinstance(setting, list):
            out[key] = []
            for index, target in enumerate(setting):
                if isinstance(target, str):
                    out[key].append(target)
                else:
                    ctx.lose(f"{where}/targets/{index}", "era 3 names its targets")
        else:
            out[key] = clone(setting)
    return out


def _down_test(test: Any, where: str, ctx: StepContext) -> Any:
    if not isinstance(test, dict):
        return clone(test)
    if "include" in test and "id" not in test:
        ctx.lose(where, "era 3 has no include entries")
        return None
    out: dict[str, Any] = {}
    metadata: dict[str, Any] | None = None
    for key, value in test.items():
        if key in ("assertions", "evaluators"):
            name = "assert" if key == "assertions" else key
            out[name] = _down_checks(value, f"{where}/{key}", ctx)
        elif key == "execution":
            out[key] = _down_execution(value, f"{where}/{key}", ctx)
        elif key == "input" and isinstance(value, dict):
            out[key] = [clone(value)]  # one turn, as the list era 3 takes
        elif key == "metadata" and isinstance(value, dict):
            metadata = value
        elif key in _LATER_TEST:
            ctx.lose(f"{where}/{key}", f"era 3 tests have no {key}")
        else:
            out[key] = clone(value)
    if metadata is not None:
        rest = _down_metadata(metadata, _RENAMED, out)
        if rest:
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
        if key in _CONTAINERS and isinstance(value, list):
            tests = [_down_test(t, f"/{key}/{i}", ctx) for i, t in enumerate(value)]
            out[key] = [test for test in tests if test is not None]
            if not out[key]:
                raise MigrationError(
                    "agentv.eval",
                    f"{TO} -> {FROM}",
                    f"/{key}: every entry includes tests from elsewhere, which era 3 cannot; "
                    "keep the file at era 3.1",
                )
        elif key == "assertions":
            out["assert"] = _down_checks(value, f"/{key}", ctx)
        elif key == "execution":
            out[key] = _down_execution(value, f"/{key}", ctx)
        elif key == "input" and isinstance(value, dict):
            out[key] = [clone(value)]
        elif key == "target" and not isinstance(value, str):
            ctx.lose("/target", "era 3 names the target; its definition has no place")
        elif key == "metadata" and isinstance(value, dict):
            metadata = value
        elif key in _LATER_SUITE:
            ctx.lose(f"/{key}", f"era 3 has no {key}")
        else:
            out[key] = clone(value)
    if metadata is not None:
        rest = _down_metadata(metadata, _KEPT_SUITE, out)
        if rest:
            out["metadata"] = rest
    return out
