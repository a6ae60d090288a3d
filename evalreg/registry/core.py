"""The registry's data: every family's manifest, schemas and step files, and lookups on them.

`BaseRegistry` answers questions about what was loaded (families, versions, schema documents,
`$ref` resolution) and keeps values derived from it for the engine, which adds detection,
validation and migration on top (`evalreg.Registry`).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urldefrag

from evalreg.errors import (
    RegistryError,
    RemoteRefError,
    UnknownFamilyError,
    UnknownVersionError,
    cut_repr,
    one_line,
)
from evalreg.io.codec import clone
from evalreg.registry.manifest import FamilyManifest
from evalreg.registry.versions import match_version, sort_versions

if TYPE_CHECKING:
    import referencing

    from evalreg.registry.schemawalk import Ref

SCHEMA_SUFFIX = ".schema.json"
LATEST = "latest"
_T = TypeVar("_T")
_B = TypeVar("_B", bound="BaseRegistry")


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


def installed_package() -> Path:
    """Return the folder of the evalreg package itself (site-packages/evalreg once installed)."""
    return Path(__file__).resolve().parents[1]


def refuse_installed(directory: Path, what: str) -> None:
    """Refuse to write into the registry directory that ships inside the installed package.

    A source checkout's registry directory (beside the package, not in it) is writable.

    Raises:
        RegistryError: `directory` is inside the installed evalreg package.
    """
    if directory.resolve().is_relative_to(installed_package()):
        raise RegistryError(
            str(directory),
            f"is the registry directory installed with evalreg, which {what} never writes "
            "into; give your own with --registry DIR (paths=[DIR] in the library)",
        )


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


class BaseRegistry:
    """Every family known to evalreg, with its versions' schemas and its migration step files.

    Build one with `load_registry`. A registry is immutable once built; what is derived from
    it (the `referencing` registry, compiled validators, loaded steps) is built on first use
    and kept for its lifetime.
    """

    def __init__(
        self,
        directories: Sequence[Path],
        manifests: Mapping[str, FamilyManifest],
        schemas: Mapping[str, Mapping[str, SchemaEntry]],
        step_files: Mapping[str, Sequence[Path]],
        rule_files: Mapping[str, Sequence[Path]] | None = None,
        released: Mapping[str, Iterable[str]] | None = None,
        *,
        drafts: bool = False,
    ) -> None:
        self.directories = tuple(directories)
        # None: every version counts as released (a registry built without lock files).
        self._released = (
            None if released is None else {f: frozenset(v) for f, v in released.items()}
        )
        self.drafts = drafts
        """Whether "latest" and detection's preferences include draft versions."""
        self._manifests = dict(manifests)
        self._schemas = {f: dict(v) for f, v in schemas.items()}
        self._versions = {f: sort_versions(v) for f, v in schemas.items()}
        self._step_files = {f: tuple(p) for f, p in step_files.items()}
        self._rule_files = {f: tuple(p) for f, p in (rule_files or {}).items()}
        self._by_id = {e.id: e for v in self._schemas.values() for e in v.values()}
        self._derived: dict[str, Any] = {}
        self._checked: set[tuple[str, str]] = set()

    def __repr__(self) -> str:
        name = type(self).__name__
        return f"<{name} {len(self._manifests)} families from {len(self.directories)} dirs>"

    def derived(self, name: str, build: Callable[[BaseRegistry], _T]) -> _T:
        """Return the value named `name` derived from this registry, built by `build` once.

        The rooms above keep their state here (compiled validators, loaded steps, detection
        tables), so that it lives exactly as long as the registry it was derived from.
        """
        try:
            value: _T = self._derived[name]
        except KeyError:
            value = self._derived[name] = build(self)
        return value

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

    def is_draft(self, family: str, version: str) -> bool:
        """Return whether a version (as the registry spells it) is not recorded in a lock file."""
        if self._released is None:
            return False
        return version not in self._released.get(family, frozenset())

    def preferred_versions(self, family: str) -> tuple[str, ...]:
        """Return the versions "latest" and detection choose from, oldest first.

        These are the released versions, unless the registry includes drafts (`drafts=True`)
        or the family has no released version at all (a family still being written, whose
        directory has no lock entry for it): then every version.

        Raises:
            UnknownFamilyError: no such family.
        """
        versions = self.versions(family)
        if self.drafts:
            return versions
        released = tuple(v for v in versions if not self.is_draft(family, v))
        return released or versions

    def with_drafts(self: _B, drafts: bool = True) -> _B:
        """Return this registry with draft versions counted (or not) as "latest".

        The copy shares everything loaded and derived with this one.
        """
        if drafts == self.drafts:
            return self
        other = copy.copy(self)
        other.drafts = drafts
        return other

    def latest(self, family: str) -> str:
        """Return a family's newest released version (newest of all with `drafts`).

        A version not recorded in its directory's `registry.lock` is a draft: it is never
        "latest" unless the registry was loaded with `drafts=True` (or the family has no
        released version yet).

        Raises:
            UnknownFamilyError: no such family.
            UnknownVersionError: the family has no schema at all.
        """
        versions = self.preferred_versions(family)
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
        """Check a schema as JSON Schema, and that every reference resolves inside the registry.

        Every `$ref`, `$dynamicRef` and `$recursiveRef` where JSON Schema reads one is checked;
        the values of `enum`, `const`, `default` and `examples` are data and are not.

        Raises:
            RemoteRefError: a reference leads to a document outside the registry.
            RegistryError: a reference points to nothing in a document of the registry, or the
                schema is malformed (an unknown `$schema` dialect, a subschema that is not one);
                each message names the file and the JSON pointer.
        """
        entry = self.entry(family, version)
        if (family, version) in self._checked:
            return
        from evalreg.registry.schemawalk import check_document

        refs = check_document(entry.document, str(entry.path), entry.id)
        self._resolve_refs(entry, refs)
        self._checked.add((family, version))

    def _resolve_refs(self, entry: SchemaEntry, refs: Iterable[Ref]) -> None:
        from referencing.exceptions import (
            InvalidAnchor,
            NoSuchAnchor,
            PointerToNowhere,
            Unresolvable,
        )

        registry = self.referencing_registry()
        for ref in refs:
            try:
                registry.resolver(base_uri=ref.base).lookup(ref.ref)
            except (PointerToNowhere, NoSuchAnchor, InvalidAnchor) as err:
                detail = one_line(str(err), 200)
                raise RegistryError(
                    str(entry.path),
                    f"{ref.pointer}: {ref.keyword} {cut_repr(ref.ref, 100)} resolves to nothing "
                    f"in the registry ({detail})",
                ) from err
            except (Unresolvable, ValueError, TypeError, LookupError) as err:
                # a document no registry directory holds (or a URI that cannot be one)
                raise RemoteRefError(ref.ref, f"{entry.path}: {ref.pointer}") from err

    # -- migration steps -------------------------------------------------------------------

    def step_files(self, family: str) -> tuple[Path, ...]:
        """Return the migration step modules found for a family."""
        self.manifest(family)
        return self._step_files.get(family, ())

    def rule_files(self, family: str) -> tuple[Path, ...]:
        """Return the Python rule modules found for a family."""
        self.manifest(family)
        return self._rule_files.get(family, ())
