"""No aggregate repeats another one apart from its evaluation id and retrieval time.

Every Eval Ever counts two aggregates as duplicates when they are equal once every
`evaluation_id` and `retrieved_timestamp` is removed, at any depth, and every list is sorted.
Comparing whole records that way costs more than reading them, so each file keeps a cheap key
that duplicates always share (the model and the sorted names and scores of its results), and
only files whose keys meet are read again and compared in full.
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

ID = "eee.duplicate"
SCOPE = "collection"
_IGNORED = frozenset({"evaluation_id", "retrieved_timestamp"})


def key(record: Any) -> str:
    """Return what every duplicate of `record` has in common with it."""
    results = record.get("evaluation_results")
    scores = []
    if type(results) is list:
        for result in results:
            if type(result) is dict:
                details = result.get("score_details")
                score = details.get("score") if type(details) is dict else None
                scores.append(f"{result.get('evaluation_name')!r}:{score!r}")
        scores.sort()
    model = record.get("model_info")
    model_id = model.get("id") if type(model) is dict else None
    return f"{model_id!r}|{'|'.join(scores)}"


def _normal(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _normal(v) for k, v in value.items() if k not in _IGNORED}
    if isinstance(value, list):
        items = [_normal(v) for v in value]
        return sorted(items, key=lambda v: json.dumps(v, sort_keys=True, ensure_ascii=False))
    return value


def digest(record: Any) -> str:
    """Return the digest of a record with what two duplicates may differ in taken away."""
    import hashlib  # only where keys meet: not at every start

    text = json.dumps(_normal(record), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Collector:
    """The cheap key of each aggregate record of one file."""

    def __init__(self, path: str) -> None:
        self.keys: list[str] = []

    def add(self, record: Any, ctx: Any) -> None:
        if isinstance(record, dict):
            self.keys.append(key(record))

    def summary(self) -> list[str]:
        return self.keys


def finish(summaries: list[tuple[str, list[str]]], ctx: Any) -> None:
    meeting: dict[str, list[str]] = defaultdict(list)
    for path, keys in summaries:
        for value in keys:
            if path not in meeting[value]:
                meeting[value].append(path)
    for paths in meeting.values():
        if len(paths) < 2:
            continue
        first: dict[str, str] = {}
        for path in paths:
            for _, record in ctx.read(path):
                value = digest(record)
                if value in first:
                    ctx.report("", f"a duplicate of {first[value]}", path=path)
                first.setdefault(value, path)
