"""What a check found: each finding, the report of a whole check, and the run that gathers them.

Findings and reports are plain frozen values; `Run` is the mutable state of one check while it
runs, turned into a `CheckReport` at the end.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

    from evalreg.engine.registry import Registry


Severity = Literal["error", "warning", "note"]


@dataclass(frozen=True)
class Finding:
    """One result of a check: what is wrong (or worth knowing), and where."""

    severity: Severity
    check: str
    """Which check: load, versioning, metaschema, refs, pattern, lock, amendment, draft, step,
    unfinished (a generated step with TODOs left), path, exercise, missing-step, bump or
    exception."""
    message: str
    family: str | None = None
    version: str | None = None
    path: str = ""
    example: Any = None
    """For `exercise`: the smallest record (valid at the step's source) that the step fails on."""

    def __str__(self) -> str:
        where = " ".join(p for p in (self.family, self.version) if p)
        return f"{self.severity}: {where + ': ' if where else ''}{self.check}: {self.message}"

    def to_json(self) -> dict[str, Any]:
        """Return the finding as a JSON-able dict."""
        found: dict[str, Any] = {
            "severity": self.severity,
            "check": self.check,
            "family": self.family,
            "version": self.version,
            "path": self.path,
            "message": self.message,
        }
        if self.example is not None:
            found["example"] = self.example
        return found


@dataclass(frozen=True)
class CheckReport:
    """Every finding of a check, and how much was checked."""

    findings: tuple[Finding, ...]
    families: tuple[str, ...] = ()
    schemas: int = 0
    steps: int = 0
    """Step moves exercised (upgrades, and downgrades where a step defines one)."""
    records: int = 0
    """Generated records run through steps."""

    @property
    def errors(self) -> tuple[Finding, ...]:
        """Return the findings that fail the check."""
        return tuple(f for f in self.findings if f.severity == "error")

    @property
    def warnings(self) -> tuple[Finding, ...]:
        """Return the findings that do not fail the check but need attention."""
        return tuple(f for f in self.findings if f.severity == "warning")

    @property
    def ok(self) -> bool:
        """Return whether every check holds (no errors)."""
        return not self.errors

    def summary(self) -> str:
        """Return one line: what was checked and how many problems were found."""
        notes = len(self.findings) - len(self.errors) - len(self.warnings)
        return (
            f"{len(self.families)} families, {self.schemas} schemas, {self.steps} step moves "
            f"exercised on {self.records} generated records: {_count(len(self.errors), 'error')}, "
            f"{_count(len(self.warnings), 'warning')}, {_count(notes, 'note')}"
        )

    def to_json(self) -> dict[str, Any]:
        """Return the report as a JSON-able dict."""
        return {
            "ok": self.ok,
            "families": list(self.families),
            "schemas": self.schemas,
            "steps": self.steps,
            "records": self.records,
            "findings": [f.to_json() for f in self.findings],
        }


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


@dataclass
class Run:
    """One check while it runs: what it checks, its findings and counts so far, its caches."""

    registry: Registry
    examples: int
    seed: int | None
    findings: list[Finding] = field(default_factory=list)
    schemas: int = 0
    steps: int = 0
    records: int = 0
    generation_available: bool = True
    strategies: dict[tuple[str, str], SearchStrategy[Any]] = field(default_factory=dict)

    def add(
        self,
        severity: Severity,
        check: str,
        message: str,
        family: str | None = None,
        version: str | None = None,
        path: str | os.PathLike[str] = "",
        example: Any = None,
    ) -> None:
        """Record one finding."""
        self.findings.append(Finding(severity, check, message, family, version, str(path), example))
