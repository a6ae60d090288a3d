"""evalreg on Dask: records as bags, and the command line's work on a cluster.

    import evalreg.dask as ed
    records = ed.read_records(["hf://datasets/org/runs/**/*.jsonl"])   # a dask.bag.Bag of Items
    problems = ed.validate(records).filter(lambda check: check.status != "valid")

`read_records` turns paths, URLs and URL globs into a bag of `Item`s (`path`, `line`, `record`,
`error`), one partition per run of small files or per line-aligned byte range of a large JSONL
file, with every line number that of the whole file. `detect`, `validate` and `migrate` map a bag
of items to a bag of outcomes (`RecordCheck`, `RecordMigration`), so evalreg composes with the
rest of a Dask computation; `to_dataframe` makes them a Dask DataFrame of one version's typed
columns (its meta from the version's Arrow schema; `dask.dataframe` comes with the `tables`
extra). `DaskRunner` runs `validate_paths` and `migrate_paths` (the command
line's `--scheduler`) on a cluster's workers, with the same results in the same order as one
process. Workers need evalreg (the same version) and the registry directories in use; the
built-in one is each worker's own.

Needs the `dask` extra (`dask[bag]` and `distributed`). A layer of its own between `evalreg.cli`
(its only importer in evalreg) and the rooms it uses.

May import: `evalreg.batch`, `evalreg.engine`, `evalreg.registry`, `evalreg.io`,
`evalreg.errors`; never `evalreg.cli` or `evalreg.publish`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import operator
import warnings
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from evalreg.batch import parallel
from evalreg.batch.migrate_file import RecordMigration
from evalreg.batch.records import RecordCheck, check_item
from evalreg.batch.walk import iter_files
from evalreg.engine.registry import Registry, load_registry
from evalreg.errors import (
    ClusterError,
    ClusterLostError,
    EvalregError,
    MissingExtraError,
    NoWorkersError,
)
from evalreg.io.readers import Item, RangeItems, read_items
from evalreg.registry.core import builtin_directory

try:
    import dask.bag
    import distributed
    from dask.delayed import delayed
except ImportError as err:
    raise MissingExtraError("dask", "dask") from err

if TYPE_CHECKING:
    from dask.bag import Bag
    from dask.delayed import Delayed

R = TypeVar("R")
U = TypeVar("U")

__all__ = [
    "DaskRunner",
    "connect",
    "detect",
    "migrate",
    "read_records",
    "to_dataframe",
    "validate",
]

CONNECT_TIMEOUT = 30
"""Seconds to wait for a Dask scheduler to answer."""
WORKER_WAIT = 60
"""Seconds to wait for a Dask scheduler to have at least one worker."""

# -- registries on workers -----------------------------------------------------------------------

Directories = tuple[tuple[str | None, ...], bool]
"""Registry directories as sent to workers (None stands for the worker's own built-in one), and
whether "latest" includes drafts."""
_registries: dict[Directories, Registry] = {}


def _portable(registry: Registry | None) -> Directories:
    """Return the directories of `registry` (default: the built-in one) as sent to workers."""
    if registry is None:
        return ((None,), False)
    builtin = builtin_directory()
    paths = tuple(None if d == builtin else str(d) for d in registry.directories)
    return (paths, registry.drafts)


def _registry(directories: Directories) -> Registry:
    """Return the registry of `directories` in this process, loaded once."""
    found = _registries.get(directories)
    if found is None:
        folders, drafts = directories
        paths = [builtin_directory() if d is None else d for d in folders]
        found = _registries[directories] = load_registry(paths, builtin=False, drafts=drafts)
    return found


def _run(
    function: Callable[..., R], unit: Any, args: tuple[Any, ...], directories: Directories
) -> R:
    """Compute one unit of work on a worker."""
    with parallel.frozen():
        return function(_registry(directories), unit, *args)


# -- the command line's work on a cluster -------------------------------------------------------


class DaskRunner:
    """Computes units of work of `validate_paths` and `migrate_paths` on a Dask cluster.

    Units are submitted at most `parallel.WINDOW_PER_JOB` per worker thread ahead of the result
    awaited, and their results are taken in the order of the units.
    """

    def __init__(self, client: distributed.Client, address: str = "") -> None:
        self.client = client
        self.address = address or str(getattr(client.scheduler, "address", ""))
        threads = client.nthreads()
        self._jobs = max(1, sum(threads.values()))

    @property
    def jobs(self) -> int:
        """Return how many units the cluster computes at once (its worker threads)."""
        return self._jobs

    def imap(
        self,
        function: Callable[..., R],
        units: Iterable[U],
        registry: Registry,
        args: tuple[Any, ...],
        lost: Callable[[U, str], R] | None = None,
    ) -> Generator[tuple[U, R], None, None]:
        """Yield each unit with `function(registry, unit, *args)`, in the order of `units`.

        A unit whose workers kept dying (Dask tries it on others first) gets `lost(unit,
        reason)` as its result, if given.

        Raises:
            ClusterLostError: the scheduler went away before the last result.
        """
        directories = _portable(registry)
        window = parallel.WINDOW_PER_JOB * self.jobs
        pending: deque[tuple[U, distributed.Future[R]]] = deque()
        try:
            for unit in units:
                future = self.client.submit(_run, function, unit, args, directories, pure=False)
                pending.append((unit, future))
                if len(pending) >= window:
                    yield self._result(pending, lost)
            while pending:
                yield self._result(pending, lost)
        finally:
            for _, future in pending:
                with contextlib.suppress(Exception):
                    future.cancel()

    def _result(
        self, pending: deque[tuple[U, distributed.Future[R]]], lost: Callable[[U, str], R] | None
    ) -> tuple[U, R]:
        """Wait for the first pending unit's result (see `imap`)."""
        unit, future = pending[0]
        try:
            result = future.result()
        except distributed.KilledWorker as err:
            if lost is None:
                raise
            result = lost(unit, f"the Dask workers computing it died ({err})")
        except Exception as err:
            if self.client.status == "running" and not isinstance(err, _LOST):
                raise  # a fault of the work itself
            files = {part.path for done, _ in pending for part in _parts(done)}
            reason = str(err).splitlines()[0] if str(err) else type(err).__name__
            if isinstance(err, _LOST):
                reason = "the connection to it was lost"
            raise ClusterLostError(self.address, reason, len(files)) from None
        pending.popleft()
        return unit, result


@contextlib.contextmanager
def connect(address: str, jobs: int = 1) -> Iterator[DaskRunner]:
    """Connect to the Dask scheduler at `address`, or with `local` start a local cluster.

    A local cluster has `jobs` worker processes of one thread each, on 127.0.0.1.

    Raises:
        ClusterError: the scheduler cannot be reached, or the cluster cannot start.
    """
    for name in ["distributed", *logging.root.manager.loggerDict]:  # its errors are ours to say
        if name.split(".")[0] == "distributed":
            logging.getLogger(name).setLevel(logging.CRITICAL)
    with contextlib.ExitStack() as stack:
        try:
            if address == "local":
                # Its web server takes another port when the usual one is taken, with a warning.
                stack.enter_context(warnings.catch_warnings())
                warnings.simplefilter("ignore")
                cluster = distributed.LocalCluster(
                    n_workers=jobs,
                    threads_per_worker=1,
                    processes=True,
                    host="127.0.0.1",
                    dashboard_address=None,
                    silence_logs=logging.ERROR,
                )
                stack.enter_context(cluster)
                client = stack.enter_context(distributed.Client(cluster))
            else:
                client = stack.enter_context(distributed.Client(address, timeout=CONNECT_TIMEOUT))
        except (OSError, TimeoutError, ValueError) as err:
            reason = str(err).splitlines()[0] if str(err) else type(err).__name__
            raise ClusterError(address, reason) from err
        try:
            client.wait_for_workers(1, timeout=WORKER_WAIT)
        except (OSError, TimeoutError) as err:
            raise NoWorkersError(address, WORKER_WAIT) from err
        yield DaskRunner(client, address)


_CANCELLED = (asyncio.CancelledError, concurrent.futures.CancelledError)
_LOST = (OSError, TimeoutError, *_CANCELLED)
"""What waiting for a result raises when the scheduler is gone (its connection closed, the
futures cancelled)."""


def _parts(unit: Any) -> tuple[parallel.Part, ...]:
    """Return the parts of a unit of work (migrating sends it with its outputs)."""
    if unit and isinstance(unit[0], parallel.Part):
        return tuple(unit)
    if unit and isinstance(unit[0], tuple):
        return _parts(unit[0])
    return ()


# -- bags of records -----------------------------------------------------------------------------


def _read_files(unit: parallel.Unit) -> list[Item]:
    """Read the records of whole files."""
    return [_lean(item) for part in unit for item in read_items(part.path)]


def _read_range(part: parallel.Part) -> tuple[list[Item], int]:
    """Read the records of a range of a JSONL file, numbered from 1; return them and its lines."""
    assert part.end is not None
    items = RangeItems(part.path, part.start, part.end)
    return [_lean(item) for item in items], items.lines


def _lean(item: Item) -> Item:
    """Return an item without its raw bytes, which a bag need not carry."""
    return item if item.raw is None else Item(item.path, item.line, item.record, item.error)


def _shift(items: list[Item], lines: int) -> list[Item]:
    """Return items `lines` lines further down their file."""
    if not lines:
        return items
    return [
        Item(i.path, None if i.line is None else i.line + lines, i.record, i.error) for i in items
    ]


def read_records(
    paths: str | Sequence[str],
    *,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    blocksize: int = parallel.RANGE_MAX_BYTES,
) -> Bag:
    """Return a bag of the records (`Item`s) of every file under paths, URLs and URL globs.

    The files are found now, walked as `evalreg validate` walks them; they are read when the bag
    is computed. A partition holds a run of small files, or a line-aligned range (about
    `blocksize` bytes) of a large plain JSONL file, and line numbers are those of the whole
    file. Unreadable files and lines are items with an `error`, in their place.

    Raises:
        MissingExtraError: a URL's protocol needs a package that is not installed.
    """
    roots = [paths] if isinstance(paths, str) else list(paths)
    _, units = parallel.plan(
        iter_files(roots, include, exclude), 1, always=True, range_max=blocksize
    )
    partitions: list[Delayed] = []
    offset: Any = 0
    for unit in units or ():
        part = unit[0]
        if part.whole:
            partitions.append(delayed(_read_files, pure=True)(unit))
            continue
        read = delayed(_read_range, pure=True)(part)
        partitions.append(delayed(_shift, pure=True)(read[0], offset))
        # The next range of the file starts after this one's lines: a chain of small sums.
        offset = 0 if part.last else delayed(operator.add, pure=True)(offset, read[1])
    if not partitions:
        return dask.bag.from_sequence([], npartitions=1)
    return dask.bag.from_delayed(partitions)


def _check_partition(
    items: Iterable[Item],
    directories: Directories,
    family: str | None,
    version: str | None,
    validate: bool,
) -> list[RecordCheck]:
    registry = _registry(directories)
    return [
        check_item(registry, item, family=family, version=version, validate=validate)
        for item in items
    ]


def validate(
    items: Bag,
    *,
    family: str | None = None,
    version: str | None = None,
    registry: Registry | None = None,
) -> Bag:
    """Return a bag of the `RecordCheck` of every item: detected, then validated at its version.

    `family` and `version` force them, as `evalreg validate --family --version` does. The checks
    are those of records against their schemas; rules across records and files (companions,
    duplicates, datastore layout) are `evalreg validate`'s.
    """
    if version is not None and family is None:
        raise EvalregError("a version needs its family")
    directories = _portable(registry)
    return items.map_partitions(_check_partition, directories, family, version, True)


def detect(items: Bag, *, registry: Registry | None = None) -> Bag:
    """Return a bag of the `RecordCheck` (status `detected` or `undetected`) of every item."""
    return items.map_partitions(_check_partition, _portable(registry), None, None, False)


def _migrate_partition(
    items: Iterable[Item], directories: Directories, to: str, options: Mapping[str, Any]
) -> list[RecordMigration]:
    registry = _registry(directories)
    found = []
    for item in items:
        if not item.ok:
            found.append(RecordMigration(item.path, item.line, None, item.error))
            continue
        result = registry.migrate(item.record, to, filename=item.path, **options)
        found.append(RecordMigration(item.path, item.line, result))
    return found


def migrate(
    items: Bag,
    to: str,
    *,
    family: str | None = None,
    params: Mapping[str, Any] | None = None,
    allow_loss: bool = False,
    registry: Registry | None = None,
) -> Bag:
    """Return a bag of the `RecordMigration` of every item to version `to` (or `latest`).

    Each outcome holds the `MigrationResult` (`status`, `record`, `notes`, `error`), or for an
    unreadable item its `error`.
    """
    options = {"family": family, "params": dict(params or {}), "allow_loss": allow_loss}
    return items.map_partitions(_migrate_partition, _portable(registry), to, options)


# -- typed tables --------------------------------------------------------------------------------


def _table_partition(
    items: Iterable[Item],
    directories: Directories,
    family: str,
    to: str,
    explode: str | None,
    provenance: bool,
) -> Any:
    """Return the rows of a partition's records as a pandas DataFrame of Arrow-typed columns."""
    import pandas as pd
    import pyarrow as pa

    from evalreg.batch.load import migrate_as
    from evalreg.batch.tabulate import provenance_of
    from evalreg.tables.arrow import BatchBuilder, TableSpec
    from evalreg.tables.mapping import layout
    from evalreg.tables.rows import RowError

    registry = _registry(directories)
    spec = TableSpec(layout(registry, family, to), explode, provenance)
    builder = BatchBuilder(spec)
    for item in items:
        if not item.ok:
            continue
        result = migrate_as(registry, item, to, family, {}, False)
        if not result.ok:
            continue
        try:
            builder.add(result.record, provenance_of(item, result) if provenance else None)
        except RowError:
            continue
    batch, _ = builder.flush()
    return pa.Table.from_batches([batch], schema=spec.schema).to_pandas(types_mapper=pd.ArrowDtype)


def to_dataframe(
    items: Bag,
    family: str,
    to: str = "latest",
    *,
    explode: str | None = None,
    provenance: bool = False,
    registry: Registry | None = None,
) -> Any:
    """Return a Dask DataFrame of the rows of a bag of items, migrated to a version of `family`.

    Its columns and their types (pandas `ArrowDtype`s) are the version's Arrow schema
    (`evalreg.arrow_schema`), which is also the DataFrame's `meta`: structs, lists and JSON text
    keep their Arrow types, and `ddf.to_parquet(...)` writes them as `evalreg export` does. One
    partition per partition of the bag. Records that cannot be read, migrated or made rows are
    left out: `migrate(items, to)` names them.

    Raises:
        MissingExtraError: `dask.dataframe` (the `tables` extra) or pyarrow is not installed.
        UnknownFamilyError, UnknownVersionError, TableError: as `evalreg.arrow_schema`.
    """
    try:
        import dask.dataframe as dd
        import pandas as pd
    except ImportError as err:
        raise MissingExtraError("dask.dataframe", "tables") from err
    import pyarrow as pa

    from evalreg.tables.arrow import TableSpec, empty_batch
    from evalreg.tables.mapping import layout

    found = registry or load_registry()
    spec = TableSpec(layout(found, family, to), explode, provenance)
    meta = pa.Table.from_batches([empty_batch(spec)]).to_pandas(types_mapper=pd.ArrowDtype)
    directories = _portable(registry)
    parts = [
        delayed(_table_partition, pure=True)(part, directories, family, to, explode, provenance)
        for part in items.to_delayed()
    ]
    return dd.from_delayed(parts, meta=meta, verify_meta=False)
