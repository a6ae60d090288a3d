"""Work over many files on all cores, with results in the order of the input.

The input is cut into units of work: runs of whole files (many small files travel together), and
line-aligned byte ranges of large JSONL files. A pool of processes handles the units and the parent
takes the results back in input order, so what it reports is what one process would report. Where
the platform can fork (and no other thread runs, which forking would not survive), workers inherit
the parent's registry; elsewhere each worker loads it again from the same directories. Small inputs
are handled in the calling process: a pool is not worth starting for them. A worker that dies
(`evalreg.batch.pool`) costs the unit it was working on, reported with the reason, not the run.
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import os
import threading
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, TypeVar

from evalreg.batch import signals
from evalreg.errors import MissingExtraError, WorkerError
from evalreg.io import remote
from evalreg.io.readers import file_kind, line_ranges

if TYPE_CHECKING:
    from multiprocessing.context import BaseContext

    from evalreg.engine.registry import Registry

R = TypeVar("R")
U = TypeVar("U")

POOL_MIN_BYTES = 8 << 20
"""Inputs smaller than this are handled in the calling process."""
UNIT_BYTES = 1 << 20
"""Whole files are grouped into units of about this size ..."""
UNIT_FILES = 256
"""... or of this many files, whichever comes first."""
RANGE_MIN_BYTES, RANGE_MAX_BYTES = 4 << 20, 16 << 20
"""A large JSONL file is cut into ranges of this size, eight per job where that fits."""


def cpu_count() -> int:
    """Return the number of cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


class Part(NamedTuple):
    """A whole file, or the byte range `[start, end)` of a JSONL file (ranges begin at a line).

    A named tuple: the parent makes one per file handed out, so it must cost next to nothing.
    """

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
    """Return whether a file may be cut into ranges: plain JSONL (not gzip, not standard input)."""
    # The cheap test first: the parent asks it of every file it hands out.
    return path.lower().endswith(".jsonl") and file_kind(path) == "jsonl"


def _size(path: str) -> int:
    try:
        return remote.size(path) if remote.is_url(path) else os.stat(path).st_size
    except (OSError, MissingExtraError):
        return 0  # reading it will report the problem


def plan(
    paths: Iterable[str],
    jobs: int,
    *,
    always: bool = False,
    range_max: int | None = None,
) -> tuple[list[str], Iterator[Unit] | None]:
    """Cut files into units of work for `jobs` processes, as they come.

    Returns every path and no units where one process is best: with one job, and for inputs
    too small to be worth a pool (found out by reading ahead until there is enough), unless
    `always` (another engine computes the units). Otherwise returns no paths and the units,
    which take the paths from `paths` as they are consumed; ranges of large JSONL files are at
    most `range_max` bytes (default and ceiling: `RANGE_MAX_BYTES`).
    """
    least = 0 if always else POOL_MIN_BYTES
    range_max = RANGE_MAX_BYTES if range_max is None else min(range_max, RANGE_MAX_BYTES)
    paths = iter(paths)
    ahead: list[tuple[str, int]] = []
    total = 0
    if jobs > 1 or always:
        for path in paths:
            ahead.append((path, _size(path)))
            total += ahead[-1][1]
            if total >= least:
                # Only files that may be cut into ranges need their true size from here on; the
                # others are grouped as if of the typical size seen so far. Sizing every file
                # would cost the parent, which hands out all the work, a tenth of a worker's.
                typical = total // len(ahead)
                rest = ((p, _size(p) if _splittable(p) else typical) for p in paths)
                return [], _units(itertools.chain(ahead, rest), jobs, range_max)
    return [path for path, _ in ahead] + list(paths), None


def _units(sized: Iterable[tuple[str, int]], jobs: int, range_max: int) -> Iterator[Unit]:
    """Yield runs of whole files, and each range of a large JSONL file as a unit of its own."""
    batch: list[Part] = []
    batch_bytes = 0
    for path, size in sized:
        chunk = min(max(size // (8 * jobs), RANGE_MIN_BYTES), range_max)
        if size > chunk and _splittable(path):
            try:
                ranges = line_ranges(path, size, chunk)
            except OSError:
                ranges = []
            if len(ranges) > 1:
                if batch:
                    yield tuple(batch)
                    batch, batch_bytes = [], 0
                for start, end in ranges:
                    yield (Part(path, start, end, last=end == size),)
                continue
        batch.append(Part(path))
        batch_bytes += size
        if batch_bytes >= UNIT_BYTES or len(batch) >= UNIT_FILES:
            yield tuple(batch)
            batch, batch_bytes = [], 0
    if batch:
        yield tuple(batch)


@contextlib.contextmanager
def frozen() -> Iterator[None]:
    """Keep the garbage collector off every object that exists before a run.

    A run parses records by the million, which sets off collections; each full one would walk
    the registry, the schemas and the compiled validators again, which outlive the run anyway.
    """
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Keep the garbage collector off for a while (as it was, afterwards): while a command starts
    (modules, a registry: thousands of objects that live as long as it, and no garbage), or
    while collection rules finish (structures as large as the run's summaries, all live), or
    while records become rows (no cycles, and the collector's passes cost a sixth of the run)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


# -- the pool ----------------------------------------------------------------------------------

START_METHOD: str | None = None
"""How to start workers; None: fork where the platform can and no other thread runs, else spawn."""

_registry: Registry | None = None


def _start_worker(directories: Sequence[str] | None, drafts: bool = False) -> None:
    """Set up a worker: its signals, its standard output, and its registry if not forked.

    A worker's standard output is its standard error: the parent alone writes the report, and
    what a step or rule prints must not land in it.
    """
    global _registry
    if directories is not None:
        signals.prepare_workers()  # started afresh: nothing was loaded
    signals.quiet_worker()
    with contextlib.suppress(OSError):
        os.dup2(2, 1)
    if directories is not None:
        from evalreg.engine.registry import load_registry

        _registry = load_registry(directories, builtin=False, drafts=drafts)


def _apply(unit: Any, function: Callable[..., R], args: tuple[Any, ...]) -> R:
    assert _registry is not None
    return function(_registry, unit, *args)


class Runner(Protocol):
    """Another engine that computes units of work (a Dask cluster: `evalreg.dask.DaskRunner`)."""

    @property
    def jobs(self) -> int:
        """Return how many units it computes at once."""
        ...

    def imap(
        self,
        function: Callable[..., R],
        units: Iterable[U],
        registry: Registry,
        args: tuple[Any, ...],
        lost: Callable[[U, str], R] | None = None,
    ) -> Generator[tuple[U, R], None, None]:
        """Yield each unit with `function(registry, unit, *args)`, in the order of `units`;
        a unit that cannot be computed gets `lost(unit, reason)`, if given."""
        ...


WINDOW_PER_JOB = 4
"""Units handed out ahead of the one whose result is awaited, per job: the results waiting to be
taken (a range's migrated lines, up to a few MB each) stay bounded in number."""


def imap(
    function: Callable[..., R],
    units: Iterable[U],
    registry: Registry,
    jobs: int,
    args: tuple[Any, ...] = (),
    *,
    runner: Runner | None = None,
    lost: Callable[[U, str], R] | None = None,
) -> Generator[tuple[U, R], None, None]:
    """Yield each unit with `function(registry, unit, *args)`, computed by `jobs` processes.

    Units are taken from `units` as workers are ready for them (at most `WINDOW_PER_JOB` per job
    ahead of the results taken), and come back in their order. `function`, the units and `args`
    must be picklable; the results cross a process boundary. With `runner`, it computes them.

    A worker that dies (killed by a signal, say) is replaced, and the unit it was working on gets
    `lost(unit, reason)` as its result, the reason being such as `worker process 1234 killed by
    signal 9 (SIGKILL; out of memory?)`; without `lost`, that is a `WorkerError`.

    Raises:
        WorkerError: a worker died without `lost`, or workers die as they start.
    """
    if runner is not None:
        yield from runner.imap(function, units, registry, args, lost)
        return
    import multiprocessing  # only when a pool starts: it costs start-up time

    from evalreg.batch.pool import Pool

    global _registry
    method = START_METHOD
    if method is None:
        forkable = "fork" in multiprocessing.get_all_start_methods()
        method = "fork" if forkable and threading.active_count() == 1 else "spawn"
    context: BaseContext = multiprocessing.get_context(method)
    signals.prepare_workers()
    initargs: tuple[Any, ...] = (None,)
    forked = method == "fork"
    if forked:
        _registry = registry
        gc.freeze()  # workers share the parent's objects: keep the collector from copying them
    else:
        initargs = (tuple(str(d) for d in registry.directories), registry.drafts)
    pool: Pool[U, R] = Pool(context, jobs, _start_worker, initargs, WINDOW_PER_JOB * jobs)
    finished = False
    try:
        yield from pool.imap(_apply, iter(units), (function, args), lost or _no_loss)
        finished = True
    finally:
        pool.stop(finished=finished)
        _registry = None
        if forked:
            gc.unfreeze()


def _no_loss(unit: Any, reason: str) -> Any:
    raise WorkerError(reason)
