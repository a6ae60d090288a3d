"""Migrating the files under paths: the outcome of every record and of every file, as a stream.

A file is written (atomically) only when every record in it migrated or was current. With
several jobs, files and ranges of large JSONL files are migrated by worker processes, and their
outcomes come back in order. Nothing here prints or exits, and one bad file or record never stops
the rest.
"""

from __future__ import annotations

import contextlib
import io
import os
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

from evalreg.batch import inplace, parallel
from evalreg.batch.config import Config
from evalreg.batch.migrate_file import (
    Abandon,
    FileMigration,
    Leftover,
    MigrateOptions,
    MigrationEvent,
    RecordMigration,
    Tally,
    cannot_write,
    migrate_file,
    migrate_items,
    writer_for,
)
from evalreg.batch.migrate_summary import MigrationRun, MigrationSummary
from evalreg.engine.migrate import MigrationResult
from evalreg.engine.notes import Note
from evalreg.engine.registry import Registry
from evalreg.errors import OutputOverlapError
from evalreg.io import remote
from evalreg.io.readers import RangeItems, count_lines
from evalreg.io.writers import leftovers, sync_folders, sync_written, wait_written

Notes = Literal["each", "grouped"]
"""How `migrate_paths` reports the notes of records that succeeded (see its `notes`)."""


def _output_path(path: str, root: str | None, options: MigrateOptions) -> str | None:
    if options.dry_run:
        return None
    if options.in_place:
        return path
    assert options.out is not None
    if not root:
        return os.path.join(options.out, os.path.basename(path))
    # A walk yields `root` joined with the rest: cut it off, sparing `relpath` (per file).
    rest = path[len(root) :]
    if path.startswith(root) and (root.endswith(os.sep) or rest.startswith(os.sep)):
        return os.path.join(options.out, rest.lstrip(os.sep))
    return os.path.join(options.out, os.path.relpath(path, root))


def _lean(
    event: RecordMigration | FileMigration, grouped: bool = False
) -> RecordMigration | FileMigration:
    """Return `event` without its record, which need not cross a process boundary.

    `grouped`: the notes lose the values that differ from record to record too (`Note.lean`),
    as a summary of the notes by kind and place needs them not.
    """
    if isinstance(event, FileMigration) or event.result is None:
        return event
    r = event.result  # built directly: `dataclasses.replace` costs several times as much
    notes = _lean_notes(r.notes) if grouped else r.notes
    result = MigrationResult(
        r.status, None, r.family, r.source, r.target, r.steps, notes, r.error, r.failed_step
    )
    if r.issues:
        result = replace(result, issues=r.issues)
    return RecordMigration(event.path, event.line, result, event.error, event.changes, event.count)


def _succeeded(event: MigrationEvent) -> bool:
    """Return whether `event` is a record that migrated or was current (and has a line)."""
    return (
        isinstance(event, RecordMigration)
        and event.line is not None
        and event.result is not None
        and event.result.status != "failed"
        and not event.changes
    )


def _lean_notes(notes: tuple[Note, ...]) -> tuple[Note, ...]:
    """Return `notes` without the values that differ from record to record (`Note.lean`)."""
    return tuple(note.lean() for note in notes) if notes else notes


def _alike(event: RecordMigration, grouped: bool = False) -> tuple[Any, ...]:
    """Return what records that succeeded alike share: the file and the result but the record
    (and, `grouped`, but the values of their notes that differ from record to record)."""
    r = event.result
    assert r is not None
    notes = _lean_notes(r.notes) if grouped else r.notes
    return (event.path, r.status, r.family, r.source, r.target, r.steps, notes, r.issues)


def _runs(events: Iterable[MigrationEvent], grouped: bool = False) -> list[MigrationEvent]:
    """Return lean `events` with the records that succeeded alike counted in one event each.

    Alike: records of one file with equal results (status, versions, steps and notes; see
    `_alike`). Counted are the runs of such records on consecutive lines; with `grouped`, all of
    them, at the first one's line, in the order of first appearance, their notes compared and
    sent without the values that differ from record to record. Only the events kept are made
    lean (`_lean`). A worker sends these to the parent, which then handles one event per
    run or group rather than one per record.
    """
    found: list[MigrationEvent] = []
    heads: dict[int, RecordMigration] = {}  # index in `found` -> the first record it counts
    counts: dict[int, int] = {}  # index in `found` -> how many records it counts
    groups: dict[tuple[Any, ...], int] = {}  # what records share -> index in `found`
    run, run_key, next_line = -1, (), 0  # the run the next record may join (-1: none), its line
    for event in events:
        if not _succeeded(event):
            found.append(_lean(event))
            run = -1
            continue
        assert isinstance(event, RecordMigration)
        key = _alike(event, grouped)
        if grouped:
            index = groups.setdefault(key, len(found))
        elif run >= 0 and event.line == next_line and key == run_key:
            index = run  # a record of one file follows the last
        else:
            index = len(found)
        if index < len(found):
            counts[index] += 1
        else:
            lean = _lean(event, grouped)
            assert isinstance(lean, RecordMigration)
            found.append(lean)
            heads[index], counts[index], run, run_key = lean, 1, index, key
        next_line = (event.line or 0) + 1
    for index, count in counts.items():
        if count > 1:
            found[index] = replace(heads[index], count=count)
    return found


Ranged = tuple[list[MigrationEvent], int, bytes | None]
"""What a worker reports of one part: its events (in runs), its number of lines, and for a range
of a JSONL file being written, its migrated lines (about `RANGE_OUT_BYTES` at most), which the
parent writes into the file in order."""
RANGE_OUT_BYTES = 4 << 20
"""A large JSONL file being migrated is cut into ranges of at most this size: the migrated bytes
of each come back to the parent whole, so this bounds what one result holds."""


def _migrate_part(
    registry: Registry,
    part: parallel.Part,
    output: str | None,
    options: MigrateOptions,
    folders: set[Path],
    grouped: bool,
) -> Ranged:
    """Migrate a whole file, or a range of a JSONL file (its migrated lines returned)."""
    if part.end is None:
        whole = migrate_file(registry, part.path, output, options, folders=folders)
        return _runs(whole, grouped), 0, None
    items = RangeItems(part.path, part.start, part.end)
    stream = io.BytesIO() if output is not None else None
    events = _runs(migrate_items(registry, items, options, Tally(), stream), grouped)
    data = None if stream is None else stream.getvalue()
    return events, items.lines, data


def _migrate_unit(
    registry: Registry,
    task: tuple[parallel.Unit, tuple[str | None, ...]],
    options: MigrateOptions,
    grouped: bool,
) -> list[Ranged]:
    unit, outputs = task
    folders: set[Path] = set()
    try:
        return [
            _migrate_part(registry, part, output, options, folders, grouped)
            for part, output in zip(unit, outputs, strict=True)
        ]
    finally:
        if options.out is None:
            sync_folders(folders)  # in place: the files are synced; with --out, see migrate_paths
        else:
            wait_written(folders)


def _join_ranges(
    path: str,
    output: str | None,
    options: MigrateOptions,
    ranges: Iterable[tuple[Ranged, int]],
    folders: set[Path],
    guard: inplace.Guard | Exception | None = None,
) -> Iterator[RecordMigration | FileMigration]:
    """Report and write a JSONL file migrated in ranges, as `migrate_file` would.

    `ranges`: each range's results (its migrated lines among them) and where it ends. `guard`:
    the lock of a file rewritten in place, or why it could not be locked: then the file is left
    as it was, and its records are not reported, since another process may have been rewriting
    what was read.
    """
    if isinstance(guard, Exception):
        for _ in ranges:
            pass
        yield FileMigration(path, output, "failed", message=cannot_write(output, guard))
        return
    tally = Tally()
    offset = 0
    in_place = output == path
    failure: str | None = None
    try:
        with contextlib.ExitStack() as stack:
            stream = None
            if output is not None:
                stream = stack.enter_context(writer_for(path, output, options, folders, guard))
            for (events, lines, data), end in ranges:
                for event in events:
                    assert isinstance(event, RecordMigration)
                    yield tally.add(event.shifted(offset) if offset else event)
                if stream is not None and data is not None:
                    stream.write(data)
                offset += lines
                if isinstance(guard, inplace.Guard):
                    guard.size = end  # the bytes read, which the file must still hold
            if output is not None and (tally.failed or (in_place and not tally.migrated)):
                raise Abandon
    except Abandon:
        pass
    except (OSError, inplace.FileChanged) as err:
        failure = cannot_write(output, err)
    if failure is not None:
        yield FileMigration(path, output, "failed", 0, 0, tally.failed, failure)
        return
    yield tally.outcome(path, output, rewrites=output is not None and output != path)


def _clear_leftovers(folder: str) -> list[Leftover]:
    """Remove the temporary files of dead processes in `folder`; return what was found."""
    found = []
    for path, pid in leftovers(folder):
        size = 0
        try:
            size = os.stat(path).st_size
            os.remove(path)
            found.append(Leftover(path, pid, size))
        except OSError as err:
            found.append(Leftover(path, pid, size, err.strerror or str(err)))
    return found


def migrate_paths(
    registry: Registry,
    paths: Sequence[str],
    options: MigrateOptions,
    *,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    jobs: int = 1,
    runner: parallel.Runner | None = None,
    config: Config | None = None,
    notes: Notes = "each",
) -> Iterator[RecordMigration | FileMigration | Leftover]:
    """Migrate every file under `paths`; yield each record's outcome and each file's.

    With `jobs` above one and enough input, files and ranges of large JSONL files are migrated
    by that many processes, or with `runner` (a Dask cluster, say) by its workers whatever the
    size of the input: the files written and the outcomes reported, in their order, are the
    same as with one, except that the results carry no records (they are in the files) and that
    records that succeeded alike come as one outcome with their `count` (see `RecordMigration`).

    Files rewritten in place are locked while they are migrated, and left as they were if they
    change meanwhile (see `inplace`). In each folder written to, temporary files left by
    processes no longer running are removed, and reported as `Leftover`s (not with `dry_run`).
    Whole files are written by the process that migrates them; the migrated lines of a range of
    a large JSONL file come back to this process, which writes the file. `config`: the
    project's configuration, whose include and exclude apply too. `notes`: `grouped` lets the
    records of a part of the work that succeeded alike come as one outcome, at the first one's
    line, with their count, and their notes without the values that differ from record to record
    (`Note.lean`), rather than runs of consecutive ones: for callers that only count the records
    and each distinct note (`MigrationSummary` with `group_notes`).
    """
    if options.out is not None and not options.dry_run:
        check_output(paths, options.out)
    outputs: deque[str | None] = deque()  # of the files walked, in order
    found: deque[Leftover] = deque()  # temporary files of dead processes, removed
    scanned: set[str] = set()  # the folders looked at for them
    planned: dict[str, os.stat_result] = {}  # JSONL files rewritten in place, when walked

    def walk() -> Iterator[str]:
        for root in paths:
            base = _base(root)
            for path in (config or Config()).files([root], include, exclude):
                output = _output_path(path, base, options)
                if output == path and path.lower().endswith(".jsonl"):
                    with contextlib.suppress(OSError):  # as planned, to be locked as it is
                        planned[path] = os.stat(path)
                if output is not None and not remote.is_url(output):
                    folder = os.path.dirname(output) or os.curdir
                    if folder not in scanned:
                        scanned.add(folder)
                        found.extend(_clear_leftovers(folder))
                outputs.append(output)
                yield path

    def cleared() -> Iterator[Leftover]:
        while found:
            yield found.popleft()

    # Files rewritten in place are synced one by one (each replaces the only copy of its
    # records) and their folders once each at the end. With --out the originals stay, so the
    # outputs are renamed into place unsynced and flushed at the end with the file system that
    # holds them (see writers.sync_written).
    stored = remote.is_url(options.out) and not remote.is_local_url(str(options.out))
    synced = options.out is None or options.dry_run or stored  # a store has nothing to flush
    folders: set[Path] = set()
    if runner is not None:
        jobs = runner.jobs
    always = runner is not None
    files, units = parallel.plan(walk(), jobs, always=always, range_max=RANGE_OUT_BYTES)
    if units is None:
        try:
            with parallel.frozen():
                for path in files:
                    yield from cleared()
                    output = outputs.popleft()
                    yield from migrate_file(registry, path, output, options, folders=folders)
        finally:
            sync_written(folders, files_synced=synced)
        return
    guards: deque[inplace.Guard | Exception] = deque()  # of files in ranges written in place

    def tasks() -> Iterator[tuple[parallel.Unit, tuple[str | None, ...]]]:
        assert units is not None
        target: str | None = None
        for unit in units:
            targets = []
            for part in unit:
                if part.start == 0:  # a file begins (the ranges of one file share its output)
                    target = outputs.popleft()
                    if not part.whole and target == part.path:
                        guards.append(_lock(part.path, planned.pop(part.path, None)))
                targets.append(target)
            yield unit, tuple(targets)

    def lost(task: tuple[parallel.Unit, tuple[str | None, ...]], reason: str) -> list[Ranged]:
        for output in {o for o in task[1] if o is not None and not remote.is_url(o)}:
            _clear_leftovers(os.path.dirname(output) or os.curdir)  # what the worker was writing
        return [_lost_part(part, output, reason) for part, output in zip(*task, strict=True)]

    results = parallel.imap(
        _migrate_unit,
        tasks(),
        registry,
        jobs,
        (options, notes == "grouped"),
        runner=runner,
        lost=lost,
    )
    flat = (
        (part, output, found)
        for (unit, targets), ranged in results
        for part, output, found in zip(unit, targets, ranged, strict=True)
    )
    finished = False
    try:
        for part, output, ranged in flat:
            yield from cleared()
            if part.whole:
                yield from ranged[0]
                continue
            ranges = _file_ranges(part, ranged, flat)
            guard = guards.popleft() if output == part.path else None
            try:
                yield from _join_ranges(part.path, output, options, ranges, folders, guard)
                for _ in ranges:
                    pass  # the ranges after a failed write
            finally:
                if isinstance(guard, inplace.Guard):
                    guard.release()
        yield from cleared()
        finished = True
    finally:
        results.close()  # stops the workers
        for held in guards:
            if isinstance(held, inplace.Guard):
                held.release()
        if not finished or runner is not None:  # workers that died or stopped may have left
            for folder in list(scanned):  # what they were writing: this run removes it
                _clear_leftovers(folder)
        if not synced:
            folders.add(Path(str(options.out)))  # the workers' outputs are flushed here too
        sync_written(folders, files_synced=synced)


def migrate_run(
    registry: Registry,
    paths: Sequence[str],
    options: MigrateOptions,
    *,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    jobs: int = 1,
    runner: parallel.Runner | None = None,
    config: Config | None = None,
    notes: Notes = "each",
) -> MigrationRun:
    """Migrate every file under `paths` (see `migrate_paths`); return the run, whose outcomes
    are counted into its `summary` as they are iterated.

    `notes`: `grouped` counts each distinct note of the run once as well (`summary.groups`), and
    lets `migrate_paths` send the records that succeeded alike as one outcome.

    Raises:
        OutputOverlapError: `options.out` overlaps an input (when the run is iterated).
    """
    outcomes = migrate_paths(
        registry,
        paths,
        options,
        include=include,
        exclude=exclude,
        jobs=jobs,
        runner=runner,
        config=config,
        notes=notes,
    )
    return MigrationRun(outcomes, MigrationSummary(group_notes=notes == "grouped"))


def check_output(paths: Sequence[str], out: str) -> None:
    """Refuse an output folder that is, contains or lies inside an input folder.

    Writing there would replace the files being read, or mix the outputs into the input, so that
    the next run reads them again (`out/migrated/migrated/...`). A file given as input is refused
    when its output would be the file itself.

    Raises:
        OutputOverlapError: `out` overlaps an input.
    """
    target = _comparable(out)
    for root in paths:
        base = _base(root)
        if base is None:  # a file: its output is `out/NAME`
            if _comparable(os.path.join(out, os.path.basename(root.rstrip("/")))) == _comparable(
                root
            ):
                raise OutputOverlapError(out, root, "holds the input file")
            continue
        folder = _comparable(base)
        if target == folder:
            raise OutputOverlapError(out, base, "is the input folder")
        if _within(target, folder):
            raise OutputOverlapError(out, base, "lies inside the input folder")
        if _within(folder, target):
            raise OutputOverlapError(out, base, "contains the input folder")


def _within(inner: str, outer: str) -> bool:
    """Return whether `inner` lies below `outer` (both as `_comparable` spells them)."""
    return inner.startswith(outer if outer.endswith("/") else outer + "/")


def _comparable(path: str) -> str:
    """Return a path (or URL) in one spelling: the real local path, `/` separated, no `/` last."""
    if remote.is_url(path) and remote.is_local_url(path):
        path = remote.local_path(path)
    if remote.is_url(path):
        return path.rstrip("/")
    return Path(os.path.realpath(path)).as_posix().rstrip("/") or "/"


def _lost_part(part: parallel.Part, output: str | None, reason: str) -> Ranged:
    """Return what a part whose worker died reports: the file failed, or the range's lines."""
    if part.whole:
        message = f"left as it was: {reason} while migrating it"
        return [FileMigration(part.path, output, "failed", message=message)], 0, None
    assert part.end is not None
    lines = count_lines(part.path, part.start, part.end)
    error = f"{lines:,} lines from here not migrated: {reason}"
    result = MigrationResult("failed", None, error=error)
    failed = RecordMigration(part.path, 1, result, count=max(lines, 1))
    return [failed], lines, None


def _base(root: str) -> str | None:
    """Return the folder that outputs mirror for files found under `root` (None: a file)."""
    if not remote.is_url(root):
        return root if os.path.isdir(root) else None
    if remote.has_glob(root):
        return remote.glob_folder(root)
    return root if remote.isdir(root) else None


def _file_ranges(
    part: parallel.Part,
    found: Ranged,
    rest: Iterator[tuple[parallel.Part, str | None, Ranged]],
) -> Iterator[tuple[Ranged, int]]:
    """Yield the results of the ranges of one file, the first given, the others from `rest`."""
    yield found, part.end or 0
    while not part.last:
        part, _, found = next(rest)
        yield found, part.end or 0


def _lock(path: str, seen: os.stat_result | None) -> inplace.Guard | Exception:
    """Lock a file to be migrated in ranges in place; return the guard, or why it failed.

    `seen`: the file when its ranges were planned; if it is another now, the ranges are not
    those of its lines.
    """
    try:
        guard = inplace.lock(path)
    except (OSError, inplace.FileBusy) as err:
        return err
    if seen is not None and (seen.st_ino, seen.st_size, seen.st_mtime_ns) != (
        guard.identity[1],
        guard.identity[2],
        guard.identity[3],
    ):
        guard.release()
        return inplace.FileChanged(
            f"changed while being migrated ({seen.st_size:,} bytes planned, "
            f"{guard.identity[2]:,} bytes now)"
        )
    return guard
