"""Renames and moves: a property removed and another added whose schemas are equal.

After the walk, each removed property is paired with an added one when the two schemas are
equal once annotations are set aside (``title``, ``description``, ``default``, ``examples``...),
and no other removed or added property has that schema: the pairing is then the only reading.
Schemas that accept anything (``{}``, ``true``) say too little and are never paired; a schema
that states a type and nothing else (``{"type": "string"}``) pairs only two properties of one
name (a move). A pair at the same object is a rename, anywhere else a move; both are
reported with the old and the new pointer, beside the removal and the addition, which keep
their verdicts (a rename breaks readers both ways).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from evalreg.diff._changes import NEITHER, Change
from evalreg.diff._schema import ANNOTATIONS, DESCRIPTIVE, json_key

_IGNORED = DESCRIPTIVE | ANNOTATIONS


def bare_schema(schema: Any) -> Any:
    """Return a schema without its annotations, at every depth (property names are kept)."""
    if isinstance(schema, Mapping):
        return {
            key: (
                {name: bare_schema(sub) for name, sub in value.items()}
                if key in ("properties", "patternProperties", "$defs", "definitions")
                and isinstance(value, Mapping)
                else bare_schema(value)
            )
            for key, value in schema.items()
            if key not in _IGNORED
        }
    if isinstance(schema, list):
        return [bare_schema(item) for item in schema]
    return schema


def parent_of(pointer: str) -> str:
    """Return the pointer of the object that holds the member at `pointer`."""
    return pointer.rpartition("/")[0]


def moved_properties(changes: Sequence[Change]) -> list[Change]:
    """Return a `property-renamed` or `property-moved` change for each pair found."""
    paired = {c.before for c in changes if c.kind == "property-renamed"}
    paired |= {c.after for c in changes if c.kind == "property-renamed"}
    removed = _by_schema(
        c for c in changes if c.kind == "property-removed" and c.path not in paired
    )
    added = _by_schema(c for c in changes if c.kind == "property-added" and c.path not in paired)
    found: list[Change] = []
    for key, olds in removed.items():
        news = added.get(key, [])
        if len(olds) != 1 or len(news) != 1:
            continue
        old, new = olds[0], news[0]
        if not _telling(key) and old.rpartition("/")[2] != new.rpartition("/")[2]:
            continue  # one string for another of another name: too little to go on
        if parent_of(old) == parent_of(new):
            kind, verb = "property-renamed", "renamed"
        else:
            kind, verb = "property-moved", "moved"
        found.append(
            Change(new, kind, old, new, NEITHER, f"{verb}: {old} -> {new} (the same schema)")
        )
    return found


def _telling(key: str) -> bool:
    """Tell whether a bare schema says more than a type: a schema many properties share."""
    schema = json.loads(key)
    return not (isinstance(schema, dict) and schema.keys() <= {"type"})


def _by_schema(changes: Iterable[Change]) -> dict[str, list[str]]:
    """Return the distinct pointers of the given changes by their bare schema."""
    found: dict[str, list[str]] = defaultdict(list)
    for change in changes:
        side = change.before if change.kind == "property-removed" else change.after
        schema = bare_schema(side.get("schema")) if isinstance(side, Mapping) else None
        if schema in ({}, True, None):
            continue
        key = json_key(schema)
        if change.path not in found[key]:
            found[key].append(change.path)
    return found
