"""Record batches written as Parquet, JSON Lines or CSV, to a binary stream (pyarrow).

Parquet keeps the schema whole (types, metadata, the Arrow schema itself), in row groups of a
given number of rows. JSON Lines writes each row as its table holds it: JSON-text columns stay
text, so that every line has the same types and `datasets.load_dataset("json")` reads them. CSV
holds flat columns only: a struct, list or map value is written as JSON text.
"""

from __future__ import annotations

from typing import IO, Literal, Protocol

import orjson

from evalreg.errors import MissingExtraError

try:
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq
except ImportError as err:  # pragma: no cover - the arrow extra
    raise MissingExtraError("arrow", "arrow") from err

Format = Literal["parquet", "jsonl", "csv"]
FORMATS: tuple[Format, ...] = ("parquet", "jsonl", "csv")
ROW_GROUP_ROWS = 10_000
"""The rows of a Parquet row group, unless asked otherwise: small enough for the Hugging Face
viewer and for bounded memory, large enough for fast scans."""
ROW_GROUP_BYTES = 16 << 20
"""A row group is written sooner when its batches hold this many bytes."""


class Sink(Protocol):
    """Where record batches go, in order."""

    def write(self, batch: pa.RecordBatch) -> None:
        """Write a batch."""

    def close(self) -> None:
        """Write what is left (a Parquet file's last row group and footer)."""


class ParquetSink:
    """Writes batches as row groups of `row_group_rows` rows."""

    def __init__(self, stream: IO[bytes], schema: pa.Schema, row_group_rows: int) -> None:
        self._writer = pq.ParquetWriter(stream, schema)
        self._schema = schema
        self._rows = row_group_rows
        self._held: list[pa.RecordBatch] = []
        self._held_rows = self._held_bytes = 0

    def write(self, batch: pa.RecordBatch) -> None:
        """Hold `batch`; write row groups as they fill."""
        self._held.append(batch)
        self._held_rows += batch.num_rows
        self._held_bytes += batch.nbytes
        if self._held_rows >= self._rows or self._held_bytes >= ROW_GROUP_BYTES:
            self._write(final=False)

    def _write(self, *, final: bool) -> None:
        table = pa.Table.from_batches(self._held, schema=self._schema)
        if not final and self._held_bytes < ROW_GROUP_BYTES:
            whole = (table.num_rows // self._rows) * self._rows
            rest = table.slice(whole)
            table = table.slice(0, whole)
        else:
            rest = table.slice(table.num_rows)
        if table.num_rows:
            self._writer.write_table(table, row_group_size=self._rows)
        self._held = rest.to_batches()
        self._held_rows = rest.num_rows
        self._held_bytes = rest.nbytes

    def close(self) -> None:
        """Write the last row group and the footer."""
        if self._held_rows:
            self._write(final=True)
        self._writer.close()


class JsonlSink:
    """Writes each row as one JSON object on its own line."""

    def __init__(self, stream: IO[bytes], schema: pa.Schema) -> None:
        self._stream = stream

    def write(self, batch: pa.RecordBatch) -> None:
        """Write the rows of `batch` (JSON-text values as text, dictionary values decoded)."""
        self._stream.write(b"".join(orjson.dumps(row) + b"\n" for row in batch.to_pylist()))

    def close(self) -> None:
        """Nothing is held."""


def _flat(field: pa.Field) -> pa.Field:
    kind = field.type
    if isinstance(kind, pa.BaseExtensionType):
        kind = kind.storage_type
    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    if pa.types.is_struct(kind) or pa.types.is_list(kind):
        kind = pa.string()
    return pa.field(field.name, kind, field.nullable)


def _flat_array(array: pa.Array, field: pa.Field) -> pa.Array:
    if pa.types.is_struct(array.type) or pa.types.is_list(array.type):
        texts = [None if v is None else orjson.dumps(v).decode() for v in array.to_pylist()]
        return pa.array(texts, pa.string())
    if isinstance(array.type, pa.BaseExtensionType):
        array = array.storage
    return array.cast(field.type)


class CsvSink:
    """Writes flat columns: nested values (structs, lists, maps) as JSON text."""

    def __init__(self, stream: IO[bytes], schema: pa.Schema) -> None:
        self._schema = pa.schema([_flat(f) for f in schema])
        self._writer = pacsv.CSVWriter(stream, self._schema)

    def write(self, batch: pa.RecordBatch) -> None:
        """Write the rows of `batch`."""
        arrays = [_flat_array(c, f) for c, f in zip(batch.columns, self._schema, strict=True)]
        self._writer.write_batch(pa.RecordBatch.from_arrays(arrays, schema=self._schema))

    def close(self) -> None:
        """Finish the file."""
        self._writer.close()


def open_sink(fmt: Format, stream: IO[bytes], schema: pa.Schema, row_group_rows: int) -> Sink:
    """Return the sink of a format writing to `stream`."""
    if fmt == "parquet":
        return ParquetSink(stream, schema, row_group_rows)
    if fmt == "jsonl":
        return JsonlSink(stream, schema)
    return CsvSink(stream, schema)
