"""`evalreg export`: records of mixed versions as one typed table file (Parquet, JSONL, CSV)."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
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
)
from evalreg.cli.options import (
    jobs_count,
    jobs_option,
    located,
    path_options,
    project_config,
    runner_for,
    scheduler_option,
)
from evalreg.cli.progress import progress_for, progress_option

_SUFFIXES = {".parquet": "parquet", ".pq": "parquet", ".jsonl": "jsonl", ".csv": "csv"}


def _format_of(out: str, fmt: str | None) -> str:
    if fmt is not None:
        return fmt
    for suffix, found in _SUFFIXES.items():
        if out.lower().endswith(suffix):
            return found
    return "parquet"


@cli.command("export")
@path_options
@click.option("--family", required=True, metavar="FAMILY", help="The family of the table.")
@click.option(
    "--to",
    "to",
    default="latest",
    show_default=True,
    metavar="VERSION",
    help="The version whose columns the table has; every record is migrated to it.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["parquet", "jsonl", "csv"]),
    default=None,
    help="The file format (default: from the name of --out, else parquet). CSV holds flat "
    "columns: nested values are written as JSON text.",
)
@click.option(
    "--out",
    required=True,
    metavar="FILE|URL",
    help="Write the table here (a store URL such as s3://... or hf://...), atomically; with "
    "--scheduler, a folder of Parquet parts.",
)
@click.option(
    "--explode",
    metavar="POINTER",
    help="One row per item of this array (such as /evaluation_results), beside the record's "
    "other fields.",
)
@click.option(
    "--provenance",
    is_flag=True,
    help="Add the columns _source, _line, _family, _version, _target and _notes.",
)
@click.option(
    "--row-group-size",
    type=click.IntRange(min=1),
    default=10_000,
    show_default=True,
    metavar="N",
    help="Rows per Parquet row group.",
)
@click.option(
    "--set",
    "settings",
    multiple=True,
    metavar="NAME=VALUE",
    help="Set a migration step parameter; repeatable.",
)
@click.option(
    "--allow-loss",
    is_flag=True,
    help="Let migration steps drop values the target cannot hold (each is a note).",
)
@click.option(
    "--report",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="How problems are printed: a line each, or a JSON object each.",
)
@jobs_option
@scheduler_option
@progress_option
@pass_context
def export_command(
    context: Context,
    paths: tuple[str, ...],
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    family: str,
    to: str,
    fmt: str | None,
    out: str,
    explode: str | None,
    provenance: bool,
    row_group_size: int,
    settings: tuple[str, ...],
    allow_loss: bool,
    report: str,
    jobs: int | None,
    scheduler: str | None,
    progress: bool | None,
) -> None:
    """Export records of any versions as one table of a version's columns.

    Every record under PATH... (files, folders, globs, URLs) is migrated to --to and made a row
    of that version's table (`evalreg.arrow_schema`); in folders, the family's own files are
    read unless --include says otherwise. A record that cannot be read, migrated or made a row
    is named and left out. Exit code 0 when every record became a row and the file was written,
    1 when some were left out, 2 for usage errors.
    """
    from evalreg.batch.export import Exported, ExportOptions, export_paths
    from evalreg.batch.load import Problem
    from evalreg.batch.tabulate import TableOptions, default_include
    from evalreg.engine.steps import check_params, parse_params

    if "-" in paths:
        fail("export reads files, not standard input; use evalreg.to_arrow() for streams")
    fmt = _format_of(out, fmt)
    if scheduler is not None and fmt != "parquet":
        fail("--scheduler writes a folder of Parquet parts: use --format parquet")
    _return_freed_memory()
    registry = context.registry
    registry.manifest(family)
    registry.resolve_version(family, to)
    params = parse_params(settings)
    check_params(registry, params, family)
    table = TableOptions(family, to, explode, provenance, params, allow_loss)
    options = ExportOptions(table, out, fmt, row_group_size, dataset=scheduler is not None)
    include = tuple(default_include(registry, family, include))
    events = export_paths(
        registry,
        paths,
        options,
        include=include,
        exclude=exclude,
        config=project_config(),
        jobs=jobs_count(jobs),
        runner=runner_for(scheduler, jobs),
    )
    shown = progress_for("export", paths, include, exclude, progress)
    done: Exported | None = None
    try:
        with _pandas_kept_out(scheduler is None):
            for event in shown.wrap(events, lambda e: e if isinstance(e, tuple) else None):
                if isinstance(event, Problem):
                    _print_problem(event, report)
                elif isinstance(event, Exported):
                    done = event
    except OSError as err:
        fail(f"cannot write {out}: {err.strerror or err}; nothing was written", EXIT_PROBLEMS)
    assert done is not None
    _summary(done, fmt, report)
    sys.exit(EXIT_PROBLEMS if done.failed else EXIT_OK)


def _return_freed_memory() -> None:
    """Have pyarrow allocate with the system allocator, which gives freed memory back, rather
    than keep it for reuse: a long export then stays within its bounds (workers inherit it)."""
    import pyarrow as pa

    pa.set_memory_pool(pa.system_memory_pool())


class _NoPandas:
    """A module finder that has `import pandas` fail."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name == "pandas" or name.startswith("pandas."):
            raise ImportError("evalreg export makes no use of pandas")


@contextlib.contextmanager
def _pandas_kept_out(active: bool) -> Iterator[None]:
    """Have `import pandas` fail while the block runs (in the workers forked meanwhile too).

    pyarrow imports pandas, if it is installed, as it builds arrays from Python values (to tell
    pandas objects apart): a quarter of a second and some 50 MB in every process that makes
    rows, for nothing here, where the values are rows. Not with a Dask cluster (`active`
    false), whose client may want pandas; nor where pandas is imported already.
    """
    if not active or "pandas" in sys.modules:
        yield
        return
    finder = _NoPandas()
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)


def _print_problem(problem: Any, report: str) -> None:
    """Print a record left out, as `evalreg migrate` prints one that failed."""
    if report == "json":
        emit_json(
            {
                "path": problem.source,
                "line": problem.line,
                "status": problem.kind,
                "family": problem.family,
                "error": problem.message,
                "failed_step": problem.step,
            }
        )
        return
    where = located(problem.source, problem.line)
    if problem.kind == "unreadable":
        emit(f"{where}: unreadable: {problem.message}")
    else:
        step = f" at step {problem.step}" if problem.step else ""
        emit(f"{where}: failed{step}: {problem.message}")


def _summary(done: Any, fmt: str, report: str) -> None:
    if report == "json":
        emit_json(
            {
                "summary": {
                    "output": done.output,
                    "format": fmt,
                    "files": done.files,
                    "rows": done.rows,
                    "failed": done.failed,
                    "parts": done.parts,
                    "bytes": done.size,
                }
            }
        )
        return
    size = f", {done.size / 1e6:,.1f} MB" if done.size is not None else ""
    parts = f" in {done.parts} parts" if done.parts > 1 else ""
    emit(
        f"{done.files:,} files: {done.rows:,} rows written to {done.output} ({fmt}{parts}{size}); "
        f"{done.failed:,} records failed",
        err=True,
    )
