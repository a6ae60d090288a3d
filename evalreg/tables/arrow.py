"""A version's columns as an Arrow schema, and records as record batches of it (pyarrow).

Field metadata: `evalreg.pointer` (where the values are in a record, `*` for every item of an
array), `evalreg.description` (the schema's), and on special columns `evalreg.encoding`: `json`
(JSON text, also typed as the canonical `arrow.json` extension) with `evalreg.reason`, or
`map` (a list of `{key, value}` entries: Hugging Face datasets has no feature for an Arrow map).
A list's items are named `element`, as Parquet names them, so that a table read back from a
Parquet file has the very schema it was written with.
Schema metadata: `evalreg.family`, `evalreg.version`, `evalreg.mapping` and, for an exploded
table, `evalreg.explode`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from evalreg.errors import MissingExtraError, TableError
from evalreg.io.pointer import split
from evalreg.tables.compiled import compile_struct
from evalreg.tables.mapping import EXTRA, MAPPING_VERSION, Column, Layout
from evalreg.tables.rows import RowMaker, split_extras

try:
    import pyarrow as pa
except ImportError as err:  # pragma: no cover - the arrow extra
    raise MissingExtraError("arrow", "arrow") from err

JSON_TYPE = pa.json_(pa.string())
ENUM_TYPE = pa.dictionary(pa.int32(), pa.string())
_SCALAR_TYPES = {
    "string": pa.string(),
    "enum": ENUM_TYPE,
    "int64": pa.int64(),
    "float64": pa.float64(),
    "bool": pa.bool_(),
}

PROVENANCE: tuple[tuple[str, str, str], ...] = (
    ("_source", "string", "The file or URL the record was read from."),
    ("_line", "int64", "The record's line in a JSON Lines file (null for a whole document)."),
    ("_family", "enum", "The record's family."),
    ("_version", "enum", "The version the record was at, as detected."),
    ("_target", "enum", "The version the record was migrated to."),
    ("_notes", "json", "The notes of the record's migration (kind, pointer, detail, step)."),
)
"""The provenance columns, in order: name, kind and description."""
INDEX = "_index"
"""With provenance, the position of an exploded row's item in its array."""


def _metadata(column: Column) -> dict[bytes, bytes]:
    found = {b"evalreg.pointer": column.pointer.encode()}
    if column.description:
        found[b"evalreg.description"] = column.description.encode()
    if column.kind == "json":
        found[b"evalreg.encoding"] = b"json"
        found[b"evalreg.reason"] = column.reason.encode()
    elif column.kind == "map":
        found[b"evalreg.encoding"] = b"map"
    return found


def arrow_type(column: Column, *, storage: bool = False) -> pa.DataType:
    """Return the Arrow type of a column (`storage`: JSON text and enums as plain strings,
    which pyarrow builds from Python values five times as fast, and string maps as Arrow maps,
    built from dicts as they are; then cast)."""
    if column.kind == "json":
        return pa.string() if storage else JSON_TYPE
    if column.kind == "enum" and storage:
        return pa.string()
    if column.kind in _SCALAR_TYPES:
        return _SCALAR_TYPES[column.kind]
    fields = [arrow_field(c, storage=storage) for c in column.children]
    if column.kind == "struct":
        return pa.struct(fields)
    if column.kind == "map":
        if storage:  # built from dicts as they are, cast to the entries
            return pa.map_(fields[0], fields[1])
        return pa.list_(pa.field("element", pa.struct(fields), nullable=False))
    return pa.list_(fields[0])


def arrow_field(column: Column, *, storage: bool = False) -> pa.Field:
    """Return the Arrow field of a column, with its metadata."""
    return pa.field(
        column.name,
        arrow_type(column, storage=storage),
        nullable=column.nullable,
        metadata=_metadata(column),
    )


def exploded(layout: Layout, pointer: str) -> Layout:
    """Return the layout of one row per item of the array column at `pointer`.

    Raises:
        TableError: no array column is at `pointer` (one inside another array cannot be).
    """
    target = layout.column_at(pointer)
    if target.kind != "list":
        raise TableError(
            f"cannot explode {pointer}: it is a {target.kind} column, not an array",
            layout.family,
            layout.version,
        )
    item = target.children[0]
    tokens = split(pointer)

    def swap(node: Column, depth: int) -> Column:
        if depth == len(tokens):
            return replace(item, name=node.name, required=node.required, nullable=item.nullable)
        children = tuple(
            swap(c, depth + 1) if c.name == tokens[depth] else c for c in node.children
        )
        return replace(node, children=children)

    return replace(layout, root=swap(layout.root, 0))


@dataclass(frozen=True)
class TableSpec:
    """The table asked for: a version's layout, exploded or not, with provenance or not."""

    layout: Layout
    explode: str | None = None
    provenance: bool = False

    def __post_init__(self) -> None:
        if self.explode is not None:
            self.shown  # noqa: B018 - checks the pointer now, not at the first row

    @cached_property
    def shown(self) -> Layout:
        """Return the layout of the table's columns (the exploded one, if exploding)."""
        if self.explode is None:
            return self.layout
        return exploded(self.layout, self.explode)

    def _fields(self, storage: bool) -> list[pa.Field]:
        fields = [arrow_field(c, storage=storage) for c in self.shown.columns]
        reason = b"what the typed columns do not hold as it is, by JSON pointer"
        extra_type = pa.string() if storage else JSON_TYPE
        fields.append(
            pa.field(
                EXTRA,
                extra_type,
                metadata={b"evalreg.encoding": b"json", b"evalreg.reason": reason},
            )
        )
        if self.provenance:
            names = {c.name for c in self.shown.columns}
            extras = list(PROVENANCE) + (
                [(INDEX, "int64", "The position of the row's item in its array.")]
                if self.explode
                else []
            )
            for name, kind, description in extras:
                if name in names:
                    raise TableError(
                        f"a property is named {name}, as a provenance column is; "
                        "leave provenance out",
                        self.layout.family,
                        self.layout.version,
                        f"/{name}",
                    )
                column = Column(name, kind, name != "_source", "", description)  # type: ignore[arg-type]
                field_type = arrow_type(column, storage=storage)
                meta = {b"evalreg.description": description.encode()}
                if kind == "json":
                    meta[b"evalreg.encoding"] = b"json"
                fields.append(pa.field(name, field_type, nullable=column.nullable, metadata=meta))
        return fields

    def _metadata(self) -> dict[bytes, bytes]:
        found = {
            b"evalreg.family": self.layout.family.encode(),
            b"evalreg.version": self.layout.version.encode(),
            b"evalreg.mapping": MAPPING_VERSION.encode(),
        }
        if self.explode is not None:
            found[b"evalreg.explode"] = self.explode.encode()
        return found

    @cached_property
    def maker(self) -> RowMaker:
        """Return the maker of the rows of the table's records (compiled once)."""
        return RowMaker(self.layout, compile_struct(self.layout.root))

    @cached_property
    def schema(self) -> pa.Schema:
        """Return the Arrow schema of the table."""
        return pa.schema(self._fields(False), metadata=self._metadata())

    @cached_property
    def storage_schema(self) -> pa.Schema:
        """Return the schema rows are built with (JSON text as strings), cast to `schema`."""
        return pa.schema(self._fields(True), metadata=self._metadata())


Provenance = tuple[str, int | None, str | None, str | None, str | None, bytes | None]
"""Of a record: its source, line, family, version, target version and notes (JSON text)."""


@dataclass
class BatchBuilder:
    """Gathers the rows of records, and makes record batches of them."""

    spec: TableSpec
    rows: list[dict[str, Any]] = field(default_factory=list)
    owners: list[int] = field(default_factory=list)
    """The record (counted from 0 since the last batch) each row comes from."""
    records: int = 0

    def __post_init__(self) -> None:
        self._maker = self.spec.maker
        self._tokens = split(self.spec.explode) if self.spec.explode is not None else None

    def add(self, record: Any, provenance: Provenance | None = None, *, owned: bool = False) -> int:
        """Add the rows of a record; return how many (with `explode`, one per item). An
        `owned` record (one no one else holds) may become a row itself.

        Raises:
            RowError: a value of the record does not have the type of its column.
        """
        row = self._maker.row(record, owned=owned)
        if self.spec.provenance and provenance is not None:
            row.update(zip((p[0] for p in PROVENANCE), provenance, strict=True))
        owner = self.records
        self.records += 1
        if self._tokens is None:
            self.rows.append(row)
            self.owners.append(owner)
            return 1
        made = list(self._explode(row))
        self.rows += made
        self.owners += [owner] * len(made)
        return len(made)

    def _explode(self, row: dict[str, Any]) -> Iterable[dict[str, Any]]:
        assert self._tokens is not None and self.spec.explode is not None
        tokens = self._tokens
        parents = [row]
        for token in tokens[:-1]:
            child = parents[-1].get(token)
            if not isinstance(child, dict):
                return
            parents.append(child)
        items = parents[-1].get(tokens[-1])
        if not items:
            return
        extra = row.get(EXTRA)
        for index, item in enumerate(items):
            copy = item
            for depth in range(len(tokens) - 1, -1, -1):
                copy = {**parents[depth], tokens[depth]: copy}
            if extra is not None:
                copy[EXTRA] = split_extras(extra, self.spec.explode, index)
            if self.spec.provenance:
                copy[INDEX] = index
            yield copy

    def flush(self) -> tuple[pa.RecordBatch, list[tuple[int, str]]]:
        """Return a batch of the rows gathered, and the records whose rows could not be built
        (their number since the last batch, and why); then start again.
        """
        rows, owners = self.rows, self.owners
        self.rows, self.owners, self.records = [], [], 0
        try:
            return self._batch(rows), []
        except (pa.ArrowException, OverflowError, TypeError, ValueError):
            pass
        # One row at a time, to tell the records that cannot be rows from the others.
        failed: dict[int, str] = {}
        for row, owner in zip(rows, owners, strict=True):
            if owner in failed:
                continue
            try:
                self._batch([row])
            except (pa.ArrowException, OverflowError, TypeError, ValueError) as err:
                failed[owner] = f"cannot be a row: {' '.join(str(err).split())[:300]}"
        good = [r for r, o in zip(rows, owners, strict=True) if o not in failed]
        return self._batch(good), sorted(failed.items())

    def _batch(self, rows: list[dict[str, Any]]) -> pa.RecordBatch:
        batch = pa.RecordBatch.from_pylist(rows, schema=self.spec.storage_schema)
        return batch.cast(self.spec.schema)


def empty_batch(spec: TableSpec) -> pa.RecordBatch:
    """Return a batch of no rows of `spec`'s schema."""
    return pa.RecordBatch.from_pylist([], schema=spec.storage_schema).cast(spec.schema)
