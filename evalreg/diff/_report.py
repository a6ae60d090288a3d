"""What a comparison reports: SchemaDiff in text, Markdown and JSON, and a family's changelog."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evalreg.diff._changes import (
    INFORMATIONAL,
    KINDS,
    ONLY_BACKWARD,
    ONLY_FORWARD,
    Change,
    Compatibility,
)
from evalreg.errors import SchemaDiffError


@dataclass(frozen=True)
class SchemaDiff:
    """Every change between two schemas, with the policy used to classify them."""

    old_label: str
    new_label: str
    changes: tuple[Change, ...]
    policy: str

    @property
    def breaking(self) -> tuple[Change, ...]:
        """Return the changes that break at least one direction (undecided ones included)."""
        return tuple(change for change in self.changes if change.breaks)

    @property
    def undecided(self) -> tuple[Change, ...]:
        """Return the changes the comparison could not decide."""
        return tuple(change for change in self.changes if change.undecided)

    @property
    def compatibility(self) -> Compatibility:
        """Return the directions that hold: FULL, BACKWARD, FORWARD or NONE.

        An undecided change counts as breaking what it could not show to hold.
        """
        broken = frozenset().union(*(change.breaks for change in self.changes))
        if not broken:
            return "FULL"
        if broken == ONLY_FORWARD:
            return "BACKWARD"
        if broken == ONLY_BACKWARD:
            return "FORWARD"
        return "NONE"

    def _counts(self) -> str:
        decided = sum(1 for change in self.breaking if not change.undecided)
        total = len(self.changes)
        noun = "change" if total == 1 else "changes"
        return f"{total} {noun}, {decided} breaking, {len(self.undecided)} undecided"

    def _ordered(self) -> list[Change]:
        """Return the changes breaking first, then undecided, then compatible."""

        def rank(change: Change) -> int:
            if change.undecided:
                return 1
            return 0 if change.breaks else 2

        return sorted(self.changes, key=rank)

    def to_text(self) -> str:
        """Render the diff as plain text grouped by kind, ending with a summary line."""
        lines = [f"Schema diff {self.old_label} -> {self.new_label} (policy: {self.policy})"]
        if not self.changes:
            lines.append("No changes.")
        for kind in KINDS:
            group = [change for change in self.changes if change.kind == kind]
            if not group:
                continue
            lines.extend(("", kind))
            for change in group:
                lines.append(f"  {_show_path(change.path)}  {change.summary}  {change.verdict}")
                if change.kind not in INFORMATIONAL:
                    lines.append(f"      {change.reason}")
        lines.extend(("", f"Compatibility: {self.compatibility} ({self._counts()})"))
        return "\n".join(lines) + "\n"

    def to_markdown(self) -> str:
        """Render the diff as a Markdown section with one table row per change."""
        lines = [
            f"## {self.old_label} → {self.new_label}",
            "",
            f"**Compatibility: {self.compatibility}** (policy `{self.policy}`; {self._counts()})",
        ]
        if self.changes:
            lines.extend(("", "| Path | Change | Verdict | Reason |", "| --- | --- | --- | --- |"))
            for change in self._ordered():
                cells = (
                    f"`{_show_path(change.path)}`",
                    f"{change.kind}: {change.summary}",
                    change.verdict,
                    change.reason,
                )
                lines.append("| " + " | ".join(_cell(text) for text in cells) + " |")
        return "\n".join(lines) + "\n"

    def to_json(self) -> dict[str, Any]:
        """Return the diff as a JSON-able dict."""
        return {
            "old": self.old_label,
            "new": self.new_label,
            "policy": self.policy,
            "compatibility": self.compatibility,
            "breaking": len(self.breaking),
            "undecided": len(self.undecided),
            "changes": [change.to_json() for change in self.changes],
        }


def changelog_markdown(
    family: str,
    diffs: Sequence[SchemaDiff],
    notes: Mapping[str, Sequence[str]] | None = None,
    steps: Mapping[str, str] | None = None,
) -> str:
    """Render release notes for a family's history, newest version first.

    ``diffs`` are the consecutive diffs in history order (oldest first), each one's
    ``new_label`` being the next one's ``old_label``. ``notes`` adds lines under a version's
    heading, by label (amendments of a released schema, for example). ``steps`` gives, by
    label, the plain-language account of the change (the migration step's own description),
    shown first, above the classified diff.

    Raises:
        SchemaDiffError: the diffs do not form such a chain.
    """
    for earlier, later in itertools.pairwise(diffs):
        if earlier.new_label != later.old_label:
            raise SchemaDiffError(
                f"diffs of {family} do not form a chain: {earlier.old_label} -> "
                f"{earlier.new_label} is followed by {later.old_label} -> {later.new_label}; "
                "pass them oldest first, each starting where the previous one ends"
            )
    lines = [f"# {family} schema changelog"]
    for diff in reversed(diffs):
        lines.extend(("", f"## {diff.new_label}"))
        account = (steps or {}).get(diff.new_label)
        if account:
            lines.extend(("", account.strip()))
        lines.extend(
            (
                "",
                f"Compared with {diff.old_label}: **{diff.compatibility}** compatibility "
                f"(policy `{diff.policy}`; {diff._counts()}).",
            )
        )
        for note in (notes or {}).get(diff.new_label, ()):
            lines.extend(("", f"*{note}*"))
        if not diff.changes:
            lines.extend(("", "No schema changes."))
        sections = (
            ("Breaking changes", [c for c in diff.changes if c.breaks and not c.undecided]),
            ("Undecided changes", list(diff.undecided)),
            ("Compatible changes", [c for c in diff.changes if not c.breaks]),
        )
        for title, changes in sections:
            if not changes:
                continue
            lines.extend(("", f"### {title}", ""))
            for change in changes:
                item = f"- `{_show_path(change.path)}`: {change.kind}, {change.summary}"
                if change.breaks:
                    item += f" ({change.verdict})"
                if change.kind not in INFORMATIONAL:
                    item += f". {change.reason}"
                lines.append(item)
    return "\n".join(lines) + "\n"


def _show_path(path: str) -> str:
    return path or "(root)"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
