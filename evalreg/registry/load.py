"""Loading registry directories: manifests, schemas and step files, checked against the lock.

A registry directory holds `registry/<family>.yaml` manifests,
`schemas/<family>/<version>.schema.json` documents and `migrations/<family>/<from>_to_<to>.py`
steps. The built-in directory ships with evalreg; users add their own through `EVALREG_PATH`
(os.pathsep-separated) or `paths=`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

from evalreg.errors import RegistryError
from evalreg.io.codec import DecodeError, loads
from evalreg.registry.cache import RegistryCache, decoded
from evalreg.registry.core import (
    LATEST,
    SCHEMA_SUFFIX,
    BaseRegistry,
    SchemaEntry,
    builtin_directory,
    default_id,
)
from evalreg.registry.lock import entry_directory, read_lock, verify_lock
from evalreg.registry.manifest import FamilyManifest, load_manifest
from evalreg.registry.versions import MAX_FILE_VERSION_LENGTH, is_file_version, match_version

ENV_PATH = "EVALREG_PATH"
_R = TypeVar("_R", bound=BaseRegistry)


MAX_SCHEMA_BYTES = 16 * 1024 * 1024
"""The largest schema file read, in bytes (16 MiB)."""


def _read_json(path: Path, cache: RegistryCache) -> Any:
    try:
        with path.open("rb") as stream:
            data = stream.read(MAX_SCHEMA_BYTES + 1)
    except OSError as err:
        raise RegistryError(str(path), f"cannot read schema: {err.strerror or err}") from err
    if len(data) > MAX_SCHEMA_BYTES:
        raise RegistryError(str(path), f"schema is larger than {MAX_SCHEMA_BYTES:,} bytes")
    try:
        return decoded(cache, "schema", data, loads)
    except (*DecodeError, RecursionError) as err:
        detail = " ".join(str(err).split())
        raise RegistryError(str(path), f"cannot read schema: {detail}") from err


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
    directory: Path, manifests: Mapping[str, FamilyManifest], trusted: bool, cache: RegistryCache
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
            if not is_file_version(version):
                raise RegistryError(
                    str(path),
                    f"{version[:MAX_FILE_VERSION_LENGTH]!r} is not a version number of at most "
                    f"{MAX_FILE_VERSION_LENGTH} characters (such as 1.0.0)",
                )
            document = _read_json(path, cache)
            if not isinstance(document, dict):
                raise RegistryError(str(path), "a schema must be a JSON object")
            if not isinstance(document.get("$id"), str):
                document = {"$id": default_id(family, version), **document}
            if not trusted:
                from evalreg.registry.schemawalk import check_document

                check_document(document, str(path), document["$id"])
            yield SchemaEntry(family, version, path, document["$id"], document)


def _modules(
    directories: Iterable[Path], folder: str, manifests: Mapping[str, FamilyManifest]
) -> dict[str, list[Path]]:
    """Return the Python modules `<folder>/<family>/*.py` of each family, directory by directory."""
    found: dict[str, list[Path]] = {}
    for directory in directories:
        root = directory / folder
        if not root.is_dir():
            continue
        for family_dir in sorted(p for p in root.iterdir() if p.is_dir()):
            if family_dir.name.startswith(("_", ".")):
                continue
            if family_dir.name not in manifests:
                raise RegistryError(
                    str(family_dir), f"{folder} for {family_dir.name!r}, which has no manifest"
                )
            found.setdefault(family_dir.name, []).extend(
                p for p in sorted(family_dir.glob("*.py")) if not p.name.startswith("_")
            )
    return found


def _released(
    directories: Iterable[Path],
    schemas: Mapping[str, Mapping[str, SchemaEntry]],
    cache: RegistryCache,
) -> dict[str, set[str]]:
    """Return the versions of each family that their directory's lock file records."""
    locks = {directory: read_lock(directory, cache) for directory in directories}
    released: dict[str, set[str]] = {}
    for family, versions in schemas.items():
        for version, entry in versions.items():
            lock = locks.get(entry_directory(entry))
            if lock is not None and lock.digest(family, version) is not None:
                released.setdefault(family, set()).add(version)
    return released


def load_directories(
    paths: Iterable[str | os.PathLike[str]] | None,
    cls: type[_R],
    *,
    builtin: bool = True,
    verify: bool = True,
    drafts: bool = False,
) -> _R:
    """Load the built-in registry directory, those in `EVALREG_PATH`, and `paths` as a `cls`.

    With `verify` (the default), every released schema is checked against the digest in its
    directory's `registry.lock`; with `drafts`, "latest" includes draft versions. Every manifest
    pattern is compiled by RE2 as it loads (`patterns.safe_pattern`). The schemas of every
    directory but the built-in one are checked as they load (`schemawalk.check_document`: their
    patterns too), and their references must resolve.

    What manifests, schema and lock files decode to, and the digests of released schemas, are
    taken from the user's cache where it has them for the same bytes (see `cache`), and kept
    there; every check of the decoded data runs either way.

    Raises:
        RegistryError: a directory is missing or malformed, or two directories define one family.
        RemoteRefError: a schema of a directory other than the built-in one refers outside the
            registry.
        IntegrityError: a released schema was edited or removed after its release.
    """
    directories = registry_paths(paths) if builtin else [Path(p).resolve() for p in paths or ()]
    cache = RegistryCache.open()
    try:
        return _load(directories, cls, cache, verify=verify, drafts=drafts)
    finally:
        cache.save()


def _load(
    directories: list[Path], cls: type[_R], cache: RegistryCache, *, verify: bool, drafts: bool
) -> _R:
    # The built-in directory ships with evalreg and the test suite (`evalreg check`) checks it
    # whole: its schemas are not walked at every start. Every other is user input.
    shipped = builtin_directory().resolve()
    manifests: dict[str, FamilyManifest] = {}
    for directory in directories:
        if not (directory / "registry").is_dir():
            raise RegistryError(
                str(directory), "not a registry directory (it has no registry/ folder)"
            )
        for path in sorted((directory / "registry").glob("*.yaml")):
            manifest = load_manifest(path, cache)
            if manifest.name in manifests:
                raise RegistryError(
                    str(path),
                    f"family {manifest.name} is already defined by {manifests[manifest.name].path}",
                )
            manifests[manifest.name] = manifest

    schemas: dict[str, dict[str, SchemaEntry]] = {}
    ids: dict[str, Path] = {}
    untrusted: list[SchemaEntry] = []
    for directory in directories:
        for entry in _load_schemas(directory, manifests, directory == shipped, cache):
            if directory != shipped:
                untrusted.append(entry)
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

    step_files = _modules(directories, "migrations", manifests)
    rule_files = _modules(directories, "rules", manifests)
    registry = cls(
        directories,
        manifests,
        schemas,
        step_files,
        rule_files,
        _released(directories, schemas, cache),
        drafts=drafts,
    )
    for entry in untrusted:
        registry.check_refs(entry.family, entry.version)
    if verify:
        verify_lock(registry, cache)
    return registry
