"""The history checks: the diff between consecutive versions against their steps and their bump.

A pair of versions whose diff breaks BACKWARD needs a step between them (`missing-step`) and a
minor or major bump (`bump`), unless the manifest's `versioning.exceptions` lists the version
(`exception`: each listed version must exist and need the exception).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from typing import TYPE_CHECKING, Any, Literal

from evalreg.errors import EvalregError
from evalreg.publish.check.report import Run
from evalreg.registry.manifest import Versioning
from evalreg.registry.versions import match_version, parse_version

if TYPE_CHECKING:
    from evalreg.diff import SchemaDiff
    from evalreg.engine.steps import StepSet


BumpLevel = Literal["major", "minor", "patch"]
_MAX_SHOWN = 3


def bump_level(old: str, new: str) -> BumpLevel:
    """Return which part of the version number changed first from `old` to `new`."""
    a = (*parse_version(old).release, 0, 0, 0)
    b = (*parse_version(new).release, 0, 0, 0)
    if a[0] != b[0]:
        return "major"
    if a[1] != b[1]:
        return "minor"
    return "patch"


def _describe(changes: Sequence[Any]) -> str:
    shown = "; ".join(f"{c.path or '/'}: {c.kind}" for c in changes[:_MAX_SHOWN])
    more = f"; and {len(changes) - _MAX_SHOWN} more" if len(changes) > _MAX_SHOWN else ""
    return shown + more


def _diffs(run: Run, family: str, settings: Versioning) -> list[tuple[str, str, SchemaDiff]]:
    from evalreg.diff import diff_schemas

    versions = run.registry.versions(family)
    found = []
    for old, new in pairwise(versions):
        try:
            diff = diff_schemas(
                run.registry.entry(family, old).document,
                run.registry.entry(family, new).document,
                registry=run.registry.referencing_registry(),
                policy=settings.policy,
                old_label=old,
                new_label=new,
            )
        except (ValueError, EvalregError) as err:
            run.add("error", "refs", f"cannot compare {old} with {new}: {err}", family, new)
            continue
        found.append((old, new, diff))
    return found


def check_history(run: Run, family: str, steps: StepSet, settings: Versioning) -> None:
    """Check each breaking diff for a step and a bump; check the listed exceptions."""
    from evalreg.diff import BACKWARD

    manifest_path = run.registry.manifest(family).path
    direct = {(m.source, m.target) for m in steps.modules}
    used: set[str] = set()
    for old, new, diff in _diffs(run, family, settings):
        breaking = [c for c in diff.changes if BACKWARD in c.breaks]
        if not breaking:
            continue
        if (old, new) not in direct:
            run.add(
                "error",
                "missing-step",
                f"{old} -> {new} breaks BACKWARD ({_describe(breaking)}) but there is no step "
                f"between them; add migrations/{family}/{old}_to_{new}.py",
                family,
                new,
            )
        level = bump_level(old, new)
        if level != "patch":
            continue
        exception = match_version(new, settings.exceptions)
        if exception is not None:
            used.add(exception)
            reason = settings.exceptions[exception]
            run.add(
                "note",
                "bump",
                f"{old} -> {new} breaks BACKWARD in a patch release; accepted as a known "
                f"exception{': ' + reason if reason else ''}",
                family,
                new,
                manifest_path,
            )
            continue
        run.add(
            settings.bump_check,
            "bump",
            f"{old} -> {new} is a patch bump but breaks BACKWARD ({_describe(breaking)}); "
            "bump the minor or major version instead, or list it under "
            f"versioning.exceptions in {manifest_path}",
            family,
            new,
            manifest_path,
        )
    versions = run.registry.versions(family)
    for version in settings.exceptions:
        if match_version(version, versions) is None:
            run.add(
                "error",
                "exception",
                f"versioning.exceptions lists {version}, which is not a version of {family}",
                family,
                version,
                manifest_path,
            )
        elif version not in used:
            run.add(
                "warning",
                "exception",
                f"versioning.exceptions lists {version}, but its bump follows the diff; remove it",
                family,
                version,
                manifest_path,
            )
