"""Loading records in other programs, upgraded on the fly.

for record in evalreg.load("run.jsonl", to="0.2.0"): ...
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterator, Mapping
from typing import IO, Any

from evalreg.engine.registry import Registry, default_registry
from evalreg.errors import MigrationError, ReadError
from evalreg.io.readers import Item, Kind, file_kind, read_items, read_items_from_bytes, read_jsonl


def _items_from_stream(stream: IO[Any], name: str, kind: Kind | None) -> Iterator[Item]:
    if kind == "jsonl" and not isinstance(stream, io.TextIOBase):
        yield from read_jsonl(stream, name)
        return
    data = stream.read()
    raw = data.encode("utf-8") if isinstance(data, str) else data
    yield from read_items_from_bytes(raw, name, kind)


def load(
    source: str | os.PathLike[str] | IO[Any],
    to: str | None = None,
    *,
    family: str | None = None,
    params: Mapping[str, Any] | None = None,
    allow_loss: bool = False,
    registry: Registry | None = None,
    drafts: bool = False,
) -> Iterator[Any]:
    """Yield the records of a JSON, JSONL or YAML file, migrated to version `to` when given.

    `source` is a path or an open file. Without `to`, records are yielded as read. `to="latest"`
    is the newest released version; with `drafts`, the newest version, drafts included.

    Raises:
        ReadError: a file or line cannot be read (raised when the loop reaches it).
        MigrationError: a record cannot be migrated to `to`.
    """
    registry = (registry or default_registry()).with_drafts(drafts)
    if isinstance(source, (str, os.PathLike)):
        name = os.fspath(source)
        items = read_items(name)
    else:
        name = str(getattr(source, "name", "<stream>"))
        items = _items_from_stream(source, name, file_kind(name))
    for item in items:
        if not item.ok:
            raise ReadError(item.path, item.error or "unreadable", item.line)
        if to is None:
            yield item.record
            continue
        result = registry.migrate(
            item.record,
            to,
            family=family,
            params=params,
            allow_loss=allow_loss,
            filename=item.path,
        )
        if not result.ok:
            raise MigrationError(
                result.family or "record",
                result.failed_step or "detect",
                f"{item.where}: {result.error}",
            )
        yield result.record
