"""What a worker does with one unit of work of `migrate_paths`: migrate it, and report it lean.

A unit is whole files or one range of a large JSONL file (`parallel.Unit`), each part with its
output. Whole files are written by the worker; a range's migrated lines go back to the parent,
which writes its file. The outcomes go back in runs (`_runs`): the records that succeeded alike
counted in one outcome, without their records, which need not cross a process boundary.
"""

from __future__ import annotations

import io
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from evalreg.batch import parallel
from evalreg.batch.migrate_file import (
    FileMigration,
    MigrateOptions,
    MigrationEvent,
    RecordMigration,
    Tally,
    migrate_file,
    migrate_items,
)
from evalreg.engine.migrate import MigrationResult
from evalreg.engine.notes import Note
from evalreg.engine.registry import Registry
from evalreg.io.readers import RangeItems, count_lines
from evalreg.io.writers import sync_folders, wait_written


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


def migrate_unit(
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


def lost_part(part: parallel.Part, output: str | None, reason: str) -> Ranged:
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
