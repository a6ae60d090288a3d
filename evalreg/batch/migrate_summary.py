"""The summary of a migrate run: files and records by outcome, notes by kind, distinct notes.

`MigrationSummary.add` takes each outcome of `migrate_paths` in turn (`MigrationRun` does it as
the outcomes pass). It counts the files by outcome and their records, the notes of the files
written (or planned, in a dry run) by kind and their placeholders, and, when asked, each
distinct note of the run once with the records and files that gave it. The notes of a file
left as it was are not counted: none of its changes happened.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from evalreg.batch.migrate_file import FileMigration, Leftover, RecordMigration
from evalreg.engine.notes import NOTE_KINDS, Note

Outcome = RecordMigration | FileMigration | Leftover
"""What `migrate_paths` yields."""


class NoteCounts:
    """Notes counted by kind, placeholders among them, and the records with a placeholder."""

    def __init__(self) -> None:
        self.kinds: dict[str, int] = {}
        self.placeholders = 0
        self.records_with_placeholders = 0

    def add(self, notes: Iterable[Note], records: int = 1) -> None:
        """Count the notes of one record (`records` alike ones: each counted that often)."""
        placeholders = 0
        kinds = self.kinds
        for note in notes:
            kinds[note.kind] = kinds.get(note.kind, 0) + records
            placeholders += note.placeholder
        if placeholders:
            self.placeholders += placeholders * records
            self.records_with_placeholders += records

    def merge(self, other: NoteCounts) -> None:
        """Add the counts of `other` to these."""
        for kind, count in other.kinds.items():
            self.kinds[kind] = self.kinds.get(kind, 0) + count
        self.placeholders += other.placeholders
        self.records_with_placeholders += other.records_with_placeholders

    def counted(self) -> list[tuple[str, int]]:
        """Return the kinds with notes and their counts, in the order of `NOTE_KINDS`."""
        return [(kind, self.kinds[kind]) for kind in NOTE_KINDS if self.kinds.get(kind)]

    def as_json(self) -> dict[str, int]:
        """Return the counts by kind (every kind, in order)."""
        return {kind: self.kinds.get(kind, 0) for kind in NOTE_KINDS}


MAX_DISTINCT_NOTES = 1000
"""Distinct notes a run counts one by one; past them, the others are counted together."""


@dataclass(frozen=True)
class NoteGroup:
    """One distinct note of a run: its general description, where it came first, how often."""

    text: str
    path: str
    line: int | None
    records: int
    files: int


class NoteGroups:
    """The notes of a run's records: each distinct note once, with how many records gave it.

    Notes are told apart by their general description (`Note.describe(generalise=True)`), so a
    datastore of ten thousand files that all got the same placeholder says so once, with the
    first record that gave it.
    """

    def __init__(self, texts: dict[tuple[Any, ...], str] | None = None) -> None:
        self.groups: dict[str, list[Any]] = {}  # text -> [first path, first line, records, files]
        self.last_file: dict[str, str] = {}  # text -> the last file that gave it
        self.others = 0
        """Records of notes past `MAX_DISTINCT_NOTES`."""
        self.texts: dict[tuple[Any, ...], str] = {} if texts is None else texts
        """What `_describe` remembers (shared by the groups of each file of a run)."""

    def add(
        self,
        path: str,
        line: int | None,
        notes: Iterable[Note],
        records: int = 1,
        counts: NoteCounts | None = None,
    ) -> None:
        """Count the notes of the record at `path`, `line` (and of the `records` - 1 after it);
        with `counts`, count them there too (`NoteCounts.add`), in the same pass."""
        groups, last_file, texts = self.groups, self.last_file, self.texts
        seen: set[str] = set()  # each distinct note once a record
        kinds = None if counts is None else counts.kinds
        placeholders = 0
        key: tuple[Any, ...]
        for note in notes:
            kind, origin = note.kind, note.origin
            if kinds is not None:
                kinds[kind] = kinds.get(kind, 0) + records
                placeholders += origin == "placeholder"
            # What tells `note.describe(generalise=True)` apart: the note's fields but the values
            # that differ from record to record (a value added from a default or placeholder
            # is the same for every record; the types of a conversion, None for other kinds).
            if kind == "added" and origin is not None and origin != "derived":
                value = _value_key(note.value)
                key = (kind, note.pointer, note.source, note.detail, note.step, origin, value)
            else:
                key = (
                    kind,
                    note.pointer,
                    note.source,
                    note.detail,
                    note.step,
                    origin,
                    note.from_type,
                    note.to_type,
                )
            text = texts.get(key)
            if text is None:
                text = self._describe(note, key)
            if text in seen:
                continue
            seen.add(text)
            group = groups.get(text)
            if group is None:
                if len(groups) >= MAX_DISTINCT_NOTES:
                    self.others += records
                    continue
                group = groups[text] = [path, line, 0, 0]
            group[2] += records
            if last_file.get(text) != path:
                last_file[text] = path
                group[3] += 1
        if counts is not None and placeholders:
            counts.placeholders += placeholders * records
            counts.records_with_placeholders += records

    def _describe(self, note: Note, key: tuple[Any, ...]) -> str:
        """Return `note.describe(generalise=True)`, remembered under `key` for notes alike
        (records of one file make the same notes again and again; describing one takes longer
        than this)."""
        text = self.texts.get(key)
        if text is None:
            if len(self.texts) >= MAX_DISTINCT_NOTES * 10:
                self.texts.clear()
            text = self.texts[key] = note.describe(generalise=True)
        return text

    def merge(self, other: NoteGroups) -> None:
        """Add the notes counted in `other` (those of one file) to these."""
        for text, (path, line, records, files) in other.groups.items():
            group = self.groups.get(text)
            if group is None:
                if len(self.groups) >= MAX_DISTINCT_NOTES:
                    self.others += records
                    continue
                group = self.groups[text] = [path, line, 0, 0]
            group[2] += records
            group[3] += files
        self.others += other.others

    def rows(self) -> Iterator[NoteGroup]:
        """Yield each distinct note, in the order they first came."""
        for text, (path, line, records, files) in self.groups.items():
            yield NoteGroup(text, path, line, records, files)


def _value_key(value: Any) -> Any:
    """Return `value` as a key of a dict: itself if it can be one, else its JSON text."""
    try:
        hash(value)
    except TypeError:
        return json.dumps(value, sort_keys=True, default=str)
    return (type(value), value)


class MigrationSummary:
    """Counts over a migrate run: files and records by outcome, and their notes.

    `group_notes`: also count each distinct note once (`groups`), for a summary by note rather
    than one line per note of every record.
    """

    def __init__(self, *, group_notes: bool = False) -> None:
        self.group_notes = group_notes
        self.files = {"written": 0, "unchanged": 0, "failed": 0, "planned": 0}
        """Files by outcome."""
        self.records = {"migrated": 0, "current": 0, "failed": 0}
        """Records by outcome (those of files that could not be read or written among them)."""
        self.notes = NoteCounts()
        """The notes of the records of the files written (or planned)."""
        self.groups = NoteGroups()
        """Each distinct note of the files written (or planned), with `group_notes`."""
        self.file_notes = NoteCounts()
        """The notes of the last file whose outcome was counted (of its migrated records)."""
        self._notes = NoteCounts()  # of the file being read, until its outcome
        self._groups = NoteGroups(self.groups.texts)

    def add(self, outcome: Outcome) -> None:
        """Count one outcome: of a record (or a run of them), of a file, or a leftover."""
        if isinstance(outcome, RecordMigration):
            result = outcome.result
            if result is None or result.status == "failed":
                return
            counts = self._notes if result.status == "migrated" else None
            if self.group_notes:
                self._groups.add(outcome.path, outcome.line, result.notes, outcome.count, counts)
            elif counts is not None:
                counts.add(result.notes, outcome.count)
            return
        if isinstance(outcome, Leftover):
            return
        self.file_notes, self._notes = self._notes, NoteCounts()
        groups, self._groups = self._groups, NoteGroups(self.groups.texts)
        if outcome.status in ("written", "planned"):
            self.notes.merge(self.file_notes)
            self.groups.merge(groups)
        self.files[outcome.status] += 1
        self.records["migrated"] += outcome.migrated
        self.records["current"] += outcome.current
        self.records["failed"] += outcome.failed

    @property
    def file_count(self) -> int:
        """Return the files of the run, whatever their outcome."""
        return sum(self.files.values())

    @property
    def ok(self) -> bool:
        """Return whether no record and no file failed."""
        return not (self.records["failed"] or self.files["failed"])

    def as_dict(self) -> dict[str, Any]:
        """Return the counts as plain data (JSON's `summary`)."""
        placeholders = {
            "notes": self.notes.placeholders,
            "records": self.notes.records_with_placeholders,
        }
        return {
            "files": dict(self.files),
            "records": dict(self.records),
            "notes": self.notes.as_json(),
            "placeholders": placeholders,
        }


class MigrationRun:
    """The outcomes of a migrate run as they come, each counted in `summary` as it passes.

    Iterate it once; `summary` is complete when the outcomes are exhausted.
    """

    def __init__(self, outcomes: Iterable[Outcome], summary: MigrationSummary) -> None:
        self._outcomes = outcomes
        self.summary = summary

    def __iter__(self) -> Iterator[Outcome]:
        add = self.summary.add
        for outcome in self._outcomes:
            add(outcome)
            yield outcome
