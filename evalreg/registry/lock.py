"""Released versions: the lock file, its integrity check, and adding and releasing versions.

Each registry directory may hold a `registry.lock`: a JSON object mapping every released
family and version to the SHA-256 digest of the schema file's canonical JSON
(`{"eee.aggregate": {"0.2.0": "sha256:..."}}`). A schema listed there is released and must
never change again; a schema not listed is a draft. A new version starts as a draft copy of the
latest one (`drafting.new_version`) and is frozen by `release`.

The one exception is deliberate and recorded: a registry that mirrors an upstream format may
correct a transcription error in a released schema with `amend`, which appends the old digest,
the new digest, the date and the reason to the lock's `$amendments` list. The amendments of a
version must chain from its first recorded digest to its current one, so a hand edit of the
lock is caught like a hand edit of a schema.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalreg.errors import IntegrityError, RegistryError
from evalreg.registry.cache import decoded
from evalreg.registry.core import BaseRegistry, SchemaEntry, refuse_installed
from evalreg.registry.versions import match_version, parse_version

if TYPE_CHECKING:
    from evalreg.registry.cache import RegistryCache

LOCK_NAME = "registry.lock"
DIGEST_PREFIX = "sha256:"
AMENDMENTS_KEY = "$amendments"


def canonical_json(document: Any) -> bytes:
    """Return the canonical JSON bytes of a document: sorted keys, no spaces, UTF-8."""
    import json

    text = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.encode("utf-8")


def digest(document: Any) -> str:
    """Return `sha256:<hex>` of a document's canonical JSON."""
    import hashlib

    return DIGEST_PREFIX + hashlib.sha256(canonical_json(document)).hexdigest()


def file_digest(path: Path, cache: RegistryCache | None = None) -> str:
    """Return the digest of a schema file's content as written (not as loaded with `$id`);
    with a `cache`, worked out only for bytes the cache has no digest of.

    Raises:
        RegistryError: the file cannot be read or is not JSON.
    """
    try:
        found: str = decoded(cache, "digest", path.read_bytes(), _json_digest, str)
    except (OSError, ValueError) as err:
        raise RegistryError(str(path), f"cannot read schema: {err}") from err
    return found


def _json_digest(data: bytes) -> str:
    """Return the digest of the JSON document `data` holds."""
    return digest(_json_loads(data))


def _json_loads(data: bytes) -> Any:
    import json  # not at start: a start with the cache decodes no lock or schema with it

    return json.loads(data)


def entry_directory(entry: SchemaEntry) -> Path:
    """Return the registry directory a schema file belongs to."""
    return entry.path.parent.parent.parent


@dataclass(frozen=True)
class Amendment:
    """A recorded correction of a released schema: which digest it replaced, when and why."""

    family: str
    version: str
    old: str
    new: str
    date: str
    """The day it was recorded, `YYYY-MM-DD` (UTC)."""
    reason: str

    def to_json(self) -> dict[str, str]:
        """Return the amendment as it is written in the lock file."""
        return {
            "family": self.family,
            "version": self.version,
            "from": self.old,
            "to": self.new,
            "date": self.date,
            "reason": self.reason,
        }

    def __str__(self) -> str:
        return f"amended on {self.date} ({_short(self.old)} -> {_short(self.new)}): {self.reason}"


@dataclass(frozen=True)
class Lock:
    """The released versions of one registry directory, with their digests and amendments."""

    directory: Path
    released: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    amendments: tuple[Amendment, ...] = ()

    @property
    def path(self) -> Path:
        """Return the lock file's path."""
        return self.directory / LOCK_NAME

    def digest(self, family: str, version: str) -> str | None:
        """Return the recorded digest of a version (any spelling, `0.1` = `0.1.0`), or None."""
        versions = self.released.get(family, {})
        found = match_version(version, versions)
        return None if found is None else versions[found]

    def items(self) -> Iterator[tuple[str, str, str]]:
        """Yield `(family, version, digest)` for every released version, sorted."""
        for family in sorted(self.released):
            for version in sorted(self.released[family], key=parse_version):
                yield family, version, self.released[family][version]

    def amendments_of(self, family: str, version: str) -> tuple[Amendment, ...]:
        """Return the amendments of a version (any spelling), oldest first."""
        found = match_version(version, self.released.get(family, {}))
        return tuple(a for a in self.amendments if a.family == family and a.version == found)

    def with_entry(self, family: str, version: str, value: str) -> Lock:
        """Return a copy of the lock that also records `version` of `family`."""
        released = {f: dict(v) for f, v in self.released.items()}
        released.setdefault(family, {})[version] = value
        return Lock(self.directory, released, self.amendments)

    def with_amendment(self, amendment: Amendment) -> Lock:
        """Return a copy of the lock with a released version's digest amended."""
        changed = self.with_entry(amendment.family, amendment.version, amendment.new)
        return Lock(self.directory, changed.released, (*self.amendments, amendment))

    def dumps(self) -> str:
        """Return the lock file's text: sorted keys, 2-space indent, trailing newline.

        The amendments come last, in the order they were made.
        """
        import json

        text = json.dumps(self.released, sort_keys=True, indent=2, ensure_ascii=False)
        data: dict[str, Any] = json.loads(text)
        if self.amendments:
            data[AMENDMENTS_KEY] = [a.to_json() for a in self.amendments]
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"

    def write(self) -> Path:
        """Write the lock file atomically and return its path.

        Raises:
            RegistryError: the file cannot be written.
        """
        try:
            _write_atomic(self.path, self.dumps())
        except OSError as err:
            raise RegistryError(str(self.path), f"cannot write the lock file: {err}") from err
        return self.path


def _write_atomic(path: Path, text: str) -> None:
    """Replace `path` with `text` atomically; a new file gets the mode any editor's would."""
    from evalreg.io.writers import write_atomic  # only when a lock is written

    write_atomic(path, text.encode("utf-8"))


def read_lock(directory: Path, cache: RegistryCache | None = None) -> Lock:
    """Read a registry directory's lock file (an empty lock when there is none); with a
    `cache`, its JSON is decoded only when the cache lacks it (and checked either way).

    Raises:
        RegistryError: the lock file is not a JSON object of families to versions to digests.
    """
    path = directory / LOCK_NAME
    if not path.is_file():
        return Lock(directory)
    try:
        data = decoded(cache, "lock", path.read_bytes(), _json_loads)
    except (OSError, ValueError) as err:
        raise RegistryError(str(path), f"cannot read the lock file: {err}") from err
    shape = 'a JSON object such as {"family": {"1.0.0": "sha256:<hex>"}}'
    if not isinstance(data, dict):
        raise RegistryError(str(path), f"the lock file must be {shape}")
    amendments = _read_amendments(str(path), data.pop(AMENDMENTS_KEY, []))
    for family, versions in data.items():
        if family.startswith("$"):
            raise RegistryError(
                str(path),
                f"unknown key {family!r}; the only key starting with $ is {AMENDMENTS_KEY!r}",
            )
        if not isinstance(versions, dict):
            raise RegistryError(str(path), f"{family}: expected {shape}")
        for version, value in versions.items():
            if not _is_digest(value):
                raise RegistryError(
                    str(path), f"{family} {version}: expected a digest 'sha256:<hex>'"
                )
    lock = Lock(directory, data, amendments)
    _check_chains(str(path), lock)
    return lock


def _is_digest(value: object) -> bool:
    return isinstance(value, str) and value.startswith(DIGEST_PREFIX)


def _read_amendments(where: str, data: object) -> tuple[Amendment, ...]:
    shape = (
        f"{AMENDMENTS_KEY} must be a list of objects with the strings family, version, from, "
        "to, date and reason"
    )
    if not isinstance(data, list):
        raise RegistryError(where, shape)
    amendments = []
    for index, item in enumerate(data):
        keys = ("family", "version", "from", "to", "date", "reason")
        if not isinstance(item, dict) or any(not isinstance(item.get(k), str) for k in keys):
            raise RegistryError(where, f"{AMENDMENTS_KEY}[{index}]: {shape}")
        if not (_is_digest(item["from"]) and _is_digest(item["to"])):
            raise RegistryError(
                where, f"{AMENDMENTS_KEY}[{index}]: from and to must be digests 'sha256:<hex>'"
            )
        amendments.append(
            Amendment(
                item["family"],
                item["version"],
                item["from"],
                item["to"],
                item["date"],
                item["reason"],
            )
        )
    return tuple(amendments)


def _check_chains(where: str, lock: Lock) -> None:
    """Refuse amendments that do not lead, one after another, to the recorded digest."""
    latest: dict[tuple[str, str], str] = {}
    for amendment in lock.amendments:
        key = (amendment.family, amendment.version)
        if key in latest and latest[key] != amendment.old:
            raise RegistryError(
                where,
                f"the amendments of {amendment.family} {amendment.version} do not follow one "
                f"another ({_short(amendment.old)} was never its digest); the lock was edited "
                "by hand: restore it",
            )
        latest[key] = amendment.new
    for (family, version), digest_ in latest.items():
        if lock.released.get(family, {}).get(version) != digest_:
            raise RegistryError(
                where,
                f"the last amendment of {family} {version} records {_short(digest_)}, not the "
                "version's digest; the lock was edited by hand: restore it",
            )


def lock_errors(
    registry: BaseRegistry,
    families: Iterable[str] | None = None,
    cache: RegistryCache | None = None,
) -> list[IntegrityError]:
    """Return every released schema that changed or disappeared since it was locked (with a
    `cache`, each schema's digest is worked out only for bytes the cache has none of).

    Raises:
        RegistryError: a lock file cannot be read.
    """
    wanted = None if families is None else set(families)
    errors: list[IntegrityError] = []
    for directory in registry.directories:
        lock = read_lock(directory, cache)
        for family, version, recorded in lock.items():
            if wanted is not None and family not in wanted:
                continue
            known = registry.versions(family) if family in registry.families() else ()
            found = match_version(version, known)
            entry = None if found is None else registry.entry(family, found)
            if entry is None or entry_directory(entry) != directory:
                expected = directory / "schemas" / family / f"{version}.schema.json"
                errors.append(
                    IntegrityError(
                        str(expected),
                        family,
                        version,
                        f"released in {lock.path} but the schema file is missing; restore it "
                        "(a released version is never removed)",
                    )
                )
                continue
            actual = file_digest(entry.path, cache)
            if actual != recorded:
                errors.append(
                    IntegrityError(
                        str(entry.path),
                        family,
                        entry.version,
                        f"the released schema was edited after release ({lock.path} records "
                        f"{_short(recorded)}, the file now hashes to {_short(actual)}); restore "
                        "the released document, and put the change in a new version with "
                        f"`evalreg new-version {family} VERSION` (or, to correct a "
                        "transcription error of an upstream format, record it with "
                        f"`evalreg amend {family} {entry.version} --reason TEXT`)",
                    )
                )
    return errors


def _short(value: str) -> str:
    return value[: len(DIGEST_PREFIX) + 12] + "..."


def verify_lock(registry: BaseRegistry, cache: RegistryCache | None = None) -> None:
    """Check every released schema of a registry against its directory's lock file (`cache`:
    see `lock_errors`).

    Raises:
        IntegrityError: a released schema changed or disappeared (the first one found).
        RegistryError: a lock file cannot be read.
    """
    errors = lock_errors(registry, cache=cache)
    if errors:
        raise errors[0]


def is_released(registry: BaseRegistry, family: str, version: str) -> bool:
    """Return whether a version of a family is recorded in its directory's lock file.

    Raises:
        UnknownFamilyError, UnknownVersionError: the family or version is unknown.
        RegistryError: the lock file cannot be read.
    """
    entry = registry.entry(family, version)
    return read_lock(entry_directory(entry)).digest(family, entry.version) is not None


def drafts(registry: BaseRegistry, families: Iterable[str] | None = None) -> list[SchemaEntry]:
    """Return every schema not recorded in its directory's lock file.

    Raises:
        RegistryError: a lock file cannot be read.
    """
    locks: dict[Path, Lock] = {}
    found = []
    for family in registry.families() if families is None else families:
        for version in registry.versions(family):
            entry = registry.entry(family, version)
            directory = entry_directory(entry)
            if directory not in locks:
                locks[directory] = read_lock(directory)
            if locks[directory].digest(family, entry.version) is None:
                found.append(entry)
    return found


# -- adding and releasing versions -------------------------------------------------------------


@dataclass(frozen=True)
class Release:
    """A released version: where its digest was recorded."""

    family: str
    version: str
    digest: str
    lock_path: Path
    already: bool = False
    """True when the version was already released with the same digest."""


def release(registry: BaseRegistry, family: str, version: str) -> Release:
    """Record a version's digest in its directory's lock file, freezing the schema.

    Run `check_registry` on the family first: a release is meant to be checked end to end.

    Raises:
        UnknownFamilyError, UnknownVersionError: the family or version is unknown.
        IntegrityError: the version is already released with a different digest.
        RegistryError: the schema or the lock file cannot be read or written.
    """
    entry = registry.entry(family, version)
    directory = entry_directory(entry)
    lock = read_lock(directory)
    value = file_digest(entry.path)
    recorded = lock.digest(family, entry.version)
    if recorded == value:
        return Release(family, entry.version, value, lock.path, already=True)
    refuse_installed(directory, "release")
    if recorded is not None:
        raise IntegrityError(
            str(entry.path),
            family,
            entry.version,
            f"already released with a different digest in {lock.path}; a released version "
            "cannot change: restore it and release the change as a new version",
        )
    path = lock.with_entry(family, entry.version, value).write()
    return Release(family, entry.version, value, path)


def amend(
    registry: BaseRegistry, family: str, version: str, reason: str, *, date: str | None = None
) -> Amendment:
    """Record a deliberate correction of a released schema in its directory's lock file.

    The schema file must already hold the corrected document; its new digest replaces the
    recorded one, and the old digest, the new one, the date and the reason are appended to the
    lock's amendments. Load the registry with `verify=False` to amend it.

    Raises:
        UnknownFamilyError, UnknownVersionError: the family or version is unknown.
        RegistryError: the version is not released (release it instead), the schema did not
            change, the reason is empty, or the lock cannot be read or written.
    """
    entry = registry.entry(family, version)
    directory = entry_directory(entry)
    refuse_installed(directory, "amend")
    lock = read_lock(directory)
    recorded = lock.digest(family, entry.version)
    if recorded is None:
        raise RegistryError(
            str(entry.path),
            f"{family} {entry.version} is not released, so there is nothing to amend; "
            f"`evalreg release {family} {entry.version}` releases it",
        )
    value = file_digest(entry.path)
    if value == recorded:
        raise RegistryError(
            str(entry.path), f"unchanged since it was locked ({_short(value)}); nothing to amend"
        )
    text = " ".join(reason.split())
    if not text:
        raise RegistryError(
            str(lock.path), "an amendment needs a reason: say which error it corrects and why"
        )
    today = date or datetime.now(timezone.utc).date().isoformat()
    amendment = Amendment(family, entry.version, recorded, value, today, text)
    lock.with_amendment(amendment).write()
    return amendment


def amendments(registry: BaseRegistry, family: str) -> dict[str, tuple[Amendment, ...]]:
    """Return the amendments of each amended version of a family, oldest first.

    Raises:
        UnknownFamilyError: no such family.
        RegistryError: a lock file cannot be read.
    """
    found: dict[str, tuple[Amendment, ...]] = {}
    for version in registry.versions(family):
        entry = registry.entry(family, version)
        recorded = read_lock(entry_directory(entry)).amendments_of(family, entry.version)
        if recorded:
            found[entry.version] = recorded
    return found


def amendment_notes(
    registry: BaseRegistry, family: str, *, prefix: str = ""
) -> dict[str, list[str]]:
    """Return one line of release notes per amendment, by `prefix` + version.

    Raises:
        UnknownFamilyError: no such family.
        RegistryError: a lock file cannot be read.
    """
    found = amendments(registry, family)
    return {prefix + version: [str(a) for a in items] for version, items in found.items()}
