"""`evalreg migrate`: records to another version along the chain of migration steps."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from typing import Any

import click

from evalreg.cli.app import (
    EXIT_OK,
    EXIT_PROBLEMS,
    Context,
    cli,
    emit,
    emit_json,
    fail,
    pass_context,
    shown_path,
)
from evalreg.cli.options import (
    jobs_count,
    jobs_option,
    located,
    path_options,
    runner_for,
    scheduler_option,
)
from evalreg.cli.progress import progress_for, progress_option
from evalreg.errors import EvalregError


@cli.command("migrate")
@path_options
@click.option("--to", "to", required=True, metavar="VERSION", help="Target version, or `latest`.")
@click.option("--family", metavar="FAMILY", help="Treat every record as this family.")
@click.option(
    "--out",
    type=click.Path(file_okay=False),
    metavar="DIR",
    help="Write migrated files under DIR or a store URL (s3://, hf://, ...), mirroring the "
    "input tree.",
)
@click.option("--in-place", is_flag=True, help="Replace each local file atomically.")
@click.option(
    "--backup",
    metavar="SUFFIX",
    help="With --in-place, keep each original as FILE+SUFFIX (an existing one is not replaced).",
)
@click.option(
    "--overwrite-backup",
    is_flag=True,
    help="With --backup, replace an existing FILE+SUFFIX that differs from FILE.",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print the plan and a summary of each record's changes; write nothing.",
)
@click.option(
    "--set",
    "settings",
    multiple=True,
    metavar="NAME=VALUE",
    help="Set a step parameter; repeatable.",
)
@click.option(
    "--validate",
    "validate_mode",
    type=click.Choice(["final", "each", "none"]),
    default="final",
    show_default=True,
    help="Validate the result at the target, after every step, or not at all.",
)
@click.option(
    "--allow-loss",
    is_flag=True,
    help="Let steps drop values the target cannot hold (each is reported).",
)
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@jobs_option
@scheduler_option
@progress_option
@pass_context
def migrate_command(
    context: Context,
    paths: tuple[str, ...],
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    to: str,
    family: str | None,
    out: str | None,
    in_place: bool,
    backup: str | None,
    overwrite_backup: bool,
    dry_run: bool,
    settings: tuple[str, ...],
    validate_mode: str,
    allow_loss: bool,
    fmt: str,
    jobs: int | None,
    scheduler: str | None,
    progress: bool | None,
) -> None:
    """Migrate records to another version along the chain of migration steps.

    Files are written only when every record in them migrated (or was already current); a file
    already at the target is left untouched. Exit code 0 when every record migrated or was
    current and every file was written, 1 when some failed, 2 for usage errors.
    """
    from evalreg.batch.migrate import migrate_paths
    from evalreg.batch.migrate_file import FileMigration, Leftover, MigrateOptions, RecordMigration
    from evalreg.engine.steps import check_params, parse_params

    if sum(bool(x) for x in (out, in_place, dry_run)) != 1:
        fail("choose exactly one of --out DIR, --in-place or --dry-run")
    if backup is not None and not in_place:
        fail("--backup goes with --in-place")
    if backup is not None and (not backup or os.sep in backup or "/" in backup):
        fail(f"--backup takes a suffix such as .bak, not {backup!r}")
    if overwrite_backup and backup is None:
        fail("--overwrite-backup goes with --backup")
    if "-" in paths:
        fail("migrate reads files, not standard input; use evalreg.load() for streams")
    if in_place and any("://" in p for p in paths):
        fail("--in-place rewrites local files only; write URLs elsewhere with --out DIR|URL")
    registry = context.registry
    params = parse_params(settings)
    check_params(registry, params, family)
    if family is not None:
        registry.manifest(family)
        if to != "latest":
            registry.resolve_version(family, to)
    options = MigrateOptions(
        to=to,
        family=family,
        params=params,
        allow_loss=allow_loss,
        validate=validate_mode,  # type: ignore[arg-type]
        out=out,
        in_place=in_place,
        backup=backup,
        overwrite_backup=overwrite_backup,
        dry_run=dry_run,
        grouped=fmt == "text",  # text output counts a file's notes; JSON has a row per record
    )
    totals = {"written": 0, "unchanged": 0, "failed": 0, "planned": 0}
    records = {"migrated": 0, "current": 0, "failed": 0}
    planned: set[tuple[str, str, str]] = set()
    events = migrate_paths(
        registry,
        paths,
        options,
        include=include,
        exclude=exclude,
        jobs=jobs_count(jobs),
        runner=runner_for(scheduler, jobs),
    )
    notes = _NoteGroups()
    shown = progress_for("migrate", paths, include, exclude, progress)
    counted = shown.wrap(
        events, lambda e: (e.path, e.count) if isinstance(e, RecordMigration) else None
    )
    for event in counted:
        if isinstance(event, Leftover):
            _print_leftover(event, fmt)
            continue
        if isinstance(event, FileMigration):
            if fmt == "text" and event.status in ("written", "planned"):
                for line in notes.lines():
                    emit(line)
            notes.clear()
            totals[event.status] += 1
            records["migrated"] += event.migrated
            records["current"] += event.current
            records["failed"] += event.failed
            if fmt == "json":
                emit_json(
                    {
                        "file": event.path,
                        "output": event.output,
                        "status": event.status,
                        "migrated": event.migrated,
                        "current": event.current,
                        "failed": event.failed,
                        "message": event.message,
                    }
                )
            elif event.status in ("written", "failed"):
                note = f" ({event.message})" if event.message else ""
                emit(
                    f"{shown_path(event.path)}: {event.status}: {event.migrated} migrated, "
                    f"{event.current} current, {event.failed} failed{note}"
                )
            continue
        _print_record(event, fmt, dry_run, planned, registry, notes)
    files = f"{sum(totals.values())} files: "
    if dry_run:
        files += f"{totals['planned']} planned, {totals['failed']} with failures"
    else:
        files += (
            f"{totals['written']} written, {totals['unchanged']} unchanged, "
            f"{totals['failed']} failed"
        )
    summary = (
        f"{files}; records: {records['migrated']} migrated, {records['current']} current, "
        f"{records['failed']} failed"
    )
    if fmt == "json":
        emit_json({"summary": {"files": totals, "records": records}})
    else:
        emit(summary + (" (dry run: nothing written)" if dry_run else ""), err=True)
    sys.exit(EXIT_PROBLEMS if records["failed"] or totals["failed"] else EXIT_OK)


def _print_leftover(event: Any, fmt: str) -> None:
    """Print a temporary file of a dead process, removed (or that could not be)."""
    if fmt == "json":
        row = {"leftover": event.path, "pid": event.pid, "bytes": event.size}
        emit_json(row | {"removed": event.error is None, "error": event.error})
        return
    what = (
        f"temporary file of process {event.pid}, which is no longer running ({event.size:,} bytes)"
    )
    if event.error is None:
        emit(f"{event.path}: removed the {what}", err=True)
    else:
        emit(f"{event.path}: cannot remove the {what}: {event.error}; remove it by hand", err=True)


class _NoteGroups:
    """The notes of one file's records: each distinct note once, with how many records gave it.

    A JSONL file of a million lines that all moved the same field says so in one line.
    """

    def __init__(self) -> None:
        self.groups: dict[tuple[str, str], tuple[int | None, int]] = {}

    def add(self, path: str, line: int | None, notes: Iterable[Any], records: int = 1) -> None:
        """Count the notes of the record at `path`, `line` (and of the `records` - 1 after it)."""
        for note in notes:
            key = (path, note.describe(generalise=True))
            first, count = self.groups.get(key, (line, 0))
            self.groups[key] = (first, count + records)

    def lines(self) -> Iterator[str]:
        """Yield one line per distinct note, in the order they first came."""
        for (path, text), (first, count) in self.groups.items():
            if count == 1:
                yield f"{located(path, first)}: {text}"
                continue
            where = "" if first is None else f", first at line {first}"
            yield f"{located(path, None)}: {text} ({count:,} records{where})"

    def clear(self) -> None:
        """Forget the notes counted so far (a file is done)."""
        self.groups.clear()


def _print_record(
    event: Any,
    fmt: str,
    dry_run: bool,
    planned: set[tuple[str, str, str]],
    registry: Any,
    notes: _NoteGroups,
) -> None:
    result = event.result
    if fmt == "json":
        lines = [event.line] if event.line is None else range(event.line, event.line + event.count)
        for line in lines:
            _print_json_row(event, line, dry_run)
        return
    where = located(event.path, event.line)
    if result is None:
        emit(f"{where}: unreadable: {event.error}")
        return
    if dry_run and result.family and result.source and result.target:
        key = (result.family, result.source, result.target)
        if key not in planned and result.source != result.target:
            planned.add(key)
            try:
                chain = registry.plan(*key)
                emit(f"plan {result.family}: " + ", ".join(s.name for s in chain))
            except EvalregError as err:
                emit(f"plan {result.family}: {err}")
    if result.status == "failed":
        step = f" at step {result.failed_step}" if result.failed_step else ""
        emit(f"{where}: failed{step}: {result.error}")
        return
    notes.add(event.path, event.line, result.notes, event.count)
    if dry_run and result.status == "migrated":
        emit(f"{where}: {result.source} -> {result.target}: " + "; ".join(event.changes))


def _print_json_row(event: Any, line: int | None, dry_run: bool) -> None:
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
    if dry_run:
        row["changes"] = list(event.changes)
    emit_json(row)
