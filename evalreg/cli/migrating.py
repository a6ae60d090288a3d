"""`evalreg migrate`: records to another version along the chain of migration steps."""

from __future__ import annotations

import os
import sys

import click

from evalreg.cli.app import EXIT_OK, EXIT_PROBLEMS, Context, cli, fail, pass_context
from evalreg.cli.migrate_report import MigrationReport
from evalreg.cli.options import (
    jobs_count,
    jobs_option,
    path_options,
    project_config,
    runner_for,
    scheduler_option,
)
from evalreg.cli.progress import progress_for, progress_option


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
    help="Print the plan and what a run would report of each file; write nothing.",
)
@click.option(
    "--diff",
    is_flag=True,
    help="Also print every difference between each migrated record and its input.",
)
@click.option(
    "--verbose",
    "-v",
    is_flag=True,
    help="List every note of every record at its line, rather than each distinct note once.",
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
    diff: bool,
    verbose: bool,
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
    already at the target is left untouched. Every change a step makes is reported: values
    added (defaults, placeholders, --set values), moved, renamed, converted, dropped and lost.
    Exit code 0 when every record migrated or was current and every file was written, 1 when
    some failed, 2 for usage errors.
    """
    from evalreg.batch.migrate import migrate_run
    from evalreg.batch.migrate_file import FileMigration, Leftover, MigrateOptions, RecordMigration
    from evalreg.engine.steps import check_params, parse_params

    if [out is not None, in_place, dry_run].count(True) != 1:
        fail("choose exactly one of --out DIR, --in-place or --dry-run")
    if backup is not None and not in_place:
        fail("--backup goes with --in-place")
    if backup is not None and (not backup or os.sep in backup or "/" in backup):
        fail(f"--backup takes a suffix such as .bak, not {backup!r}")
    if overwrite_backup and backup is None:
        fail("--overwrite-backup goes with --backup")
    if "-" in paths:
        fail("migrate reads files, not standard input; use evalreg.load() for streams")
    if out is not None and out.lower().startswith("memory://"):
        fail(
            "--out memory:// keeps files in this process's memory, gone when the command ends; "
            "give a folder or a store URL (memory:// is for the Python API)"
        )
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
        diff=diff,
    )
    run = migrate_run(
        registry,
        paths,
        options,
        include=include,
        exclude=exclude,
        jobs=jobs_count(jobs),
        runner=runner_for(scheduler, jobs),
        config=project_config(),
        # Text output says each distinct note once (unless it lists them all); JSON every one.
        notes="grouped" if fmt == "text" and not verbose else "each",
    )
    report = MigrationReport(
        fmt, run.summary, dry_run=dry_run, verbose=verbose, diff=diff, registry=registry
    )
    shown = progress_for("migrate", paths, include, exclude, progress)
    counted = shown.wrap(
        run, lambda e: (e.path, e.count) if isinstance(e, RecordMigration) else None
    )
    for event in counted:
        if isinstance(event, Leftover):
            report.leftover(event)
        elif isinstance(event, FileMigration):
            report.file(event)
        else:
            report.record(event)
    report.end()
    sys.exit(EXIT_OK if run.summary.ok else EXIT_PROBLEMS)
