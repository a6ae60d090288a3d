"""The inventory of a datastore: how many files and records of each family and version.

`Inventory` counts the checks of a detect run (`check_paths(..., validate=False)`): one row per
family and version, and rows for what could not be decided or read; with requirements, the files
whose records are behind a required version. The counts are those `evalreg detect` gives: the
same records, each counted once, and a file in every row one of its records is in.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from evalreg.errors import RequirementError, UnknownVersionError
from evalreg.registry.versions import parse_version

if TYPE_CHECKING:
    from evalreg.batch.records import RecordCheck
    from evalreg.engine.registry import Registry

UNDECIDED = ("ambiguous", "unknown", "unknown-version")
"""The states of records whose family or version detection could not decide."""


@dataclass(frozen=True)
class Row:
    """One line of the inventory: a family at a version, or what is undecided or unreadable."""

    state: str
    """`latest`, `behind` (an older version than the latest), `draft` (a version newer than the
    latest release, not released itself), `ambiguous`, `unknown`,
    `unknown-version` (a version the family does not know, stated as `version`) or `unreadable`."""
    family: str | None
    version: str | None
    files: int
    records: int
    latest: str | None = None
    required: str | None = None
    """The version required of the family, when one is."""

    @property
    def below_required(self) -> bool:
        """Return whether the row's records are at a version older than the one required."""
        if self.state not in ("latest", "behind", "draft") or self.required is None:
            return False
        assert self.version is not None
        return parse_version(self.version) < parse_version(self.required)


@dataclass(frozen=True)
class BehindFile:
    """A file with records at a version older than the one required of their family."""

    path: str
    family: str
    version: str
    records: int
    required: str


@dataclass
class Inventory:
    """Counts over the records of a run, by family and version (add each check, then read)."""

    files: int = 0
    records: int = 0
    """Records read (detected or undecided), as `evalreg detect` counts them."""
    detected: int = 0
    undecided: int = 0
    unreadable: int = 0
    _counts: dict[tuple[str, str | None, str | None], list[int]] = field(default_factory=dict)
    """(state, family, version) -> [files, records]."""
    _per_file: dict[tuple[str, str, str], int] = field(default_factory=dict)
    """(path, family, version) -> records, for the files behind a requirement."""
    _seen: set[tuple[str, str, str | None, str | None]] = field(default_factory=set)
    _path: str | None = None

    def add(self, check: RecordCheck) -> None:
        """Count one record's check (from a run that detects without validating)."""
        if check.path != self._path:
            self._path = check.path
            self.files += 1
        detection = check.detection
        if check.status == "unreadable" or detection is None:
            self.unreadable += 1
            key: tuple[str, str | None, str | None] = ("unreadable", None, None)
        elif detection.ok:
            self.records += 1
            self.detected += 1
            key = ("detected", detection.family, detection.version)
            assert detection.family is not None and detection.version is not None
            per_file = (check.path, detection.family, detection.version)
            self._per_file[per_file] = self._per_file.get(per_file, 0) + 1
        else:
            self.records += 1
            self.undecided += 1
            stated = detection.stated_version if detection.status == "unknown-version" else None
            family = detection.family if detection.status == "unknown-version" else None
            key = (detection.status, family, stated)
        counts = self._counts.get(key)
        if counts is None:
            counts = self._counts[key] = [0, 0]
        counts[1] += 1
        if (check.path, *key) not in self._seen:
            self._seen.add((check.path, *key))
            counts[0] += 1

    def rows(self, registry: Registry, required: Mapping[str, str] | None = None) -> list[Row]:
        """Return the rows: families and versions in order, then undecided, then unreadable."""
        required = required or {}
        rows: list[Row] = []
        for (state, family, version), (files, records) in self._counts.items():
            if state != "detected":
                rows.append(Row(state, family, version, files, records))
                continue
            assert family is not None and version is not None
            latest = registry.latest(family)
            if version == latest:
                state = "latest"
            elif parse_version(version) > parse_version(latest):
                state = "draft"  # newer than every release: not behind, not released either
            else:
                state = "behind"
            rows.append(
                Row(
                    state,
                    family,
                    version,
                    files,
                    records,
                    latest,
                    required.get(family),
                )
            )
        order = {
            "latest": 0,
            "behind": 0,
            "draft": 0,
            "unknown-version": 1,
            "ambiguous": 2,
            "unknown": 3,
        }
        return sorted(rows, key=lambda r: (order.get(r.state, 4), *_version_key(r)))

    def behind_files(self, required: Mapping[str, str]) -> Iterator[BehindFile]:
        """Yield the files whose records are older than the version required of their family."""
        for (path, family, version), records in self._per_file.items():
            wanted = required.get(family)
            if wanted is not None and parse_version(version) < parse_version(wanted):
                yield BehindFile(path, family, version, records, wanted)

    def files_at(self, versions: set[tuple[str | None, str | None]]) -> set[str]:
        """Return the files with records at any of `versions` (family, version pairs)."""
        return {path for path, family, version in self._per_file if (family, version) in versions}

    def summary(self, rows: list[Row]) -> dict[str, int]:
        """Return the totals (`as_dict`) and what of them is behind the latest version
        (`rows`: those of `rows`)."""
        behind = [row for row in rows if row.state == "behind"]
        return self.as_dict() | {
            "behind_latest": sum(row.records for row in behind),
            "behind_latest_files": len(self.files_at({(r.family, r.version) for r in behind})),
        }

    def as_dict(self) -> dict[str, int]:
        """Return the totals as a plain mapping (the keys of `evalreg detect`'s summary)."""
        return {
            "files": self.files,
            "records": self.records,
            "detected": self.detected,
            "undecided": self.undecided,
            "unreadable": self.unreadable,
        }


def _version_key(row: Row) -> tuple[str, tuple[object, ...]]:
    try:
        version: tuple[object, ...] = (0, parse_version(row.version)) if row.version else (0,)
    except ValueError:
        version = (1, row.version)
    return (row.family or "", version)


def take_inventory(checks: Iterable[RecordCheck]) -> Inventory:
    """Return the inventory of a stream of checks."""
    inventory = Inventory()
    for check in checks:
        inventory.add(check)
    return inventory


def requirements(
    registry: Registry, specs: Sequence[str], *, latest: bool = False
) -> dict[str, str]:
    """Return the version required of each family, from `FAMILY@VERSION` and `VERSION` specs.

    With `latest`, every family must be at its latest version; a bare `VERSION` sets the
    requirement of every family that has that version; a spec naming a family sets that
    family's, whatever the others say.

    Raises:
        UnknownFamilyError, UnknownVersionError: a spec names an unknown family or version.
        RequirementError: a bare version that no family has.
    """
    wanted: dict[str, str] = {}
    if latest:
        wanted = {family: registry.latest(family) for family in registry.families()}
    named: dict[str, str] = {}
    for spec in specs:
        family, at, version = spec.rpartition("@")
        if at:
            named[family] = registry.resolve_version(family, version)
            continue
        having = {}
        for family in registry.families():
            try:
                having[family] = registry.resolve_version(family, spec)
            except UnknownVersionError:
                continue
        if not having:
            raise RequirementError(spec)
        wanted |= having
    return wanted | named
