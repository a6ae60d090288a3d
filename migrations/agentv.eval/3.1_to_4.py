"""Move test inputs under `vars`, the target to `providers`, suite checks to `default_test`.

Era 4 (2026-07-02 on) follows promptfoo's layout. A test's `input` and `input_files` move under
its `vars`, where the newest AgentV reads them, and `assertions` are `assert` again (also
inside composites and under `execution`). The suite-level `assertions`, which every test got,
become `default_test.assert`, which every test gets. The file-level `target` (a name or a
definition), `execution.target` and `execution.targets` become the `providers` list, in that
order, without repeats, where the target was; what else `execution` holds stays. An empty
target (valid at 3.1) names no provider, and era 4 has no empty provider name: it is lost, only
with allow-loss. Tests reach the provider through prompt templates, so a file without `prompts`
gets `prompts: ["{{ input }}"]` (the test's input as it is), placed before `providers`. The test
list is `tests` (`eval_cases` was dropped).

The suite-level `input` of era 3.1, shared by every test, has no counterpart: promptfoo's
`default_test.vars` would be overridden by each test's own `input`. It is kept as
`default_test.metadata.input` and reported as kept. A test's `note` and `dataset`, which era 4
tests do not have, are kept in its `metadata` the same way. Where `default_test` is a file
reference, the suite checks stay the suite-level `assert` and the suite input stays `input`,
both of which era 4 reads. `$schema: agentv-eval-v3.1` is kept and relabelled `agentv-eval-v4`;
none is added. Criteria, expected outputs, ids and metadata are carried unchanged.

Downgrade: the moves back (one provider becomes `target`, several `execution.targets`). Lost,
only with allow-loss: provider objects with settings, prompts other than the default one, test
variables other than input and input_files, default_test variables and settings other than its
checks and threshold, test descriptions, options and thresholds, the keys era 4 introduced
(scenarios, environment, extensions, graders, defaults, ...), and an `execution.target` that is
no string or `execution.targets` that are not all strings (era 4 leaves `execution` free-form;
3.1 names targets there). A test without an id has no 3.1 form (3.1 requires ids): the downgrade
fails for it.
"""

from __future__ import annotations

from typing import Any

from evalreg import StepContext
from evalreg.errors import MigrationError
from evalreg.stepkit import clone, rename_key, rename_key_each

FROM = "3.1"
TO = "4"
PARAMS = ()

DEFAULT_PROMPTS = ["{{ input }}"]
_VARS = ("input", "input_files")
_KEPT_TEST = ("note", "dataset", "experiment")


def _providers(record: dict[str, Any], ctx: StepContext) -> list[Any]:
    """Return the file's targets as providers, in order and without repeats.

    An empty target names no provider (era 4 requires a non-empty name): it is lost, only
    with allow-loss, rather than carried as an empty provider.
    """
    found: list[Any] = []
    execution = record.get("execution")
    execution = execution if isinstance(execution, dict) else {}
    targets = execution.get("targets")
    named = [("/target", record.get("target")), ("/execution/target", execution.get("target"))]
    if isinstance(targets, list):
        named += [(f"/execution/targets/{i}", target) for i, target in enumerate(targets)]
    for pointer, target in named:
        if target == "":
            ctx.lose(pointer, "an empty target names no provider; era 4 has no empty provider")
        elif target is not None and target not in found:
            found.append(clone(target))
    return found


def _test(test: Any, where: str, ctx: StepContext) -> Any:
    if not isinstance(test, dict):
        return clone(test)
    out: dict[str, Any] = {}
    given = test.get("vars")
    variables: dict[str, Any] = dict(given) if isinstance(given, dict) else {}
    kept: dict[str, Any] = {}
    for key, value in test.items():
        if key in _VARS and isinstance(given, (dict, type(None))):
            if key in variables and variables[key] != value:
                out[key] = clone(value)  # vars already holds another one; era 4 reads both
            else:
                variables[key] = clone(value)
                out.setdefault("vars", None)
        elif key == "vars" and isinstance(value, dict):
            out.setdefault("vars", None)
        elif key == "assertions":
            out["assert"] = rename_key_each(value, "assertions", "assert", nested=True)
        elif key == "execution":
            out[key] = rename_key(value, "assertions", "assert", nested=True)
        elif key in _KEPT_TEST:
            kept[key] = clone(value)
            ctx.kept(f"{where}/metadata/{key}", f"era 4 tests have no {key}; kept")
        else:
            out[key] = clone(value)
    if "vars" in out:
        out["vars"] = {k: clone(v) for k, v in variables.items()}
    if kept:
        metadata = out.get("metadata", {})
        if not isinstance(metadata, dict):
            raise MigrationError(
                "agentv.eval", f"{FROM} -> {TO}", f"{where}/metadata: it is no object"
            )
        out["metadata"] = {**metadata, **kept}
    return out


def upgrade(record: dict[str, Any], ctx: StepContext) -> dict[str, Any]:
    """Return `record` at era 4."""
    providers = _providers(record, ctx)
    referenced = isinstance(record.get("default_test"), str)
    out: dict[str, Any] = {}

    def place_providers() -> None:
        if "prompts" not in record and "prompts" not in out:
            out["prompts"] = list(DEFAULT_PROMPTS)
        if providers and "providers" not in out:
            out["providers"] = providers

    def default_test() -> dict[str, Any]:
        found = out.setdefault("default_test", {})
        assert isinstance(found, dict)
        return found

    for key, value in record.items():
        if key == "target":
            place_providers()
        elif key == "execution" and isinstance(value, dict):
            rest = {k: clone(v) for k, v in value.items() if k not in ("target", "targets")}
            if providers:
                place_providers()
            if rest:
                out["execution"] = rename_key(rest, "assertions", "assert", nested=True)
        elif key == "assertions":
            checks = rename_key_each(value, "assertions", "assert", nested=True)
            if referenced:
                out["assert"] = checks
            else:
                default_test()["assert"] = checks
        elif key == "input" and not referenced:
            default_test().setdefault("metadata", {})["input"] = clone(value)
            ctx.kept(
                "/default_test/metadata/input",
                "era 4 has no suite-level input shared by every test; kept in default_test",
            )
        elif key == "default_test" and isinstance(value, dict):
            out[key] = {**clone(value), **out.get(key, {})}
        elif key in ("tests", "eval_cases"):
            name = "tests" if key == "tests" or "tests" not in record else key
            place_providers()
            if isinstance(value, list):
                out[name] = [_test(t, f"/{name}/{i}", ctx) for i, t in enumerate(value)]
            else:
                out[name] = clone(value)
        else:
            out[key] = clone(value)
    return out


# -- downgrade -----------------------------------------------------------------------------

_LATER_SUITE = (
    "prompts",
    "scenarios",
    "derived_metrics",
    "output_path",
    "env",
    "nunjucks_filters",
    "extensions",
    "graders",
    "defaults",
    "environment",
)
_LATER_TEST = (
    "description",
    "threshold",
    "options",
    "provider",
    "providers",
    "prompts",
    "assert_scoring_function",
    "environment",
    "provider_output",
)


def _provider(value: Any, where: str, ctx: StepContext) -> Any:
    if isinstance(value, dict):
        if set(value) == {"id"}:
            return value["id"]
        ctx.lose(where, "era 3.1 names a target; the provider's settings have no place")
        return value.get("id")
    return value


def _down_execution(value: Any, where: str, ctx: StepContext) -> Any:
    """Return an execution for era 3.1, whose `target` and `targets` are names."""
    if not isinstance(value, dict):
        ctx.lose(where, "era 3.1 takes execution settings as an object")
        return None
    out: dict[str, Any] = {}
    for key, setting in value.items():
        if key == "target" and not isinstance(setting, str):
            ctx.lose(f"{where}/target", "era 3.1 names the target with a string")
        elif key == "targets" and not (
            isinstance(setting, list) and all(isinstance(item, str) for item in setting)
        ):
            ctx.lose(f"{where}/targets", "era 3.1 lists the targets by their names")
        elif key == "assert":
            out["assertions"] = rename_key_each(setting, "assert", "assertions", nested=True)
        else:
            out[key] = clone(setting)
    return out


def _checks_down(value: Any) -> Any:
    return rename_key_each(value, "assert", "assertions", nested=True)


def _down_test(test: Any, where: str, ctx: StepContext) -> Any:
    if not isinstance(test, dict):
        return clone(test)
    if "include" in test:
        return clone(test)
    if "id" not in test:
        raise MigrationError(
            "agentv.eval",
            f"{TO} -> {FROM}",
            f"{where}: the test has no id, which era 3.1 requires; give it one, or keep the "
            "file at era 4",
        )
    out: dict[str, Any] = {}
    for key, value in test.items():
        if key == "vars" and isinstance(value, dict):
            for name, setting in value.items():
                if name in _VARS and name not in test:
                    out[name] = clone(setting)
                else:
                    ctx.lose(f"{where}/vars/{name}", "era 3.1 has no test variables")
        elif key in ("assert", "assertions"):
            checks = value if key == "assertions" else _checks_down(value)
            out.setdefault("assertions", []).extend(clone(checks))
        elif key in _LATER_TEST:
            ctx.lose(f"{where}/{key}", f"era 3.1 tests have no {key}")
        elif key == "execution":
            execution = _down_execution(value, f"{where}/execution", ctx)
            if execution is not None:
                out[key] = execution
        elif key == "metadata" and isinstance(value, dict):
            rest = {}
            for name, kept in value.items():
                if name in _KEPT_TEST and name not in test:
                    out[name] = clone(kept)
                else:
                    rest[name] = clone(kept)
            if rest:
                out[key] = rest
        else:
            out[key] = clone(value)
    return out


def _down_default(value: Any, out: dict[str, Any], ctx: StepContext) -> None:
    if not isinstance(value, dict):
        ctx.lose("/default_test", "era 3.1 has no default_test file references")
        return
    kept: dict[str, Any] = {}
    for key, setting in value.items():
        if key == "assert":
            out.setdefault("assertions", []).extend(_checks_down(setting))
        elif key == "assertions":
            out.setdefault("assertions", []).extend(clone(setting))
        elif key == "threshold":
            kept[key] = clone(setting)
        elif key == "metadata" and isinstance(setting, dict):
            for name, item in setting.items():
                if name == "input":
                    out["input"] = clone(item)
                else:
                    ctx.lose(f"/default_test/metadata/{name}", "era 3.1 has no default metadata")
        else:
            ctx.lose(f"/default_test/{key}", f"era 3.1 has no default {key}")
    if kept:
        out["default_test"] = kept


def downgrade(record: dict[str, Any], ctx: StepContext) -> dict[str, Any]:
    """Return `record` at era 3.1, losing (only with allow-loss) what 3.1 cannot hold."""
    if not any(key in record for key in ("tests", "eval_cases")):
        raise MigrationError(
            "agentv.eval",
            f"{TO} -> {FROM}",
            "/scenarios: the file's tests are all in scenarios, which era 3.1 does not have; "
            "keep the file at era 4",
        )
    out: dict[str, Any] = {}
    for key, value in record.items():
        if key == "prompts":
            if value != DEFAULT_PROMPTS:
                ctx.lose(
                    "/prompts", "era 3.1 sends each test's input as it is; no prompt templates"
                )
        elif key in ("providers", "targets"):
            items = value if isinstance(value, list) else [value]
            names = [_provider(p, f"/{key}/{i}", ctx) for i, p in enumerate(items)]
            names = [n for n in names if isinstance(n, str) and n]
            if key == "targets" and isinstance(value, str):
                ctx.lose("/targets", "era 3.1 has no file of targets")
            elif len(names) == 1 and "target" not in out and "target" not in record:
                out["target"] = names[0]
            elif names:
                execution = out.setdefault("execution", {})
                execution["targets"] = [*execution.get("targets", []), *names]
        elif key == "default_test":
            _down_default(value, out, ctx)
        elif key == "execution":
            execution = _down_execution(value, "/execution", ctx)
            if execution is not None:
                out["execution"] = {**execution, **out.get("execution", {})}
        elif key == "assert":
            out.setdefault("assertions", []).extend(_checks_down(value))
        elif key == "assertions":
            out.setdefault("assertions", []).extend(clone(value))
        elif key == "tags" and isinstance(value, dict):
            ctx.lose("/tags", "era 3.1 tags are a list")
        elif key in _LATER_SUITE:
            ctx.lose(f"/{key}", f"era 3.1 has no {key}")
        elif key in ("tests", "eval_cases") and isinstance(value, list):
            out[key] = [_down_test(t, f"/{key}/{i}", ctx) for i, t in enumerate(value)]
        else:
            out[key] = clone(value)
    return out
