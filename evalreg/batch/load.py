"""Loading records in other programs, upgraded on the fly, from what the command line reads.

    for record in evalreg.load("runs/", to="0.2.0"): ...
    for row in evalreg.load(["data/**/*.json", "s3://bucket/runs/"], to="latest",
                            provenance=True, errors="collect"): row.source, row.line, ...

Files, folders (walked as the command line walks them: sorted, hidden names skipped, the
include and exclude globs), local globs (`data/**/*.json`, `**` for any depth) and URLs (a
folder or a glob of them walked alike) are read in order; an open file is read as it is.
"""

from __future__ import annotations

import dataclasses
import glob as globbing
import io
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import IO, Any, Literal

from evalreg.batch.migrate_file import reread
from evalreg.batch.walk import iter_files
from evalreg.engine.migrate import MigrationResult, migrate_record
from evalreg.engine.registry import Registry, default_registry
from evalreg.engine.steps import Note
from evalreg.errors import MigrationError, ParameterError, ReadError
from evalreg.io import remote
from evalreg.io.readers import Item, Kind, file_kind, read_items, read_items_from_bytes, read_jsonl

ErrorMode = Literal["raise", "skip", "collect"]
ERROR_MODES: tuple[ErrorMode, ...] = ("raise", "skip", "collect")
Source = str | os.PathLike[str]


@dataclass(frozen=True)
class Loaded:
    """A record, where it was read, and what became of it (`load(..., provenance=True)`)."""

    record: Any
    source: str
    """The file or URL it was read from (`<stream>` or the stream's name for an open file)."""
    line: int | None
    """Its line in a JSON Lines file (None for a whole document)."""
    family: str | None
    version: str | None
    """The version it was at, as detected (None where it could not be told)."""
    target: str | None
    """The version it was migrated to (None without `to`)."""
    notes: tuple[Note, ...] = ()
    """What its migration reported (values kept, moved, dropped ...)."""

    @property
    def where(self) -> str:
        """Return `source:line` (or just `source`)."""
        return self.source if self.line is None else f"{self.source}:{self.line}"


@dataclass(frozen=True)
class Problem:
    """A record that could not be read, or not migrated to the version asked for."""

    source: str
    line: int | None
    kind: Literal["unreadable", "failed"]
    message: str
    family: str | None = None
    step: str | None = None
    """The migration step that failed (None: detection, validation or reading)."""

    @property
    def where(self) -> str:
        """Return `source:line` (or just `source`)."""
        return self.source if self.line is None else f"{self.source}:{self.line}"

    def error(self) -> ReadError | MigrationError:
        """Return the error `load` raises for this problem by default."""
        if self.kind == "unreadable":
            return ReadError(self.source, self.message, self.line)
        return MigrationError(
            self.family or "record", self.step or "detect", f"{self.where}: {self.message}"
        )


Outcome = tuple[Item, MigrationResult | None]
"""A record read (or the reason it could not be), and its migration (None without `to`)."""


def _items_from_stream(stream: IO[Any], name: str, kind: Kind | None) -> Iterator[Item]:
    if kind == "jsonl" and not isinstance(stream, io.TextIOBase):
        yield from read_jsonl(stream, name)
        return
    data = stream.read()
    raw = data.encode("utf-8") if isinstance(data, str) else data
    yield from read_items_from_bytes(raw, name, kind)


def has_glob(path: str) -> bool:
    """Return whether a local path holds glob characters (`*`, `?`, `[`)."""
    return any(c in path for c in "*?[")


def expand(
    paths: Iterable[Source], include: Sequence[str] = (), exclude: Sequence[str] = ()
) -> Iterator[str]:
    """Yield the files under `paths` in order: folders walked, local globs and URLs expanded.

    A local path with glob characters that names no file stands for the paths it matches,
    sorted (`**` matches any depth; hidden names only when the pattern names them); a pattern
    matching nothing is yielded as given, so that reading it reports the problem.

    Raises:
        MissingExtraError: a URL's protocol needs a package that is not installed.
    """
    for path in paths:
        text = os.fspath(path)
        if not remote.is_url(text) and has_glob(text) and not os.path.lexists(text):
            matched = sorted(globbing.glob(text, recursive=True))
            yield from iter_files(matched or [text], include, exclude)
        else:
            yield from iter_files([text], include, exclude)


def outcomes(
    sources: Iterable[Source] | IO[Any],
    to: str | None,
    registry: Registry,
    *,
    family: str | None = None,
    params: Mapping[str, Any] | None = None,
    allow_loss: bool = False,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
) -> Iterator[Outcome]:
    """Yield every record under `sources` with its migration to `to` (if given), in order."""
    if hasattr(sources, "read"):
        name = str(getattr(sources, "name", "<stream>"))
        stream: IO[Any] = sources  # type: ignore[assignment]
        files: Iterable[Iterable[Item]] = [_items_from_stream(stream, name, file_kind(name))]
    else:
        files = (read_items(path) for path in expand(sources, include, exclude))
    options = dict(params or {})
    for items in files:
        for item in items:
            if not item.ok or to is None:
                yield item, None
                continue
            yield item, migrate_as(registry, item, to, family, options, allow_loss)


def migrate_as(
    registry: Registry,
    item: Item,
    to: str,
    family: str | None,
    params: Mapping[str, Any],
    allow_loss: bool,
) -> MigrationResult:
    """Migrate the record of `item` to `to`, as a record of `family` if given.

    A record detected as of `family` is migrated as detected (which costs less than naming the
    family); any other is migrated as `family`, as `evalreg migrate --family` does.
    """
    # Parsed for this run alone: a JSONL line's record is changed in place, and parsed again
    # should it fail. A record that may be migrated twice is left as it is the first time.
    again = None if item.raw is None else partial(reread, item.raw, item.path, "jsonl", 0)
    result = migrate_record(
        registry,
        item.record,
        to,
        params=params,
        allow_loss=allow_loss,
        filename=item.path,
        copy_input=False,
        reread=again if family is None else None,
    )
    if family is None or result.family == family:
        return result
    return migrate_record(
        registry,
        item.record,
        to,
        family=family,
        params=params,
        allow_loss=allow_loss,
        filename=item.path,
        copy_input=False,
        reread=again,
    )


def problem_of(item: Item, result: MigrationResult | None) -> Problem | None:
    """Return the problem of an outcome (None when the record was read, and migrated)."""
    if not item.ok:
        return Problem(item.path, item.line, "unreadable", item.error or "unreadable")
    if result is not None and not result.ok:
        return Problem(
            item.path,
            item.line,
            "failed",
            result.error or "failed",
            result.family,
            result.failed_step,
        )
    return None


class Records(Iterator[Any]):
    """The records `load` yields, in order; `problems` and `skipped` tell what was left out.

    With `errors="collect"` each record that could not be read or migrated is a `Problem` in
    `problems` (in order, filled as the loop goes); with `errors="skip"` it is only counted in
    `skipped`; with `errors="raise"` (the default) the loop stops there with the error.
    """

    def __init__(
        self,
        found: Iterator[Outcome],
        registry: Registry,
        errors: ErrorMode,
        provenance: bool,
    ) -> None:
        self._found = found
        self._registry = registry
        self._errors = errors
        self._provenance = provenance
        self.problems: list[Problem] = []
        self.skipped = 0

    def __iter__(self) -> Records:
        return self

    def __next__(self) -> Any:
        for item, result in self._found:
            problem = problem_of(item, result)
            if problem is not None:
                if self._errors == "raise":
                    raise problem.error()
                self.skipped += 1
                if self._errors == "collect":
                    self.problems.append(problem)
                continue
            record = item.record if result is None else result.record
            if not self._provenance:
                return record
            return self._loaded(item, result, record)
        raise StopIteration

    def _loaded(self, item: Item, result: MigrationResult | None, record: Any) -> Loaded:
        if result is not None:
            return Loaded(
                record,
                item.path,
                item.line,
                result.family,
                result.source,
                result.target,
                result.notes,
            )
        detection = self._registry.detect(record, item.path)
        return Loaded(record, item.path, item.line, detection.family, detection.version, None)


def load(
    source: Source | IO[Any] | Sequence[Source],
    to: str | None = None,
    *,
    family: str | None = None,
    params: Mapping[str, Any] | None = None,
    allow_loss: bool = False,
    registry: Registry | None = None,
    errors: ErrorMode = "raise",
    provenance: bool = False,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    drafts: bool = False,
) -> Records:
    """Yield the records of files, folders, globs or URLs, migrated to version `to` if given.

    `source` is a path (a file, a folder, a local glob such as `data/**/*.json`, a URL, a URL
    folder or glob), a list of them, or an open file. Folders are walked as the command line
    walks them, with its `include` and `exclude` globs. Without `to`, records are yielded as
    read; `to="latest"` is the newest released version (with `drafts`, the newest version,
    drafts included). With `provenance`, each is a `Loaded`: the record with its source, line,
    family, detected version, target version and migration notes. `errors` says what a record that
    cannot be read or migrated does: `raise` (the default; the message names its place),
    `skip` (counted in the result's `skipped`) or `collect` (its `Problem` kept in the
    result's `problems`).

    Raises:
        ReadError: a file or line cannot be read (raised when the loop reaches it).
        MigrationError: a record cannot be migrated to `to`.
        ParameterError: `errors` is not one of raise, skip, collect.
        MissingExtraError: a URL's protocol needs a package that is not installed.
    """
    if errors not in ERROR_MODES:
        raise ParameterError(f"errors must be one of {', '.join(ERROR_MODES)}, not {errors!r}")
    registry = (registry or default_registry()).with_drafts(drafts)
    if hasattr(source, "read"):
        sources: Any = source
    elif isinstance(source, (str, os.PathLike)):
        sources = [source]
    else:
        sources = list(source)
    found = outcomes(
        sources,
        to,
        registry,
        family=family,
        params=params,
        allow_loss=allow_loss,
        include=include,
        exclude=exclude,
    )
    return Records(found, registry, errors, provenance)


def notes_json(notes: Sequence[Note]) -> list[dict[str, Any]]:
    """Return migration notes as JSON objects (every field a note has)."""
    return [dataclasses.asdict(note) for note in notes]
