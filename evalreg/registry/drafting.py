"""Draft versions: where they are written, and starting one as a copy of the newest schema.

A draft is a schema not recorded in `registry.lock`. Drafts are written into a registry
directory the user names (or the only one besides the built-in directory that is loaded), never
into the directory installed with evalreg; `release` (in `lock`) freezes them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalreg.errors import InvalidVersionError, RegistryError
from evalreg.io.pointer import split
from evalreg.io.writers import write_atomic
from evalreg.registry.core import (
    SCHEMA_SUFFIX,
    BaseRegistry,
    builtin_directory,
    default_id,
    refuse_installed,
)
from evalreg.registry.lock import entry_directory
from evalreg.registry.versions import is_file_version, parse_version

# The top-level annotations that name a schema's own version ("version": "0.3.0",
# "title": "... 0.3.0", "instance_level_eval_0.2.0"): a new version's copy names its own.
_VERSION_ANNOTATIONS = ("version", "title")


@dataclass(frozen=True)
class NewVersion:
    """The files `new_version` created, and the edits it made to the copied schema."""

    family: str
    source: str
    version: str
    schema_path: Path
    step_path: Path
    edits: tuple[str, ...] = ()


_STEP_TEMPLATE = '''\
"""TODO: say in one line what changes from {source} to {target}.

TODO: describe what changed between the versions and how each fact of a {source} record is
carried to {target}. Report values with no place in {target} with ctx.kept or ctx.lose.
"""

from __future__ import annotations

from typing import Any

from evalreg import StepContext

FROM = "{source}"
TO = "{target}"


def upgrade(record: dict[str, Any], ctx: StepContext) -> dict[str, Any]:
    """Return `record` at {target}. Must not mutate `record` (copy what you change)."""
    return dict(record)
'''


def target_directory(
    registry: BaseRegistry,
    family: str,
    directory: str | Path | None = None,
    *,
    what: str = "new-version",
) -> Path:
    """Return the registry directory a new version of `family` is written into.

    `directory` when given (it must be one the registry loaded); else the only directory
    loaded besides the built-in one; else, of several, the one holding the family's newest
    schema; else the built-in directory of a source checkout. The directory installed with
    evalreg is never written into.

    Raises:
        RegistryError: `directory` was not loaded, the choice is ambiguous, or the only
            candidate is the installed package's own directory.
    """
    builtin = builtin_directory().resolve()
    if directory is not None:
        chosen = Path(directory).resolve()
        if chosen not in registry.directories:
            raise RegistryError(
                str(directory), "is not a loaded registry directory; load it with --registry DIR"
            )
        refuse_installed(chosen, what)
        return chosen
    own = [d for d in registry.directories if d != builtin]
    if len(own) > 1:
        versions = registry.versions(family)
        holder = entry_directory(registry.entry(family, versions[-1])) if versions else None
        own = [d for d in own if d == holder] or own
    if len(own) > 1:
        raise RegistryError(
            ", ".join(map(str, own)),
            f"several registry directories are loaded; say which one {what} writes into "
            "with --registry DIR",
        )
    chosen = own[0] if own else builtin
    refuse_installed(chosen, what)
    return chosen


_BOUNDED = r"(?<![\d.]){}(?![\d.]*\d)"


def version_edits(
    registry: BaseRegistry, family: str, document: dict[str, Any], old: str, new: str
) -> list[str]:
    """Make a copy of `old`'s schema name `new` wherever it named `old`, in place.

    The `$id` (when it names the version; else the registry's default id for `new`), the
    `const`/`enum` of each version marker, and the top-level `version` and `title`.
    Return each edit, in words.
    """
    edits: list[str] = []
    old_id = document.get("$id")
    if isinstance(old_id, str):
        new_id = old_id.replace(old, new) if old in old_id else default_id(family, new)
        document["$id"] = new_id
        edits.append(f"$id: {old_id} -> {new_id}")
    edits += _marker_edits(registry, family, document, old, new)
    pattern = re.compile(_BOUNDED.format(re.escape(old)))
    for key in _VERSION_ANNOTATIONS:
        value = document.get(key)
        if isinstance(value, str) and pattern.search(value):
            document[key] = pattern.sub(new, value)
            edits.append(f"{key}: {value!r} -> {document[key]!r}")
    return edits


def _marker_edits(
    registry: BaseRegistry, family: str, document: dict[str, Any], old: str, new: str
) -> list[str]:
    """Move `const`/`enum` values of the version markers from `old` to `new`, in place."""
    edits: list[str] = []
    for marker in registry.manifest(family).markers:
        before, after = marker.render(old), marker.render(new)
        if before is None or after is None:
            continue
        node: Any = document
        place = ""
        for token in split(marker.pointer):
            properties = node.get("properties") if isinstance(node, dict) else None
            node = properties.get(token) if isinstance(properties, dict) else None
            place += f"/properties/{token}"
        if not isinstance(node, dict):
            continue
        if node.get("const") == before:
            node["const"] = after
            edits.append(f"{place}/const: {before!r} -> {after!r}")
        if isinstance(node.get("enum"), list) and before in node["enum"]:
            node["enum"] = [after if value == before else value for value in node["enum"]]
            edits.append(f"{place}/enum: {before!r} -> {after!r}")
    return edits


def check_new_version(registry: BaseRegistry, family: str, version: str) -> str:
    """Return the newest version of `family`, after checking that `version` may follow it.

    Raises:
        UnknownFamilyError: no such family.
        InvalidVersionError: `version` is not a version number.
        RegistryError: the family has no version yet, or `version` is not newer than its newest.
    """
    manifest = registry.manifest(family)
    versions = registry.versions(family)
    if not versions:
        raise RegistryError(
            manifest.path,
            f"{family} has no schema yet; write schemas/{family}/<version>{SCHEMA_SUFFIX} first",
        )
    if not is_file_version(version):
        raise InvalidVersionError(version, "new-version")  # it names the new files
    newest = versions[-1]
    if parse_version(version) <= parse_version(newest):
        raise RegistryError(
            str(registry.entry(family, newest).path.parent),
            f"{version} is not newer than {family}'s latest version {newest}; "
            "a new version goes after the latest",
        )
    return newest


def write_files(directory: Path, files: Sequence[tuple[Path, str]]) -> None:
    """Write new files into a registry directory, refusing to overwrite any.

    Raises:
        RegistryError: a file exists already or cannot be written.
    """
    for path, _ in files:
        if path.exists():
            raise RegistryError(str(path), "already exists; remove it or pick another version")
    try:
        for path, text in files:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, text.encode("utf-8"))
    except OSError as err:
        raise RegistryError(str(err.filename or directory), f"cannot write: {err}") from err


def version_paths(directory: Path, family: str, source: str, version: str) -> tuple[Path, Path]:
    """Return where a new version's schema and the step to it are written."""
    schema = directory / "schemas" / family / f"{version}{SCHEMA_SUFFIX}"
    step = directory / "migrations" / family / f"{source}_to_{version}.py"
    return schema, step


def dump_schema(document: Any) -> str:
    """Return a schema document as it is written: 2-space indent, trailing newline."""
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def new_version(
    registry: BaseRegistry, family: str, version: str, directory: str | Path | None = None
) -> NewVersion:
    """Start a new draft version: copy the newest schema, and add an empty step to fill in.

    The files go into `directory` (see `target_directory`). The copy keeps the newest
    document and names `version` wherever it named its own (`version_edits`).

    Raises:
        UnknownFamilyError: no such family.
        InvalidVersionError: `version` is not a version number.
        RegistryError: the family has no version yet, `version` is not newer than the latest,
            a file to create already exists, or the directory is the installed one.
    """
    newest = check_new_version(registry, family, version)
    target = target_directory(registry, family, directory)
    latest = registry.entry(family, newest)
    schema_path, step_path = version_paths(target, family, latest.version, version)
    try:
        document = json.loads(latest.path.read_bytes())
    except (OSError, ValueError) as err:
        raise RegistryError(str(latest.path), f"cannot read schema: {err}") from err
    edits = version_edits(registry, family, document, latest.version, version)
    step = _STEP_TEMPLATE.format(source=latest.version, target=version)
    write_files(target, [(schema_path, dump_schema(document)), (step_path, step)])
    return NewVersion(family, latest.version, version, schema_path, step_path, tuple(edits))
