"""What a diff finds: one Change, classified by the compatibility directions it breaks.

The two directions follow schema registries:

- BACKWARD holds when the new schema accepts everything the old one accepted
  (readers on the new schema can read data written under the old one).
- FORWARD holds when the old schema accepts everything the new one accepts
  (readers still on the old schema can read data written under the new one).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from evalreg.diff._schema import json_key, ordered_keys, short

BACKWARD: Final = "BACKWARD"
FORWARD: Final = "FORWARD"
POLICIES: Final = ("lenient", "strict")

Compatibility = Literal["FULL", "BACKWARD", "FORWARD", "NONE"]

#: Every change kind, in the order reports group them.
KINDS: Final = (
    "property-added",
    "property-removed",
    "property-renamed",
    "property-moved",
    "required-added",
    "required-removed",
    "type-narrowed",
    "type-widened",
    "type-changed",
    "enum-added",
    "enum-removed",
    "const-changed",
    "additional-properties-tightened",
    "additional-properties-loosened",
    "constraint-tightened",
    "constraint-loosened",
    "constraint-changed",
    "branches-changed",
    "description-changed",
    "annotation-changed",
    "unknown",
)

BOTH: Final = frozenset({BACKWARD, FORWARD})
NEITHER: Final[frozenset[str]] = frozenset()
ONLY_BACKWARD: Final = frozenset({BACKWARD})
ONLY_FORWARD: Final = frozenset({FORWARD})
INFORMATIONAL: Final = frozenset({"description-changed", "annotation-changed"})


@dataclass(frozen=True)
class Change:
    """One difference between two schemas, located at an instance pointer.

    ``before`` and ``after`` hold what was compared, by kind: for ``property-added`` /
    ``property-removed`` a ``{"required": bool, "schema": ...}`` mapping (``None`` on the side
    where the property is absent); for ``property-renamed`` and ``property-moved`` the
    instance pointers of the old and the new property; for ``required-*`` the required flags;
    for ``type-*`` the sorted type names (``None`` = any type, ``False`` = nothing is
    accepted); for ``enum-*`` and ``const-changed`` the allowed values; for
    ``additional-properties-*`` the keyword values; for every other kind a mapping of the
    keywords concerned to their values (``{}`` = absent).

    ``breaks`` names the directions the change breaks. When ``undecided`` is true the comparison
    could not decide, and ``breaks`` holds every direction that could not be shown to hold.
    """

    path: str
    kind: str
    before: Any
    after: Any
    breaks: frozenset[str]
    reason: str
    undecided: bool = False

    @property
    def summary(self) -> str:
        """Describe the change in a few words, without its path or verdict."""
        return _summarise(self)

    @property
    def verdict(self) -> str:
        """Say which directions the change breaks, in words."""
        names = ", ".join(sorted(self.breaks))
        if self.undecided:
            return f"undecided (may break {names})" if names else "undecided"
        return f"breaks {names}" if names else "compatible"

    def to_json(self) -> dict[str, Any]:
        """Return the change as a JSON-able dict."""
        return {
            "path": self.path,
            "kind": self.kind,
            "summary": self.summary,
            "before": self.before,
            "after": self.after,
            "breaks": sorted(self.breaks),
            "undecided": self.undecided,
            "reason": self.reason,
        }


def _summarise(change: Change) -> str:
    kind, before, after = change.kind, change.before, change.after
    if kind == "property-added":
        return "added (required)" if after and after.get("required") else "added (optional)"
    if kind == "property-removed":
        return (
            "removed (was required)"
            if before and before.get("required")
            else "removed (was optional)"
        )
    if kind == "property-renamed" and change.reason.startswith("probable"):
        return f"probably renamed from {before}"
    if kind in ("property-renamed", "property-moved"):
        return f"{kind.removeprefix('property-')} from {before or '(root)'}"
    if kind == "required-added":
        return "now required"
    if kind == "required-removed":
        return "now optional"
    if kind.startswith("type-"):
        return f"type {_types_shown(before)} -> {_types_shown(after)}"
    if kind in ("enum-added", "enum-removed"):
        first, second = (before, after) if kind == "enum-added" else (after, before)
        known = {json_key(value) for value in first}
        shown = ", ".join(short(v, 30) for v in second if json_key(v) not in known)
        return f"enum {'+' if kind == 'enum-added' else '-'} {shown}"
    if kind == "const-changed":
        return f"{_values_shown(before)} -> {_values_shown(after)}"
    if kind.startswith("additional-properties-"):
        return f"additionalProperties {short(before, 40)} -> {short(after, 40)}"
    if isinstance(before, Mapping) and isinstance(after, Mapping):
        return (
            "; ".join(_keyword_summary(kind, k, before, after) for k in ordered_keys(before, after))
            or kind
        )
    return kind


def _keyword_summary(
    kind: str, keyword: str, before: Mapping[str, Any], after: Mapping[str, Any]
) -> str:
    if kind == "branches-changed" and not isinstance(before.get(keyword, after.get(keyword)), list):
        if keyword in before and keyword in after:
            return f"{keyword} changed"
        return f"{keyword} {'added' if keyword in after else 'removed'}"
    if kind == "branches-changed":
        removed, added = len(before.get(keyword, [])), len(after.get(keyword, []))
        if removed and added:
            return f"{keyword}: {removed} unpaired old vs {added} unpaired new branches"
        count = added or removed
        noun = "branch" if count == 1 else "branches"
        return f"{keyword}: {count} {noun} {'added' if added else 'removed'}"
    if keyword not in before:
        if kind in INFORMATIONAL:
            return f"{keyword} added"
        return f"{keyword} added: {short(after[keyword], 40)}"
    if keyword not in after:
        return f"{keyword} removed"
    if kind in INFORMATIONAL:
        return f"{keyword} changed"
    return f"{keyword} {short(before[keyword], 30)} -> {short(after[keyword], 30)}"


def _types_shown(types: Any) -> str:
    if types is None:
        return "any"
    if types is False or types == []:
        return "nothing"
    return "|".join(str(t) for t in types)


def _values_shown(values: Any) -> str:
    if values is None:
        return "any value"
    if isinstance(values, list) and len(values) == 1:
        return f"const {short(values[0], 30)}"
    return f"enum {short(values, 40)}"
