"""Commands over detection: detect (each file's family and version) and status (an inventory).

`status` counts what `detect` decides, by family and version, and says what is behind the
latest or a required version: for a maintainer asking how much of a datastore needs migrating,
and for hooks that refuse files behind.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

import click

from evalreg.cli.app import (
    EXIT_OK,
    EXIT_PROBLEMS,
    Context,
    cli,
    emit,
    emit_json,
    json_text,
    pass_context,
    shown_path,
)
from evalreg.cli.options import path_options, project_config
from evalreg.cli.progress import progress_for, progress_option

if TYPE_CHECKING:
    from evalreg.batch.inventory import BehindFile, Inventory, Row


def _where(path: str, line: int | None) -> str:
    return shown_path(path) if line is None else f"{shown_path(path)}:{line}"


def _detection_json(check: Any) -> dict[str, Any]:
    detection = check.detection
    return {
        "path": check.path,
        "line": check.line,
        "status": detection.status if detection else "unreadable",
        "family": detection.family if detection else None,
        "version": detection.version if detection else None,
        "evidence": [str(e) for e in detection.evidence] if detection else [],
        "candidates": [{"family": c.family, "version": c.version} for c in detection.candidates]
        if detection
        else [],
        "reasons": list(detection.reasons) if detection else [],
        "error": check.error,
    }


def _grouped(checks: Iterable[Any]) -> Iterator[tuple[Any, int | None]]:
    """Group runs of JSONL lines with the same detection: yield (first check, last line)."""
    first: Any = None
    last: int | None = None
    for check in checks:
        if (
            first is not None
            and check.path == first.path
            and check.line is not None
            and first.line is not None
            and check.error is None
            and first.error is None
            and check.detection == first.detection
        ):
            last = check.line
            continue
        if first is not None:
            yield first, last
        first, last = check, None
    if first is not None:
        yield first, last


@cli.command("detect")
@path_options
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@progress_option
@pass_context
def detect_command(
    context: Context,
    paths: tuple[str, ...],
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    fmt: str,
    progress: bool | None,
) -> None:
    """Tell the family and version of every file (every line of JSONL files), and why.

    Consecutive JSONL lines with the same detection are shown as one range. Exit code 1 when a
    record is unreadable or its family or version cannot be decided.
    """
    from evalreg.batch.runs import detect_run

    run = detect_run(
        context.registry, paths, include=include, exclude=exclude, config=project_config()
    )
    shown = progress_for("detect", paths, include, exclude, progress)
    for check, last in _grouped(shown.wrap(run, lambda check: (check.path, 1))):
        if fmt == "json":
            row = _detection_json(check)
            row["last_line"] = last
            emit_json(row)
            continue
        where = _where(check.path, check.line) + (f"-{last}" if last else "")
        if check.error:
            emit(f"{where}: unreadable: {check.error}")
        else:
            emit(f"{where}: {check.detection.summary()}")
    summary = run.summary
    counts = summary.as_dict()
    line = (
        f"{counts['files']} files, {counts['records']} records: {counts['valid']} detected, "
        f"{counts['invalid']} undecided, {counts['unreadable']} unreadable"
    )
    if fmt == "json":
        emit_json({"summary": counts})
    else:
        emit(line, err=True)
    sys.exit(EXIT_OK if summary.ok else EXIT_PROBLEMS)


# -- status ------------------------------------------------------------------------------------

_STATES = {
    "ambiguous": "ambiguous (several families fit)",
    "unknown": "unknown (no family fits)",
    "unknown-version": "unknown version",
    "unreadable": "unreadable",
}


def _state(row: Row) -> str:
    if row.state == "latest":
        return "latest"
    if row.state == "draft":
        return f"draft (newer than the latest release {row.latest})"
    if row.state == "behind":
        required = f"behind required {row.required}, " if row.below_required else ""
        return f"{required}behind latest {row.latest}"
    return _STATES.get(row.state, row.state)


def _row_json(row: Row) -> dict[str, Any]:
    return {
        "family": row.family,
        "version": row.version,
        "state": row.state,
        "files": row.files,
        "records": row.records,
        "latest": row.latest,
        "required": row.required,
        "below_required": row.below_required,
    }


def _print_table(rows: list[Row]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(box=None, pad_edge=False, header_style="bold")
    for column in ("family", "version", "files", "records", "state"):
        table.add_column(column, no_wrap=True, justify="right" if column[-1] == "s" else "left")
    for row in rows:
        table.add_row(
            row.family or "-",
            row.version or "-",
            f"{row.files:,}",
            f"{row.records:,}",
            _state(row),
        )
    console = Console(width=200, highlight=False, soft_wrap=True)
    with console.capture() as captured:
        console.print(table)
    for line in captured.get().splitlines():
        emit(line.rstrip())


@cli.command("status")
@path_options
@click.option(
    "--require-latest",
    is_flag=True,
    help="Exit 1 when any record is behind its family's latest version.",
)
@click.option(
    "--require",
    "required",
    multiple=True,
    metavar="[FAMILY@]VERSION",
    help="Exit 1 when a record of FAMILY (without it: of any family that has VERSION) is at an "
    "older version; repeatable.",
)
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@progress_option
@pass_context
def status_command(
    context: Context,
    paths: tuple[str, ...],
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    require_latest: bool,
    required: tuple[str, ...],
    fmt: str,
    progress: bool | None,
) -> None:
    """Count the files and records of each family and version, and what is behind.

    One row per family and version (files, records, and whether the version is the latest),
    then what could not be decided or read; the counts are those of `evalreg detect`. With
    --require-latest or --require, the files with records behind a required version are
    listed, and the exit code is 1 if there are any. Undecided and unreadable records are
    counted, not judged: `evalreg validate` says what is wrong with them.
    """
    from evalreg.batch.check import check_paths
    from evalreg.batch.inventory import requirements, take_inventory

    registry = context.registry
    wanted = requirements(registry, required, latest=require_latest)
    checks = check_paths(
        registry, paths, include=include, exclude=exclude, validate=False, config=project_config()
    )
    shown = progress_for("status", paths, include, exclude, progress)
    inventory = take_inventory(shown.wrap(checks, lambda check: (check.path, 1)))
    rows = inventory.rows(registry, wanted)
    behind = list(inventory.behind_files(wanted))
    if fmt == "json":
        document = {
            "rows": [_row_json(row) for row in rows],
            "summary": inventory.summary(rows) | {"behind_required_files": len(behind)},
        }
        if wanted:
            document["required"] = dict(sorted(wanted.items()))
            document["fix"] = _fixes(registry, context, behind)
            document["behind_required"] = [
                {
                    "path": b.path,
                    "family": b.family,
                    "version": b.version,
                    "records": b.records,
                    "required": b.required,
                }
                for b in behind
            ]
        emit(json_text(document, indent=2))
    else:
        _print_table(rows)
        for b in behind:
            records = f"{b.records:,} record{'s' if b.records != 1 else ''}"
            emit(
                f"{_where(b.path, None)}: {b.family}@{b.version} ({records}), required {b.required}"
            )
        fixes = _fixes(registry, context, behind)
        if fixes:
            emit("to bring them to the required versions, run:" if len(fixes) > 1 else "to fix:")
            for command in fixes:
                emit(f"  {command}")
        _print_summary(inventory, rows, len(behind) if wanted else None)
    sys.exit(EXIT_PROBLEMS if behind else EXIT_OK)


def _fixes(registry: Any, context: Context, behind: list[BehindFile]) -> list[str]:
    """Return the `evalreg migrate` commands that bring the files behind to their versions.

    One command per required version, naming its files. A file whose records of several
    families are each required at their latest version is migrated `--to latest`.
    """
    wanted: dict[str, set[str]] = {}
    latest: dict[str, bool] = {}
    for b in behind:
        wanted.setdefault(b.path, set()).add(b.required)
        at_latest = b.required == registry.latest(b.family)
        latest[b.path] = latest.get(b.path, True) and at_latest
    groups: dict[str, list[str]] = {}
    for path, versions in wanted.items():
        if len(versions) > 1 and latest[path]:
            versions = {"latest"}
        for version in sorted(versions):
            groups.setdefault(version, []).append(path)
    words = ["evalreg", *_run_options(context)]
    return [
        shlex.join([*words, "migrate", "--in-place", "--to", version, *map(shown_path, paths)])
        for version, paths in groups.items()
    ]


def _run_options(context: Context) -> list[str]:
    """Return the options of this run that a command to fix it needs too (registries, config)."""
    words = [w for d in context.registry_dirs for w in ("--registry", d)]
    given = click.get_current_context().meta.get("evalreg.config", {})
    if given.get("config_file"):
        return [*words, "--config", given["config_file"]]
    return words


def _print_summary(inventory: Inventory, rows: list[Row], behind_required: int | None) -> None:
    counts = inventory.summary(rows)
    line = (
        f"{counts['files']:,} files, {counts['records']:,} records: "
        f"{counts['detected']:,} detected ({counts['behind_latest']:,} behind the latest "
        f"version, in {counts['behind_latest_files']:,} files), {counts['undecided']:,} "
        f"undecided, {counts['unreadable']:,} unreadable"
    )
    if behind_required is not None:
        line += f"; {behind_required:,} files behind a required version"
    emit(line, err=True)
