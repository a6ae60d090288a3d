"""Detection: which family and version a record is, and the evidence for it.

Rules, in order:
1. markers: a family's version marker (e.g. `/schema_version`, or `/$schema` holding
   `agentv-eval-v2`); families that share a marker are told apart by structure, then by
   file name, then by validity;
2. file-name hints (`grading.json`) together with structure;
3. structure alone: the family's fingerprint, then the version (its era fingerprint, or the only
   version at which the record is valid).
Detection never falls back to a default: what it cannot decide is reported with the candidates.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from evalreg.versions import match_version

if TYPE_CHECKING:
    from evalreg.manifest import Fingerprint
    from evalreg.registry import Registry

Status = Literal["detected", "ambiguous", "unknown-version", "unknown"]


@dataclass(frozen=True)
class Evidence:
    """One observation that supports a detection."""

    rule: Literal["marker", "file-name", "structure", "validity", "only-version"]
    detail: str

    def __str__(self) -> str:
        return f"{self.rule}: {self.detail}"


@dataclass(frozen=True)
class Candidate:
    """A family (and version, where one could be told) that a record may belong to."""

    family: str
    version: str | None
    reason: str


@dataclass(frozen=True)
class Detection:
    """The outcome of detecting one record."""

    status: Status
    family: str | None = None
    version: str | None = None
    evidence: tuple[Evidence, ...] = ()
    candidates: tuple[Candidate, ...] = ()
    stated_version: str | None = None
    """The version the record states, when it is not one the registry knows."""
    reasons: tuple[str, ...] = field(default=())
    """Why detection failed (for `unknown` and `ambiguous`)."""

    @property
    def ok(self) -> bool:
        """Return whether both family and version were decided."""
        return self.status == "detected"

    def summary(self) -> str:
        """Return a one-line human description."""
        if self.status == "detected":
            because = "; ".join(str(e) for e in self.evidence)
            return f"{self.family}@{self.version} ({because})"
        if self.status == "unknown-version":
            return f"{self.family}: {'; '.join(self.reasons)}"
        if self.status == "ambiguous":
            options = ", ".join(
                f"{c.family}@{c.version}" if c.version else c.family for c in self.candidates
            )
            return f"ambiguous: one of {options} ({'; '.join(self.reasons)})"
        return f"unknown: {'; '.join(self.reasons)}"


def _describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _era_fingerprints(registry: Registry, family: str) -> list[tuple[str, Fingerprint]]:
    manifest = registry.manifest(family)
    return [
        (v, fp)
        for v in registry.versions(family)
        if (fp := manifest.version_structure.get(v)) is not None and not fp.empty
    ]


def _decide_version(
    registry: Registry, family: str, record: Any
) -> tuple[str | None, tuple[Evidence, ...], tuple[str, ...]]:
    """Pick the version of a record of `family` that states none.

    Returns the version and its evidence, or None and the versions still in question; none at all
    when the family tells its eras apart by structure and the record fits none of them.
    """
    versions = registry.versions(family)
    if len(versions) == 1:
        return versions[0], (Evidence("only-version", f"{family} has one version"),), ()
    eras = _era_fingerprints(registry, family)
    era = [(v, fp) for v, fp in eras if not fp.mismatches(record)]
    if len(era) == 1:
        version, fingerprint = era[0]
        return (
            version,
            (Evidence("structure", f"era {version}: {fingerprint.explain(record)}"),),
            (),
        )
    pool = [v for v, _ in era] or list(versions)
    valid = [v for v in pool if registry.validator(family, v).is_valid(record)]
    if len(valid) == 1:
        return valid[0], (Evidence("validity", f"valid only at {valid[0]}"),), ()
    if valid:
        return None, (), tuple(valid)
    if eras and not era:
        return None, (), ()
    return None, (), tuple(pool)


def _closest_era(registry: Registry, family: str, record: Any) -> tuple[tuple[str, str], ...]:
    """Return the eras of `family` nearest to `record` by structure, each with what differs.

    An era whose required pointers are missing (its case list, say) is farther than any era
    whose required pointers are there but which forbids something the record has.
    """
    scored = [
        (
            len(type(fp)(required=fp.required, any=fp.any).mismatches(record)),
            v,
            fp.mismatches(record),
        )
        for v, fp in _era_fingerprints(registry, family)
    ]
    if not scored:
        return ()
    fewest = min((missing, len(differs)) for missing, _, differs in scored)
    return tuple(
        (v, ", ".join(differs))
        for missing, v, differs in scored
        if (missing, len(differs)) == fewest
    )


def _describe_eras(eras: Sequence[tuple[str, str]]) -> str:
    if len(eras) == 1:
        return f"era {eras[0][0]} differs: {eras[0][1]}"
    return "eras " + ", ".join(f"{v} (differs: {differs})" for v, differs in eras)


def _closest(registry: Registry, record: Any) -> str:
    best: tuple[int, str, list[str]] | None = None
    for family in registry.families():
        fingerprint = registry.manifest(family).structure
        if fingerprint.empty:
            continue
        differs = fingerprint.mismatches(record)
        if best is None or len(differs) < best[0]:
            best = (len(differs), family, differs)
    if best is None:
        return "no family has a structural fingerprint"
    closest = f"closest family {best[1]} differs: {', '.join(best[2])}"
    eras = _closest_era(registry, best[1], record)
    return f"{closest}; its closest {_describe_eras(eras)}" if len(eras) == 1 else closest


def _from_pool(
    registry: Registry,
    record: Any,
    families: Sequence[str],
    evidence: dict[str, list[Evidence]],
) -> Detection:
    candidates: list[Candidate] = []
    decided: list[tuple[str, str, tuple[Evidence, ...]]] = []
    unfit: list[str] = []
    for family in families:
        version, found, undecided = _decide_version(registry, family, record)
        if version is None:
            candidates += [
                Candidate(family, v, "valid or fitting at this version") for v in undecided
            ]
            if not undecided:
                unfit.append(family)
            continue
        decided.append((family, version, (*evidence.get(family, ()), *found)))
        candidates.append(Candidate(family, version, "structure"))
    if len(decided) == 1 and len(candidates) == 1:
        family, version, found = decided[0]
        return Detection("detected", family, version, found, tuple(candidates))
    if unfit and not candidates:
        nearest = [(f, _closest_era(registry, f, record)) for f in unfit]
        reasons = tuple(
            f"{f} structure, but no era of it fits; closest {_describe_eras(eras)}"
            for f, eras in nearest
        )
        closest = tuple(
            Candidate(f, v, f"closest era; differs: {differs}")
            for f, eras in nearest
            for v, differs in eras
        )
        return Detection("unknown", candidates=closest, reasons=reasons)
    reasons = ("more than one family or version fits; pass --family/--version",)
    return Detection("ambiguous", evidence=(), candidates=tuple(candidates), reasons=reasons)


def _by_marker(registry: Registry, record: dict[str, Any], hinted: set[str]) -> Detection | None:
    stated: list[tuple[str, str, Evidence]] = []
    for family in registry.families():
        found = registry.manifest(family).read_version(record)
        if found is None or found[2] is None:
            continue
        marker, raw, version = found
        assert version is not None
        stated.append((family, version, Evidence("marker", f"{marker.pointer} = {raw!r}")))
    if not stated:
        return None
    fitting = [s for s in stated if not registry.manifest(s[0]).structure.mismatches(record)]
    pool = fitting or [s for s in stated if match_version(s[1], registry.versions(s[0]))]
    pool = pool or stated
    if len(pool) > 1 and hinted:
        pool = [s for s in pool if s[0] in hinted] or pool
    if len(pool) > 1:
        valid = [
            s
            for s in pool
            if (v := match_version(s[1], registry.versions(s[0])))
            and registry.validator(s[0], v).is_valid(record)
        ]
        pool = valid or pool
    if len(pool) > 1:
        return Detection(
            "ambiguous",
            candidates=tuple(Candidate(f, v, str(e)) for f, v, e in pool),
            reasons=("the version marker is shared and structure does not decide",),
        )
    family, version, evidence = pool[0]
    known = match_version(version, registry.versions(family))
    if known is None:
        known_list = ", ".join(registry.versions(family)) or "none"
        reason = f"version {version!r} is not known (known: {known_list})"
        return Detection(
            "unknown-version", family, None, (evidence,), stated_version=version, reasons=(reason,)
        )
    fingerprint = registry.manifest(family).structure
    extra: tuple[Evidence, ...] = ()
    if len(stated) > 1 and not fingerprint.empty:
        extra = (Evidence("structure", fingerprint.describe()),)
    return Detection("detected", family, known, (evidence, *extra))


def _by_structure(
    registry: Registry, record: dict[str, Any], hinted: set[str], filename: str | None
) -> Detection:
    manifests = [registry.manifest(f) for f in registry.families()]
    fits = [
        m.name for m in manifests if not m.structure.empty and not m.structure.mismatches(record)
    ]
    evidence: dict[str, list[Evidence]] = {
        name: [Evidence("structure", registry.manifest(name).structure.describe())] for name in fits
    }
    if hinted:
        both = [f for f in fits if f in hinted]
        bare = [m.name for m in manifests if m.name in hinted and m.structure.empty]
        pool = both or bare
        if pool:
            for name in pool:
                patterns = ", ".join(registry.manifest(name).files)
                hint = Evidence("file-name", f"{Path(filename or '').name} matches {patterns}")
                evidence.setdefault(name, []).insert(0, hint)
            return _from_pool(registry, record, pool, evidence)
    if fits:
        return _from_pool(registry, record, fits, evidence)
    reasons = ["no version marker", "no family's structure fits", _closest(registry, record)]
    if filename and not hinted:
        reasons.insert(1, "the file name suggests no family")
    return Detection("unknown", reasons=tuple(reasons))


def detect(registry: Registry, record: Any, filename: str | None = None) -> Detection:
    """Return the family and version of `record`, with the evidence that decided them."""
    if not isinstance(record, dict):
        kind = type(record).__name__
        return Detection("unknown", reasons=(f"a record must be a JSON object, not {kind}",))
    hinted = set()
    if filename:
        hinted = {f for f in registry.families() if registry.manifest(f).matches_filename(filename)}
    return _by_marker(registry, record, hinted) or _by_structure(registry, record, hinted, filename)
