"""Options shared by the commands over records (detect, status, validate, migrate)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from evalreg.cli.app import shown_path

F = TypeVar("F", bound=Callable[..., Any])

_path_options = [
    click.argument("paths", nargs=-1, required=True, metavar="PATH..."),
    click.option(
        "--include",
        multiple=True,
        metavar="GLOB",
        help="In directories, read only files matching GLOB (default: *.json, *.jsonl, *.yaml, "
        "*.yml and their .gz forms); repeatable.",
    ),
    click.option(
        "--exclude", multiple=True, metavar="GLOB", help="Skip files matching GLOB; repeatable."
    ),
]


def path_options(function: F) -> F:
    """Add the PATH arguments and --include/--exclude."""
    for option in reversed(_path_options):
        function = option(function)
    return function


jobs_option = click.option(
    "--jobs",
    "-j",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="Use N processes on large inputs (default: all cores); the output is the same.",
)


def jobs_count(jobs: int | None) -> int:
    from evalreg.batch.parallel import cpu_count

    return cpu_count() if jobs is None else jobs


scheduler_option = click.option(
    "--scheduler",
    metavar="ADDRESS",
    default=None,
    help="Run on the Dask cluster whose scheduler is at ADDRESS (tcp://HOST:PORT), or `local` "
    "for a local cluster of --jobs workers; the output is the same (needs evalreg[dask]).",
)


def runner_for(scheduler: str | None, jobs: int | None) -> Any:
    """Return the runner of a Dask cluster (closed with the command), or None without one."""
    if scheduler is None:
        return None
    from evalreg.dask import connect

    return click.get_current_context().with_resource(connect(scheduler, jobs_count(jobs)))


def located(path: str, line: int | None) -> str:
    """Return `path` as shown in output, with `:line` for a record of a JSONL file."""
    return shown_path(path) if line is None else f"{shown_path(path)}:{line}"
