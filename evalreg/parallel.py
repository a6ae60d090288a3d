"""Work over many files on all cores, with results in the order of the input.

The input is cut into units of work: runs of whole files (many small files travel together), and
line-aligned byte ranges of large JSONL files. A pool of processes handles the units and the parent
takes the results back in input order, so what it reports is what one process would report. Where
the platform can fork, workers inherit the parent's registry; elsewhere each worker loads it again
from the same directories. Small inputs are handled in the calling process: a pool is not worth
starting for them.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from evalreg.readers import STDIN, file_kind, is_gzip, line_ranges

if TYPE_CHECKING:
    from multiprocessing.context import BaseContext

    from evalreg.registry import Registry

R = TypeVar("R")

POOL_MIN_BYTES = 8 << 20
"""Inputs smaller than this are handled in the calling process."""
UNIT_BYTES = 1 << 20
"""Whole files are grouped into units of about this size ..."""
UNIT_FILES = 256
"""... or of this many files, whichever comes first."""
RANGE_MIN_BYTES, RANGE_MAX_BYTES = 4 << 20, 64 << 20
"""A JSONL file is cut into ranges of this size (at least eight per job where it is large)."""


def cpu_count() -> int:
    """Return the number of cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


@dataclass(frozen=True)
class Part:
    """A whole file, or the byte range `[start, end)` of a JSONL file (ranges begin at a line)."""

    path: str
    start: int = 0
    end: int | None = None
    last: bool = True
    """Whether this part ends its file (always true for a whole file)."""

    @property
    def whole(self) -> bool:
        """Return whether the part is the whole file."""
        return self.end is None


Unit = tuple[Part, ...]


def _splittable(path: str) -> bool:
    return file_kind(path) == "jsonl" and not is_gzip(path) and path != STDIN


def plan(paths: Sequence[str], jobs: int) -> list[Unit] | None:
    """Cut the files into units of work for `jobs` processes, or None where one process is best.

    One process is best with one job, with standard input among the paths, and for inputs too
    small to be worth a pool.
    """
    if jobs <= 1 or STDIN in paths:
        return None
    sizes = []
    for path in paths:
        try:
            sizes.append(os.stat(path).st_size)
        except OSError:
            sizes.append(0)  # reading it will report the problem
    total = sum(sizes)
    if total < POOL_MIN_BYTES:
        return None
    chunk = min(max(total // (8 * jobs), RANGE_MIN_BYTES), RANGE_MAX_BYTES)
    units: list[Unit] = []
    batch: list[Part] = []
    batch_bytes = 0
    for path, size in zip(paths, sizes, strict=True):
        if size > chunk and _splittable(path):
            if batch:
                units.append(tuple(batch))
                batch, batch_bytes = [], 0
            try:
                ranges = line_ranges(path, size, chunk)
            except OSError:
                ranges = []
            if len(ranges) > 1:
                units += [(Part(path, start, end, last=end == size),) for start, end in ranges]
                continue
        batch.append(Part(path))
        batch_bytes += size
        if batch_bytes >= UNIT_BYTES or len(batch) >= UNIT_FILES:
            units.append(tuple(batch))
            batch, batch_bytes = [], 0
    if batch:
        units.append(tuple(batch))
    return units if len(units) > 1 else None


# -- the pool ----------------------------------------------------------------------------------

_registry: Registry | None = None


def _load_registry(directories: Sequence[str]) -> None:
    """Load the registry in a worker that was not forked from the parent."""
    global _registry
    from evalreg.registry import load_registry

    _registry = load_registry(directories, builtin=False)


def _call(task: tuple[Callable[..., R], Any, tuple[Any, ...]]) -> R:
    function, unit, args = task
    assert _registry is not None
    return function(_registry, unit, *args)


def imap(
    function: Callable[..., R],
    units: Iterable[Any],
    registry: Registry,
    jobs: int,
    args: tuple[Any, ...] = (),
) -> Iterator[R]:
    """Yield `function(registry, unit, *args)` for every unit, computed by `jobs` processes.

    Results come back in the order of `units`. `function` and `args` must be picklable; the
    results should be small (problems, counts), since they cross a process boundary.
    """
    global _registry
    context: BaseContext
    initializer: Callable[..., None] | None = None
    initargs: tuple[Any, ...] = ()
    if "fork" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("fork")
        _registry = registry
    else:
        context = multiprocessing.get_context()
        initializer = _load_registry
        initargs = (tuple(str(d) for d in registry.directories),)
    try:
        with context.Pool(jobs, initializer, initargs) as pool:
            yield from pool.imap(_call, ((function, unit, args) for unit in units))
    finally:
        _registry = None
