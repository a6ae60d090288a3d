"""Exporting the records under paths as one table file: Parquet, JSON Lines or CSV.

The output is written atomically: to a temporary file beside it, renamed into place when
complete (a URL: sent as one object when complete), so a reader sees the old file or the new
one. A dataset (a folder of Parquet parts, written from a Dask cluster) is built beside its
folder and swapped in whole. Records that cannot be read, migrated or made rows are reported
and left out; the rest are written, in input order, the same with any number of jobs.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from evalreg.batch import parallel
from evalreg.batch.config import Config
from evalreg.batch.load import Problem
from evalreg.batch.tabulate import TableOptions, table_events
from evalreg.engine.registry import Registry
from evalreg.errors import TableError
from evalreg.io import remote
from evalreg.io.writers import atomic_writer

PART = "part-{:05d}.parquet"
_PART = re.compile(r"part-\d{5}\.parquet")
PART_GROUPS = 10
"""A dataset's part holds this many row groups before the next part begins."""


@dataclass(frozen=True)
class ExportOptions:
    """What to export, and how to write it."""

    table: TableOptions
    out: str
    fmt: str = "parquet"
    row_group_rows: int = 10_000
    dataset: bool = False
    """Write a folder of Parquet parts (`part-00000.parquet`, ...) rather than one file."""


@dataclass(frozen=True)
class Exported:
    """What an export wrote."""

    output: str
    rows: int
    failed: int
    files: int
    """Files read."""
    parts: int = 1
    """Files written (Parquet parts of a dataset)."""
    size: int | None = None
    """Bytes written (None where a store does not tell)."""


@contextlib.contextmanager
def _writer(out: str) -> Iterator[IO[bytes]]:
    """Return a stream whose bytes replace `out` (a path or URL) when the block ends well."""
    if remote.is_url(out) and not remote.is_local_url(out):
        with remote.url_writer(out, compress=False) as stream:
            yield stream
        return
    path = remote.local_path(out) if remote.is_url(out) else out
    with atomic_writer(path, compress=False) as stream:
        yield stream


class _Counts:
    def __init__(self) -> None:
        self.rows = self.failed = self.files = self.records = 0
        self._last: str | None = None

    def see(self, event: Any) -> None:
        if isinstance(event, tuple):
            if event[0] != self._last:
                self._last = event[0]
                self.files += 1
        elif isinstance(event, Problem):
            self.failed += 1
        else:
            self.rows += event.num_rows


def export_paths(
    registry: Registry,
    paths: Sequence[str],
    options: ExportOptions,
    *,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    config: Config | None = None,
    jobs: int = 1,
    runner: parallel.Runner | None = None,
) -> Iterator[Problem | tuple[str, int] | Exported]:
    """Export the records under `paths`; yield each problem, `(path, records)` as records are
    read (for progress displays), and last what was written. `config`: the project's
    configuration, whose include and exclude apply too.

    Raises:
        MissingExtraError: pyarrow is not installed.
        UnknownFamilyError, UnknownVersionError, TableError: as `evalreg.to_arrow`, before
            anything is read; TableError also for a dataset folder holding other files.
        OSError: the output cannot be written (nothing is left in its place).
    """
    from evalreg.tables.formats import open_sink

    spec = options.table.spec(registry)
    events = table_events(
        registry,
        paths,
        options.table,
        include=include,
        exclude=exclude,
        config=config,
        jobs=jobs,
        runner=runner,
    )
    counts = _Counts()
    if options.dataset:
        parts = yield from _dataset(options, spec.schema, events, counts)
    else:
        with _writer(options.out) as stream:
            sink = open_sink(options.fmt, stream, spec.schema, options.row_group_rows)  # type: ignore[arg-type]
            for event in events:
                counts.see(event)
                if isinstance(event, (Problem, tuple)):
                    yield event
                else:
                    sink.write(event)
            sink.close()
        parts = 1
    yield Exported(
        options.out,
        counts.rows,
        counts.failed,
        counts.files,
        parts,
        _size(options.out),
    )


def _size(out: str) -> int | None:
    if remote.is_url(out) and not remote.is_local_url(out):
        return None
    path = Path(remote.local_path(out) if remote.is_url(out) else out)
    if path.is_dir():
        return sum(p.stat().st_size for p in path.glob("part-*.parquet"))
    with contextlib.suppress(OSError):
        return path.stat().st_size
    return None


def _check_dataset_folder(out: str) -> None:
    """Refuse a dataset folder that holds anything but parts of an earlier export."""
    if remote.is_url(out) and not remote.is_local_url(out):
        found = remote.list_files(out.rstrip("/") + "/") or [] if remote.isdir(out) else []
        names = [name.rsplit("/", 1)[-1] for name in found]
    else:
        path = Path(remote.local_path(out) if remote.is_url(out) else out)
        if path.exists() and not path.is_dir():
            raise TableError(f"{out} is a file; a dataset is written as a folder of parts")
        names = [p.name for p in path.iterdir()] if path.is_dir() else []
    others = [n for n in names if not _PART.fullmatch(n)]
    if others:
        raise TableError(
            f"{out} holds files that are no parts of an export ({', '.join(sorted(others)[:3])}); "
            "write the dataset into a new or empty folder"
        )


def _dataset(
    options: ExportOptions, schema: Any, events: Iterator[Any], counts: _Counts
) -> Generator[Problem | tuple[str, int], None, int]:
    """Write the batches as Parquet parts of a dataset folder; return how many parts."""
    from evalreg.tables.formats import ParquetSink

    _check_dataset_folder(options.out)
    out = options.out
    stored = remote.is_url(out) and not remote.is_local_url(out)
    local = Path(remote.local_path(out) if remote.is_url(out) else out)
    staging: Path | None = None
    if not stored:
        from evalreg.io.folders import staging_folder

        local.parent.mkdir(parents=True, exist_ok=True)
        staging = staging_folder(local)
    limit = options.row_group_rows * PART_GROUPS
    parts = 0
    try:
        stack = contextlib.ExitStack()
        sink: ParquetSink | None = None
        held = 0
        for event in events:
            counts.see(event)
            if isinstance(event, (Problem, tuple)):
                yield event
                continue
            if sink is None:
                name = PART.format(parts)
                target = remote.join(out, name) if stored else str(staging / name)  # type: ignore[operator]
                stream = stack.enter_context(_writer(target))
                sink = ParquetSink(stream, schema, options.row_group_rows)
                parts += 1
            sink.write(event)
            held += event.num_rows
            if held >= limit:
                sink.close()
                stack.close()
                sink, held = None, 0
        if sink is None and parts == 0:  # no rows: one empty part keeps the schema
            target = remote.join(out, PART.format(0)) if stored else str(staging / PART.format(0))  # type: ignore[operator]
            stream = stack.enter_context(_writer(target))
            sink = ParquetSink(stream, schema, options.row_group_rows)
            parts = 1
        if sink is not None:
            sink.close()
        stack.close()
        if staging is not None:
            from evalreg.io.folders import swap_in

            swap_in(staging, local)
            staging = None
        else:
            _remove_stale_parts(out, parts)
    finally:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
    return parts


def _remove_stale_parts(out: str, parts: int) -> None:
    """Remove the parts of an earlier export beyond the `parts` just written to a store."""
    fs, root = remote.filesystem(out)
    with contextlib.suppress(Exception):
        for name in fs.ls(root, detail=False):
            base = os.path.basename(str(name).rstrip("/"))
            if _PART.fullmatch(base) and int(base[5:10]) >= parts:
                fs.rm(name)
