"""Checking the records under paths: detect and validate them, as streams of plain results.

The command line prints these results; other programs can consume them directly. Nothing here
prints or exits, and one bad file or record never stops the rest. What a check gives, and the
full check of one record, are in `records` (and named here too); checking many records with
little work for the valid ones, in `quick`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from typing import Any

from evalreg.batch import parallel
from evalreg.batch.config import Config
from evalreg.batch.quick import QuickCheck
from evalreg.batch.records import (
    RecordCheck,
    RuleFinding,
    ValidRun,
    check_item,
    decide,
    value_digest,
)
from evalreg.batch.rules import Summaries
from evalreg.engine.registry import Registry
from evalreg.engine.rules import Located
from evalreg.engine.selection import Selection
from evalreg.io.readers import STDIN, cannot_read, count_lines, read_items, read_range_blocks

__all__ = [
    "RecordCheck",
    "RuleFinding",
    "ValidRun",
    "check_item",
    "check_paths",
    "decide",
    "validate_paths",
    "value_digest",
]


def _forced_version(registry: Registry, family: str | None, version: str | None) -> str | None:
    """Check a family and version given by the caller; return the registry's spelling of it.

    Raises:
        UnknownFamilyError: `family` is not known.
        UnknownVersionError: `version` is not one of the family's.
    """
    if family is None:
        return version
    registry.manifest(family)
    return None if version is None else registry.resolve_version(family, version)


def check_paths(
    registry: Registry,
    paths: Iterable[str | os.PathLike[str]],
    *,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    family: str | None = None,
    version: str | None = None,
    validate: bool = True,
    config: Config | None = None,
) -> Iterator[RecordCheck]:
    """Yield one check per record of every file under `paths`, in file then line order.

    `config`: the project's configuration, whose include and exclude apply too.
    """
    version = _forced_version(registry, family, version)
    for path in (config or Config()).files(paths, include, exclude):
        for item in read_items(path):
            yield check_item(registry, item, family=family, version=version, validate=validate)


Checked = tuple[list[RecordCheck | ValidRun], int] | tuple[int, str | None, str | None]
"""What a worker reports of one part: its results and number of lines, or for a whole file whose
records are all valid and of one version, how many and of which family and version (the parent
knows the path: far less to send back)."""


def _check_part(quick: QuickCheck, part: parallel.Part) -> tuple[list[RecordCheck | ValidRun], int]:
    """Check one unit part; return its results and, for a range, its number of lines."""
    if part.end is None:
        found = quick.whole(part.path)
        return [found] if found is not None else list(quick.file(part.path)), 0
    if quick.rules is not None and part.start:
        quick.rules.skip_file_rules(part.path)
    results: list[RecordCheck | ValidRun] = []
    lines = quick.lines(read_range_blocks(part.path, part.start, part.end), part.path)
    count = 0
    try:
        while True:
            results.append(next(lines))
    except StopIteration as done:
        count = done.value
    except OSError as err:
        results.append(quick.check(cannot_read(part.path, err)))
    if quick.rules is not None:
        quick.rules.close(part.path)
    return results, count


def _check_unit(
    registry: Registry,
    unit: parallel.Unit,
    family: str | None,
    version: str | None,
    rules: Selection,
) -> tuple[list[Checked], Summaries]:
    quick = QuickCheck(registry, family, version, rules)
    found: list[Checked] = []
    for part in unit:
        checks, lines = _check_part(quick, part)
        if part.whole and len(checks) == 1 and isinstance(checks[0], ValidRun):
            run = checks[0]
            found.append((run.count, run.family, run.version))
        else:
            found.append((checks, lines))
    return found, quick.summaries


def validate_paths(
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
) -> Iterator[RecordCheck | ValidRun | RuleFinding]:
    """Yield the check of every record under `paths` that is not valid, in file then line order.

    Valid records are counted in runs (`ValidRun`) between the others. The families' rules of
    `rules` run on every record (warnings are reported, and leave it valid); the findings of
    rules across files come last, once every file is read. With `jobs` above one and enough
    input, files and ranges of large JSONL files are checked by that many processes, or with
    `runner` (a Dask cluster, say) by its workers whatever the size of the input; the results,
    and their order, are the same as with one.

    `config`: the project's configuration, whose include and exclude apply too, and whose rule
    settings make the selection when `rules` is not given (`Config.selection`).
    """
    config = config or Config()
    if rules is None:
        rules = config.selection()
    version = _forced_version(registry, family, version)
    roots = [os.fspath(p) for p in paths]
    quick = QuickCheck(registry, family, version, rules)
    always = runner is not None and STDIN not in roots
    jobs = runner.jobs if runner is not None else jobs
    jobs = 1 if STDIN in roots else jobs
    files, units = parallel.plan(config.files(roots, include, exclude), jobs, always=always)
    if units is None:
        with parallel.frozen():
            yield from quick.paths(files)
    else:
        args = (family, version, rules)
        yield from _gather(quick, units, registry, jobs, args, runner)
    if quick.rules is not None:
        yield from _across(quick.rules.finish())


def _gather(
    quick: QuickCheck,
    units: Iterator[parallel.Unit],
    registry: Registry,
    jobs: int,
    args: tuple[Any, ...],
    runner: parallel.Runner | None,
) -> Iterator[RecordCheck | ValidRun]:
    """Yield the results of the workers' units in input order, keeping their summaries."""
    offset = 0
    results = parallel.imap(_check_unit, units, registry, jobs, args, runner=runner, lost=_lost)
    for unit, (found, summaries) in results:
        if quick.rules is not None:
            quick.rules.take(summaries)
        for part, checked in zip(unit, found, strict=True):
            if isinstance(checked[0], int):
                yield ValidRun(part.path, *checked)
                continue
            checks, lines = checked
            for check in checks:
                if offset and isinstance(check, RecordCheck) and check.line is not None:
                    check = replace(check, line=check.line + offset)
                yield check
            offset = 0 if part.last else offset + lines


def _lost(unit: parallel.Unit, reason: str) -> tuple[list[Checked], Summaries]:
    """Return what a unit whose worker died reports: each part unreadable, with the reason."""
    found: list[Checked] = []
    for part in unit:
        lines = 0 if part.end is None else count_lines(part.path, part.start, part.end)
        line = None if part.end is None else 1  # the range's first line, once shifted
        error = f"not checked: {reason}"
        checks: list[RecordCheck | ValidRun] = [
            RecordCheck(part.path, line, "unreadable", error=error)
        ]
        found.append((checks, lines))
    return found, []


def _across(findings: list[Located]) -> Iterator[RuleFinding]:
    for found in findings:
        yield RuleFinding(found.path, found.line, found.issue)
