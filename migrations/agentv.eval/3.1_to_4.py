"""Move test inputs under `vars`, the target to `providers`, suite checks to `default_test`.

Era 4 (2026-07-03 .. 2026-07-07) follows promptfoo's layout. A test's `input` and
`input_files` move under its `vars`, where they were, and `assertions` are `assert` again
(also inside composites). The suite-level `assertions`, which every test got, become
`default_test.assert`, which every test gets. The file-level `target`, `execution.target` and
`execution.targets` become the `providers` list, in that order, without repeats, where the
target was; what else `execution` holds stays. An empty target (valid at 3.1) names no
provider, and era 4 has no empty provider name: it is lost, only with allow-loss. Tests reach
the provider through prompt templates, so a file without `prompts` gets
`prompts: ["{{ input }}"]` (the test's input as it is), placed before `providers`.

The suite-level `input` of era 3.1, shared by every test, has no counterpart: promptfoo's
`default_test.vars` would be overridden by each test's own `input`. It is kept as
`default_test.metadata.input` and reported as kept. `$schema: agentv-eval-v3.1` is kept and
relabelled `agentv-eval-v4`; none is added. Criteria, expected outputs, ids and metadata are
carried unchanged.

Downgrade: the moves back (one provider becomes `target`, several `execution.targets`). Lost,
only with allow-loss: provider objects with settings, prompts other than the default one, test
variables other than input and input_files, default_test variables, thresholds, test
descriptions, and an `execution.target` that is no string or `execution.targets` that are not
all strings (era 4 leaves `execution` free-form; 3.1 names targets there).
"""

from __future__ import annotations

from typing import Any

from evalreg import StepContext
from evalreg.stepkit import clone, rename_key_each

FROM = "3.1"
TO = "4"
PARAMS = ()

DEFAULT_PROMPTS = ["{{ input }}"]


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


def _test(test: Any) -> Any:
    if not isinstance(test, dict):
        return clone(test)
    out: dict[str, Any] = {}
    for key, value in test.items():
        if key in ("input", "input_files"):
            out.setdefault("vars", {})[key] = clone(value)
        elif key == "assertions":
            out["assert"] = rename_key_each(value, "assertions", "assert", nested=True)
        else:
            out[key] = clone(value)
    return out


def upgrade(record: dict[str, Any], ctx: StepContext) -> dict[str, Any]:
    """Return `record` at era 4."""
    providers = _providers(record, ctx)
    out: dict[str, Any] = {}

    def place_providers() -> None:
        if "prompts" not in record and "prompts" not in out:
            out["prompts"] = list(DEFAULT_PROMPTS)
        if providers and "providers" not in out:
            out["providers"] = providers

    for key, value in record.items():
        if key == "target":
            place_providers()
        elif key == "execution" and isinstance(value, dict):
            rest = {k: clone(v) for k, v in value.items() if k not in ("target", "targets")}
            if providers:
                place_providers()
            if rest:
                out["execution"] = rest
        elif key == "assertions":
            default = out.setdefault("default_test", {})
            default["assert"] = rename_key_each(value, "assertions", "assert", nested=True)
        elif key == "input":
            default = out.setdefault("default_test", {})
            default.setdefault("metadata", {})["input"] = clone(value)
            ctx.kept(
                "/default_test/metadata/input",
                "era 4 has no suite-level input shared by every test; kept in default_test",
            )
        elif key == "tests" and isinstance(value, list):
            place_providers()
            out[key] = [_test(test) for test in value]
        else:
            out[key] = clone(value)
    return out


# -- downgrade -----------------------------------------------------------------------------


def _provider(value: Any, where: str, ctx: StepContext) -> Any:
    if isinstance(value, dict):
        if set(value) == {"id"}:
            return value["id"]
        ctx.lose(where, "era 3.1 names a target; the provider's settings have no place")
        return value.get("id")
    return value


def _down_execution(value: dict[str, Any], where: str, ctx: StepContext) -> dict[str, Any]:
    """Return an execution for era 3.1, whose `target` and `targets` are names."""
    out: dict[str, Any] = {}
    for key, setting in value.items():
        if key == "target" and not isinstance(setting, str):
            ctx.lose(f"{where}/target", "era 3.1 names the target with a string")
        elif key == "targets" and not (
            isinstance(setting, list) and all(isinstance(item, str) for item in setting)
        ):
            ctx.lose(f"{where}/targets", "era 3.1 lists the targets by their names")
        else:
            out[key] = clone(setting)
    return out


def _down_test(test: Any, where: str, ctx: StepContext) -> Any:
    if not isinstance(test, dict):
        return clone(test)
    out: dict[str, Any] = {}
    for key, value in test.items():
        if key == "vars" and isinstance(value, dict):
            for name, setting in value.items():
                if name in ("input", "input_files"):
                    out[name] = clone(setting)
                else:
                    ctx.lose(f"{where}/vars/{name}", "era 3.1 has no test variables")
        elif key == "assert":
            out["assertions"] = rename_key_each(value, "assert", "assertions", nested=True)
        elif key in ("threshold", "description"):
            ctx.lose(f"{where}/{key}", f"era 3.1 tests have no {key}")
        elif key == "execution" and isinstance(value, dict):
            out[key] = _down_execution(value, f"{where}/execution", ctx)
        else:
            out[key] = clone(value)
    return out


def _down_default(value: Any, out: dict[str, Any], ctx: StepContext) -> None:
    if not isinstance(value, dict):
        ctx.lose("/default_test", "era 3.1 has no default_test")
        return
    for key, setting in value.items():
        if key == "assert":
            out["assertions"] = rename_key_each(setting, "assert", "assertions", nested=True)
        elif key == "metadata" and isinstance(setting, dict):
            for name, kept in setting.items():
                if name == "input":
                    out["input"] = clone(kept)
                else:
                    ctx.lose(f"/default_test/metadata/{name}", "era 3.1 has no default metadata")
        else:
            ctx.lose(f"/default_test/{key}", f"era 3.1 has no default {key}")


def downgrade(record: dict[str, Any], ctx: StepContext) -> dict[str, Any]:
    """Return `record` at era 3.1, losing (only with allow-loss) what 3.1 cannot hold."""
    out: dict[str, Any] = {}
    for key, value in record.items():
        if key == "prompts":
            if value != DEFAULT_PROMPTS:
                ctx.lose(
                    "/prompts", "era 3.1 sends each test's input as it is; no prompt templates"
                )
        elif key == "providers" and isinstance(value, list):
            names = [_provider(p, f"/providers/{i}", ctx) for i, p in enumerate(value)]
            if len(names) == 1:
                out["target"] = names[0]
            elif names:
                execution = out.setdefault("execution", {})
                execution["targets"] = names
        elif key == "default_test":
            _down_default(value, out, ctx)
        elif key == "execution" and isinstance(value, dict):
            execution = out.setdefault("execution", {})
            out["execution"] = {**_down_execution(value, "/execution", ctx), **execution}
        elif key == "tests" and isinstance(value, list):
            out[key] = [_down_test(t, f"/tests/{i}", ctx) for i, t in enumerate(value)]
        else:
            out[key] = clone(value)
    return out
