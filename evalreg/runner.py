"""Runs over files and directories: detect, validate and migrate, as streams of plain results.

The command line prints these results; other programs can consume them directly. Nothing here
prints or exits, and one bad file or record never stops the rest.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from evalreg.codec import dumps
from evalreg.detect import Detection
from evalreg.migrate import MigrationResult, ValidateMode
from evalreg.readers import (
    Item,
    file_kind,
    iter_files,
    open_binary,
    read_items,
    read_items_from_bytes,
    sniff_kind,
)
from evalreg.registry import Registry
from evalreg.validate import Issue
from evalreg.writers import atomic_writer

# -- detect and validate -------------------------------------------------------------------


@dataclass(frozen=True)
class RecordCheck:
    """The outcome of detecting (and validating) one record."""

    path: str
    line: int | None
    status: Literal["valid", "invalid", "unreadable", "detected", "undetected"]
    detection: Detection | None = None
    issues: tuple[Issue, ...] = ()
    error: str | None = None

    @property
    def family(self) -> str | None:
        """Return the family the record was checked against."""
        return self.detection.family if self.detection else None

    @property
    def version(self) -> str | None:
        """Return the version the record was checked against."""
        return self.detection.version if self.detection else None


@dataclass
class Summary:
    """Counts over a run."""

    files: int = 0
    records: int = 0
    valid: int = 0
    invalid: int = 0
    unreadable: int = 0
    _paths: set[str] = field(default_factory=set, repr=False)

    def add(self, check: RecordCheck) -> None:
        """Count one record."""
        if check.path not in self._paths:
            self._paths.add(check.path)
            self.files += 1
        if check.status == "unreadable":
            self.unreadable += 1
            return
        self.records += 1
        if check.status in ("valid", "detected"):
            self.valid += 1
        else:
            self.invalid += 1

    @property
    def ok(self) -> bool:
        """Return whether every record was read and is valid."""
        return self.invalid == 0 and self.unreadable == 0

    def as_dict(self) -> dict[str, int]:
        """Return the counts as a plain mapping."""
        return {
            "files": self.files,
            "records": self.records,
            "valid": self.valid,
            "invalid": self.invalid,
            "unreadable": self.unreadable,
        }


def check_item(
    registry: Registry,
    item: Item,
    *,
    family: str | None = None,
    version: str | None = None,
    validate: bool = True,
) -> RecordCheck:
    """Detect and (unless `validate` is false) validate one read item."""
    if not item.ok:
        return RecordCheck(item.path, item.line, "unreadable", error=item.error)
    record = item.record
    if family is not None and version is not None:
        detection = Detection("detected", family, version)
    else:
        detection = registry.detect(record, item.path)
        if family is not None and detection.family != family:
            detection = Detection("detected", family, version) if version else detection
    if not validate:
        status: Literal["detected", "undetected"] = "detected" if detection.ok else "undetected"
        return RecordCheck(item.path, item.line, status, detection)
    if family is not None and (detection.family != family or not detection.ok):
        issues = registry.validate(record, family, version)
        detection = Detection("detected", family, version) if version else detection
    else:
        issues = (
            registry.validate(record, detection.family, detection.version)
            if detection.ok
            else (registry.validate(record))
        )
    return RecordCheck(
        item.path, item.line, "invalid" if issues else "valid", detection, tuple(issues)
    )


def check_paths(
    registry: Registry,
    paths: Iterable[str | os.PathLike[str]],
    *,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    family: str | None = None,
    version: str | None = None,
    validate: bool = True,
) -> Iterator[RecordCheck]:
    """Yield one check per record of every file under `paths`, in file then line order."""
    if family is not None:
        registry.manifest(family)
        if version is not None:
            version = registry.resolve_version(family, version)
    for path in iter_files(paths, include, exclude):
        for item in read_items(path):
            yield check_item(registry, item, family=family, version=version, validate=validate)


# -- migrate -------------------------------------------------------------------------------


@dataclass(frozen=True)
class RecordMigration:
    """What happened to one record of a file being migrated."""

    path: str
    line: int | None
    result: MigrationResult | None
    error: str | None = None
    """Why the record could not be read (then `result` is None)."""
    changes: tuple[str, ...] = ()
    """A short summary of the changes (dry runs only)."""

    @property
    def status(self) -> str:
        """Return `migrated`, `current`, `failed` or `unreadable`."""
        return "unreadable" if self.result is None else self.result.status


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
    dry_run: bool = False


def change_summary(before: Any, after: Any, limit: int = 8) -> tuple[str, ...]:
    """Return a short list of what changed between two records (`added /a/b`, ...)."""
    from deepdiff import DeepDiff

    diff = DeepDiff(before, after, view="tree", ignore_order=False, verbose_level=0)
    found: list[str] = []
    labels = {
        "dictionary_item_added": "added",
        "dictionary_item_removed": "removed",
        "iterable_item_added": "added",
        "iterable_item_removed": "removed",
        "values_changed": "changed",
        "type_changes": "changed type of",
    }
    for kind, label in labels.items():
        for node in diff.get(kind, ()):
            path = node.path(output_format="list")
            found.append(f"{label} /" + "/".join(str(p) for p in path))
    found.sort(key=lambda s: s.split(" ", 1)[-1])
    if len(found) > limit:
        found = [*found[:limit], f"... and {len(found) - limit} more"]
    return tuple(found)


def _output_path(path: str, root: str | None, options: MigrateOptions) -> str | None:
    if options.dry_run:
        return None
    if options.in_place:
        return path
    assert options.out is not None
    relative = os.path.relpath(path, root) if root else os.path.basename(path)
    return os.path.join(options.out, relative)


def _migrate_item(registry: Registry, item: Item, options: MigrateOptions) -> RecordMigration:
    if not item.ok:
        return RecordMigration(item.path, item.line, None, item.error)
    result = registry.migrate(
        item.record,
        options.to,
        family=options.family,
        params=options.params,
        allow_loss=options.allow_loss,
        validate=options.validate,
        filename=item.path,
    )
    changes: tuple[str, ...] = ()
    if options.dry_run and result.status == "migrated":
        changes = change_summary(item.record, result.record)
    return RecordMigration(item.path, item.line, result, changes=changes)


def _serialise(records: Sequence[Any], kind: str | None, original: bytes) -> bytes:
    if kind == "yaml":
        from evalreg.yamlio import dump_yaml

        return dump_yaml(records, original)
    indent = b"\n" in original.strip()
    data = dumps(records[0], indent=indent)
    return data + b"\n" if original.endswith(b"\n") else data


class _Abandon(Exception):
    """Raised inside an atomic write to discard it and leave the file untouched."""


@dataclass
class _Tally:
    migrated: int = 0
    current: int = 0
    failed: int = 0

    def add(self, migration: RecordMigration) -> RecordMigration:
        if migration.status == "migrated":
            self.migrated += 1
        elif migration.status == "current":
            self.current += 1
        else:
            self.failed += 1
        return migration

    def outcome(self, path: str, output: str | None, rewrites: bool) -> FileMigration:
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


def _migrate_jsonl(
    registry: Registry, path: str, output: str | None, options: MigrateOptions, tally: _Tally
) -> Iterator[RecordMigration]:
    if output is None:
        for item in read_items(path, "jsonl"):
            yield tally.add(_migrate_item(registry, item, options))
        return
    in_place = output == path
    try:
        with atomic_writer(output, backup=options.backup if in_place else None) as stream:
            for item in read_items(path, "jsonl"):
                migration = tally.add(_migrate_item(registry, item, options))
                yield migration
                result = migration.result
                if result is not None and result.status == "migrated":
                    stream.write(dumps(result.record) + b"\n")
                elif item.raw is not None:
                    stream.write(item.raw if item.raw.endswith(b"\n") else item.raw + b"\n")
            if tally.failed or (in_place and not tally.migrated):
                raise _Abandon
    except _Abandon:
        pass


def _migrate_document(
    registry: Registry, path: str, output: str | None, options: MigrateOptions, tally: _Tally
) -> Iterator[RecordMigration]:
    try:
        with open_binary(path) as stream:
            original = stream.read()
    except OSError as err:
        yield tally.add(RecordMigration(path, None, None, f"cannot read: {err}"))
        return
    kind = file_kind(path)
    items = list(read_items_from_bytes(original, path, kind))
    migrations = [tally.add(_migrate_item(registry, item, options)) for item in items]
    yield from migrations
    if tally.failed or output is None:
        return
    if not tally.migrated:
        if output != path:
            Path(output).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, output)
        return
    records = [m.result.record for m in migrations if m.result is not None]
    data = _serialise(records, kind or sniff_kind(original), original)
    backup = options.backup if output == path else None
    with atomic_writer(output, backup=backup) as out:
        out.write(data)


def migrate_file(
    registry: Registry, path: str, output: str | None, options: MigrateOptions
) -> Iterator[RecordMigration | FileMigration]:
    """Migrate one file; yield each record's outcome, then the file's.

    A file is written only when every record in it migrated or was already current; otherwise
    it stays as it was and its failed records are reported. A file already at the target is left
    byte for byte untouched (with `--out`, copied as it is).
    """
    tally = _Tally()
    try:
        if file_kind(path) == "jsonl":
            yield from _migrate_jsonl(registry, path, output, options, tally)
        else:
            yield from _migrate_document(registry, path, output, options, tally)
    except OSError as err:
        # The original is intact (writes are atomic); report the file and go on with the rest.
        message = f"left as it was: cannot write {output}: {err.strerror or err}"
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
) -> Iterator[RecordMigration | FileMigration]:
    """Migrate every file under `paths`; yield each record's outcome and each file's."""
    for root in paths:
        base = root if os.path.isdir(root) else None
        for path in iter_files([root], include, exclude):
            output = _output_path(path, base, options)
            yield from migrate_file(registry, path, output, options)
