"""Notes: what a migration step reports about each change it makes to a record.

Every change a step makes is one `Note`: a value added (and where it came from: a default, a
placeholder, a `--set` parameter, or derived from the record), moved, renamed, converted from one
type to another, dropped (nothing lost: the value was redundant), lost (only with allow-loss), or
kept as an extra field the target does not declare. Pointers are JSON pointers: where the value is
in the step's output (added, moved, renamed, converted, kept), or was in its input (dropped, lost);
`source` is where a moved or renamed value was in the input.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields, make_dataclass
from typing import Any, Literal

NoteKind = Literal["added", "moved", "renamed", "converted", "dropped", "lost", "kept"]
NOTE_KINDS: tuple[NoteKind, ...] = (
    "added",
    "moved",
    "renamed",
    "converted",
    "dropped",
    "lost",
    "kept",
)
"""Every kind of note, in the order summaries list them."""

Origin = Literal["default", "placeholder", "parameter", "derived"]
"""Where an added value comes from: a default of the format (a value the format's own tool
assumes), a placeholder (a stand-in such as "unknown" for a fact the record does not hold), a
parameter given with `--set`, or the record itself (computed from its other values)."""

_INDEX = re.compile(r"/\d+(?=/|$)")


_JSON_TYPES = {
    type(None): "null",
    bool: "boolean",
    int: "integer",
    float: "number",
    str: "string",
    dict: "object",
    list: "array",
}


def json_type(value: Any) -> str:
    """Return the JSON type of `value`: object, array, string, integer, number, boolean, null."""
    found = _JSON_TYPES.get(type(value))
    if found is not None:
        return found
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, (list, tuple)):
        return "array"
    return type(value).__name__


def shown(value: Any, limit: int = 60) -> str:
    """Return `value` as short JSON text (cut with `...` past `limit` characters)."""
    import json

    try:
        text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=str)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def general(pointer: str) -> str:
    """Return `pointer` with every array index as `*` (`/results/3/x` -> `/results/*/x`)."""
    found = _GENERAL.get(pointer)
    if found is None:
        if len(_GENERAL) >= 10_000:  # the pointers of one kind of record repeat: kept a while
            _GENERAL.clear()
        found = _GENERAL[pointer] = _INDEX.sub("/*", pointer) if pointer else "/"
    return found


_GENERAL: dict[str, str] = {}


@dataclass(frozen=True, slots=True)
class Note:
    """One change a step made to a record (see the module's docstring for the kinds)."""

    kind: NoteKind
    pointer: str
    """Where: in the step's output (added, moved, renamed, converted, kept) or input (dropped,
    lost)."""
    detail: str = ""
    """Why, in words (for dropped and lost: the reason the value could not be carried)."""
    step: str = ""
    """The step that made the change, e.g. `0.2.0 -> 0.2.1`."""
    source: str | None = None
    """Moved and renamed: where the value was in the step's input; added: the value it was
    derived from, where there is one."""
    value: Any = field(default=None, hash=False)
    """Added: the value put; converted: the new value. (Values may be objects or arrays, so
    they take no part in a note's hash; they do in its equality.)"""
    before: Any = field(default=None, hash=False)
    """Converted: the old value."""
    origin: Origin | None = None
    """Added: where the value comes from (see `Origin`)."""
    from_type: str | None = None
    """Converted: the JSON type of the old value."""
    to_type: str | None = None
    """Converted: the JSON type of the new value."""

    @property
    def placeholder(self) -> bool:
        """Return whether the note is of a placeholder: a stand-in value for a missing fact."""
        return self.origin == "placeholder"

    def __str__(self) -> str:
        return self.describe()

    def describe(self, *, generalise: bool = False) -> str:
        """Return the note as one line of text.

        With `generalise`, array indices are `*` and the values that differ from record to
        record (converted values, derived ones) are left out, so that the same change in many
        records reads the same.
        """
        where = general(self.pointer) if generalise else self.pointer or "/"
        source = None
        if self.source is not None:
            source = general(self.source) if generalise else self.source or "/"
        if self.kind in ("moved", "renamed"):
            text = f"{self.kind} {source} -> {where}"
        elif self.kind == "added":
            how = self.origin or "derived"
            text = f"added {where} ({how}"
            if how != "derived" or not generalise:
                text += f" {shown(self.value)}"
            if source is not None:
                text += f", from {source}"
            text += ")"
        elif self.kind == "converted":
            text = f"converted {where}: {self.from_type} -> {self.to_type}"
            if not generalise:
                text += f" ({shown(self.before, 40)} -> {shown(self.value, 40)})"
        else:
            text = f"{self.kind} {where}"
        if self.detail:
            text += f": {self.detail}"
        return text

    def as_json(self) -> dict[str, Any]:
        """Return the note as a JSON object (only the fields its kind uses)."""
        row: dict[str, Any] = {"kind": self.kind, "pointer": self.pointer}
        if self.source is not None:
            row["from"] = self.source
        if self.kind == "added":
            row |= {"value": self.value, "origin": self.origin or "derived"}
            row["placeholder"] = self.placeholder
        elif self.kind == "converted":
            row |= {"from_type": self.from_type, "to_type": self.to_type}
            row |= {"before": self.before, "after": self.value}
        row |= {"detail": self.detail, "step": self.step}
        return row

    def lean(self) -> Note:
        """Return the note without the values that differ from record to record.

        What is kept still describes the change (`describe(generalise=True)` is the same), so
        records with the same changes compare equal.
        """
        if self.kind == "converted" or (self.kind == "added" and self.origin in (None, "derived")):
            return make_note(
                self.kind,
                general(self.pointer),
                self.detail,
                self.step,
                None if self.source is None else general(self.source),
                None,
                None,
                self.origin,
                self.from_type,
                self.to_type,
            )
        if "/" in self.pointer and _INDEX.search(self.pointer + (self.source or "")):
            return make_note(
                self.kind,
                general(self.pointer),
                self.detail,
                self.step,
                None if self.source is None else general(self.source),
                self.value,
                self.before,
                self.origin,
                self.from_type,
                self.to_type,
            )
        return self


# A note is made by every step for every change of every record, so how fast it is made counts:
# the `__init__` of a frozen dataclass sets each field through `object.__setattr__`, five times
# as slow as a plain one. Notes are made as a plain twin with the same slots, then given their
# class: the same object, frozen from then on (equal to, and hashed as, one made directly).
_Draft = make_dataclass(
    "_Draft",
    [(f.name, f.type, field(default=f.default)) for f in fields(Note)],
    slots=True,
    eq=False,
)


def make_note(
    kind: NoteKind,
    pointer: str,
    detail: str = "",
    step: str = "",
    source: str | None = None,
    value: Any = None,
    before: Any = None,
    origin: Origin | None = None,
    from_type: str | None = None,
    to_type: str | None = None,
) -> Note:
    """Return `Note(kind, pointer, ...)`, made faster (the same note)."""
    note: Any = _Draft(
        kind, pointer, detail, step, source, value, before, origin, from_type, to_type
    )
    note.__class__ = Note
    return note  # type: ignore[no-any-return]


def converted_note(pointer: str, before: Any, after: Any, detail: str, step: str) -> Note:
    """Return the `converted` note of `before` becoming `after` at `pointer` (`make_note`'s,
    with the JSON types of both)."""
    # Most steps convert several values of every record: the types looked up here, not by
    # two more calls.
    from_type = _JSON_TYPES.get(type(before)) or json_type(before)
    to_type = _JSON_TYPES.get(type(after)) or json_type(after)
    return make_note(
        "converted", pointer, detail, step, None, after, before, None, from_type, to_type
    )


def count_kinds(notes: Any) -> dict[str, int]:
    """Return how many of `notes` there are of each kind (kinds with none left out)."""
    counts: dict[str, int] = {}
    for note in notes:
        counts[note.kind] = counts.get(note.kind, 0) + 1
    return counts
