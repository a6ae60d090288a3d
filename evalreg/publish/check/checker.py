"""Check a registry, or the registry loaded from directories, family by family.

Each family goes through the checks in order: its manifest's `versioning`, its schemas, the
lock, its rules, its steps and the paths they make, its history, and last its steps on
generated records.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from evalreg.defaults import DEFAULT_EXAMPLES
from evalreg.errors import EvalregError, RegistryError
from evalreg.publish.check.exercise import exercise_steps
from evalreg.publish.check.history import check_history
from evalreg.publish.check.patterns import check_patterns
from evalreg.publish.check.report import CheckReport, Finding, Run
from evalreg.publish.check.rules import check_rules
from evalreg.publish.check.schemas import check_lock, check_schema
from evalreg.publish.check.steps import check_paths, load_steps
from evalreg.registry.manifest import Versioning, versioning

if TYPE_CHECKING:
    from evalreg.engine.registry import Registry


def _check_family(run: Run, family: str) -> None:
    try:
        settings = versioning(run.registry.manifest(family))
    except RegistryError as err:
        run.add("error", "versioning", err.detail, family, None, err.path)
        settings = Versioning()
    for version in run.registry.versions(family):
        run.schemas += 1
        check_schema(run, family, version)
    check_patterns(run, family)
    check_lock(run, family)
    check_rules(run, family)
    steps = load_steps(run, family)
    check_paths(run, family, steps)
    check_history(run, family, steps, settings)
    exercise_steps(run, family, steps)


def check_registry(
    registry: Registry,
    families: Iterable[str] | None = None,
    *,
    examples: int = DEFAULT_EXAMPLES,
    seed: int | None = None,
) -> CheckReport:
    """Check every family of a registry (or those named) end to end.

    `examples` records are generated per step and direction (0 skips exercising the steps).
    Without `seed`, generation is derandomized: the same registry gives the same findings.

    Raises:
        UnknownFamilyError: a family in `families` is unknown.
    """
    names = sorted(set(registry.families() if families is None else families))
    for name in names:
        registry.manifest(name)
    run = Run(registry, examples, seed)
    if examples <= 0:
        run.add("warning", "exercise", "steps not exercised (0 examples asked for)")
    for family in names:
        _check_family(run, family)
    return CheckReport(tuple(run.findings), tuple(names), run.schemas, run.steps, run.records)


def check_directories(
    paths: Iterable[str | os.PathLike[str]] | None = None,
    *,
    only: Iterable[str | os.PathLike[str]] | None = None,
    families: Iterable[str] | None = None,
    examples: int = DEFAULT_EXAMPLES,
    seed: int | None = None,
) -> CheckReport:
    """Load the registry (built-in, `EVALREG_PATH`, `paths`) and check it; never raises on it.

    With `only`, those directories are loaded too and only their families are checked. A
    registry that cannot be loaded at all is reported as one `load` error.

    Raises:
        UnknownFamilyError: a family in `families` is unknown.
    """
    from evalreg.engine.registry import load_registry

    only_dirs = [Path(p).resolve() for p in only or ()]
    try:
        registry = load_registry([*(paths or ()), *only_dirs], verify=False)
    except EvalregError as err:
        return CheckReport((Finding("error", "load", str(err), path=getattr(err, "path", "")),))
    names = list(registry.families() if families is None else families)
    if only_dirs:
        names = [
            name
            for name in names
            if Path(registry.manifest(name).path).resolve().parent.parent in only_dirs
        ]
    return check_registry(registry, names, examples=examples, seed=seed)
