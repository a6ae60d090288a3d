"""Options shared by the commands over records (detect, status, validate, migrate)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from evalreg.cli.app import emit, fail, shown_path

if TYPE_CHECKING:
    from evalreg.batch.config import Config

F = TypeVar("F", bound=Callable[..., Any])
_CONFIG = "evalreg.config"
"""Where a run keeps what --config and --isolated said, then the configuration (`ctx.meta`)."""


def _remember(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    if value:
        ctx.meta.setdefault(_CONFIG, {})[param.name] = value
    return value


def project_config() -> Config:
    """Return the configuration of this run: the file --config names, none with --isolated,
    else the nearest `evalreg.toml` or `[tool.evalreg]` from the working folder upwards."""
    from evalreg.batch.config import Config, find_config, load_config

    meta = click.get_current_context().meta
    given = meta.setdefault(_CONFIG, {})
    found = given.get("config")
    if isinstance(found, Config):
        return found
    if given.get("config_file") and given.get("isolated"):
        fail("--config and --isolated exclude each other")
    if given.get("isolated"):
        config = Config()
    elif given.get("config_file"):
        config = load_config(given["config_file"])
    else:
        config = find_config()
    for note in config.notes:
        emit(f"evalreg: warning: {note}", err=True)
    given["config"] = config
    return config


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
    click.option(
        "--config",
        "config_file",
        type=click.Path(dir_okay=False),
        metavar="FILE",
        expose_value=False,
        callback=_remember,
        help="Read the configuration from FILE (evalreg.toml, or a pyproject.toml's "
        "[tool.evalreg]) instead of the nearest one from the working folder upwards.",
    ),
    click.option(
        "--isolated",
        is_flag=True,
        expose_value=False,
        callback=_remember,
        help="Read no configuration file.",
    ),
]


def path_options(function: F) -> F:
    """Add the PATH arguments, --include/--exclude and --config/--isolated (see
    `project_config`)."""
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
