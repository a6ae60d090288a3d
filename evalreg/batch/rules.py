"""The rules of one validate run: which apply to each record, what each file showed them.

A run keeps, per family and version (and the selection of the file: see `Selection.at`), the
rules that apply; per file, whether its file rules ran and the collectors of its collection
rules; and, for the end of the run, every collector's summary in input order. Workers of a
parallel run each keep their own and send their summaries back to the main process, which
finishes the collection rules once every file is read, keeping the findings that the selection
of their file wants.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

from evalreg.batch.parallel import collector_paused
from evalreg.engine.registry import Registry
from evalreg.engine.rules import (
    Collector,
    Located,
    Rule,
    RuleContext,
    RuleSet,
    check,
    family_rules,
    file_groups,
    finish_collection,
    hold_stdout,
    release_stdout,
    rule_set,
    run_rule_code,
)
from evalreg.engine.selection import Selection
from evalreg.engine.validators import Issue
from evalreg.errors import ReadError
from evalreg.io.readers import read_items

Summaries = list[tuple[tuple[str, str], str, Any]]
"""`((family, rule id), path, summary)` of each collector, in input order."""


def read_records(path: str) -> Iterator[tuple[int | None, Any]]:
    """Yield `(line, record)` of one file for a collection rule.

    Raises:
        ReadError: the file, or one of its records, cannot be read.
    """
    for item in read_items(path):
        if not item.ok:
            raise ReadError(item.path, item.error or "unreadable", item.line)
        yield item.line, item.record


@dataclass(frozen=True)
class _Failed:
    """In place of a collector's summary: why its code failed (a finding at the end of the run)."""

    message: str


class _Dropped:
    """In place of a collector that could not be made: it takes nothing and sums up nothing."""

    def add(self, record: Any, ctx: RuleContext) -> None:
        pass

    def summary(self) -> None:
        return None


class _Open:
    """What the rules keep of the file being read: its file rules done, its collectors."""

    __slots__ = ("again", "collectors", "failed", "filed", "groups", "held")

    def __init__(self, filed: bool, path: str) -> None:
        self.filed: set[tuple[str, str]] | None = None if filed else set()
        """The family and version whose file rules ran (None: leave them to another part)."""
        self.collectors: dict[Rule, Collector] = {}
        self.failed: Summaries = []
        self.held: dict[tuple[Rule, str, str], tuple[Collector, RuleContext]] = {}
        self.groups = file_groups(path)
        """The values of the file's `{file: ...}` operands, for every record of it."""
        self.again = False
        """Whether a record of the file was read before."""


class _Same(NamedTuple):
    """The rules of the file, family and version of the record read last, ready to run."""

    path: str
    family: str
    version: str
    record: tuple[Rule, ...]
    groups: dict[str, str]
    collecting: tuple[tuple[Rule, Collector, RuleContext], ...]


class RuleRun:
    """The state of the rules over one run (or over one worker's share of it)."""

    def __init__(self, registry: Registry, selection: Selection) -> None:
        self.registry = registry
        self.selection = selection
        self._sets: dict[tuple[str, str, tuple[int, ...]], RuleSet] = {}
        self._files: dict[str, _Open] = {}
        self._unfiled: set[str] = set()
        self._path: str | None = None
        self._held: tuple[int, ...] = ()
        """The per-path entries of the selection that hold for the file read last."""
        self._heres: dict[tuple[int, ...], Selection] = {(): selection.at(None)}
        self.summaries: Summaries = []
        self._same: _Same | None = None
        """What the next record of the file, family and version of the last one runs."""

    def _held_at(self, path: str | None) -> tuple[int, ...]:
        if path is not self._path and path != self._path:
            entries = self.selection.paths
            self._path = path
            self._held = tuple(
                i for i, entry in enumerate(entries) if path is not None and entry.matches(path)
            )
        return self._held

    def here(self, path: str | None) -> Selection:
        """Return the selection for one file (see `Selection.at`; one per set of per-path
        entries that hold)."""
        held = self._held_at(path) if self.selection.paths else ()
        found = self._heres.get(held)
        if found is None:
            found = self._heres[held] = self.selection.at(path)
        return found

    def rules(self, family: str, version: str, path: str | None = None) -> RuleSet:
        """Return the rules that apply to a version of a family in this run (in file `path`)."""
        held = self._held_at(path) if self.selection.paths else ()
        found = self._sets.get((family, version, held))
        if found is None:
            here = self.here(path)
            own = rule_set(self.registry, family, version, here)
            if self.selection.paths:  # collection rules take every file's records
                every = rule_set(self.registry, family, version, self.selection)
                own = RuleSet(own.record, own.file, every.collection)
            found = self._sets[family, version, held] = own
        return found

    def issues(
        self, record: Any, path: str, line: int | None, family: str, version: str
    ) -> list[Issue]:
        """Run the record and file rules on one record, and give it to the collectors."""
        same = self._same
        # The next line of a JSONL file, most likely:
        if same is None or same.path != path or same[1:3] != (family, version):
            same = None
            rules = self.rules(family, version, path)  # loading rules prints as it would
            if not rules:
                return []
        # Standard output is caught once for every rule the record meets (see `run_rule_code`).
        held = hold_stdout()
        try:
            if same is not None:
                return self._again(same, record, line)
            return self._first(rules, record, path, line, family, version)
        finally:
            release_stdout(held)

    def _first(
        self, rules: RuleSet, record: Any, path: str, line: int | None, family: str, version: str
    ) -> list[Issue]:
        """Run the rules on a record (the file's first of its family and version, maybe)."""
        state = self._files.get(path)
        if state is None:
            state = self._files[path] = _Open(path in self._unfiled, path)
        groups = state.groups
        found = (
            check(rules.record, record, family, version, path, line, groups) if rules.record else []
        )
        if rules.file and state.filed is not None and (family, version) not in state.filed:
            state.filed.add((family, version))
            found += check(rules.file, record, family, version, path, line, groups)
        held_by = state.held
        for rule in rules.collection:
            held = held_by.get((rule, family, version))
            if held is None:
                held = held_by[rule, family, version] = self._start(
                    state, rule, path, family, version
                )
            held[1].line = line
            _, failure = run_rule_code(held[0].add, record, held[1])
            if failure is not None:
                found.append(rule.issue("", failure))
        if state.again:
            # A file of many records: its file rules have run (or are another part's), so the
            # next record of the same family and version needs its record rules and collectors.
            collecting = tuple((r, *held_by[r, family, version]) for r in rules.collection)
            self._same = _Same(path, family, version, rules.record, groups, collecting)
        state.again = True
        return self._judged(found, path)

    def _again(self, same: _Same, record: Any, line: int | None) -> list[Issue]:
        """Run the rules of a record of the file, family and version of the one before."""
        path, family, version = same.path, same.family, same.version
        found = (
            check(same.record, record, family, version, path, line, same.groups)
            if same.record
            else []
        )
        for rule, collector, ctx in same.collecting:
            ctx.line = line
            _, failure = run_rule_code(collector.add, record, ctx)
            if failure is not None:
                found.append(rule.issue("", failure))
        return self._judged(found, path) if found else found

    def _judged(self, found: list[Issue], path: str) -> list[Issue]:
        """Return the findings as the selection of their file wants them."""
        if found:
            here = self.here(path)
            if here.restyles:
                found = [judged for issue in found if (judged := here.judge(issue)) is not None]
        return found

    @staticmethod
    def _start(
        state: _Open, rule: Rule, path: str, family: str, version: str
    ) -> tuple[Collector, RuleContext]:
        assert rule.collector is not None
        collector = state.collectors.get(rule)
        if collector is None:
            collector, failure = run_rule_code(rule.collector, path)
            if failure is not None:
                collector = _Dropped()
            state.collectors[rule] = collector
            if failure is not None:
                state.failed.append(((rule.family, rule.id), path, _Failed(failure)))
        return collector, RuleContext(rule, family, version, path, None)

    def skip_file_rules(self, path: str) -> None:
        """Leave out the file rules of `path`: they run on the part that holds its start."""
        self._unfiled.add(path)
        self._same = None

    def close(self, path: str) -> Summaries:
        """End a file (or a part of one): return its collectors' summaries, keep them too."""
        self._same = None
        self._unfiled.discard(path)
        state = self._files.pop(path, None)
        if state is None:
            return []
        closed: Summaries = list(state.failed)
        held = hold_stdout()
        try:
            for rule, collector in state.collectors.items():
                summary, failure = run_rule_code(collector.summary)
                if failure is not None:
                    summary = _Failed(failure)
                if summary is not None:
                    closed.append(((rule.family, rule.id), path, summary))
        finally:
            release_stdout(held)
        self.summaries += closed
        return closed

    def take(self, summaries: Summaries) -> None:
        """Keep summaries a worker sent back (in input order)."""
        self.summaries += summaries

    def finish(self) -> list[Located]:
        """Finish every collection rule of the run on the summaries of every file."""
        # Finishing builds structures as large as the run's summaries, all alive until it is
        # done: collecting garbage meanwhile would walk them again and again for none.
        with collector_paused():
            return self._finish()

    def _finish(self) -> list[Located]:
        by_rule: dict[tuple[str, str], list[tuple[str, Any]]] = {}
        for key, path, summary in self.summaries:
            by_rule.setdefault(key, []).append((path, summary))
        found: list[Located] = []
        for (family, rule_id), summaries in by_rule.items():
            (rule,) = (r for r in family_rules(self.registry, family) if r.id == rule_id)
            failed = [(p, s) for p, s in summaries if isinstance(s, _Failed)]
            if failed:
                summaries = [(p, s) for p, s in summaries if not isinstance(s, _Failed)]
            located = [Located(p, None, rule.issue("", s.message)) for p, s in failed]
            for one in [*located, *finish_collection(rule, summaries, read_records)]:
                judged = self.here(one.path).judge(one.issue)
                if judged is not None:
                    found.append(Located(one.path, one.line, judged))
        return found
