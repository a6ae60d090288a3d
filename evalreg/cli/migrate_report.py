"""What `evalreg migrate` prints: each file's outcome and notes, each record's in JSON, a summary.

Text: one line per file with its outcome and its notes counted by kind; at the end, each
distinct note of the run once (array indices as `*`) with the number of records it applies to
and the first of them; with `verbose`, every note of every record instead, at its line, as it
comes; with `diff`, every difference between each migrated record and its input. JSON: one row
per record (every note, and with `diff` every difference), one per file, and the summary. A dry
run prints what a run does.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from evalreg.batch.migrate_summary import (
    MAX_DISTINCT_NOTES,
    MigrationSummary,
    NoteCounts,
    NoteGroups,
)
from evalreg.cli.app import emit, emit_json, shown_path
from evalreg.cli.options import located
from evalreg.errors import EvalregError
from evalreg.io.pointer import MISSING


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def notes_text(notes: NoteCounts, placeholders: bool = True) -> str:
    """Return e.g. `4 added (4 placeholders), 12 converted` ("" when there are none)."""
    parts = []
    for kind, count in notes.counted():
        extra = ""
        if kind == "added" and notes.placeholders and placeholders:
            extra = f" ({_plural(notes.placeholders, 'placeholder')})"
        parts.append(f"{count:,} {kind}{extra}")
    return ", ".join(parts)


def group_lines(groups: NoteGroups) -> Iterator[str]:
    """Yield one line per distinct note of a run, in the order they first came."""
    for group in groups.rows():
        where = f" in {group.files:,} files" if group.files > 1 else ""
        first = "" if group.records == 1 else "first: "
        place = located(group.path, group.line)
        yield f"{group.text} [{_plural(group.records, 'record')}{where}; {first}{place}]"
    if groups.others:
        yield (
            f"... and the notes of {groups.others:,} more records, past the "
            f"{MAX_DISTINCT_NOTES:,} distinct notes shown (--verbose lists every note)"
        )


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
        self,
        fmt: str,
        summary: MigrationSummary,
        *,
        dry_run: bool,
        verbose: bool,
        diff: bool,
        registry: Any,
    ) -> None:
        self.fmt, self.dry_run, self.verbose, self.diff = fmt, dry_run, verbose, diff
        self.summary = summary
        self.registry = registry
        self.planned: set[tuple[str, str, str]] = set()

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
        """Print a file's outcome (after its notes), as counted in the summary."""
        notes = self.summary.file_notes
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
                row |= {"notes": notes.as_json(), "placeholders": notes.placeholders}
            emit_json(row)
            return
        if event.status in ("written", "failed", "planned"):
            message = f" ({event.message})" if event.message else ""
            counted = notes_text(notes) if event.status != "failed" else ""
            emit(
                f"{shown_path(event.path)}: {event.status}: {event.migrated} migrated, "
                f"{event.current} current, {event.failed} failed{message}"
                + (f"; {counted}" if counted else "")
            )

    def record(self, event: Any) -> None:
        """Print one record's outcome (unless its notes are counted, in the summary, alone)."""
        result = event.result
        if self.fmt == "json":
            lines = (
                [event.line] if event.line is None else range(event.line, event.line + event.count)
            )
            for line in lines:
                self._json_row(event, line)
            return
        if result is None:
            emit(f"{located(event.path, event.line)}: unreadable: {event.error}")
            return
        if self.dry_run:
            self._plan(result)
        if result.status == "failed":
            step = f" at step {result.failed_step}" if result.failed_step else ""
            emit(f"{located(event.path, event.line)}: failed{step}: {result.error}")
            return
        if self.verbose:
            lines = (
                [event.line] if event.line is None else range(event.line, event.line + event.count)
            )
            for line in lines:
                for note in result.notes:
                    emit(f"{located(event.path, line)}: {note}")
        if self.diff and result.status == "migrated":
            emit(f"{located(event.path, event.line)}: {result.source} -> {result.target}")
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

    def end(self) -> None:
        """Print the run's summary: files, records, notes by kind and placeholders."""
        summary = self.summary
        if self.fmt == "json":
            emit_json({"summary": summary.as_dict()})
            return
        for line in group_lines(summary.groups):
            emit(line)
        totals, records, notes = summary.files, summary.records, summary.notes
        files = f"{summary.file_count} files: "
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
        counted = notes_text(notes, placeholders=False)
        if counted:
            line += f"; notes: {counted}"
        if notes.placeholders:
            line += (
                f"; {_plural(notes.placeholders, 'placeholder')} in "
                f"{_plural(notes.records_with_placeholders, 'record')}"
            )
        emit(line + (" (dry run: nothing written)" if self.dry_run else ""), err=True)
