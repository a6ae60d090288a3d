"""Detection: which family and version a record is, and the evidence for it.

Rules, in order:
1. markers: a family's version marker (e.g. `/schema_version`, or `/$schema` holding
   `agentv-eval-v2`); families that share a marker are told apart by structure, then by
   file name, then by validity. Where a family tells its eras apart by structure, a label whose
   era the record neither fits nor is valid at gives way to the one era the structure shows;
2. file-name hints (`grading.json`) together with structure; a name that suggests only families
   without a fingerprint (`config.yaml`) gives way to a family whose structure fits, and where
   several families fit, the one the record is valid as;
3. structure alone: the family's fingerprint, then the version (its era fingerprint, or the only
   version at which the record is valid; where it is valid at several eras and fits none, the
   one whose fingerprint forbids none of its keys).
Detection never falls back to a default: what it cannot decide is reported with the candidates.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from evalreg.engine.shapes import Shapes
from evalreg.engine.validators import validator
from evalreg.errors import version_not_known
from evalreg.io.pointer import MISSING, resolve, split
from evalreg.registry.versions import match_version

if TYPE_CHECKING:
    from evalreg.registry.core import BaseRegistry
    from evalreg.registry.manifest import Fingerprint

Status = Literal["detected", "ambiguous", "unknown-version", "unknown"]
K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


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


def _era_fingerprints(registry: BaseRegistry, family: str) -> list[tuple[str, Fingerprint]]:
    manifest = registry.manifest(family)
    return [
        (v, fp)
        for v in registry.versions(family)
        if (fp := manifest.version_structure.get(v)) is not None and not fp.empty
    ]


def _decide_version(
    registry: BaseRegistry, family: str, record: Any
) -> tuple[str | None, tuple[Evidence, ...], tuple[str, ...]]:
    """Pick the version of a record of `family` that states none.

    Returns the version and its evidence, or None and the versions still in question; none at all
    when the family tells its eras apart by structure and the record fits none of them.
    """
    versions = registry.versions(family)
    if len(versions) == 1:
        return versions[0], (Evidence("only-version", f"{family} has one version"),), ()
    eras = _era_fingerprints(registry, family)
    era = [(v, fp) for v, fp in eras if fp.fits(record)]
    if len(era) == 1:
        version, fingerprint = era[0]
        return (
            version,
            (Evidence("structure", f"era {version}: {fingerprint.explain(record)}"),),
            (),
        )
    pool = [v for v, _ in era] or list(versions)
    valid = [v for v in pool if validator(registry, family, v).is_valid(record)]
    if len(valid) == 1:
        return valid[0], (Evidence("validity", f"valid only at {valid[0]}"),), ()
    released = [v for v in valid if v in registry.preferred_versions(family)]
    if len(released) == 1 and len(valid) > 1:
        # A draft is no one's version yet: of a release and drafts, the release is preferred.
        drafts = ", ".join(v for v in valid if v != released[0])
        detail = f"valid at {released[0]} and at the draft versions {drafts}; the release wins"
        return released[0], (Evidence("validity", detail),), ()
    if len(valid) > 1 and eras and not era:
        # An era's fingerprint forbids what only later eras have: of the eras at which the
        # record is valid, the one whose fingerprint forbids none of its keys is its era.
        forbids = dict(eras)
        clear = [v for v in valid if v not in forbids or not forbids[v].clashes(record)]
        if len(clear) == 1:
            others = ", ".join(v for v in valid if v != clear[0])
            detail = f"valid at {clear[0]} and at {others}, whose fingerprints forbid its keys"
            return clear[0], (Evidence("validity", detail),), ()
    if valid:
        return None, (), tuple(valid)
    if eras and not era:
        return None, (), ()
    return None, (), tuple(pool)


def _closest_era(registry: BaseRegistry, family: str, record: Any) -> tuple[tuple[str, str], ...]:
    """Return the eras of `family` nearest to `record` by structure, each with what differs.

    An era whose required pointers are missing (its case list, say) is farther than any era
    whose required pointers are there but which forbids something the record has.
    """
    scored = [
        (
            len(
                type(fp)(required=fp.required, any=fp.any, any_groups=fp.any_groups).mismatches(
                    record
                )
            ),
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


def _closest(registry: BaseRegistry, record: Any, families: Sequence[str]) -> str:
    best: tuple[int, str, list[str]] | None = None
    for family in families:
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


Decided = tuple[str, str, tuple[Evidence, ...]]


def _valid_one(registry: BaseRegistry, record: Any, decided: list[Decided]) -> list[Decided]:
    """Return the one decided family at whose version `record` is valid, or all of them."""
    valid = [d for d in decided if validator(registry, d[0], d[1]).is_valid(record)]
    if len(valid) != 1:
        return decided
    family, version, found = valid[0]
    others = ", ".join(f"{f}@{v}" for f, v, _ in decided if f != family)
    return [(family, version, (*found, Evidence("validity", f"not valid as {others}")))]


def _from_pool(
    registry: BaseRegistry,
    record: Any,
    families: Sequence[str],
    evidence: dict[str, list[Evidence]],
) -> Detection:
    candidates: list[Candidate] = []
    decided: list[Decided] = []
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
    if len(decided) > 1 and len(candidates) == len(decided):
        # Several families fit (an eval file whose `targets` names a file fits agentv.targets
        # too): the one the record is valid as, if only one.
        decided = _valid_one(registry, record, decided)
        candidates = [Candidate(f, v, "structure") for f, v, _ in decided]
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


Stated = list[tuple[str, str, Evidence]]
_PLAIN = (str, int, float, bool, type(None), type(MISSING))
_PRESENCE_FIELDS = {"required", "forbidden", "equals", "any", "any_groups"}
_CACHE_SIZE = 4096


def _top_key(pointer: str) -> str | None:
    """Return the one key a top-level pointer names (None for any other pointer)."""
    tokens = split(pointer)
    return tokens[0] if len(tokens) == 1 else None


def _presence(fingerprint: Fingerprint) -> tuple[tuple[str, ...], ...] | None:
    """Return the top-level keys (required, any, forbidden) that alone decide `fingerprint`.

    None when something else decides it: a nested or `*` pointer, `equals`, or a kind of
    condition this function does not know.
    """
    if {f.name for f in fields(fingerprint)} != _PRESENCE_FIELDS or fingerprint.equals:
        return None
    if fingerprint.any_groups:
        return None
    groups = []
    for pointers in (fingerprint.required, fingerprint.any, fingerprint.forbidden):
        keys = [_top_key(p) for p in pointers]
        if any(k is None or k == "*" for k in keys):
            return None
        groups.append(tuple(k for k in keys if k is not None))
    return tuple(groups)


class _Prepared:
    """What detection reads of a registry, prepared once, and what it found for recent inputs.

    Detection by marker depends only on the values at the marker pointers, on which family
    fingerprints fit, and (when those leave more than one candidate) on file name and validity.
    The common case, decided by the first two, is remembered per marker values and presence of
    the keys the fingerprints look at (where they look at nothing else).
    """

    def __init__(self, registry: BaseRegistry) -> None:
        families = registry.families()
        pointers = sorted({m.pointer for f in families for m in registry.manifest(f).markers})
        self.keys = tuple((p, _top_key(p)) for p in pointers)
        self.cacheable = all("*" not in split(p) for p in pointers)
        self.presence = {f: _presence(registry.manifest(f).structure) for f in families}
        self.eras = frozenset(f for f in families if _era_fingerprints(registry, f))
        """The families that tell their versions apart by structure."""
        self.stated: dict[Hashable, tuple[Stated, frozenset[str] | None]] = {}
        self.decided: dict[Hashable, Detection] = {}
        self.hints: dict[str, frozenset[str]] = {}
        top = [key for _, key in self.keys if key is not None]
        whole = self.cacheable and len(top) == len(self.keys)
        self.shapes = Shapes[Detection](tuple(top) if whole else None, _PLAIN, MISSING, _CACHE_SIZE)
        """The detections of `decided` of families without eras, for `remembered`."""

    def shape_keys(self, stated: Stated) -> frozenset[str] | None:
        """Return the keys whose presence alone decides which of `stated` fit (None: not so)."""
        keys: set[str] = set()
        for family, _, _ in stated:
            presence = self.presence[family]
            if presence is None:
                return None
            for group in presence:
                keys.update(group)
        return frozenset(keys)

    def marker_values(self, record: dict[str, Any]) -> Hashable | None:
        """Return the values at every marker pointer, with their types (None: not plain)."""
        if not self.cacheable:
            return None
        values = []
        for pointer, key in self.keys:
            value = record.get(key, MISSING) if key is not None else resolve(record, pointer)
            if type(value) not in _PLAIN:
                return None
            values.append((type(value), value))
        return tuple(values)

    def fits(self, registry: BaseRegistry, family: str, record: dict[str, Any]) -> bool:
        """Return whether `record` fits the fingerprint of `family`."""
        presence = self.presence[family]
        if presence is None:
            return registry.manifest(family).structure.fits(record)
        required, any_of, forbidden = presence
        return (
            all(k in record for k in required)
            and (not any_of or any(k in record for k in any_of))
            and not any(k in record for k in forbidden)
        )

    @staticmethod
    def remember(cache: dict[K, V], key: K, value: V) -> None:
        """Store `value` under `key`, keeping the cache bounded."""
        if len(cache) >= _CACHE_SIZE:
            cache.clear()
        cache[key] = value


def _prepare(registry: BaseRegistry) -> _Prepared:
    """Return the registry's detection state, kept on the registry itself (built on first use)."""
    return registry.derived("detect", _Prepared)


_SYNTAX = {".json": "json", ".jsonl": "json", ".yaml": "yaml", ".yml": "yaml"}
_KIND_SYNTAX = {"json": "json", "jsonl": "json", "yaml": "yaml"}


def _syntax(filename: str | None) -> str | None:
    """Return the syntax a file name announces (json for .json and .jsonl, yaml), if any."""
    if not filename:
        return None
    name = Path(filename).name
    name = name.removesuffix(".gz")
    return _SYNTAX.get(Path(name).suffix.lower())


def _readable(registry: BaseRegistry, filename: str | None) -> list[str]:
    """Return the families whose file kind can be written in the syntax `filename` announces.

    A `.json` file is never a YAML family's file (nor a `.yaml` file a JSON one), however well
    its structure fits: structure alone must not cross syntaxes.
    """
    syntax = _syntax(filename)
    families = registry.families()
    if syntax is None:
        return list(families)
    return [f for f in families if _KIND_SYNTAX[registry.manifest(f).kind] == syntax]


def _named(registry: BaseRegistry, hinted: set[str], filename: str | None) -> set[str]:
    """Return the families of `hinted` that name `filename` exactly (a pattern with no wildcard).

    Only families with a structure to check count: a name is not enough to claim a file whose
    structure is another family's (an AgentV eval file may be called `config.yaml`).
    """
    if not filename:
        return set()
    name = Path(filename).name.removesuffix(".gz")
    return {
        f
        for f in hinted
        if name in registry.manifest(f).files and not registry.manifest(f).structure.empty
    }


def _hinted(registry: BaseRegistry, filename: str | None) -> set[str]:
    """Return the families whose file-name patterns match `filename`."""
    if not filename:
        return set()
    prepared = _prepare(registry)
    hinted = prepared.hints.get(filename)
    if hinted is None:
        families = registry.families()
        hinted = frozenset(f for f in families if registry.manifest(f).matches_filename(filename))
        prepared.remember(prepared.hints, filename, hinted)
    return set(hinted)


def _stated(registry: BaseRegistry, record: dict[str, Any]) -> Stated:
    stated: Stated = []
    for family in registry.families():
        found = registry.manifest(family).read_version(record)
        if found is None or found[2] is None:
            continue
        marker, raw, version = found
        assert version is not None
        stated.append((family, version, Evidence("marker", f"{marker.pointer} = {raw!r}")))
    return stated


def _by_marker(
    registry: BaseRegistry, record: dict[str, Any], filename: str | None
) -> Detection | None:
    prepared = _prepare(registry)
    values = prepared.marker_values(record)
    known = prepared.stated.get(values) if values is not None else None
    if known is None:
        stated = _stated(registry, record)
        known = (stated, prepared.shape_keys(stated))
        if values is not None:
            prepared.remember(prepared.stated, values, known)
    stated, shape_keys = known
    if not stated:
        return None
    shape = None
    if values is not None and shape_keys is not None:
        shape = (values, shape_keys.intersection(record))
        decided = prepared.decided.get(shape)
        if decided is not None:
            return decided
    fitting = [s for s in stated if prepared.fits(registry, s[0], record)]
    pool = fitting or [s for s in stated if match_version(s[1], registry.versions(s[0]))]
    pool = pool or stated
    if len(pool) == 1:
        # Neither file name nor validity has a say: any record of the same shape (marker
        # values, keys present) is decided alike.
        decided = _decided(registry, stated, pool[0])
        if shape is not None and shape_keys is not None:
            prepared.remember(prepared.decided, shape, decided)
            if decided.family not in prepared.eras:
                prepared.shapes.keep(values, shape_keys, shape[1], decided)
        return decided
    if len(pool) > 1 and (hinted := _hinted(registry, filename)):
        pool = [s for s in pool if s[0] in hinted] or pool
    if len(pool) > 1:
        valid = [
            s
            for s in pool
            if (v := match_version(s[1], registry.versions(s[0])))
            and validator(registry, s[0], v).is_valid(record)
        ]
        pool = valid or pool
    if len(pool) > 1:
        return Detection(
            "ambiguous",
            candidates=tuple(Candidate(f, v, str(e)) for f, v, e in pool),
            reasons=("the version marker is shared and structure does not decide",),
        )
    return _decided(registry, stated, pool[0])


def _decided(
    registry: BaseRegistry, stated: Stated, chosen: tuple[str, str, Evidence]
) -> Detection:
    """Return the detection of the one candidate left by the marker rules."""
    family, version, evidence = chosen
    known = match_version(version, registry.versions(family))
    if known is None:
        reason = version_not_known(version, registry.versions(family))
        return Detection(
            "unknown-version", family, None, (evidence,), stated_version=version, reasons=(reason,)
        )
    fingerprint = registry.manifest(family).structure
    extra: tuple[Evidence, ...] = ()
    if len(stated) > 1 and not fingerprint.empty:
        extra = (Evidence("structure", fingerprint.describe()),)
    return Detection("detected", family, known, (evidence, *extra))


def _by_structure(
    registry: BaseRegistry, record: dict[str, Any], hinted: set[str], filename: str | None
) -> Detection:
    readable = _readable(registry, filename)
    manifests = [registry.manifest(f) for f in readable]
    fits = [m.name for m in manifests if not m.structure.empty and m.structure.fits(record)]
    evidence: dict[str, list[Evidence]] = {
        name: [Evidence("structure", registry.manifest(name).structure.describe())] for name in fits
    }
    # A file named exactly as a family's files are (benchmark.json) is that family's or none:
    # it is not taken for another family whose structure it happens to fit.
    named = _named(registry, hinted, filename)
    if named:
        hinted = named
        fits = [f for f in fits if f in named]
    if hinted:
        both = [f for f in fits if f in hinted]
        bare = [m.name for m in manifests if m.name in hinted and m.structure.empty]
        pool = both or ([] if fits else bare)
        if pool:
            for name in pool:
                patterns = ", ".join(registry.manifest(name).files)
                hint = Evidence("file-name", f"{Path(filename or '').name} matches {patterns}")
                evidence.setdefault(name, []).insert(0, hint)
            return _from_pool(registry, record, pool, evidence)
        if bare:
            # The name suggests only families with no structure of their own (`config.yaml`);
            # the structure names another family, and says more.
            passed = Evidence(
                "file-name",
                f"{Path(filename or '').name} suggests {', '.join(bare)}, which has no "
                "structure to check; the structure decides",
            )
            for name in fits:
                evidence[name].append(passed)
    if fits:
        return _from_pool(registry, record, fits, evidence)
    # The closest family is sought first among those the file name suggests.
    shaped = [f for f in readable if not registry.manifest(f).structure.empty]
    closest = _closest(registry, record, [f for f in shaped if f in hinted] or readable)
    reasons = ["no version marker", "no family's structure fits", closest]
    if filename and not hinted:
        reasons.insert(1, "the file name suggests no family")
    return Detection("unknown", reasons=tuple(reasons))


def _structure_over_label(registry: BaseRegistry, record: Any, found: Detection) -> Detection:
    """Return `found`, or the era the structure shows when the labelled era cannot be right.

    A label goes stale when a file moves on and keeps its old `$schema`. The structure decides
    when the record does not fit the labelled era's fingerprint, is not valid at that version,
    and fits exactly one other era; the evidence says so.
    """
    if not found.ok or found.family is None or found.version is None:
        return found
    eras = _era_fingerprints(registry, found.family)
    labelled = dict(eras).get(found.version)
    if labelled is None or labelled.fits(record):
        return found
    fitting = [(v, fp) for v, fp in eras if fp.fits(record)]
    if len(fitting) != 1 or validator(registry, found.family, found.version).is_valid(record):
        return found
    version, fingerprint = fitting[0]
    differs = ", ".join(labelled.mismatches(record))
    overrule = Evidence(
        "structure",
        f"era {version}: {fingerprint.explain(record)}; the label's era {found.version} "
        f"differs ({differs}) and the record is not valid there, so the structure decides",
    )
    return Detection("detected", found.family, version, (*found.evidence, overrule))


def shapes_of(registry: BaseRegistry) -> Shapes[Detection]:
    """Return the detections the registry's records are remembered by (see `remembered`)."""
    return _prepare(registry).shapes


def remembered(registry: BaseRegistry, record: Any) -> Detection | None:
    """Return what `detect` gives for `record` whatever its file name, if a record of its
    shape was decided before (see `evalreg.engine.shapes`), else None."""
    return _prepare(registry).shapes.find(record)


def detect(registry: BaseRegistry, record: Any, filename: str | None = None) -> Detection:
    """Return the family and version of `record`, with the evidence that decided them."""
    if not isinstance(record, dict):
        kind = type(record).__name__
        return Detection("unknown", reasons=(f"a record must be a JSON object, not {kind}",))
    found = _by_marker(registry, record, filename)
    if found is not None:
        if found.family in _prepare(registry).eras:
            return _structure_over_label(registry, record, found)
        return found
    return _by_structure(registry, record, _hinted(registry, filename), filename)
