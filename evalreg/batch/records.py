"""What checking records gives, and the full check of one record that every faster way agrees with.

A record's check is a `RecordCheck`; consecutive valid records of one file are counted in a
`ValidRun`; a finding of a rule across files, reported once every file is read, is a
`RuleFinding`. `check_item` checks one read item in full: detection, validation and rules.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import orjson

from evalreg.batch.rules import RuleRun
from evalreg.engine.detect import Detection, remembered
from evalreg.engine.registry import Registry
from evalreg.engine.validate import undecided_issues
from evalreg.engine.validators import Issue
from evalreg.io.pointer import MISSING, resolve
from evalreg.io.readers import Item


@dataclass(frozen=True)
class RecordCheck:
    """The outcome of detecting (and validating) one record."""

    path: str
    line: int | None
    status: Literal["valid", "invalid", "unreadable", "detected", "undetected", "known"]
    """`known`: every problem of the record is in the baseline (see `batch.baseline`)."""
    detection: Detection | None = None
    issues: tuple[Issue, ...] = ()
    error: str | None = None
    known: int = 0
    """How many of its problems the baseline holds (they are not in `issues`)."""
    digests: tuple[str, ...] = ()
    """For each issue, a digest of the value it points at (`value_digest`), for baselines."""

    @property
    def family(self) -> str | None:
        """Return the family the record was checked against."""
        return self.detection.family if self.detection else None

    @property
    def version(self) -> str | None:
        """Return the version the record was checked against."""
        return self.detection.version if self.detection else None


@dataclass(frozen=True)
class ValidRun:
    """Consecutive records of one file, of one version, that are all valid: counted, not listed
    one by one."""

    path: str
    count: int
    family: str | None = None
    version: str | None = None


@dataclass(frozen=True)
class RuleFinding:
    """A finding of a collection rule (across files), reported once every file is read."""

    path: str
    line: int | None
    issue: Issue
    family: None = None
    version: None = None
    error: None = None
    known: bool = False
    """Whether the baseline holds it (then it is counted, not reported)."""

    @property
    def status(self) -> Literal["invalid", "valid", "known"]:
        """Return `invalid` for an error, `valid` for a warning (as a record check would), and
        `known` for a finding of the baseline."""
        if self.known:
            return "known"
        return "invalid" if self.issue.severity == "error" else "valid"

    @property
    def issues(self) -> tuple[Issue, ...]:
        """Return the finding as a one-issue tuple, like a record check's (none if known)."""
        return () if self.known else (self.issue,)


def check_item(
    registry: Registry,
    item: Item,
    *,
    family: str | None = None,
    version: str | None = None,
    validate: bool = True,
    rules: RuleRun | None = None,
) -> RecordCheck:
    """Detect and (unless `validate` is false) validate one read item, with `rules` too."""
    if not item.ok:
        return RecordCheck(item.path, item.line, "unreadable", error=item.error)
    record = item.record
    detection, decided = decide(registry, record, item.path, family, version)
    if not validate:
        status: Literal["detected", "undetected"] = "detected" if detection.ok else "undetected"
        return RecordCheck(item.path, item.line, status, detection)
    if decided:
        issues = registry.validate(record, detection.family, detection.version)
    elif family is None:
        # Undecided: say why. Detecting again without the file name could decide otherwise.
        issues = undecided_issues(registry, detection)
    else:
        # Undecided, or another family than the one asked for: `validate` says why, or reads
        # the version from the asked family's marker.
        issues = registry.validate(record, family, version)
    if decided and rules is not None:
        assert detection.family is not None and detection.version is not None
        issues += rules.issues(record, item.path, item.line, detection.family, detection.version)
    return outcome(item.path, item.line, detection, issues, record)


def decide(
    registry: Registry, record: Any, path: str, family: str | None, version: str | None
) -> tuple[Detection, bool]:
    """Return the detection of a record (`family` and `version`: as the caller forces them)
    and whether it decided the family and version to validate it at.

    The one place both ways of checking a record ask (`check_item`, and `QuickCheck`, which
    gives the full check wherever this does not decide), so that they cannot disagree on it.
    """
    if family is not None and version is not None:
        detection = Detection("detected", family, version)
    else:
        found = remembered(registry, record)  # most records: one of a shape seen before
        detection = registry.detect(record, path) if found is None else found
    return detection, detection.ok and family in (None, detection.family)


def outcome(
    path: str, line: int | None, detection: Detection, issues: list[Issue], record: Any
) -> RecordCheck:
    invalid = any(issue.severity == "error" for issue in issues)
    status: Literal["invalid", "valid"] = "invalid" if invalid else "valid"
    digests = tuple(value_digest(record, issue.pointer) for issue in issues)
    return RecordCheck(path, line, status, detection, tuple(issues), digests=digests)


def value_digest(record: Any, pointer: str) -> str:
    """Return a short digest of the value at `pointer` (`""` for the whole record, or none).

    A baseline tells a finding it holds from a new one by it: the same problem of another
    value is another finding.
    """
    if not pointer:
        return ""
    value = resolve(record, pointer)
    if value is MISSING:
        return ""
    try:
        data = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except (TypeError, orjson.JSONEncodeError):  # an integer beyond 64 bits, say
        data = repr(value).encode("utf-8", "surrogatepass")
    import hashlib  # only a run with a baseline digests values: not at every start

    return hashlib.sha256(data).hexdigest()[:16]
