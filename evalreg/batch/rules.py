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
    HELD_OUTPUT,
    Checks,
    Collector,
    Located,
    Rule,
    RuleContext,
    RuleSet,
    call_held,
    family_rules,
    file_groups,
    finish_collection,
    hold_stdout,
    release_stdout,
    rule_failure,
    rule_output,
    rule_set,
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

    __slots__ = ("again", "collectors", "failed", "filed", "groups")

    def __init__(self, filed: bool) -> None:
        self.filed: set[tuple[str, str]] | None = None if filed else set()
        """The family and version whose file rules ran (None: leave them to another part)."""
        self.collectors: dict[Rule, Collector] = {}
        self.failed: Summaries = []
        self.groups: dict[str, str] | None = None
        """The values of the file's `{file: ...}` operands, for every record of it (once a
        rule reads them)."""
        self.again = False
        """Whether a record of the file was read before."""


class _Plan(NamedTuple):
    """The rules of one family and version in a run, ready to run record after record."""

    record: Checks
    first: Checks | None
    """The record rules, then the file rules, for a file's first record of the family and
    version (None: there are no file rules)."""
    collecting: tuple[tuple[Rule, RuleContext, tuple[str, str]], ...]
    """Each collection rule, with the context its collectors are given (the file's path and
    the record's line set for each record) and the key of its summaries."""
    groups: bool
    """Whether a record or file rule reads the file's groups."""


class _Same(NamedTuple):
    """The rules of the file, family and version of the record read last, ready to run."""

    path: str
    family: str
    version: str
    record: Checks
    groups: dict[str, str]
    collecting: tuple[tuple[Rule, RuleContext, tuple[str, str]], ...]
    state: _Open


_NO_GROUPS: dict[str, str] = {}
"""The groups given to rules that read none."""


def _collect(
    collecting: tuple[tuple[Rule, RuleContext, tuple[str, str]], ...],
    state: _Open,
    record: Any,
    path: str,
    line: int | None,
    caught: bool,
) -> list[Issue]:
    """Give a record to the collectors of a file (made for its first record); return the
    failures of their code (standard output held: see `Checks.held`)."""
    found: list[Issue] = []
    collectors = state.collectors
    for rule, ctx, key in collecting:
        collector = collectors.get(rule)
        if collector is None:
            collector = _start(state, rule, key, path, caught)
        ctx.path, ctx.line = path, line
        try:
            collector.add(record, ctx)
        except BaseException as err:
            found.append(rule.issue("", rule_failure(err, caught)))
        else:
            if caught and HELD_OUTPUT and (wrote := rule_output()) is not None:
                found.append(rule.issue("", wrote))
    return found


def _start(state: _Open, rule: Rule, key: tuple[str, str], path: str, caught: bool) -> Collector:
    """Make the collector of a collection rule for a file (one that takes nothing if its code
    fails: the failure is reported at the end of the run); standard output held."""
    assert rule.collector is not None
    collector: Collector
    collector, failure = call_held(rule.collector, path, caught=caught)
    if failure is not None:
        collector = _Dropped()
        state.failed.append((key, path, _Failed(failure)))
    state.collectors[rule] = collector
    return collector


class RuleRun:
    """The state of the rules over one run (or over one worker's share of it)."""

    def __init__(self, registry: Registry, selection: Selection) -> None:
        self.registry = registry
        self.selection = selection
        self._sets: dict[tuple[str, str, tuple[int, ...]], RuleSet] = {}
        self._plans: dict[tuple[str, str, tuple[int, ...]], _Plan | None] = {}
        self._keys: dict[Rule, tuple[str, str]] = {}
        """The key of each collection rule's summaries: its family and id."""
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

    def _plan(self, family: str, version: str, path: str) -> _Plan | None:
        """Return the rules of `rules` ready to run (None: no rule applies)."""
        rules = self.rules(family, version, path)  # loading rules prints as it would
        plan = None
        if rules:
            record = Checks(rules.record)
            first = Checks(rules.record + rules.file) if rules.file else None
            collecting = []
            for rule in rules.collection:
                key = self._keys.setdefault(rule, (rule.family, rule.id))
                collecting.append((rule, RuleContext(rule, family, version, path, None), key))
            groups = record.groups or (first is not None and first.groups)
            plan = _Plan(record, first, tuple(collecting), groups)
        held = self._held_at(path) if self.selection.paths else ()
        self._plans[family, version, held] = plan
        return plan

    def issues(
        self, record: Any, path: str, line: int | None, family: str, version: str
    ) -> list[Issue]:
        """Run the record and file rules on one record, and give it to the collectors."""
        same = self._same
        # The next line of a JSONL file, most likely:
        if (
            same is not None
            and same.path == path
            and same.family == family
            and same.version == version
        ):
            return self._again(same, record, line)
        try:
            plan = self._plans[family, version, self._held_at(path) if self.selection.paths else ()]
        except KeyError:
            plan = self._plan(family, version, path)
        if plan is None:
            return []
        held = hold_stdout()  # once for every rule the record meets
        try:
            return self._first(plan, record, path, line, family, version, held is not None)
        finally:
            release_stdout(held)

    def _first(
        self,
        plan: _Plan,
        record: Any,
        path: str,
        line: int | None,
        family: str,
        version: str,
        caught: bool,
    ) -> list[Issue]:
        """Run the rules on a record (the file's first of its family and version, maybe)."""
        state = self._files.get(path)
        if state is None:
            state = self._files[path] = _Open(path in self._unfiled)
        groups = state.groups
        if groups is None:
            groups = _NO_GROUPS
            if plan.groups:
                groups = state.groups = file_groups(path)
        checks = plan.record
        filed = state.filed
        if plan.first is not None and filed is not None and (family, version) not in filed:
            filed.add((family, version))
            checks = plan.first
        found = checks.held(record, family, version, path, line, groups, caught)
        if plan.collecting:
            found += _collect(plan.collecting, state, record, path, line, caught)
        if state.again:
            # A file of many records: its file rules have run (or are another part's), so the
            # next record of the same family and version needs its record rules and collectors.
            self._same = _Same(path, family, version, plan.record, groups, plan.collecting, state)
        state.again = True
        return self._judged(found, path) if found else found

    def _again(self, same: _Same, record: Any, line: int | None) -> list[Issue]:
        """Run the rules of a record of the file, family and version of the one before."""
        path = same.path
        held = hold_stdout()
        try:
            caught = held is not None
            checks = same.record
            found = (
                checks.held(record, same.family, same.version, path, line, same.groups, caught)
                if checks.rules
                else []
            )
            if same.collecting:
                found += _collect(same.collecting, same.state, record, path, line, caught)
        finally:
            release_stdout(held)
        return self._judged(found, path) if found else found

    def _judged(self, found: list[Issue], path: str) -> list[Issue]:
        """Return the findings as the selection of their file wants them."""
        if found:
            here = self.here(path)
            if here.restyles:
                found = [judged for issue in found if (judged := here.judge(issue)) is not None]
        return found

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
        closed = state.failed  # the file's own, which nothing else holds
        if not state.collectors:
            self.summaries += closed
            return closed
        keys = self._keys
        held = hold_stdout()
        caught = held is not None
        try:
            for rule, collector in state.collectors.items():
                summary, failure = call_held(collector.summary, caught=caught)
                if failure is not None:
                    summary = _Failed(failure)
                if summary is not None:
                    closed.append((keys[rule], path, summary))
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
        failing: set[tuple[str, str]] = set()
        for key, path, summary in self.summaries:
            kept = by_rule.get(key)
            if kept is None:
                kept = by_rule[key] = []
            kept.append((path, summary))
            if type(summary) is _Failed:
                failing.add(key)
        found: list[Located] = []
        for (family, rule_id), summaries in by_rule.items():
            (rule,) = (r for r in family_rules(self.registry, family) if r.id == rule_id)
            located = []
            if (family, rule_id) in failing:
                failed = [(p, s) for p, s in summaries if type(s) is _Failed]
                summaries = [(p, s) for p, s in summaries if type(s) is not _Failed]
                located = [Located(p, None, rule.issue("", s.message)) for p, s in failed]
            for one in [*located, *finish_collection(rule, summaries, read_records)]:
                judged = self.here(one.path).judge(one.issue)
                if judged is not None:
                    found.append(Located(one.path, one.line, judged))
        return found
