"""What `evalreg migrate` prints: each file's outcome and notes, each record's in JSON, a summary.

Text: one line per file with its outcome and its notes counted by kind; at the end, each
distinct note of the run once (array indices as `*`) with the number of records it applies to
and the first of them; with `verbose`, every note of every record instead, at its line, as it
comes; with `diff`, every difference between each migrated record and its input. JSON: one row
per record (every note, and with `diff` every difference), one per file, and the summary. A dry
run prints what a run does.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from evalreg.cli.app import emit, emit_json, shown_path
from evalreg.cli.options import located
from evalreg.engine.notes import NOTE_KINDS
from evalreg.errors import EvalregError
from evalreg.io.pointer import MISSING


class Tallies:
    """Notes counted by kind, placeholders among them, and the records with a placeholder."""

    def __init__(self) -> None:
        self.kinds: dict[str, int] = {}
        self.placeholders = 0
        self.records_with_placeholders = 0

    def add(self, notes: Iterable[Any], records: int = 1) -> None:
        """Count the notes of one record (`records` alike ones: each counted that often)."""
        placeholders = 0
        for note in notes:
            self.kinds[note.kind] = self.kinds.get(note.kind, 0) + records
            placeholders += note.placeholder
        if placeholders:
            self.placeholders += placeholders * records
            self.records_with_placeholders += records

    def merge(self, other: Tallies) -> None:
        """Add the counts of `other` to these."""
        for kind, count in other.kinds.items():
            self.kinds[kind] = self.kinds.get(kind, 0) + count
        self.placeholders += other.placeholders
        self.records_with_placeholders += other.records_with_placeholders

    def text(self, placeholders: bool = True) -> str:
        """Return e.g. `4 added (4 placeholders), 12 converted` ("" when there are none)."""
        parts = []
        for kind in NOTE_KINDS:
            count = self.kinds.get(kind, 0)
            if count:
                extra = ""
                if kind == "added" and self.placeholders and placeholders:
                    extra = f" ({_plural(self.placeholders, 'placeholder')})"
                parts.append(f"{count:,} {kind}{extra}")
        return ", ".join(parts)

    def as_json(self) -> dict[str, Any]:
        """Return the counts by kind (every kind, in order) and of placeholders."""
        return {kind: self.kinds.get(kind, 0) for kind in NOTE_KINDS}


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"


MAX_DISTINCT_NOTES = 1000
"""Distinct notes a run counts one by one; past them, the others are counted together."""


class NoteGroups:
    """The notes of a run's records: each distinct note once, with how many records gave it.

    Notes are told apart by their general description (`Note.describe(generalise=True)`), so a
    datastore of ten thousand files that all got the same placeholder says so in one line, with
    the first record that gave it.
    """

    def __init__(self) -> None:
        self.groups: dict[str, list[Any]] = {}  # text -> [first path, first line, records, files]
        self.last_file: dict[str, str] = {}  # text -> the last file that gave it
        self.others = 0  # records of notes past `MAX_DISTINCT_NOTES`
        self.texts: dict[tuple[Any, ...], str] = {}  # what `_describe` remembers

    def add(self, path: str, line: int | None, notes: Iterable[Any], records: int = 1) -> None:
        """Count the notes of the record at `path`, `line` (and of the `records` - 1 after it)."""
        for text in dict.fromkeys(self._describe(note) for note in notes):
            group = self.groups.get(text)
            if group is None:
                if len(self.groups) >= MAX_DISTINCT_NOTES:
                    self.others += records
                    continue
                group = self.groups[text] = [path, line, 0, 0]
            group[2] += records
            if self.last_file.get(text) != path:
                self.last_file[text] = path
                group[3] += 1

    def _describe(self, note: Any) -> str:
        """Return `note.describe(generalise=True)`, remembered for notes alike (records of one
        file make the same notes again and again; describing one takes longer than this)."""
        key: tuple[Any, ...] = (note.kind, note.pointer, note.source, note.detail, note.step)
        key += (note.origin,)
        if note.kind == "added" and note.origin not in (None, "derived"):
            key += (_value_key(note.value),)
        elif note.kind == "converted":
            key += (note.from_type, note.to_type)
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

    def lines(self) -> Iterator[str]:
        """Yield one line per distinct note, in the order they first came."""
        for text, (path, line, records, files) in self.groups.items():
            where = f" in {files:,} files" if files > 1 else ""
            first = "" if records == 1 else "first: "
            yield f"{text} [{_plural(records, 'record')}{where}; {first}{located(path, line)}]"
        if self.others:
            yield (
                f"... and the notes of {self.others:,} more records, past the "
                f"{MAX_DISTINCT_NOTES:,} distinct notes shown (--verbose lists every note)"
            )


def _value_key(value: Any) -> Any:
    """Return `value` as a key of a dict: itself if it can be one, else its JSON text."""
    try:
        hash(value)
    except TypeError:
        return json.dumps(value, sort_keys=True, default=str)
    return (type(value), value)


def _lines(event: Any) -> Iterable[int | None]:
    """Return the lines of the records an outcome stands for (`count` from its `line`)."""
    return [event.line] if event.line is None else range(event.line, event.line + event.count)


def difference_json(change: Any) -> dict[str, Any]:
    """Return one difference between a record and its migration as a JSON object."""
    row: dict[str, Any] = {"op": change.kind, "pointer": change.pointer}
    if change.before is not MISSING:
        row["before"] = change.before
    if change.after is not MISSING:
        row["after"] = change.after
    return row


class MigrationReport:
    """Print the outcomes of a migration as they come, and the summary at the end."""

    def __init__(
        self, fmt: str, *, dry_run: bool, verbose: bool, diff: bool, registry: Any
    ) -> None:
        self.fmt, self.dry_run, self.verbose, self.diff = fmt, dry_run, verbose, diff
        self.registry = registry
        self.totals = {"written": 0, "unchanged": 0, "failed": 0, "planned": 0}
        self.records = {"migrated": 0, "current": 0, "failed": 0}
        self.notes = Tallies()
        self.file_notes = Tallies()
        self.groups = NoteGroups()
        self.file_groups = NoteGroups()  # the file's, merged into `groups` if it is written
        self.planned: set[tuple[str, str, str]] = set()

    @property
    def failed(self) -> bool:
        """Return whether some record or file failed."""
        return bool(self.records["failed"] or self.totals["failed"])

    def leftover(self, event: Any) -> None:
        """Print a temporary file of a dead process, removed (or that could not be)."""
        if self.fmt == "json":
            row = {"leftover": event.path, "pid": event.pid, "bytes": event.size}
            emit_json(row | {"removed": event.error is None, "error": event.error})
            return
        what = (
            f"temporary file of process {event.pid}, which is no longer running "
            f"({event.size:,} bytes)"
        )
        if event.error is None:
            emit(f"{event.path}: removed the {what}", err=True)
        else:
            emit(
                f"{event.path}: cannot remove the {what}: {event.error}; remove it by hand",
                err=True,
            )

    def file(self, event: Any) -> None:
        """Print a file's outcome (after its notes), and count it."""
        tallies, self.file_notes = self.file_notes, Tallies()
        groups, self.file_groups = self.file_groups, NoteGroups()
        if event.status in ("written", "planned"):
            # The notes of a file left as it was are not counted: none of its changes happened.
            self.notes.merge(tallies)
            self.groups.merge(groups)
        self.totals[event.status] += 1
        for status in ("migrated", "current", "failed"):
            self.records[status] += getattr(event, status)
        if self.fmt == "json":
            row = {
                "file": event.path,
                "output": event.output,
                "status": event.status,
                "migrated": event.migrated,
                "current": event.current,
                "failed": event.failed,
                "message": event.message,
            }
            if event.status in ("written", "planned"):
                row |= {"notes": tallies.as_json(), "placeholders": tallies.placeholders}
            emit_json(row)
            return
        if event.status in ("written", "failed", "planned"):
            message = f" ({event.message})" if event.message else ""
            counted = tallies.text() if event.status != "failed" else ""
            emit(
                f"{shown_path(event.path)}: {event.status}: {event.migrated} migrated, "
                f"{event.current} current, {event.failed} failed{message}"
                + (f"; {counted}" if counted else "")
            )

    def record(self, event: Any) -> None:
        """Print (or count, for the file's lines) one record's outcome."""
        result = event.result
        if result is not None and result.status == "migrated":
            self.file_notes.add(result.notes, event.count)
        if self.fmt == "json":
            lines = (
                [event.line] if event.line is None else range(event.line, event.line + event.count)
            )
            for line in lines:
                self._json_row(event, line)
            return
        where = located(event.path, event.line)
        if result is None:
            emit(f"{where}: unreadable: {event.error}")
            return
        if self.dry_run:
            self._plan(result)
        if result.status == "failed":
            step = f" at step {result.failed_step}" if result.failed_step else ""
            emit(f"{where}: failed{step}: {result.error}")
            return
        if self.verbose:
            lines = (
                [event.line] if event.line is None else range(event.line, event.line + event.count)
            )
            for line in lines:
                for note in result.notes:
                    emit(f"{located(event.path, line)}: {note}")
        else:
            self.file_groups.add(event.path, event.line, result.notes, event.count)
        if self.diff and result.status == "migrated":
            emit(f"{where}: {result.source} -> {result.target}")
            for change in event.changes:
                emit(f"  {change}")

    def _plan(self, result: Any) -> None:
        """Print the chain of steps of a route the first time a record takes it."""
        if not (result.family and result.source and result.target):
            return
        key = (result.family, result.source, result.target)
        if key in self.planned or result.source == result.target:
            return
        self.planned.add(key)
        try:
            chain = self.registry.plan(*key)
            emit(f"plan {result.family}: " + ", ".join(s.name for s in chain))
        except EvalregError as err:
            emit(f"plan {result.family}: {err}")

    def _json_row(self, event: Any, line: int | None) -> None:
        """Print the JSON row of one record."""
        result = event.result
        row: dict[str, Any] = {"path": event.path, "line": line, "status": event.status}
        if result is not None:
            row |= {
                "family": result.family,
                "from": result.source,
                "to": result.target,
                "steps": list(result.steps),
                "notes": [n.as_json() for n in result.notes],
                "error": result.error,
                "failed_step": result.failed_step,
            }
        else:
            row["error"] = event.error
        if self.diff and result is not None and result.status == "migrated":
            row["changes"] = [difference_json(c) for c in event.changes]
        emit_json(row)

    def summary(self) -> None:
        """Print the run's summary: files, records, notes by kind and placeholders."""
        totals, records, notes = self.totals, self.records, self.notes
        if self.fmt == "json":
            placeholders = {
                "notes": notes.placeholders,
                "records": notes.records_with_placeholders,
            }
            emit_json(
                {
                    "summary": {
                        "files": totals,
                        "records": records,
                        "notes": notes.as_json(),
                        "placeholders": placeholders,
                    }
                }
            )
            return
        for line in self.groups.lines():
            emit(line)
        files = f"{sum(totals.values())} files: "
        if self.dry_run:
            files += f"{totals['planned']} planned, {totals['failed']} with failures"
        else:
            files += (
                f"{totals['written']} written, {totals['unchanged']} unchanged, "
                f"{totals['failed']} failed"
            )
        line = (
            f"{files}; records: {records['migrated']} migrated, {records['current']} current, "
            f"{records['failed']} failed"
        )
        counted = notes.text(placeholders=False)
        if counted:
            line += f"; notes: {counted}"
        if notes.placeholders:
            line += (
                f"; {_plural(notes.placeholders, 'placeholder')} in "
                f"{_plural(notes.records_with_placeholders, 'record')}"
            )
        emit(line + (" (dry run: nothing written)" if self.dry_run else ""), err=True)
