"""Records under paths as one typed table: `evalreg.to_arrow` and `evalreg.iter_batches`.

Every record is read as `evalreg.load` reads it, migrated to one version of one family, and
made a row of that version's table (see `evalreg.tables`). A record that cannot be read, migrated
or made a row is a `Problem`, never a row. With several jobs (or a Dask cluster), units of work
(runs of files, ranges of large JSONL files) are made into record batches by worker processes,
and come back in order, the same rows as one process makes. Needs pyarrow (the `arrow` extra).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any

from evalreg.batch import parallel
from evalreg.batch.config import Config
from evalreg.batch.load import (
    ERROR_MODES,
    ErrorMode,
    Outcome,
    Problem,
    Source,
    expand,
    migrate_as,
    outcomes,
    problem_of,
)
from evalreg.engine.migrate import MigrationResult
from evalreg.engine.registry import Registry, default_registry
from evalreg.errors import ParameterError
from evalreg.io.codec import dumps
from evalreg.io.readers import Item, RangeItems, read_items
from evalreg.tables.mapping import layout
from evalreg.tables.rows import RowError

if TYPE_CHECKING:
    import pyarrow as pa

    from evalreg.tables.arrow import BatchBuilder, TableSpec

BATCH_ROWS = 1024
"""Rows gathered before they are made a record batch."""
UNIT_OUT_BYTES = 1 << 20
"""A large JSONL file is cut into ranges of at most this size for workers: the batches made of
each come back to the parent whole, so this bounds what one result holds."""


@dataclass(frozen=True)
class TableOptions:
    """What table to make: of which family and version, exploded or not, with provenance."""

    family: str
    to: str = "latest"
    explode: str | None = None
    provenance: bool = False
    params: Mapping[str, Any] = field(default_factory=dict)
    allow_loss: bool = False
    batch_rows: int = BATCH_ROWS

    def spec(self, registry: Registry) -> TableSpec:
        """Return the table's spec (its schema checked now).

        Raises:
            MissingExtraError: pyarrow is not installed.
            UnknownFamilyError, UnknownVersionError: the family or version is unknown.
            TableError: the version cannot be a table, or `explode` names no array column.
        """
        from evalreg.tables.arrow import TableSpec

        specs: dict[tuple[Any, ...], TableSpec] = registry.derived("tables:specs", lambda _: {})
        key = (self.family, self.to, self.explode, self.provenance)
        found = specs.get(key)
        if found is None:
            found = TableSpec(layout(registry, self.family, self.to), self.explode, self.provenance)
            specs[key] = found
        return found


def default_include(registry: Registry, family: str, include: Sequence[str]) -> Sequence[str]:
    """Return the globs of the files to take in folders: `include`, else the family's own
    file patterns (its manifest's `files`), else every file readers know."""
    return tuple(include) or registry.manifest(family).files


@dataclass
class TableStream(Iterator["pa.RecordBatch"]):
    """The record batches of a table, as they are made; what was left out, as it is found.

    Iterate it for `pyarrow.RecordBatch`es of `schema`; `to_reader()` gives a
    `pyarrow.RecordBatchReader` (DuckDB and polars scan one). `problems` holds the records left
    out with `errors="collect"`, `skipped` counts them with `skip` or `collect`; `records` and
    `rows` count what became rows.
    """

    schema: pa.Schema
    _batches: Iterator[pa.RecordBatch]
    _made: _Rows
    problems: list[Problem] = field(default_factory=list)
    skipped: int = 0

    @property
    def records(self) -> int:
        """Return how many records became rows so far."""
        return self._made.records

    @property
    def rows(self) -> int:
        """Return how many rows were made so far (more than records with `explode`)."""
        return self._made.rows

    def __iter__(self) -> TableStream:
        return self

    def __next__(self) -> pa.RecordBatch:
        return next(self._batches)

    def to_reader(self) -> pa.RecordBatchReader:
        """Return the batches still to come as a `pyarrow.RecordBatchReader`."""
        import pyarrow as pa

        return pa.RecordBatchReader.from_batches(self.schema, self)


def provenance_of(item: Item, result: MigrationResult | None) -> tuple[Any, ...]:
    """Return the provenance values of a record (see `evalreg.tables.arrow.PROVENANCE`)."""
    if result is None:
        return (item.path, item.line, None, None, None, None)
    notes = [dataclasses.asdict(n) for n in result.notes]
    return (
        item.path,
        item.line,
        result.family,
        result.source,
        result.target,
        dumps(notes) if notes else None,
    )


@dataclass
class _Rows:
    """Turns outcomes into batches and problems, in order (one process, or one unit)."""

    builder: BatchBuilder
    batch_rows: int
    places: list[tuple[Item, MigrationResult | None]] = field(default_factory=list)
    records: int = 0
    rows: int = 0

    def add(self, item: Item, result: MigrationResult | None) -> Iterator[Event]:
        problem = problem_of(item, result)
        if problem is None:
            record = item.record if result is None else result.record
            try:
                where = provenance_of(item, result) if self.builder.spec.provenance else None
                self.builder.add(record, where)
            except RowError as err:
                message = f"cannot be a row: {err}"
                problem = Problem(item.path, item.line, "failed", message, _family(result))
        if problem is not None:
            yield (item.path, 1)
            yield problem
            return
        self.places.append((item, result))
        if len(self.builder.rows) >= self.batch_rows:
            yield from self.flush()

    def flush(self) -> Iterator[Event]:
        if not self.places:
            return
        batch, failed = self.builder.flush()
        places = list(self.places)
        self.places.clear()  # the same list: `_made` holds it
        for index, message in failed:
            item, result = places[index]
            yield Problem(item.path, item.line, "failed", message, _family(result))
        self.records += len(places) - len(failed)
        self.rows += batch.num_rows
        path, count = places[0][0].path, 0
        for item, _ in places:  # how many records of which file, for progress displays
            if item.path != path:
                yield (path, count)
                path, count = item.path, 0
            count += 1
        yield (path, count)
        if batch.num_rows:
            yield batch


def _family(result: MigrationResult | None) -> str | None:
    return None if result is None else result.family


Event = Problem | tuple[str, int] | Any
"""What making a table reports: a problem, `(path, records)` read (for progress displays), or
a record batch."""


def _rows(spec: TableSpec, batch_rows: int) -> _Rows:
    from evalreg.tables.arrow import BatchBuilder

    return _Rows(BatchBuilder(spec), batch_rows)


def _made(found: Iterator[Outcome], rows: _Rows) -> Iterator[Event]:
    """Yield the batches and problems of `found` (the loop of `_Rows.add`, inlined: it runs once
    per record)."""
    builder, places, limit = rows.builder, rows.places, rows.batch_rows
    add, made, provenance = builder.add, builder.rows, builder.spec.provenance
    for item, result in found:
        if item.error is None and (result is None or result.status != "failed"):
            try:
                add(
                    item.record if result is None else result.record,
                    provenance_of(item, result) if provenance else None,
                    owned=True,  # read for this table alone: its rows may be the records
                )
            except RowError:
                yield from rows.add(item, result)  # reports the problem
                continue
            places.append((item, result))
            if len(made) >= limit:
                yield from rows.flush()
                made = builder.rows
        else:
            yield from rows.add(item, result)
    yield from rows.flush()


def iter_batches(
    source: Source | IO[Any] | Sequence[Source],
    *,
    family: str,
    to: str = "latest",
    explode: str | None = None,
    provenance: bool = False,
    errors: ErrorMode = "raise",
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    params: Mapping[str, Any] | None = None,
    allow_loss: bool = False,
    batch_rows: int = BATCH_ROWS,
    registry: Registry | None = None,
) -> TableStream:
    """Stream the records under paths as record batches of one version's table, in order.

    Memory stays bounded whatever the input: a batch of `batch_rows` rows at a time. Paths are
    read as `evalreg.load` reads them (files, folders, globs, URLs); in folders, the family's
    own files are taken (its manifest's `files`, such as `*.jsonl`) unless `include` says
    otherwise. Every record is migrated to `to` as family `family`. `explode` (a JSON pointer
    to an array, such as `/evaluation_results`) makes a row of each item, beside the record's
    other fields; `provenance` adds the columns `_source`, `_line`, `_family`, `_version`,
    `_target` and `_notes` (and `_index` with `explode`). `errors` says what a record that
    cannot be read, migrated or made a row does, as for `evalreg.load`.

    Raises:
        MissingExtraError: pyarrow (the `arrow` extra) or a URL's package is not installed.
        UnknownFamilyError, UnknownVersionError: the family or version is unknown.
        TableError: the version cannot be a table, or `explode` names no array column (raised
            now, before any record is read).
        ReadError, MigrationError: with `errors="raise"`, a record that cannot be read or
            migrated (or made a row), when the loop reaches it.
    """
    if errors not in ERROR_MODES:
        raise ParameterError(f"errors must be one of {', '.join(ERROR_MODES)}, not {errors!r}")
    registry = registry or default_registry()
    options = TableOptions(
        family, to, explode, provenance, dict(params or {}), allow_loss, batch_rows
    )
    spec = options.spec(registry)
    if hasattr(source, "read"):
        sources: Any = source
    elif isinstance(source, (str, bytes)) or hasattr(source, "__fspath__"):
        sources = [source]
    else:
        sources = list(source)
    found = outcomes(
        sources,
        to,
        registry,
        family=family,
        params=options.params,
        allow_loss=allow_loss,
        include=default_include(registry, family, include),
        exclude=exclude,
    )
    rows = _rows(spec, batch_rows)
    stream = TableStream(spec.schema, iter(()), rows)
    stream._batches = _checked(_made(found, rows), stream, errors)
    return stream


def _checked(events: Iterator[Event], stream: TableStream, errors: ErrorMode) -> Iterator[Any]:
    for event in events:
        if isinstance(event, tuple):
            continue
        if isinstance(event, Problem):
            if errors == "raise":
                raise event.error()
            stream.skipped += 1
            if errors == "collect":
                stream.problems.append(event)
            continue
        yield event


def to_arrow(
    source: Source | IO[Any] | Sequence[Source],
    *,
    family: str,
    to: str = "latest",
    explode: str | None = None,
    provenance: bool = False,
    errors: ErrorMode = "raise",
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    params: Mapping[str, Any] | None = None,
    allow_loss: bool = False,
    registry: Registry | None = None,
) -> pa.Table:
    """Return the records under paths as one `pyarrow.Table` of a version's columns.

    As `iter_batches` (same arguments), gathered in one table. With `errors="collect"`, the
    table's schema metadata holds no problems: use `iter_batches` to see them.

    Raises:
        MissingExtraError: pyarrow (the `arrow` extra) or a URL's package is not installed.
        UnknownFamilyError, UnknownVersionError: the family or version is unknown.
        TableError: the version cannot be a table, or `explode` names no array column.
        ReadError, MigrationError: with `errors="raise"`, a record that cannot be read or
            migrated (or made a row).
    """
    import pyarrow as pa

    stream = iter_batches(
        source,
        family=family,
        to=to,
        explode=explode,
        provenance=provenance,
        errors=errors,
        include=include,
        exclude=exclude,
        params=params,
        allow_loss=allow_loss,
        registry=registry,
    )
    return pa.Table.from_batches(list(stream), schema=stream.schema)


# -- units of work, for worker processes and Dask clusters ---------------------------------------


@dataclass(frozen=True)
class UnitTable:
    """What a worker made of one unit: its batches (Arrow IPC stream), its problems (lines
    numbered within each part), and the lines each part had."""

    data: bytes
    problems: tuple[Problem, ...]
    lines: tuple[int, ...]
    records: int
    rows: int


def _part_outcomes(
    registry: Registry, part: parallel.Part, options: TableOptions, lines: list[int]
) -> Iterator[Outcome]:
    items: Any
    if part.whole:
        items = read_items(part.path)
    else:
        assert part.end is not None
        items = RangeItems(part.path, part.start, part.end)
    for item in items:
        if not item.ok:
            yield item, None
            continue
        yield (
            item,
            migrate_as(
                registry, item, options.to, options.family, options.params, options.allow_loss
            ),
        )
    lines.append(items.lines if isinstance(items, RangeItems) else 0)


def table_unit(registry: Registry, unit: parallel.Unit, options: TableOptions) -> UnitTable:
    """Make the rows of the records of one unit of work (run in a worker)."""
    import pyarrow as pa

    spec = options.spec(registry)
    lines: list[int] = []
    problems: list[Problem] = []
    sink = pa.BufferOutputStream()
    rows = _rows(spec, options.batch_rows)
    with pa.ipc.new_stream(sink, spec.schema) as writer, parallel.collector_paused():
        for part in unit:
            for event in _made(_part_outcomes(registry, part, options, lines), rows):
                if isinstance(event, Problem):
                    problems.append(event)
                elif not isinstance(event, tuple):
                    writer.write_batch(event)
    data = sink.getvalue().to_pybytes()
    return UnitTable(data, tuple(problems), tuple(lines), rows.records, rows.rows)


def _shift_lines(batch: pa.RecordBatch, offset: int) -> pa.RecordBatch:
    """Return `batch` with its `_line` column `offset` lines further down its file."""
    import pyarrow.compute as pc

    index = batch.schema.get_field_index("_line")
    shifted = pc.add(batch.column(index), offset)
    return batch.set_column(index, batch.schema.field(index), shifted)


def table_events(
    registry: Registry,
    paths: Sequence[str],
    options: TableOptions,
    *,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    config: Config | None = None,
    jobs: int = 1,
    runner: parallel.Runner | None = None,
) -> Iterator[Event]:
    """Yield the batches of the records under `paths` and the problems, in input order.

    Also yields `(path, records)` as records are read, for progress displays. With `jobs`
    above one and enough input (or a `runner`, whatever the input), worker processes make the
    batches; the batches, problems and line numbers are the same as with one.
    """
    import pyarrow as pa

    spec = options.spec(registry)
    files = expand(paths, default_include(registry, options.family, include), exclude)
    if config is not None:  # the project's include and exclude apply too
        files = (path for path in files if config.wants(path))
    rows = _rows(spec, options.batch_rows)
    if runner is not None:
        jobs = runner.jobs
    done, units = parallel.plan(files, jobs, always=runner is not None, range_max=UNIT_OUT_BYTES)
    if units is None:
        found = outcomes(
            done,
            options.to,
            registry,
            family=options.family,
            params=options.params,
            allow_loss=options.allow_loss,
        )
        with parallel.frozen(), parallel.collector_paused():
            yield from _made(found, rows)
        return
    results = parallel.imap(table_unit, units, registry, jobs, (options,), runner=runner)
    offset = 0
    try:
        for unit, made in results:
            reader = pa.ipc.open_stream(made.data)
            shifts: dict[str, int] = {}
            for part, lines in zip(unit, made.lines, strict=True):
                shifts[part.path] = offset if not part.whole else 0
                offset = 0 if part.last else offset + lines
                yield (part.path, 0)  # a file read (its records are counted with the batches)
            for problem in made.problems:
                shift = shifts.get(problem.source, 0)
                if shift and problem.line is not None:
                    problem = dataclasses.replace(problem, line=problem.line + shift)
                yield problem
            single = unit[0].path if len(unit) == 1 and not unit[0].whole else None
            for batch in reader:
                if single and options.provenance and shifts.get(single):
                    batch = _shift_lines(batch, shifts[single])
                yield (unit[-1].path, batch.num_rows)
                yield batch
    finally:
        results.close()
