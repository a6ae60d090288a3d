"""`evalreg.arrow_schema` and `evalreg.from_arrow`: a version's Arrow schema, and rows back.

Both need pyarrow (the `arrow` extra); this module imports it only when they are called.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from evalreg.engine.registry import Registry, default_registry
from evalreg.errors import TableError
from evalreg.tables.mapping import layout
from evalreg.tables.rows import RecordMaker

if TYPE_CHECKING:
    import pyarrow as pa


def arrow_schema(
    family: str,
    version: str | None = None,
    *,
    explode: str | None = None,
    provenance: bool = False,
    registry: Registry | None = None,
) -> pa.Schema:
    """Return the Arrow schema of a family's version (None or `latest`: the newest).

    Its columns are the record's properties, mapped by evalreg's one mapping (see the
    documentation's table), then `_extra`; with `provenance`, the provenance columns after
    them. With `explode` (a JSON pointer to an array column, such as `/evaluation_results`),
    that column holds one item per row.

    Raises:
        MissingExtraError: pyarrow is not installed (the `arrow` extra).
        UnknownFamilyError, UnknownVersionError: the family or version is unknown.
        TableError: the schema cannot be a table, or `explode` names no array column.
    """
    from evalreg.tables.arrow import TableSpec

    found = layout(registry or default_registry(), family, version)
    return TableSpec(found, explode, provenance).schema


def _batches(table: Any) -> Iterable[Any]:
    if hasattr(table, "to_batches"):
        batches: Iterable[Any] = table.to_batches()  # a Table
        return batches
    if hasattr(table, "to_pylist"):
        return [table]  # a RecordBatch
    found: Iterable[Any] = table  # a RecordBatchReader, or batches
    return found


def from_arrow(
    table: Any,
    *,
    family: str | None = None,
    version: str | None = None,
    registry: Registry | None = None,
) -> Iterator[Any]:
    """Yield the record of each row of a table that `to_arrow` or `evalreg export` made.

    `table` is a `pyarrow.Table`, a `RecordBatch`, a `RecordBatchReader` or an iterable of
    batches. The family and version come from the schema's metadata unless given. Each record
    equals what `evalreg migrate` writes for it: JSON text parsed, `_extra` put back (exact
    numbers, undeclared properties, explicit nulls); numbers as the columns hold them.

    Raises:
        TableError: the table says no family or version, or was exploded (its rows are
            parts of records).
    """
    registry = registry or default_registry()
    maker: RecordMaker | None = None
    for batch in _batches(table):
        if maker is None:
            metadata = batch.schema.metadata or {}
            if b"evalreg.explode" in metadata:
                raise TableError(
                    "the table was exploded: its rows are parts of records; export it "
                    "without --explode to read records back"
                )
            family = family or metadata.get(b"evalreg.family", b"").decode() or None
            version = version or metadata.get(b"evalreg.version", b"").decode() or None
            if family is None or version is None:
                raise TableError(
                    "the table says no family and version (no evalreg.family and "
                    "evalreg.version metadata); pass family= and version="
                )
            maker = RecordMaker(layout(registry, family, version))
        for row in batch.to_pylist():
            yield maker.record(row)
