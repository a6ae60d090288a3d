"""The registry: every family's manifest, schemas and migration steps, from registry directories.

A registry directory holds `registry/<family>.yaml` manifests,
`schemas/<family>/<version>.schema.json` documents and `migrations/<family>/<from>_to_<to>.py`
steps. The built-in directory ships with evalreg; users add their own through `EVALREG_PATH`
(os.pathsep-separated) or `paths=`.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urldefrag, urljoin

from evalreg.engine.detect import detect
from evalreg.errors import (
    RegistryError,
    RemoteRefError,
    UnknownFamilyError,
    UnknownVersionError,
)
from evalreg.io.codec import DecodeError, loads
from evalreg.registry.manifest import FamilyManifest, load_manifest
from evalreg.registry.versions import is_version, match_version, sort_versions
from evalreg.stepkit import clone

if TYPE_CHECKING:
    import referencing

    from evalreg.diff import SchemaDiff
    from evalreg.engine.detect import Detection
    from evalreg.engine.migrate import MigrationResult, Step, StepSet
    from evalreg.engine.validate import Issue, Validator

ENV_PATH = "EVALREG_PATH"
SCHEMA_SUFFIX = ".schema.json"
LATEST = "latest"


def builtin_directory() -> Path:
    """Return the built-in registry directory (inside the wheel, or the source checkout).

    Raises:
        RegistryError: neither location holds a registry directory.
    """
    package = Path(__file__).resolve().parents[1]
    for candidate in (package / "_builtin", package.parent):
        if (candidate / "registry").is_dir() and (candidate / "schemas").is_dir():
            return candidate
    raise RegistryError(str(package), "the built-in registry directory is missing from the install")


def default_id(family: str, version: str) -> str:
    """Return the `$id` given to a schema whose document has none."""
    return f"urn:evalreg:{family}:{version}"


@dataclass(frozen=True)
class SchemaEntry:
    """One schema document of one version of a family."""

    family: str
    version: str
    path: Path
    id: str
    document: Mapping[str, Any]
    """The document as loaded, with `$id` set when the file has none. Never mutate it."""


def _read_json(path: Path) -> Any:
    try:
        return loads(path.read_bytes())
    except (OSError, *DecodeError) as err:
        raise RegistryError(str(path), f"cannot read schema: {err}") from err


def _iter_refs(node: Any, base: str) -> Iterator[tuple[str, str]]:
    """Yield `(base_uri, ref)` for every `$ref` in a schema document."""
    if isinstance(node, dict):
        if isinstance(node.get("$id"), str):
            base = urljoin(base, node["$id"])
        ref = node.get("$ref")
        if isinstance(ref, str):
            yield base, ref
        for key, value in node.items():
            if key in ("enum", "const", "examples", "default"):
                continue
            yield from _iter_refs(value, base)
    elif isinstance(node, list):
        for item in node:
            yield from _iter_refs(item, base)


class Registry:
    """Every family known to evalreg, with its versions' schemas and its migration steps.

    Build one with `load_registry`. A registry is immutable once built; validators and the
    `referencing` registry are built lazily and cached.
    """

    def __init__(
        self,
        directories: Sequence[Path],
        manifests: Mapping[str, FamilyManifest],
        schemas: Mapping[str, Mapping[str, SchemaEntry]],
        step_files: Mapping[str, Sequence[Path]],
    ) -> None:
        self.directories = tuple(directories)
        self._manifests = dict(manifests)
        self._schemas = {f: dict(v) for f, v in schemas.items()}
        self._versions = {f: sort_versions(v) for f, v in schemas.items()}
        self._step_files = {f: tuple(p) for f, p in step_files.items()}
        self._by_id = {e.id: e for v in self._schemas.values() for e in v.values()}
        self._validators: dict[tuple[str, str], Validator] = {}

    def __repr__(self) -> str:
        return f"<Registry {len(self._manifests)} families from {len(self.directories)} dirs>"

    # -- families and versions -------------------------------------------------------------

    def families(self) -> tuple[str, ...]:
        """Return every family name, sorted."""
        return tuple(sorted(self._manifests))

    def manifest(self, family: str) -> FamilyManifest:
        """Return a family's manifest.

        Raises:
            UnknownFamilyError: no such family.
        """
        try:
            return self._manifests[family]
        except KeyError:
            raise UnknownFamilyError(family, self.families()) from None

    def versions(self, family: str) -> tuple[str, ...]:
        """Return a family's versions, oldest first.

        Raises:
            UnknownFamilyError: no such family.
        """
        self.manifest(family)
        return self._versions.get(family, ())

    def latest(self, family: str) -> str:
        """Return a family's newest version.

        Raises:
            UnknownFamilyError: no such family.
            UnknownVersionError: the family has no schema at all.
        """
        versions = self.versions(family)
        if not versions:
            raise UnknownVersionError(family, LATEST, ())
        return versions[-1]

    def resolve_version(self, family: str, version: str | None) -> str:
        """Return the registry's spelling of `version` (`latest` or None: the newest).

        Raises:
            UnknownFamilyError: no such family.
            UnknownVersionError: the family has no such version.
        """
        if version is None or version == LATEST:
            return self.latest(family)
        found = match_version(str(version), self.versions(family))
        if found is None:
            raise UnknownVersionError(family, str(version), self.versions(family))
        return found

    def entry(self, family: str, version: str | None = None) -> SchemaEntry:
        """Return the schema entry of a family's version (the newest when None).

        Raises:
            UnknownFamilyError: no such family.
            UnknownVersionError: the family has no such version.
        """
        resolved = self.resolve_version(family, version)
        return self._schemas[family][resolved]

    def schema(self, family: str, version: str | None = None) -> dict[str, Any]:
        """Return a copy of a version's schema document (the newest when `version` is None).

        Raises:
            UnknownFamilyError: no such family.
            UnknownVersionError: the family has no such version.
        """
        return clone(dict(self.entry(family, version).document))

    def schema_id(self, family: str, version: str | None = None) -> str:
        """Return the `$id` of a version's schema."""
        return self.entry(family, version).id

    def entry_by_id(self, uri: str) -> SchemaEntry | None:
        """Return the schema whose `$id` is `uri` (fragment ignored), or None."""
        return self._by_id.get(urldefrag(uri).url)

    def entries(self) -> Iterator[SchemaEntry]:
        """Yield every schema entry, by family then version."""
        for family in self.families():
            for version in self.versions(family):
                yield self._schemas[family][version]

    # -- references ------------------------------------------------------------------------

    def referencing_registry(self) -> referencing.Registry[Any]:
        """Return a `referencing.Registry` holding every schema under its `$id`.

        Retrieval of anything else is refused: evalreg never fetches over the network.
        """
        return self._referencing

    @cached_property
    def _referencing(self) -> referencing.Registry[Any]:
        from referencing import Registry as RefRegistry
        from referencing import Resource
        from referencing.exceptions import NoSuchResource
        from referencing.jsonschema import DRAFT202012

        def refuse(uri: str) -> Resource[Any]:
            raise NoSuchResource(ref=uri)  # type: ignore[call-arg]

        resources = [
            (e.id, Resource.from_contents(e.document, default_specification=DRAFT202012))
            for e in self._by_id.values()
        ]
        registry: referencing.Registry[Any] = RefRegistry(retrieve=refuse)  # type: ignore[call-arg]
        return registry.with_resources(resources)

    def check_refs(self, family: str, version: str) -> None:
        """Check that every `$ref` of a schema resolves inside the registry.

        Raises:
            RemoteRefError: a `$ref` leads outside the registry.
        """
        from referencing.exceptions import Unresolvable

        entry = self.entry(family, version)
        registry = self.referencing_registry()
        for base, ref in _iter_refs(entry.document, entry.id):
            try:
                registry.resolver(base_uri=base).lookup(ref)
            except Unresolvable as err:
                raise RemoteRefError(ref, f"{entry.path}") from err

    # -- detection and validation ----------------------------------------------------------

    def detect(self, record: Any, filename: str | None = None) -> Detection:
        """Return the family and version of `record`, with the evidence that decided them."""
        return detect(self, record, filename)

    def validator(self, family: str, version: str | None = None) -> Validator:
        """Return the (cached) validator of a family's version.

        Raises:
            UnknownFamilyError: no such family.
            UnknownVersionError: the family has no such version.
            RemoteRefError: the schema refers outside the registry.
        """
        if version is not None and (found := self._validators.get((family, version))) is not None:
            return found  # asked for by the registry's own spelling, as most callers do
        from evalreg.engine.validate import Validator

        resolved = self.resolve_version(family, version)
        key = (family, resolved)
        if key not in self._validators:
            self._validators[key] = Validator(self, self._schemas[family][resolved])
        return self._validators[key]

    def validate(
        self, record: Any, family: str | None = None, version: str | None = None
    ) -> list[Issue]:
        """Return every problem of `record` against its schema (empty when valid).

        Without `family`, the record is detected first; an undecided detection is one issue.
        """
        from evalreg.engine.validate import validate_record

        return validate_record(self, record, family, version)

    # -- migrations ------------------------------------------------------------------------

    def step_files(self, family: str) -> tuple[Path, ...]:
        """Return the migration step modules found for a family."""
        self.manifest(family)
        return self._step_files.get(family, ())

    @cached_property
    def _steps(self) -> dict[str, StepSet]:
        from evalreg.engine.migrate import StepSet

        return {f: StepSet.load(self, f) for f in self.families()}

    def steps(self, family: str) -> StepSet:
        """Return a family's migration steps (loaded on first use).

        Raises:
            UnknownFamilyError: no such family.
            RegistryError: a step module is malformed.
        """
        self.manifest(family)
        return self._steps[family]

    def plan(self, family: str, from_version: str, to_version: str) -> tuple[Step, ...]:
        """Return the shortest chain of steps from one version to another (empty if equal).

        Raises:
            UnknownFamilyError, UnknownVersionError: the family or a version is unknown.
            NoMigrationPathError: no chain of steps connects the two versions.
        """
        return self.steps(family).plan(
            self.resolve_version(family, from_version), self.resolve_version(family, to_version)
        )

    def migrate(
        self,
        record: Any,
        to: str,
        family: str | None = None,
        params: Mapping[str, Any] | None = None,
        *,
        allow_loss: bool = False,
        validate: str = "final",
        filename: str | None = None,
    ) -> MigrationResult:
        """Migrate one record to version `to` (or `latest`) and report what happened.

        The input record is never mutated. A failure is reported in the result, not raised.
        """
        from evalreg.engine.migrate import migrate_record

        return migrate_record(
            self,
            record,
            to,
            family=family,
            params=params,
            allow_loss=allow_loss,
            validate=validate,
            filename=filename,
        )

    def diff(self, family: str, a: str, b: str, *, policy: str = "lenient") -> SchemaDiff:
        """Compare two versions of a family's schema.

        Raises:
            UnknownFamilyError, UnknownVersionError: the family or a version is unknown.
        """
        from evalreg.diff import diff_schemas

        old, new = self.entry(family, a), self.entry(family, b)
        return diff_schemas(
            old.document,
            new.document,
            registry=self.referencing_registry(),
            policy=policy,
            old_label=f"{family}@{old.version}",
            new_label=f"{family}@{new.version}",
        )

    def history(self, family: str, *, policy: str = "lenient") -> list[SchemaDiff]:
        """Return the diff of every pair of consecutive versions of a family, oldest first.

        Raises:
            UnknownFamilyError: no such family.
        """
        versions = self.versions(family)
        return [self.diff(family, a, b, policy=policy) for a, b in itertools.pairwise(versions)]


def registry_paths(paths: Iterable[str | os.PathLike[str]] | None = None) -> list[Path]:
    """Return the registry directories to load: built-in, then `EVALREG_PATH`, then `paths`."""
    found = [builtin_directory()]
    env = os.environ.get(ENV_PATH, "")
    found += [Path(p) for p in env.split(os.pathsep) if p]
    found += [Path(p) for p in paths or ()]
    unique: list[Path] = []
    for path in found:
        resolved = path.resolve()
        if resolved not in unique:
            unique.append(resolved)
    return unique


def _load_schemas(
    directory: Path, manifests: Mapping[str, FamilyManifest]
) -> Iterator[SchemaEntry]:
    root = directory / "schemas"
    if not root.is_dir():
        return
    for family_dir in sorted(p for p in root.iterdir() if p.is_dir()):
        family = family_dir.name
        if family not in manifests:
            raise RegistryError(
                str(family_dir), f"schemas for {family!r}, which has no manifest in registry/"
            )
        for path in sorted(family_dir.glob(f"*{SCHEMA_SUFFIX}")):
            version = path.name[: -len(SCHEMA_SUFFIX)]
            if version == LATEST:
                continue
            if not is_version(version):
                raise RegistryError(str(path), f"{version!r} is not a version number")
            document = _read_json(path)
            if not isinstance(document, dict):
                raise RegistryError(str(path), "a schema must be a JSON object")
            if not isinstance(document.get("$id"), str):
                document = {"$id": default_id(family, version), **document}
            yield SchemaEntry(family, version, path, document["$id"], document)


def load_registry(
    paths: Iterable[str | os.PathLike[str]] | None = None,
    *,
    builtin: bool = True,
    verify: bool = True,
) -> Registry:
    """Load the built-in registry directory, those in `EVALREG_PATH`, and `paths`.

    With `verify` (the default), every released schema is checked against the digest in its
    directory's `registry.lock`.

    Raises:
        RegistryError: a directory is missing or malformed, or two directories define one family.
        IntegrityError: a released schema was edited or removed after its release.
    """
    directories = registry_paths(paths) if builtin else [Path(p).resolve() for p in paths or ()]
    manifests: dict[str, FamilyManifest] = {}
    for directory in directories:
        if not (directory / "registry").is_dir():
            raise RegistryError(
                str(directory), "not a registry directory (it has no registry/ folder)"
            )
        for path in sorted((directory / "registry").glob("*.yaml")):
            manifest = load_manifest(path)
            if manifest.name in manifests:
                raise RegistryError(
                    str(path),
                    f"family {manifest.name} is already defined by {manifests[manifest.name].path}",
                )
            manifests[manifest.name] = manifest

    schemas: dict[str, dict[str, SchemaEntry]] = {}
    ids: dict[str, Path] = {}
    for directory in directories:
        for entry in _load_schemas(directory, manifests):
            versions = schemas.setdefault(entry.family, {})
            same = match_version(entry.version, versions)
            if same is not None:
                raise RegistryError(
                    str(entry.path),
                    f"version {entry.version} of {entry.family} is already defined by "
                    f"{versions[same].path}",
                )
            if entry.id in ids:
                raise RegistryError(
                    str(entry.path), f"$id {entry.id} is also used by {ids[entry.id]}"
                )
            ids[entry.id] = entry.path
            versions[entry.version] = entry

    step_files: dict[str, list[Path]] = {}
    for directory in directories:
        root = directory / "migrations"
        if not root.is_dir():
            continue
        for family_dir in sorted(p for p in root.iterdir() if p.is_dir()):
            if family_dir.name.startswith(("_", ".")):
                continue
            if family_dir.name not in manifests:
                raise RegistryError(
                    str(family_dir), f"migrations for {family_dir.name!r}, which has no manifest"
                )
            step_files.setdefault(family_dir.name, []).extend(
                p for p in sorted(family_dir.glob("*.py")) if not p.name.startswith("_")
            )
    registry = Registry(directories, manifests, schemas, step_files)
    if verify:
        from evalreg.registry.lock import verify_lock

        verify_lock(registry)
    return registry
