"""The summary of a detect or validate run: counts over every record, per rule, per version.

`Summary.add` takes each result of `check_paths` or `validate_paths` in turn. Besides the
totals, it counts the files and findings of each rule (JSON Schema problems as `schema`, an
unknown version as `version`, an undecided family as `detect`, unreadable files and lines as
`unreadable`) and the files, records and findings of each family and version, so that a run
over a datastore of thousands of files ends with a few lines that say where its problems are.
`ProblemGroups` counts the problems alike of each file, to report each kind once.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from evalreg.batch.records import RecordCheck, RuleFinding, ValidRun
from evalreg.engine.validators import Issue
from evalreg.registry.versions import is_version, parse_version

UNDECIDED = "-"
"""The family and version of records whose family or version could not be decided."""


def code(issue: Issue) -> str:
    """Return what a finding is counted under: its rule's id, `schema`, `version` or `detect`."""
    if issue.rule:
        return issue.rule
    return issue.keyword if issue.keyword in ("version", "detect") else "schema"


@dataclass
class Tally:
    """The files, records and findings of one rule, or of one family and version."""

    records: int = 0
    invalid: int = 0
    """Records with an error (of a version)."""
    errors: int = 0
    warnings: int = 0
    paths: set[str] = field(default_factory=set, repr=False)

    @property
    def files(self) -> int:
        """Return how many files the records or findings are in."""
        return len(self.paths)

    @property
    def findings(self) -> int:
        """Return the errors and warnings."""
        return self.errors + self.warnings

    def found(self, path: str, issue: Issue) -> None:
        """Count one finding in `path`."""
        self.paths.add(path)
        if issue.severity == "warning":
            self.warnings += 1
        else:
            self.errors += 1


def _version_order(key: tuple[str, str]) -> tuple[Any, ...]:
    family, version = key
    if family == UNDECIDED:
        return (1, "", 0, version)
    if is_version(version):
        return (0, family, 0, parse_version(version))
    return (0, family, 1, version)


@dataclass
class Summary:
    """Counts over a run."""

    files: int = 0
    records: int = 0
    valid: int = 0
    invalid: int = 0
    unreadable: int = 0
    across: int = 0
    """Errors found by rules across files (companions, duplicates), beside the records'."""
    warnings: int = 0
    """Findings of rules whose severity is warning (they leave records valid)."""
    known: int = 0
    """Findings left out because the baseline holds them."""
    known_records: int = 0
    """Records whose every problem is in the baseline (counted neither valid nor invalid)."""
    rules: dict[str, Tally] = field(default_factory=dict)
    """Per rule id (`schema`, `version`, `detect`, `unreadable` for the others): the findings
    reported, not those of the baseline."""
    versions: dict[tuple[str, str], Tally] = field(default_factory=dict)
    """Per family and version (`-` when undecided): records, records with errors, findings."""
    _paths: set[str] = field(default_factory=set, repr=False)

    def _rule(self, name: str) -> Tally:
        found = self.rules.get(name)
        if found is None:
            found = self.rules[name] = Tally()
        return found

    def _version(self, family: str | None, version: str | None) -> Tally:
        key = (family or UNDECIDED, version or UNDECIDED)
        found = self.versions.get(key)
        if found is None:
            found = self.versions[key] = Tally()
        return found

    def add(self, check: RecordCheck | ValidRun | RuleFinding) -> None:
        """Count one record (or a run of valid ones, or a finding across files)."""
        if isinstance(check, RuleFinding):
            if check.known:
                self.known += 1
            elif check.issue.severity == "warning":
                self.warnings += 1
            else:
                self.across += 1
            if not check.known:
                self._rule(code(check.issue)).found(check.path, check.issue)
            return
        if check.path not in self._paths:
            self._paths.add(check.path)
            self.files += 1
        if isinstance(check, ValidRun):
            self.records += check.count
            self.valid += check.count
            tally = self._version(check.family, check.version)
            tally.records += check.count
            tally.paths.add(check.path)
            return
        self.known += check.known
        if check.error is not None:  # an unreadable file or line, reported or known
            if check.status == "unreadable":
                self.unreadable += 1
                issue = Issue("", check.error, "unreadable")
                self._rule("unreadable").found(check.path, issue)
            return
        self.records += 1
        if check.status == "known":
            self.known_records += 1
        elif check.status in ("valid", "detected"):
            self.valid += 1
        else:
            self.invalid += 1
        tally = self._version(check.family, check.version)
        tally.records += 1
        tally.paths.add(check.path)
        tally.invalid += check.status in ("invalid", "undetected")
        for issue in check.issues:
            self.warnings += issue.severity == "warning"
            self._rule(code(issue)).found(check.path, issue)
            tally.found(check.path, issue)

    def extend(self, checks: Iterable[RecordCheck | ValidRun | RuleFinding]) -> None:
        """Count every result of a run."""
        for check in checks:
            self.add(check)

    @property
    def ok(self) -> bool:
        """Return whether every record was read and is valid (or all its problems are known),
        and no rule failed across files."""
        return self.invalid == 0 and self.unreadable == 0 and self.across == 0

    def rule_rows(self) -> list[tuple[str, Tally]]:
        """Return the rules with findings, the most found first."""
        return sorted(self.rules.items(), key=lambda row: (-row[1].findings, row[0]))

    def version_rows(self) -> list[tuple[tuple[str, str], Tally]]:
        """Return the families and versions read, in order of family and version."""
        return sorted(self.versions.items(), key=lambda row: _version_order(row[0]))

    def as_dict(self) -> dict[str, Any]:
        """Return the counts as plain data (JSON's `summary`)."""
        counts: dict[str, Any] = {
            "files": self.files,
            "records": self.records,
            "valid": self.valid,
            "invalid": self.invalid,
            "unreadable": self.unreadable,
            "across_files": self.across,
            "warnings": self.warnings,
        }
        if self.known or self.known_records:
            counts |= {"known": self.known, "known_records": self.known_records}
        counts["rules"] = [
            {"rule": name, "files": t.files, "errors": t.errors, "warnings": t.warnings}
            for name, t in sorted(self.rules.items())
        ]
        counts["versions"] = [
            {
                "family": None if family == UNDECIDED else family,
                "version": None if version == UNDECIDED else version,
                "files": t.files,
                "records": t.records,
                "invalid": t.invalid,
                "findings": t.findings,
            }
            for (family, version), t in self.version_rows()
        ]
        return counts


_INDEX = re.compile(r"/\d+(?=/|$)")


@dataclass
class ProblemGroup:
    """Problems alike of one file: the first of them, and how often and on how many records.

    Alike: the same message of the same rule or keyword and severity, at pointers that differ
    only in array indices (`pattern`, the pointer with `*` for each index).
    """

    check: RecordCheck | RuleFinding
    """The check of the first of them."""
    issue: Issue | None
    """The first of them (None: the check is of an unreadable file or line, alone)."""
    pattern: str
    count: int = 1
    lines: set[int | None] = field(default_factory=set)
    """The lines of the records that have them."""

    @property
    def records(self) -> int:
        """Return how many records have them."""
        return len(self.lines)


class ProblemGroups:
    """The problems of a run's checks, file by file, each kind of problem once with its count.

    `add` the checks in file order; the groups of a file come once the next file begins, or
    from `flush` at the end, in the order their problems first came.
    """

    def __init__(self) -> None:
        self.path: str | None = None
        self._groups: dict[Any, ProblemGroup] = {}

    def add(self, check: RecordCheck | RuleFinding) -> list[ProblemGroup]:
        """Take one check; return the groups of the file before it, when it is another file."""
        done = self.flush() if check.path != self.path else []
        self.path = check.path
        if check.status == "unreadable":
            self._groups[object()] = ProblemGroup(check, None, "", 1, {check.line})
        for issue in check.issues:
            pattern = _INDEX.sub("/*", issue.pointer) or "/"
            key = (issue.severity, issue.rule, issue.keyword, issue.message, pattern)
            found = self._groups.get(key)
            if found is None:
                self._groups[key] = ProblemGroup(check, issue, pattern, 1, {check.line})
            else:
                found.count += 1
                found.lines.add(check.line)
        return done

    def flush(self) -> list[ProblemGroup]:
        """Return the groups of the file taken so far, and forget them."""
        groups = list(self._groups.values())
        self._groups.clear()
        return groups
