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
from typing import Any

from evalreg.batch import parallel
from evalreg.batch.migrate_file import (
    Abandon,
    FileMigration,
    MigrateOptions,
    MigrationEvent,
    RecordMigration,
    Tally,
    cannot_write,
    migrate_file,
    migrate_items,
    must_sync,
    open_output,
)
from evalreg.batch.walk import iter_files
from evalreg.engine.migrate import MigrationResult
from evalreg.engine.registry import Registry
from evalreg.io import remote
from evalreg.io.readers import JSONL_CHUNK, Item, cannot_read, jsonl_items, read_range
from evalreg.io.writers import sync_folders, sync_written


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


def _lean(event: RecordMigration | FileMigration) -> RecordMigration | FileMigration:
    """Return `event` without its record, which need not cross a process boundary."""
    if isinstance(event, FileMigration) or event.result is None:
        return event
    r = event.result  # built directly: `dataclasses.replace` costs several times as much
    result = MigrationResult(
        r.status, None, r.family, r.source, r.target, r.steps, r.notes, r.error, r.failed_step
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


def _alike(event: RecordMigration) -> tuple[Any, ...]:
    """Return what records that succeeded alike share: the file and the result but the record."""
    r = event.result
    assert r is not None
    return (event.path, r.status, r.family, r.source, r.target, r.steps, r.notes, r.issues)


def _runs(events: Iterable[MigrationEvent], grouped: bool = False) -> list[MigrationEvent]:
    """Return lean `events` with the records that succeeded alike counted in one event each.

    Alike: records of one file with equal results (status, versions, steps and notes; see
    `_alike`). Counted are the runs of such records on consecutive lines; with `grouped`, all of
    them, at the first one's line, in the order of first appearance. Only the events kept are
    made lean (`_lean`). A worker sends these to the parent, which then handles one event per
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
        key = _alike(event)
        if grouped:
            index = groups.setdefault(key, len(found))
        elif run >= 0 and event.line == next_line and key == run_key:
            index = run  # a record of one file follows the last
        else:
            index = len(found)
        if index < len(found):
            counts[index] += 1
        else:
            lean = _lean(event)
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
) -> Ranged:
    """Migrate a whole file, or a range of a JSONL file (its migrated lines returned)."""
    if part.end is None:
        whole = migrate_file(registry, part.path, output, options, folders=folders)
        return _runs(whole, options.grouped), 0, None
    lines = 0

    def items() -> Iterator[Item]:
        nonlocal lines
        assert part.end is not None
        chunk: list[bytes] = []
        failed: OSError | EOFError | None = None
        try:
            for lines, line in enumerate(read_range(part.path, part.start, part.end), 1):
                chunk.append(line)
                if len(chunk) == JSONL_CHUNK:
                    yield from jsonl_items(part.path, lines - len(chunk) + 1, chunk)
                    chunk = []
        except (OSError, EOFError) as err:
            failed = err
        yield from jsonl_items(part.path, lines - len(chunk) + 1, chunk)
        if failed is not None:
            yield cannot_read(part.path, failed)

    stream = io.BytesIO() if output is not None else None
    events = _runs(migrate_items(registry, items(), options, Tally(), stream), options.grouped)
    data = None if stream is None else stream.getvalue()
    return events, lines, data


def _migrate_unit(
    registry: Registry,
    task: tuple[parallel.Unit, tuple[str | None, ...]],
    options: MigrateOptions,
) -> list[Ranged]:
    unit, outputs = task
    folders: set[Path] = set()
    try:
        return [
            _migrate_part(registry, part, output, options, folders)
            for part, output in zip(unit, outputs, strict=True)
        ]
    finally:
        if options.out is None:
            sync_folders(folders)  # in place: the files are synced; with --out, see migrate_paths


def _join_ranges(
    path: str,
    output: str | None,
    options: MigrateOptions,
    ranges: Iterable[Ranged],
    folders: set[Path],
) -> Iterator[RecordMigration | FileMigration]:
    """Report and write a JSONL file migrated in ranges, as `migrate_file` would."""
    tally = Tally()
    offset = 0
    in_place = output == path
    failure: str | None = None
    try:
        with contextlib.ExitStack() as stack:
            stream = None
            if output is not None:
                backup = options.backup if in_place else None
                sync = must_sync(output, path, folders)
                writer = open_output(output, backup=backup, folders=folders, sync=sync)
                stream = stack.enter_context(writer)
            for events, lines, data in ranges:
                for event in events:
                    assert isinstance(event, RecordMigration)
                    yield tally.add(event.shifted(offset) if offset else event)
                if stream is not None and data is not None:
                    stream.write(data)
                offset += lines
            if output is not None and (tally.failed or (in_place and not tally.migrated)):
                raise Abandon
    except Abandon:
        pass
    except OSError as err:
        failure = err.strerror or str(err)
    if failure is not None:
        message = cannot_write(output, failure)
        yield FileMigration(path, output, "failed", 0, 0, tally.failed, message)
        return
    yield tally.outcome(path, output, rewrites=output is not None and output != path)


def migrate_paths(
    registry: Registry,
    paths: Sequence[str],
    options: MigrateOptions,
    *,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    jobs: int = 1,
    runner: parallel.Runner | None = None,
) -> Iterator[RecordMigration | FileMigration]:
    """Migrate every file under `paths`; yield each record's outcome and each file's.

    With `jobs` above one and enough input, files and ranges of large JSONL files are migrated
    by that many processes, or with `runner` (a Dask cluster, say) by its workers whatever the
    size of the input: the files written and the outcomes reported, in their order, are the
    same as with one, except that the results carry no records (they are in the files) and that
    records that succeeded alike come as one outcome with their `count` (see `RecordMigration`).
    Whole files are written by the process that migrates them; the migrated lines of a range of
    a large JSONL file come back to this process, which writes the file.
    """
    outputs: deque[str | None] = deque()  # of the files walked, in order

    def walk() -> Iterator[str]:
        for root in paths:
            for path in iter_files([root], include, exclude):
                outputs.append(_output_path(path, _base(root), options))
                yield path

    # Files rewritten in place are synced one by one (each replaces the only copy of its
    # records) and their folders once each at the end. With --out the originals stay, so the
    # outputs are renamed into place unsynced and flushed all at once at the end.
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
                    output = outputs.popleft()
                    yield from migrate_file(registry, path, output, options, folders=folders)
        finally:
            sync_written(folders, files_synced=synced)
        return

    def tasks() -> Iterator[tuple[parallel.Unit, tuple[str | None, ...]]]:
        assert units is not None
        target: str | None = None
        for unit in units:
            targets = []
            for part in unit:
                if part.start == 0:  # a file begins (the ranges of one file share its output)
                    target = outputs.popleft()
                targets.append(target)
            yield unit, tuple(targets)

    results = parallel.imap(_migrate_unit, tasks(), registry, jobs, (options,), runner=runner)
    flat = (
        (part, output, found)
        for (unit, targets), ranged in results
        for part, output, found in zip(unit, targets, ranged, strict=True)
    )
    try:
        for part, output, found in flat:
            if part.whole:
                yield from found[0]
                continue
            ranges = _file_ranges(part, found, flat)
            yield from _join_ranges(part.path, output, options, ranges, folders)
            for _ in ranges:
                pass  # the ranges after a failed write
    finally:
        results.close()
        if not synced:
            folders.add(Path(str(options.out)))  # the workers' outputs are flushed here too
        sync_written(folders, files_synced=synced)


def _base(root: str) -> str | None:
    """Return the folder that outputs mirror for files found under `root` (None: a file)."""
    if not remote.is_url(root):
        return root if os.path.isdir(root) else None
    if remote.has_glob(root):
        first = min(i for i in (root.find(c) for c in "*?[") if i >= 0)
        return root[: root.rfind("/", 0, first)]
    return root if remote.isdir(root) else None


def _file_ranges(
    part: parallel.Part,
    found: Ranged,
    rest: Iterator[tuple[parallel.Part, str | None, Ranged]],
) -> Iterator[Ranged]:
    """Yield the results of the ranges of one file, the first given, the others from `rest`."""
    yield found
    while not part.last:
        part, _, found = next(rest)
        yield found
