"""Propose a draft version from an upstream schema: compare, number, generate its step, write.

The upstream schema is compared with the family's newest version (a draft waiting for release
included, so that successive syncs make a chain). When the two differ in more than annotations
(titles, descriptions, examples...), or the upstream schema states a newer version of itself
(records will say so), the proposal is a new version numbered

- `version=` when given;
- else the version the upstream schema states of itself (a version marker's `const`, or a
  top-level `version`), when it is newer than the newest;
- else the newest bumped by the diff's compatibility: FULL a patch, BACKWARD (old data still
  valid) a minor, anything else a major release (a minor one before 1.0), the diff read with
  the family's `versioning.policy`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalreg.errors import RegistryError
from evalreg.publish.upstream.source import Published, Upstream, history, version_stated
from evalreg.publish.upstream.stepgen import GeneratedStep, generate_step
from evalreg.registry.core import default_id
from evalreg.registry.drafting import (
    check_new_version,
    dump_schema,
    target_directory,
    version_paths,
    write_files,
)
from evalreg.registry.manifest import versioning
from evalreg.registry.versions import bump, is_file_version, match_version, parse_version

if TYPE_CHECKING:
    from evalreg.diff import SchemaDiff
    from evalreg.registry.core import BaseRegistry


@dataclass(frozen=True)
class Proposal:
    """What `sync` found: nothing to do, or a draft version with its schema and its step."""

    family: str
    source: str
    """The version the upstream schema was compared with."""
    version: str | None
    """The draft's version; None when nothing but annotations changed."""
    diff: SchemaDiff
    document: Mapping[str, Any]
    step: GeneratedStep | None
    upstream: Published
    numbered: str = ""
    """How the version was chosen, in words."""

    @property
    def changed(self) -> bool:
        """Return whether the upstream schema differs in more than annotations."""
        return self.version is not None


def meaningful(diff: SchemaDiff) -> bool:
    """Return whether a diff holds more than changes of annotations."""
    from evalreg.diff._changes import INFORMATIONAL

    return any(change.kind not in INFORMATIONAL for change in diff.changes)


def _level(compatibility: str, newest: str) -> str:
    if compatibility == "FULL":
        return "patch"
    if compatibility == "BACKWARD":
        return "minor"
    return "major" if parse_version(newest).major >= 1 else "minor"


def propose(
    registry: BaseRegistry,
    family: str,
    published: Published,
    *,
    version: str | None = None,
    against: tuple[str, Mapping[str, Any]] | None = None,
) -> Proposal:
    """Compare an upstream schema with the newest version (or `against`) and propose a draft.

    Raises:
        UnknownFamilyError: no such family.
        InvalidVersionError: `version` is not a version number.
        RegistryError: `version` is not newer than the newest, or the family has no version.
    """
    from evalreg.diff import diff_schemas

    manifest = registry.manifest(family)
    settings = versioning(manifest)
    versions = registry.versions(family)
    if against is None:
        if not versions:
            raise RegistryError(manifest.path, f"{family} has no version to compare with")
        newest = versions[-1]
        old: Mapping[str, Any] = registry.entry(family, newest).document
    else:
        newest, old = against
    new = dict(published.document)
    given_id = new.get("$id")
    if isinstance(given_id, str) and (
        registry.entry_by_id(given_id) is not None or given_id == old.get("$id")
    ):
        del new["$id"]  # the id of a version we have: the new version gets its own
    diff = diff_schemas(
        old,
        new,
        registry=registry.referencing_registry(),
        policy=settings.policy,
        old_label=f"{family}@{newest}",
        new_label=f"{family}@upstream",
    )
    markers = [m.pointer for m in manifest.markers]
    stated = version_stated(new, markers)
    restated = stated is not None and is_file_version(stated) and _newer(stated, newest, versions)
    if not meaningful(diff) and not restated:
        return Proposal(family, newest, None, diff, new, None, published)
    numbered = f"given with --version {version}"
    if version is None:
        if stated is not None and restated:
            version, numbered = stated, f"the version the upstream schema states ({stated})"
        else:
            level = _level(diff.compatibility, newest)
            version = bump(newest, level)
            while match_version(version, versions):
                version = bump(version, "patch")
            numbered = f"a {level} release after {newest}: the change is {diff.compatibility}"
    if against is None:
        check_new_version(registry, family, version)
    elif not _newer(version, newest, versions):
        raise RegistryError(manifest.path, f"{version} is not newer than {newest}")
    if "$id" not in new:
        new = {"$id": default_id(family, version), **new} if "$id" in old else new
    diff = _relabel(diff, family, newest, version)
    step = generate_step(diff, new, newest, version, markers=markers)
    return Proposal(family, newest, version, diff, new, step, published, numbered)


def _newer(version: str, newest: str, versions: tuple[str, ...]) -> bool:
    return (
        parse_version(version) > parse_version(newest) and match_version(version, versions) is None
    )


def _relabel(diff: SchemaDiff, family: str, old: str, new: str) -> SchemaDiff:
    from dataclasses import replace

    return replace(diff, old_label=f"{family}@{old}", new_label=f"{family}@{new}")


def write_proposal(
    registry: BaseRegistry, proposal: Proposal, directory: str | Path | None = None
) -> tuple[Path, Path]:
    """Write a proposal's schema and step as a draft into a registry directory.

    Raises:
        RegistryError: nothing to write, a file exists already, or the directory is the
            installed one (see `drafting.target_directory`).
    """
    if proposal.version is None or proposal.step is None:
        raise RegistryError(proposal.family, "the upstream schema did not change: nothing to write")
    target = target_directory(registry, proposal.family, directory, what="sync")
    schema, step = version_paths(target, proposal.family, proposal.source, proposal.version)
    write_files(target, [(schema, dump_schema(proposal.document)), (step, proposal.step.text)])
    return schema, step


def sync_history(
    registry: BaseRegistry, family: str, upstream: Upstream, ref: str | None = None
) -> Iterator[Proposal]:
    """Yield a proposal for each change of the upstream schema the family does not have yet.

    The history is walked oldest first; the versions before the last one equal (up to
    annotations) to the family's newest are what the family has already.

    Raises:
        ReadError: the upstream is not a git checkout, or git fails.
    """
    from evalreg.diff import diff_schemas

    versions = registry.versions(family)
    newest = versions[-1]
    current: tuple[str, Mapping[str, Any]] = (newest, registry.entry(family, newest).document)
    published = list(history(upstream, ref))
    start = 0
    for index, item in enumerate(published):
        diff = diff_schemas(current[1], item.document, registry=registry.referencing_registry())
        if not meaningful(diff):
            start = index + 1
    taken = {*versions}
    for item in published[start:]:
        proposal = propose(registry, family, item, against=current)
        if proposal.version is None or proposal.version in taken:
            continue
        taken.add(proposal.version)
        current = (proposal.version, proposal.document)
        yield proposal
