"""Detect and validate runs as results: their checks as they come, and their summary.

`detect_run` and `validate_run` return a `CheckRun`: iterate it for the checks (with a
baseline, its findings marked known), and each is counted into its `summary` as it passes, so
that a caller prints, or keeps, what it wants of them and reads the counts at the end without
counting again.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

from evalreg.batch import parallel
from evalreg.batch.check import check_paths, validate_paths
from evalreg.batch.config import Config
from evalreg.batch.records import RecordCheck, RuleFinding, ValidRun
from evalreg.batch.summary import Summary
from evalreg.engine.registry import Registry
from evalreg.engine.selection import Selection

if TYPE_CHECKING:
    from evalreg.batch.baseline import Baseline  # imported by whoever loads one

Checked = RecordCheck | ValidRun | RuleFinding
"""What a detect or validate run yields."""


class CheckRun:
    """The checks of a run as they come, each counted into `summary` as it passes.

    Iterate it once; `summary` is complete when the checks are exhausted.
    """

    def __init__(self, checks: Iterable[Checked], summary: Summary | None = None) -> None:
        self._checks = checks
        self.summary = Summary() if summary is None else summary

    def __iter__(self) -> Iterator[Checked]:
        add = self.summary.add
        for check in self._checks:
            add(check)
            yield check


def detect_run(
    registry: Registry,
    paths: Iterable[str | os.PathLike[str]],
    *,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    config: Config | None = None,
) -> CheckRun:
    """Detect the family and version of every record under `paths` (see `check_paths`); in
    the summary, `valid` counts the records detected and `invalid` those undecided."""
    checks = check_paths(
        registry, paths, include=include, exclude=exclude, validate=False, config=config
    )
    return CheckRun(checks)


def validate_run(
    registry: Registry,
    paths: Iterable[str | os.PathLike[str]],
    *,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    family: str | None = None,
    version: str | None = None,
    jobs: int = 1,
    rules: Selection | None = None,
    runner: parallel.Runner | None = None,
    config: Config | None = None,
    baseline: Baseline | None = None,
) -> CheckRun:
    """Validate every record under `paths` (see `validate_paths`); with `baseline`, the findings
    it holds are marked known, and counted as such rather than as problems."""
    checks: Iterable[Checked] = validate_paths(
        registry,
        paths,
        include=include,
        exclude=exclude,
        family=family,
        version=version,
        jobs=jobs,
        rules=rules,
        runner=runner,
        config=config,
    )
    if baseline is not None:
        checks = baseline.filter(checks)
    return CheckRun(checks)
