"""Migrating one file: its records migrated, and the file written only if every one succeeded.

Also the options of a migration and the plain outcomes it reports, of records and of files.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import IO, Any, Literal

from evalreg.batch.inplace import FileBusy, FileChanged, Guard, guarded
from evalreg.engine.changes import Difference, diff
from evalreg.engine.migrate import MigrationResult, ValidateMode, migrate_record
from evalreg.engine.registry import Registry
from evalreg.io import remote
from evalreg.io.codec import dumps
from evalreg.io.readers import (
    STDIN,
    Item,
    Kind,
    file_kind,
    is_gzip,
    open_binary,
    out_of_memory,
    read_document,
    read_items,
    read_items_from_bytes,
    read_whole,
    sniff_kind,
)
from evalreg.io.writers import BackupError, atomic_writer, write_new


@dataclass(frozen=True)
class RecordMigration:
    """What happened to one record of a file being migrated."""

    path: str
    line: int | None
    result: MigrationResult | None
    error: str | None = None
    """Why the record could not be read (then `result` is None)."""
    changes: tuple[Difference, ...] = ()
    """Every difference between the record and its migration (with `MigrateOptions.diff`)."""
    count: int = 1
    """How many records of the file had this same outcome: always one with `jobs` one. Outcomes
    that come back from other processes (`jobs` above one) count the records that succeeded with
    the same steps and notes on consecutive lines from `line`, or with `migrate_paths`'s
    `notes="grouped"` in one part of the work, `line` being the first of them; the others stand
    for one each."""

    @property
    def status(self) -> str:
        """Return `migrated`, `current`, `failed` or `unreadable`."""
        return "unreadable" if self.result is None else self.result.status

    def shifted(self, lines: int) -> RecordMigration:
        """Return this outcome `lines` lines further down its file."""
        line = None if self.line is None else self.line + lines
        return RecordMigration(self.path, line, self.result, self.error, self.changes, self.count)


@dataclass(frozen=True)
class FileMigration:
    """What happened to one file."""

    path: str
    output: str | None
    status: Literal["written", "unchanged", "failed", "planned"]
    migrated: int = 0
    current: int = 0
    failed: int = 0
    message: str = ""


@dataclass(frozen=True)
class Leftover:
    """A temporary file left in a folder written to by a process that is no longer running."""

    path: str
    pid: int
    size: int
    error: str | None = None
    """Why it could not be removed (None: it was removed)."""


MigrationEvent = RecordMigration | FileMigration
"""What migrating reports: the outcome of a record (or of a run of records), or of a file."""


@dataclass(frozen=True)
class MigrateOptions:
    """How to migrate: the target, where to write, and the policies."""

    to: str
    family: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    allow_loss: bool = False
    validate: ValidateMode = "final"
    out: str | None = None
    in_place: bool = False
    backup: str | None = None
    overwrite_backup: bool = False
    """Replace an existing backup that differs from the file (else the file is left as it was)."""
    dry_run: bool = False
    diff: bool = False
    """Compare each migrated record with its input and report every difference (`changes`)."""


def _migrate_item(
    registry: Registry,
    item: Item,
    options: MigrateOptions,
    data: bytes | None = None,
    kind: Kind | None = "jsonl",
    index: int = 0,
) -> RecordMigration:
    """Migrate the record of `item` (`data`, `kind`, `index`: the bytes it was read from, their
    kind and its place among the records read from them; by default a JSONL line's own)."""
    if not item.ok:
        return RecordMigration(item.path, item.line, None, item.error)
    # The record was parsed for this run alone: the steps change it in place, and should it
    # fail, it is parsed again to name the cause. Where every change is to be listed, the record
    # is compared with its migration afterwards, so the steps run on a copy.
    if data is None and item.raw is not None:
        data = item.raw
    again = None if data is None else partial(reread, data, item.path, kind, index)
    result = migrate_record(
        registry,
        item.record,
        options.to,
        family=options.family,
        params=options.params,
        allow_loss=options.allow_loss,
        validate=options.validate,
        filename=item.path,
        copy_input=options.diff,
        reread=again,
    )
    if options.diff and result.status == "migrated":
        changes = differences(item.record, result.record)
        return RecordMigration(item.path, item.line, result, changes=changes)
    # `RecordMigration(item.path, item.line, result)` without the frozen dataclass's `__init__`
    # (which sets each field through `object.__setattr__`): one per record.
    migration: RecordMigration = object.__new__(RecordMigration)
    migration.__dict__.update(
        path=item.path, line=item.line, result=result, error=None, changes=(), count=1
    )
    return migration


def reread(data: bytes, path: str, kind: Kind | None, index: int) -> Any:
    """Return record `index` of those read from `data` (a file's bytes, or a JSONL line's), as
    it was read the first time."""
    return next(itertools.islice(read_items_from_bytes(data, path, kind), index, None)).record


def differences(before: Any, after: Any) -> tuple[Difference, ...]:
    """Return every difference between a record and its migration (`diff`), one when the
    records nest too deeply to compare."""
    try:
        return tuple(diff(before, after))
    except RecursionError:  # nesting near the limit a record may have: too deep to compare
        return (Difference("changed", "", before, "(nested too deeply to compare)"),)


def _serialise(records: Sequence[Any], kind: str | None, original: bytes) -> bytes:
    if kind == "yaml":
        from evalreg.io.yamlio import dump_yaml

        return dump_yaml(records, original)
    indent = b"\n" in original.strip()
    data = dumps(records[0], indent=indent, line=original.endswith(b"\n"))
    # JSON text holds no line end inside a string: every one is layout, and keeps the file's.
    return data.replace(b"\n", b"\r\n") if b"\r\n" in original else data


class Abandon(Exception):
    """Raised inside an atomic write to discard it and leave the file untouched."""


@dataclass
class Tally:
    """The records of one file counted by outcome, from which the file's outcome follows."""

    migrated: int = 0
    current: int = 0
    failed: int = 0

    def add(self, migration: RecordMigration) -> RecordMigration:
        """Count a record's outcome (`count` records for a run); return it."""
        if migration.status == "migrated":
            self.migrated += migration.count
        elif migration.status == "current":
            self.current += migration.count
        else:
            self.failed += migration.count
        return migration

    def outcome(self, path: str, output: str | None, rewrites: bool) -> FileMigration:
        """Return the outcome of the file counted (`rewrites`: copied elsewhere even if current)."""
        status: Literal["written", "unchanged", "failed", "planned"]
        message = ""
        if self.failed:
            status, message = "failed", "left as it was: some records failed"
        elif output is None:
            status = "planned"
        elif not self.migrated and not rewrites:
            status = "unchanged"
        else:
            status = "written"
        return FileMigration(
            path, output, status, self.migrated, self.current, self.failed, message
        )


def migrate_items(
    registry: Registry,
    items: Iterable[Item],
    options: MigrateOptions,
    tally: Tally,
    stream: IO[bytes] | None,
) -> Iterator[RecordMigration]:
    """Migrate JSONL items; write each result (or the line as it was) to `stream`, if any.

    A migrated line keeps the line end of the line it replaces (`\r\n` or `\n`).
    """
    for item in items:
        migration = tally.add(_migrate_item(registry, item, options))
        yield migration
        if stream is None:
            continue
        result = migration.result
        if result is not None and result.status == "migrated":
            if item.raw is not None and item.raw.endswith(b"\r\n"):
                stream.write(dumps(result.record) + b"\r\n")
            else:
                stream.write(dumps(result.record, line=True))
        elif item.raw is not None:
            stream.write(item.raw if item.raw.endswith(b"\n") else item.raw + b"\n")


def _migrate_jsonl(
    registry: Registry,
    path: str,
    output: str | None,
    options: MigrateOptions,
    tally: Tally,
    folders: set[Path] | None,
    guard: Guard | None,
) -> Iterator[RecordMigration]:
    if output is None:
        yield from migrate_items(registry, read_items(path, "jsonl"), options, tally, None)
        return
    in_place = output == path
    try:
        with writer_for(path, output, options, folders, guard) as stream:
            yield from migrate_items(registry, read_items(path, "jsonl"), options, tally, stream)
            if tally.failed or (in_place and not tally.migrated):
                raise Abandon
    except Abandon:
        pass


def _migrate_document(
    registry: Registry,
    path: str,
    output: str | None,
    options: MigrateOptions,
    tally: Tally,
    folders: set[Path] | None,
    guard: Guard | None,
) -> Iterator[RecordMigration]:
    try:
        if path == STDIN or is_gzip(path):
            with open_binary(path) as stream:
                original = read_document(stream, path)
        else:
            original = read_whole(path)
    except OSError as err:
        yield tally.add(RecordMigration(path, None, None, f"cannot read: {err}"))
        return
    kind = file_kind(path)
    items = list(read_items_from_bytes(original, path, kind))
    migrations = [
        tally.add(_migrate_item(registry, item, options, original, kind, index))
        for index, item in enumerate(items)
    ]
    yield from migrations
    if tally.failed or output is None:
        return
    if not tally.migrated:
        if output != path:  # copied as it is, as atomically as any output
            _write(path, output, options, folders, None, original)
        return
    records = [m.result.record for m in migrations if m.result is not None]
    data = _serialise(records, kind or sniff_kind(original), original)
    _write(path, output, options, folders, guard, data)


def _write(
    path: str,
    output: str,
    options: MigrateOptions,
    folders: set[Path] | None,
    guard: Guard | None,
    data: bytes,
) -> None:
    """Write `data` as the output of `path` (see `writer_for`)."""
    if output != path and guard is None and not remote.is_url(output):
        write_new(output, data, folders=folders, sync=must_sync(output, path, folders))
        return
    with writer_for(path, output, options, folders, guard) as out:
        out.write(data)


def writer_for(
    path: str,
    output: str,
    options: MigrateOptions,
    folders: set[Path] | None,
    guard: Guard | None,
) -> contextlib.AbstractContextManager[IO[bytes]]:
    """Return the writer of the output of `path`: a local file atomically (with its backup, if
    rewritten in place), a URL (but `file://`) as one object sent when complete."""
    if remote.is_url(output):
        if not remote.is_local_url(output):
            return remote.url_writer(output)
        output = remote.local_path(output)
    in_place = output == path
    return atomic_writer(
        output,
        backup=options.backup if in_place else None,
        overwrite_backup=options.overwrite_backup,
        folders=folders,
        sync=must_sync(output, path, folders),
        check=None if guard is None else guard.check,
    )


def must_sync(output: str, path: str, folders: set[Path] | None) -> bool:
    """Return whether to fsync `output` before it takes its name.

    Rewriting a file in place replaces the only copy of its records, so its new bytes must be on
    disk first. A file written elsewhere leaves the original untouched: when the caller collects
    the folders written to (and so promises `sync_written` at the end), its bytes are flushed
    then, with the file system that holds them, instead of one fsync per file.
    """
    return folders is None or output == path


def migrate_file(
    registry: Registry,
    path: str,
    output: str | None,
    options: MigrateOptions,
    *,
    folders: set[Path] | None = None,
) -> Iterator[RecordMigration | FileMigration]:
    """Migrate one file; yield each record's outcome, then the file's.

    A file is written only when every record in it migrated or was already current; otherwise
    it stays as it was and its failed records are reported. A file already at the target is left
    byte for byte untouched (with `--out`, copied as it is). With `folders`, the folder written
    to is added there, to be flushed later with `writers.sync_written` (`files_synced` false
    unless the file was rewritten in place), rather than at once.
    """
    tally = Tally()
    in_place = output is not None and output == path and path != STDIN
    try:
        with guarded(path, in_place) as guard:
            if file_kind(path) == "jsonl":
                yield from _migrate_jsonl(registry, path, output, options, tally, folders, guard)
            else:
                yield from _migrate_document(registry, path, output, options, tally, folders, guard)
    except (OSError, FileBusy, FileChanged) as err:
        # The original is intact (writes are atomic); report the file and go on with the rest.
        yield FileMigration(path, output, "failed", 0, 0, tally.failed, cannot_write(output, err))
        return
    except MemoryError:
        message = f"left as it was: {out_of_memory(path)}"
        yield FileMigration(path, output, "failed", 0, 0, tally.failed, message)
        return
    yield tally.outcome(path, output, rewrites=output is not None and output != path)


def cannot_write(output: str | None, err: Exception | str) -> str:
    """Return the message of a file that could not be written (`err`: the error or its text)."""
    if isinstance(err, (FileBusy, FileChanged)):
        return f"left as it was: {err}"
    if isinstance(err, BackupError):
        fix = "; --overwrite-backup replaces it" if err.errno == errno.EEXIST else ""
        return f"left as it was: cannot write backup {err.filename}: {err.strerror}{fix}"
    reason = err.strerror or str(err) if isinstance(err, OSError) else str(err)
    return f"left as it was: cannot write {output}: {reason}"
