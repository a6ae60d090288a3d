"""An aggregate and its samples file point at each other and agree on ids and row count.

An aggregate `<uuid>.json` with `detailed_evaluation_results` names its samples file
`<uuid>_samples.jsonl` in the same folder (`file_path`, relative to the datastore's `data`
folder, and `format: jsonl`); that file exists and has at least one row; every row's
`evaluation_id` is the aggregate's and every `model_id` is its `model_info.id`; and
`total_rows`, where it is a number, is the number of rows. A samples file with no aggregate
beside it, or beside one that does not name it, is an error too. Where both files are in the run
a disagreement is reported on both; a companion outside the run is read from disk. Files outside
a datastore (under no folder named `data`) have no companion to look for.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, NamedTuple

ID = "eee.companion"
SCOPE = "collection"
ALSO = ("eee.instance",)
_SUFFIX = "_samples.jsonl"
_KEPT = 8
"""Distinct ids a summary keeps: enough to say that rows disagree and with what."""


class Aggregate(NamedTuple):
    evaluation_id: Any
    model_id: Any
    detailed: Any


@dataclass
class Samples:
    rows: int = 0
    evaluation_ids: list[Any] = field(default_factory=list)
    model_ids: list[Any] = field(default_factory=list)

    def add(self, record: Any) -> None:
        self.rows += 1
        value = record.get("evaluation_id")
        values = self.evaluation_ids
        if value not in values and len(values) < _KEPT:
            values.append(value)
        value = record.get("model_id")
        values = self.model_ids
        if value not in values and len(values) < _KEPT:
            values.append(value)

    def merge(self, other: Samples) -> None:
        self.rows += other.rows
        for mine, theirs in (
            (self.evaluation_ids, other.evaluation_ids),
            (self.model_ids, other.model_ids),
        ):
            mine += [v for v in theirs if v not in mine][: _KEPT - len(mine)]


class Collector:
    """What one file says about the pair: the aggregate's ids, or the samples file's rows."""

    def __init__(self, path: str) -> None:
        self.aggregate: tuple[Any, Any, Any] | None = None
        """The aggregate's `Aggregate` fields, as a plain tuple."""
        self.samples: Samples | None = None

    def add(self, record: Any, ctx: Any) -> None:
        if ctx.family == "eee.aggregate":
            model = record.get("model_info")
            model_id = model.get("id") if isinstance(model, dict) else None
            detailed = record.get("detailed_evaluation_results")
            self.aggregate = (record.get("evaluation_id"), model_id, detailed)
        else:
            if self.samples is None:
                self.samples = Samples()
            self.samples.add(record)

    def summary(self) -> tuple[str, Any] | None:
        # Plain data: a summary may travel from a worker process to the one that finishes.
        if self.aggregate is not None:
            return ("aggregate", self.aggregate)
        if self.samples is not None:
            s = self.samples
            return ("samples", (s.rows, s.evaluation_ids, s.model_ids))
        return None


def relative(path: str) -> str | None:
    """Return `path` from its nearest `data` folder on (`data/c/d/m/x.json`), or None."""
    return _relative(os.path.normpath(path))


def _relative(normal: str) -> str | None:
    """`relative` of a path normalised already (the pairing's paths are)."""
    normal = normal.replace(os.sep, "/")
    folder, slash, name = normal.rpartition("/")
    if slash and name != "data":
        base = _from_data(folder)  # a datastore's files share a few folders
        return None if base is None else f"{base}/{name}"
    return _from_data(normal)


@lru_cache(maxsize=4096)
def _from_data(normal: str) -> str | None:
    """Return a normalised path from its last `data` part on, or None."""
    parts = normal.split("/")
    if "data" not in parts:
        return None
    return "/".join(parts[len(parts) - 1 - parts[::-1].index("data") :])


def _normalised(path: str) -> str:
    """Return `os.path.normpath(path)`, its folder's worked out once for all its files."""
    folder, sep, name = path.rpartition(os.sep)
    if os.altsep or not folder or name in ("", ".", ".."):
        return os.path.normpath(path)
    base = _normal_folder(folder)
    if base.endswith(os.sep):  # a root (`//` stays as it is): rare, and done in full
        return os.path.normpath(path)
    return name if base == "." else base + sep + name


@lru_cache(maxsize=4096)
def _normal_folder(folder: str) -> str:
    return os.path.normpath(folder)


def _shown(values: list[Any]) -> str:
    return ", ".join(repr(v) for v in values)


class _Pairing:
    """The pairs of one run: their summaries, and what they disagree on."""

    def __init__(self, summaries: list[tuple[str, Any]], ctx: Any) -> None:
        self.ctx = ctx
        self.aggregates: dict[str, tuple[Any, Any, Any]] = {}
        """Each aggregate's `Aggregate` fields (made an `Aggregate` where there is a pair)."""
        self.samples: dict[str, Samples] = {}
        self._listings: dict[str, frozenset[str]] = {}
        for path, (kind, values) in summaries:
            key = _normalised(path)
            if kind == "aggregate":
                self.aggregates[key] = values
            else:
                self.samples.setdefault(key, Samples()).merge(Samples(*values))

    def exists(self, path: str) -> bool:
        """Return whether a file exists, listing each folder once rather than asking per file."""
        folder, _, name = path.rpartition(os.sep)  # `path` is normalised
        if not folder or folder.endswith(":"):  # a root or a drive has its separator
            folder, name = os.path.split(path)
        listing = self._listings.get(folder)
        if listing is None:
            try:
                listing = frozenset(os.listdir(folder or "."))
            except OSError:
                listing = frozenset()
            self._listings[folder] = listing
        return name in listing and os.path.isfile(path)

    def read_samples(self, path: str) -> Samples | str:
        found = Samples()
        try:
            for _, record in self.ctx.read(path):
                found.add(record if isinstance(record, dict) else {})
        except Exception as err:  # an unreadable companion is the finding
            return f"its samples file {path} cannot be read: {err}"
        return found

    def read_aggregate(self, path: str) -> Aggregate | str:
        try:
            records = [record for _, record in self.ctx.read(path)]
        except Exception as err:
            return f"its aggregate {path} cannot be read: {err}"
        record = records[0] if records and isinstance(records[0], dict) else {}
        model = record.get("model_info")
        model_id = model.get("id") if isinstance(model, dict) else None
        return Aggregate(
            record.get("evaluation_id"), model_id, record.get("detailed_evaluation_results")
        )

    def report(self, paths: list[str], pointer: str, message: str) -> None:
        for path in paths:
            self.ctx.report(pointer if path.endswith(".json") else "", message, path=path)

    def check_aggregate(self, path: str, values: tuple[Any, Any, Any], samples_path: str) -> None:
        detailed = values[2]
        has_samples = samples_path in self.samples or self.exists(samples_path)
        if detailed is None:
            if has_samples:
                self.report(
                    [path],
                    "",
                    f"detailed_evaluation_results is required: the samples file {samples_path} "
                    "is beside it",
                )
            return
        if not isinstance(detailed, dict):
            return  # the schema says what is wrong with it
        rel = _relative(samples_path)
        file_path = detailed.get("file_path")
        if rel is not None and (not isinstance(file_path, str) or file_path.strip() != rel):
            self.report(
                [path],
                "/detailed_evaluation_results/file_path",
                f"expected exactly {rel!r}, so that the aggregate and its samples share one "
                f"UUID and folder (it says {file_path!r})",
            )
            return
        if detailed.get("format") != "jsonl":
            self.report(
                [path],
                "/detailed_evaluation_results/format",
                f"the samples file is JSONL, so format is 'jsonl' (it says "
                f"{detailed.get('format')!r})",
            )
        if not has_samples:
            self.report(
                [path],
                "/detailed_evaluation_results/file_path",
                f"its samples file {samples_path} does not exist",
            )
            return
        samples = self.samples.get(samples_path)
        both = [path, samples_path]
        if samples is None:
            read = self.read_samples(samples_path)
            if isinstance(read, str):
                self.report([path], "/detailed_evaluation_results/file_path", read)
                return
            samples, both = read, [path]
        self.compare(Aggregate(*values), samples, both)

    def compare(self, aggregate: Aggregate, samples: Samples, paths: list[str]) -> None:
        if not samples.rows:
            self.report(paths, "/detailed_evaluation_results", "the samples file has no rows")
            return
        for key, pointer, expected, seen in (
            ("evaluation_id", "/evaluation_id", aggregate.evaluation_id, samples.evaluation_ids),
            ("model_id", "/model_info/id", aggregate.model_id, samples.model_ids),
        ):
            if seen != [expected]:
                self.report(
                    paths,
                    pointer,
                    f"the samples' rows have {key} {_shown(seen)}; the aggregate's is {expected!r}",
                )
        total = aggregate.detailed.get("total_rows")
        if isinstance(total, int) and total != samples.rows:
            self.report(
                paths,
                "/detailed_evaluation_results/total_rows",
                f"total_rows is {total}, but the samples file has {samples.rows} rows",
            )

    def check_orphan(self, path: str, samples: Samples) -> None:
        """Check a samples file whose aggregate is not in the run, from the samples side."""
        aggregate_path = path[: -len(_SUFFIX)] + ".json"
        if not self.exists(aggregate_path):
            self.report(
                [path], "", f"it has no aggregate {os.path.basename(aggregate_path)} beside it"
            )
            return
        aggregate = self.read_aggregate(aggregate_path)
        if isinstance(aggregate, str):
            self.report([path], "", aggregate)
            return
        detailed = aggregate.detailed
        rel = _relative(path)
        if not isinstance(detailed, dict) or (
            rel is not None and str(detailed.get("file_path", "")).strip() != rel
        ):
            self.report([path], "", f"its aggregate {aggregate_path} does not name it")
            return
        self.compare(aggregate, samples, [path])


def finish(summaries: list[tuple[str, Any]], ctx: Any) -> None:
    pairing = _Pairing(summaries, ctx)
    for path, aggregate in pairing.aggregates.items():
        if path.endswith(".json") and _relative(path) is not None:
            pairing.check_aggregate(path, aggregate, path[: -len(".json")] + _SUFFIX)
    for path, samples in pairing.samples.items():
        if not path.endswith(_SUFFIX) or _relative(path) is None:
            continue
        if path[: -len(_SUFFIX)] + ".json" not in pairing.aggregates:
            pairing.check_orphan(path, samples)
