"""The step checks: each step module of a family, and a chain of steps to the latest version."""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalreg.errors import NoMigrationPathError, RegistryError
from evalreg.publish.check.report import Run
from evalreg.publish.upstream.describe import todos_of

if TYPE_CHECKING:
    from evalreg.engine.steps import StepModule, StepSet


def load_steps(run: Run, family: str) -> StepSet:
    """Load and check a family's step modules (`step`); return the steps that load."""
    from evalreg.engine.steps import StepSet, load_step

    versions = run.registry.versions(family)
    modules: dict[tuple[str, str], StepModule] = {}
    for path in run.registry.step_files(family):
        try:
            module = load_step(path, family, versions)
        except RegistryError as err:
            run.add("error", "step", err.detail, family, None, path)
            continue
        key = (module.source, module.target)
        if key in modules:
            message = f"duplicate step {key[0]} -> {key[1]}: also {modules[key].path}"
            run.add("error", "step", message, family, module.target, path)
            continue
        modules[key] = module
        todos = todos_of(module.path)
        if todos:
            shown = "; ".join(todos[:3]) + (
                f"; and {len(todos) - 3} more" if len(todos) > 3 else ""
            )
            run.add(
                "error",
                "unfinished",
                f"generated step with {len(todos)} TODO{'s' if len(todos) > 1 else ''} left "
                f"({shown}); decide each, then remove it from TODOS",
                family,
                module.target,
                path,
            )
        if module.doc.startswith("TODO"):
            run.add(
                "warning",
                "step",
                "the step is still the template from `evalreg new-version`: fill in upgrade() "
                "and say in its docstring what it does",
                family,
                module.target,
                path,
            )
    return StepSet.build(family, versions, modules.values())


def check_paths(run: Run, family: str, steps: StepSet) -> None:
    """Check that a chain of steps leads from every version to the latest (`path`)."""
    versions = run.registry.versions(family)
    if not versions:
        return
    latest = versions[-1]
    for index, version in enumerate(versions[:-1]):
        try:
            steps.plan(version, latest)
        except NoMigrationPathError:
            following = versions[index + 1]
            run.add(
                "error",
                "path",
                f"no chain of steps leads from {version} to the latest version {latest}; "
                f"add a step such as migrations/{family}/{version}_to_{following}.py",
                family,
                version,
            )
