"""Rules beyond JSON Schema: running a family's declared and Python rules on records.

Three scopes. A record rule checks each record (relations between its fields); a file rule
checks each file once, with its first record of the family (its path, its name); a collection
rule sees the whole run: in the process that reads a file, a `Collector` takes each record and
keeps a small summary, and at the end `finish` compares the summaries of every file.

A Python rule is a module `rules/<family>/<name>.py` whose docstring's first line says what
must hold, declaring `ID`, and optionally `SEVERITY` (error, warning), `SCOPE` (record, file,
collection), `VERSIONS` (a specifier such as ">=0.2" or a list of versions) and, for a
collection rule, `ALSO` (other families whose records its collectors take too, at any version):

    def check(record, ctx):                 # record and file scope
        if ...:
            ctx.report("/score", "the score is above max_score")

    class Collector:                        # collection scope: one per file
        def __init__(self, path): ...
        def add(self, record, ctx): ...     # every record of the file at a version it covers
        def summary(self): ...              # small plain data (it may cross processes), or None

    def finish(summaries, ctx):             # [(path, summary), ...] in input order
        ctx.report("/x", "...", path=..., line=None)

A large JSONL file may be read in parts by several processes: its path then comes with one
summary per part, in order, and `finish` combines them.
"""

from __future__ import annotations

import inspect
import os
import sys
import threading
from _thread import get_ident
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from evalreg.engine.conditions import (
    Check,
    compile_rules,
    declared_check,
    reads_file,
    rules_source,
)
from evalreg.engine.modules import fails_alone, load_module
from evalreg.engine.selection import ALL_RULES, Selection
from evalreg.engine.validators import Issue
from evalreg.errors import RegistryError, cut_repr, one_line
from evalreg.registry.rules import (
    RuleSpec,
    Scope,
    Severity,
    Versions,
    rule_id,
    scope,
    severity,
    versions,
)

if TYPE_CHECKING:
    from evalreg.registry.core import BaseRegistry


class RuleContext:
    """What a rule sees besides the record: where the record is, and where to report."""

    __slots__ = ("family", "findings", "line", "path", "rule", "version")

    def __init__(
        self, rule: Rule, family: str, version: str, path: str | None, line: int | None
    ) -> None:
        self.rule = rule
        self.family = family
        self.version = version
        self.path = path
        """The record's file (None for a record that comes from no file)."""
        self.line = line
        """The record's line in a JSONL file (None for a whole-document file)."""
        self.findings: list[Issue] = []

    def report(self, pointer: str, message: str) -> None:
        """Report that the record breaks the rule at `pointer`."""
        self.findings.append(self.rule.issue(pointer, message))


@dataclass(frozen=True)
class Located:
    """A finding of a collection rule: the file and line it concerns, and the issue."""

    path: str
    line: int | None
    issue: Issue


class FinishContext:
    """What a collection rule's `finish` sees: where to report, and a way to read other files."""

    def __init__(self, rule: Rule, read: Callable[[str], Iterator[tuple[int | None, Any]]]):
        self.rule = rule
        self.findings: list[Located] = []
        self._read = read

    def report(self, pointer: str, message: str, *, path: str, line: int | None = None) -> None:
        """Report that the record of `path` (at `line`, for JSONL) breaks the rule."""
        self.findings.append(Located(path, line, self.rule.issue(pointer, message)))

    def read(self, path: str) -> Iterator[tuple[int | None, Any]]:
        """Yield `(line, record)` of a file the run did not include (a companion, say).

        Raises:
            ReadError: the file or one of its lines cannot be read.
        """
        return self._read(path)


class Collector(Protocol):
    """The per-file part of a collection rule."""

    def add(self, record: Any, ctx: RuleContext) -> None: ...

    def summary(self) -> Any: ...


@dataclass(frozen=True, eq=False)
class Rule:
    """One rule of a family, declared in its manifest or written in Python, ready to run."""

    id: str
    family: str
    severity: Severity
    scope: Scope
    versions: Versions
    description: str
    source: str
    check: Callable[[Any, RuleContext, dict[str, str]], None] | None = None
    """Record and file scope: check one record, reporting to the context."""
    code: Callable[[Any, RuleContext], None] | None = None
    """A Python record or file rule: its module's `check`, which `check` above runs as user
    code (what it raises or prints is a finding); `Checks` calls it directly."""
    groups: bool = True
    """Whether `check` reads the values of the file's `{file: ...}` operands (`file_groups`)."""
    collector: Callable[[str], Collector] | None = None
    finish: Callable[[list[tuple[str, Any]], FinishContext], None] | None = None
    also: tuple[str, ...] = ()
    """Collection scope: other families whose records the collectors take too."""

    def observes(self, family: str, version: str) -> bool:
        """Return whether this collection rule's collectors take a record of `family`."""
        return family in self.also or (family == self.family and version in self.versions)

    def issue(self, pointer: str, message: str) -> Issue:
        """Return an issue of this rule; its message on one line, of at most `MAX_MESSAGE` chars."""
        if len(message) > MAX_MESSAGE or not message.isprintable():
            message = one_line(message, MAX_MESSAGE)
        return Issue(pointer, message, "rule", rule=self.id, severity=self.severity)


MAX_MESSAGE = 1000
"""The longest message of a rule's finding, in characters (longer ones are cut); line ends and
other control characters in a message become spaces, so that a finding is one line."""


# -- running a rule's code ----------------------------------------------------------------------


class _Printed:
    """What a rule's code wrote to standard output while it ran (in the main thread)."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def write(self, text: str) -> int:
        self.parts.append(text)
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    def take(self) -> str:
        """Return what was written, and forget it."""
        text = "".join(self.parts)
        self.parts.clear()
        return text


_printed = _Printed()
HELD_OUTPUT = _printed.parts
"""What rule code wrote while `hold_stdout` held standard output, not yet taken (see
`rule_output`): a quick test that it wrote nothing."""
_main = threading.main_thread().ident


def _forked() -> None:
    global _main
    _main = threading.main_thread().ident


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forked)


def run_rule_code(function: Callable[..., Any], *args: Any) -> tuple[Any, str | None]:
    """Call a Python rule's code; return what it returned, and None or why it fails the record.

    A rule is user code: what it raises is its failure, `sys.exit()` included (Ctrl-C and the
    run's own stop on a signal go on up). In the main thread, what it writes to standard output
    is kept off the report and is its failure too: it would break `--format json`.
    """
    if get_ident() != _main:
        return call_held(function, *args, caught=False)
    saved = sys.stdout  # `_printed` itself where `hold_stdout` holds it: nothing to swap
    sys.stdout = _printed
    try:
        return call_held(function, *args, caught=True)
    finally:
        sys.stdout = saved


def call_held(function: Callable[..., Any], *args: Any, caught: bool) -> tuple[Any, str | None]:
    """Call rule code as `run_rule_code` does, where standard output is held already (`caught`:
    `hold_stdout` returned something, so what the code writes is its failure). The loops that
    run for every record (`Checks.held`, the collectors' `add`) do the same in place."""
    try:
        value = function(*args)
    except BaseException as err:
        return None, rule_failure(err, caught)
    return value, (rule_output() if caught and HELD_OUTPUT else None)


def rule_output() -> str | None:
    """Return the finding of what rule code wrote to standard output while `hold_stdout` held
    it, forgetting it (None: nothing)."""
    if _printed.parts:
        return f"the rule wrote to standard output: {cut_repr(_printed.take(), 200)}"
    return None


def rule_failure(err: BaseException, caught: bool) -> str:
    """Return the finding of rule code that raised `err` while `hold_stdout` held standard
    output (`caught`: it returned something), forgetting what the code wrote, as
    `run_rule_code` does; raise `err` again if it stops the run."""
    if caught:
        _printed.parts.clear()
    return _failed(err)


def hold_stdout() -> Any:
    """Catch standard output for the rules' code (`run_rule_code`) until `release_stdout`, so
    that a run of many rules swaps it once; return what to give `release_stdout`."""
    if get_ident() != _main:
        return None
    saved = sys.stdout
    sys.stdout = _printed
    return saved


def release_stdout(saved: Any) -> None:
    """Give standard output back, as it was before `hold_stdout`."""
    if saved is not None:
        sys.stdout = saved


def _failed(err: BaseException) -> str:
    """Return the finding of a rule that raised `err` (raise it again if it stops the run)."""
    if not fails_alone(err):
        raise err
    return f"the rule failed: {type(err).__name__}: {err}"


# -- declarative rules --------------------------------------------------------------------------


def declared(spec: RuleSpec, check: Check | None = None) -> Rule:
    """Return the runnable form of a manifest's declarative rule (`check`: compiled already)."""
    return Rule(
        id=spec.id,
        family=spec.family,
        severity=spec.severity,
        scope=spec.scope,
        versions=spec.versions,
        description=spec.message,
        source=spec.source,
        check=check or declared_check(spec),
        groups=reads_file(spec),
    )


def declared_source(registry: BaseRegistry, family: str, version: str | None = None) -> str:
    """Return the Python source that the declared rules of a family compile to (those that apply
    to `version`, if given), to read or to debug them.

    Raises:
        UnknownFamilyError: no such family.
        UnknownVersionError: the family has no such version.
    """
    specs = registry.manifest(family).rules
    title = family
    if version is not None:
        version = registry.resolve_version(family, version)
        specs = tuple(spec for spec in specs if version in spec.versions)
        title = f"{family}@{version}"
    return rules_source(specs, title)


# -- Python rules -------------------------------------------------------------------------------


def load_rule(path: Path, family: str) -> Rule:
    """Load and check one Python rule module.

    Raises:
        RegistryError: the module fails to load or does not declare what its scope needs.
    """
    module = load_module(path, "evalreg_rules", family)
    where = str(path)
    ident = rule_id(getattr(module, "ID", None), where)
    kind = scope(getattr(module, "SCOPE", None), where)
    description = (inspect.getdoc(module) or "").strip().split("\n", 1)[0]
    if not description:
        raise RegistryError(where, "a rule module's docstring must say what must hold")
    check = collector = finish = function = None
    also: tuple[str, ...] = ()
    if kind == "collection":
        collector = getattr(module, "Collector", None)
        finish = getattr(module, "finish", None)
        if not callable(collector) or not callable(finish):
            raise RegistryError(where, "a collection rule must define Collector and finish()")
        raw = getattr(module, "ALSO", ())
        if not isinstance(raw, (list, tuple)) or not all(isinstance(f, str) for f in raw):
            raise RegistryError(where, "ALSO must be a list of family names")
        also = tuple(raw)
    else:
        function = getattr(module, "check", None)
        if not callable(function):
            raise RegistryError(where, f"a {kind} rule must define check(record, ctx)")

        def check(record: Any, ctx: RuleContext, groups: dict[str, str]) -> None:
            failure = run_rule_code(function, record, ctx)[1]
            if failure is not None:
                ctx.report("", failure)

    return Rule(
        id=ident,
        family=family,
        severity=severity(getattr(module, "SEVERITY", None), where),
        scope=kind,
        versions=versions(getattr(module, "VERSIONS", None), where),
        description=description,
        source=where,
        check=check,
        code=function,
        groups=False,
        collector=collector,
        finish=finish,
        also=also,
    )


def _load_family(registry: BaseRegistry, family: str) -> tuple[Rule, ...]:
    specs = registry.manifest(family).rules
    rules = [declared(s, c) for s, c in zip(specs, compile_rules(specs, family), strict=True)]
    rules += [load_rule(path, family) for path in registry.rule_files(family)]
    seen: dict[str, str] = {}
    families = set(registry.families())
    for rule in rules:
        if rule.id in seen:
            raise RegistryError(rule.source, f"rule id {rule.id} is also used by {seen[rule.id]}")
        seen[rule.id] = rule.source
        unknown = sorted(set(rule.also) - families)
        if unknown:
            raise RegistryError(rule.source, f"ALSO names unknown families: {', '.join(unknown)}")
    return tuple(rules)


def _new_cache(registry: BaseRegistry) -> dict[str, tuple[Rule, ...]]:
    return {}


def family_rules(registry: BaseRegistry, family: str) -> tuple[Rule, ...]:
    """Return every rule of a family, declared ones first (loaded on first use).

    Raises:
        UnknownFamilyError: no such family.
        RegistryError: a rule is malformed, or two rules share an id.
    """
    cache = registry.derived("rules", _new_cache)
    found = cache.get(family)
    if found is None:
        found = cache[family] = _load_family(registry, family)
    return found


# -- choosing and running rules -----------------------------------------------------------------


@dataclass(frozen=True)
class RuleSet:
    """The rules that apply to one version of a family in one run, by scope."""

    record: tuple[Rule, ...] = ()
    file: tuple[Rule, ...] = ()
    collection: tuple[Rule, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.record or self.file or self.collection)


EMPTY = RuleSet()


def rule_set(
    registry: BaseRegistry, family: str, version: str, selection: Selection = ALL_RULES
) -> RuleSet:
    """Return the rules of `selection` that apply to `version` of `family`.

    Its collection rules are those whose collectors take such records: the family's own, and
    those of other families that name it in `ALSO`, wherever `selection` applies them (which of
    their findings it keeps is decided by file, see `Selection.judge`); its record and file
    rules are those `selection` applies to every file (see `Selection.at` for one file's).

    Raises:
        RegistryError: a rule is malformed.
    """
    if not selection.enabled:
        return EMPTY
    own = [r for r in family_rules(registry, family) if version in r.versions]
    own = [r for r in own if r.scope != "collection" and selection.wants(r.id, r.severity)]
    observers = [
        r
        for f in registry.families()
        for r in family_rules(registry, f)
        if r.scope == "collection"
        and r.observes(family, version)
        and selection.anywhere(r.id, r.severity)
    ]
    if not own and not observers:
        return EMPTY
    return RuleSet(
        record=tuple(r for r in own if r.scope == "record"),
        file=tuple(r for r in own if r.scope == "file"),
        collection=tuple(observers),
    )


class Checks:
    """Record or file rules ready to run on record after record: each keeps one context, whose
    fields are set for each record; the caller holds standard output once for them all."""

    __slots__ = ("_steps", "groups", "rules")

    def __init__(self, rules: Sequence[Rule]) -> None:
        steps = []
        for rule in rules:
            assert rule.check is not None
            ctx = RuleContext(rule, "", "", None, None)
            steps.append((rule.code or rule.check, ctx, rule.code is not None))
        self._steps: tuple[tuple[Callable[..., None], RuleContext, bool], ...] = tuple(steps)
        self.groups = any(rule.groups for rule in rules)
        """Whether a rule reads the file's groups (else any dict will do for `held`'s)."""
        self.rules = len(steps)
        """How many rules there are."""

    def __bool__(self) -> bool:
        return bool(self.rules)

    def held(
        self,
        record: Any,
        family: str,
        version: str,
        path: str | None,
        line: int | None,
        groups: dict[str, str],
        caught: bool,
    ) -> list[Issue]:
        """Return the findings of the rules on one record (`groups`: `file_groups(path)`), where
        `hold_stdout` holds standard output (`caught`: it returned something, so what a Python
        rule writes is its failure, as in `run_rule_code`)."""
        found: list[Issue] = []
        for call, ctx, python in self._steps:
            ctx.family, ctx.version, ctx.path, ctx.line = family, version, path, line
            try:
                if python:
                    call(record, ctx)
                else:
                    call(record, ctx, groups)
            except BaseException as err:  # a rule is user code: its failure is a finding
                ctx.report("", rule_failure(err, python and caught))
            else:
                if python and caught and HELD_OUTPUT and (wrote := rule_output()) is not None:
                    ctx.report("", wrote)
            if ctx.findings:
                found += ctx.findings
                ctx.findings = []
        return found


def file_groups(path: str | None) -> dict[str, str]:
    """Return the values of the `{file: path}` and `{file: name}` operands."""
    if path is None:
        return {}
    shown = path.replace(os.sep, "/")
    return {"$path": shown, "$name": shown.rsplit("/", 1)[-1]}


def check(
    rules: Sequence[Rule],
    record: Any,
    family: str,
    version: str,
    path: str | None = None,
    line: int | None = None,
    groups: dict[str, str] | None = None,
) -> list[Issue]:
    """Return the findings of record or file rules on one record (empty when it breaks none).

    File rules are given a file's first record of the family (`RuleSet.file`), record rules
    every record (`RuleSet.record`). `groups`: `file_groups(path)`, if the caller keeps it.
    """
    if groups is None:
        groups = file_groups(path)
    held = hold_stdout()
    try:
        return Checks(rules).held(record, family, version, path, line, groups, held is not None)
    finally:
        release_stdout(held)


def finish_collection(
    rule: Rule,
    summaries: list[tuple[str, Any]],
    read: Callable[[str], Iterator[tuple[int | None, Any]]],
) -> list[Located]:
    """Run a collection rule's `finish` on the summaries of every file, in input order."""
    ctx = FinishContext(rule, read)
    assert rule.finish is not None
    _, failure = run_rule_code(rule.finish, summaries, ctx)  # reading files too
    if failure is not None:
        where = summaries[0][0] if summaries else ""
        ctx.findings.append(Located(where, None, rule.issue("", failure)))
    return ctx.findings
