"""Which rules a run applies, and at which severity: the one place that decides it.

A `Selection` comes from the command line (`--select`, `--ignore`, `--no-rules`, `--severity`)
and a configuration file (`[rules]`, with entries per path); `rule_set` asks it which rules to
run on a version of a family, and the runs ask it, file by file, which findings to keep and at
which severity. Rules are named by id (`eee.layout`) or by prefix (`eee.*`; `*` is every rule).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from evalreg.registry.rules import Severity

if TYPE_CHECKING:
    from evalreg.engine.validators import Issue

_RANK: dict[Severity, int] = {"warning": 0, "error": 1}


def specificity(entry: str, rule_id: str) -> tuple[int, int] | None:
    """Return how specifically `entry` names `rule_id` (larger is more), or None if it does not.

    An id names a rule more specifically than any prefix, and a longer prefix more than a shorter.
    """
    if entry == rule_id:
        return (2, len(entry))
    if entry.endswith("*") and rule_id.startswith(entry[:-1]):
        return (1, len(entry) - 1)
    return None


def _most_specific(entries: Iterable[str], rule_id: str) -> tuple[int, int] | None:
    found = [s for e in entries if (s := specificity(e, rule_id)) is not None]
    return max(found, default=None)


@dataclass(frozen=True)
class PathRules:
    """Rule choices for some files: those `matches` takes (a configuration's per-path entries)."""

    matches: Callable[[str], bool]
    """Whether a file (as a run names it) is one of these; picklable, for worker processes."""
    ignore: tuple[str, ...] = ()
    """Rules (ids or prefixes) that do not apply to these files, whatever else selects them."""
    severity: tuple[tuple[str, Severity], ...] = ()
    """Severities for these files, over those of the whole run."""


@dataclass(frozen=True)
class Selection:
    """Which rules a run applies, and at which severity.

    A rule applies when the run has rules `enabled`; when `select` names it (None: every rule)
    and `ignore` does not, the more specific entry of the two deciding (an id over a prefix, a
    longer prefix over a shorter one, `ignore` on a tie); when no per-path entry of its file
    ignores it; and when its severity is at least `minimum`. Its severity is its own unless an
    entry of `severity` names it: a per-path entry wins over the run's, and within one table
    the most specific entry wins (the later on a tie).
    """

    enabled: bool = True
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()
    severity: tuple[tuple[str, Severity], ...] = ()
    minimum: Severity = "warning"
    """`error` leaves warnings out."""
    paths: tuple[PathRules, ...] = ()
    dropped: tuple[str, ...] = ()
    """Rules ignored by the per-path entries that hold for one file (set by `at`)."""
    overrides: tuple[tuple[tuple[str, Severity], ...], ...] = ()
    """The severities of the per-path entries that hold for one file, in order (set by `at`)."""

    def at(self, path: str | None) -> Selection:
        """Return the selection for one file: its per-path entries applied, none left."""
        if not self.paths:
            return self
        held = [p for p in self.paths if path is not None and p.matches(path)]
        return replace(
            self,
            paths=(),
            dropped=tuple(e for p in held for e in p.ignore),
            overrides=tuple(p.severity for p in held if p.severity),
        )

    def _on(self, rule_id: str) -> bool:
        if not self.enabled or _most_specific(self.dropped, rule_id) is not None:
            return False
        chosen = (0, 0) if self.select is None else _most_specific(self.select, rule_id)
        if chosen is None:
            return False
        ignored = _most_specific(self.ignore, rule_id)
        return ignored is None or ignored < chosen

    def severity_of(self, rule_id: str, declared: Severity) -> Severity:
        """Return the severity of a rule's findings (`declared`: the rule's own)."""
        for table in (*reversed(self.overrides), self.severity):
            best: tuple[tuple[int, int], int] | None = None
            for index, (entry, _) in enumerate(table):
                found = specificity(entry, rule_id)
                if found is not None and (best is None or (found, index) >= best):
                    best = (found, index)
            if best is not None:
                return table[best[1]][1]
        return declared

    def wants(self, rule_id: str, declared: Severity) -> bool:
        """Return whether a rule applies (`declared`: its own severity), all files alike."""
        if not self._on(rule_id):
            return False
        return _RANK[self.severity_of(rule_id, declared)] >= _RANK[self.minimum]

    def anywhere(self, rule_id: str, declared: Severity) -> bool:
        """Return whether a rule applies to any file (its per-path entries taken one by one)."""
        if self.wants(rule_id, declared):
            return True
        return any(
            replace(self, paths=(), dropped=p.ignore, overrides=(p.severity,)).wants(
                rule_id, declared
            )
            for p in self.paths
        )

    @property
    def restyles(self) -> bool:
        """Return whether any finding may get another severity than its rule's own."""
        return bool(self.severity or self.overrides)

    def judge(self, issue: Issue) -> Issue | None:
        """Return a rule's finding at the severity it has here, or None if it is not wanted.

        The finding carries its rule's own severity (as the rule reported it).
        """
        if not issue.rule or not self.wants(issue.rule, issue.severity):
            return None if issue.rule else issue
        severity = self.severity_of(issue.rule, issue.severity)
        return issue if severity == issue.severity else replace(issue, severity=severity)


def names_none(entry: str, rule_ids: Iterable[str]) -> bool:
    """Return whether a selection entry names none of `rule_ids` (`*` names them all)."""
    return entry != "*" and not any(specificity(entry, r) is not None for r in rule_ids)


ALL_RULES = Selection()
NO_RULES = Selection(enabled=False)
