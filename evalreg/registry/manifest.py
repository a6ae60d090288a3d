"""Family manifests: what a family is called, how to recognise it and where its version lives.

A manifest is one YAML file `registry/<family>.yaml` in a registry directory.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from evalreg.errors import RegistryError, cut_repr
from evalreg.io.pointer import MISSING, resolve, split
from evalreg.io.pointer import find as find_values
from evalreg.registry.cache import RegistryCache, decoded
from evalreg.registry.patterns import BoundedPattern, safe_pattern
from evalreg.registry.rules import RuleSpec, parse_rules
from evalreg.registry.versions import is_version

if TYPE_CHECKING:
    import yaml

MAX_MANIFEST_BYTES = 1_048_576
"""The largest manifest file read, in bytes (1 MiB)."""
MAX_NAME_LENGTH = 100
"""The longest family name, in characters."""
FAMILY_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+)*")
"""A family name: it names files and folders, so no separator, no leading dot, no `..`."""

FileKind = Literal["json", "jsonl", "yaml"]
_KINDS = ("json", "jsonl", "yaml")


@dataclass(frozen=True)
class Marker:
    """A place where a record states its version."""

    pointer: str
    pattern: BoundedPattern | None = None
    """Matched against the whole value; a value over `MAX_MATCHED_LENGTH` chars states none."""
    template: str | None = None
    when: Literal["always", "present"] = "always"

    def read(self, record: Any) -> tuple[Any, str | None]:
        """Return the raw marker value and the version it states (None if it states none)."""
        value = resolve(record, self.pointer)
        if value is MISSING or isinstance(value, bool):
            return value, None
        if isinstance(value, (int, float)):
            text = str(value)
        elif isinstance(value, str):
            text = value
        else:
            return value, None
        if self.pattern is None:
            return value, text
        match = self.pattern.fullmatch(text)
        if match is None:
            return value, None
        return value, match.group("version")

    def render(self, version: str) -> str | None:
        """Return the marker value for `version`, or None if the marker is never written."""
        return None if self.template is None else self.template.format(version=version)


def find(record: Any, pointer: str) -> list[str]:
    """Return the concrete pointers that `pointer` reaches in `record` (`*`: every array item)."""
    return [place for place, _ in find_values(record, pointer)]


def _exists(node: Any, tokens: tuple[str, ...], start: int = 0) -> bool:
    """Return whether `find` would reach anything; stops at the first hit."""
    for index in range(start, len(tokens)):
        token = tokens[index]
        if token == "*" and isinstance(node, list):
            if index == len(tokens) - 2 and tokens[-1] != "*":  # one key: look at once
                key = tokens[-1]
                return any(
                    key in item if isinstance(item, dict) else _exists(item, tokens, index + 1)
                    for item in node
                )
            return any(_exists(item, tokens, index + 1) for item in node)
        if isinstance(node, dict):
            if token not in node:
                return False
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return False
    return True


_SHOWN_ABSENT = 4
"""How many absent forbidden pointers `Fingerprint.explain` names before counting the rest."""


@dataclass(frozen=True)
class Fingerprint:
    """A structural fingerprint: pointers that must exist, must not exist, or hold given values.

    `required` pointers must all exist, `any` needs at least one of its pointers to exist (and
    so does each group of `any_groups`: a manifest's `any` given as a list of lists is `any` and
    `any_groups`), `forbidden` pointers must not exist, and `equals` pointers must hold one of
    the listed values. In these pointers a `*` token matches every item of an array.
    """

    required: tuple[str, ...] = ()
    forbidden: tuple[str, ...] = ()
    equals: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    any: tuple[str, ...] = ()
    any_groups: tuple[tuple[str, ...], ...] = ()

    @property
    def empty(self) -> bool:
        """Return whether the fingerprint constrains nothing."""
        return not (self.required or self.forbidden or self.equals or self.any or self.any_groups)

    @property
    def groups(self) -> tuple[tuple[str, ...], ...]:
        """Return `any` and the `any_groups`: the groups each needing one pointer to exist."""
        return tuple(g for g in (self.any, *self.any_groups) if g)

    @cached_property
    def _tokens(self) -> tuple[tuple[tuple[str, ...], ...], ...]:
        """The split pointers of `required`, `any` and `forbidden`."""
        return tuple(
            tuple(tuple(split(p)) for p in pointers)
            for pointers in (self.required, self.any, self.forbidden)
        )

    @cached_property
    def _group_tokens(self) -> tuple[tuple[tuple[str, ...], ...], ...]:
        """The split pointers of each of `any_groups`."""
        return tuple(tuple(tuple(split(p)) for p in group) for group in self.any_groups if group)

    def fits(self, record: Any) -> bool:
        """Return whether `record` matches the fingerprint (`mismatches` is empty), quickly."""
        required, any_of, forbidden = self._tokens
        if not all(_exists(record, tokens) for tokens in required):
            return False
        if any_of and not any(_exists(record, tokens) for tokens in any_of):
            return False
        for group in self._group_tokens:
            if not any(_exists(record, tokens) for tokens in group):
                return False
        if any(_exists(record, tokens) for tokens in forbidden):
            return False
        for pointer, allowed in self.equals.items():
            value = resolve(record, pointer)
            if value is MISSING or not any(value == a and type(value) is type(a) for a in allowed):
                return False
        return True

    def clashes(self, record: Any) -> bool:
        """Return whether `record` holds a pointer the fingerprint forbids."""
        return any(_exists(record, tokens) for tokens in self._tokens[2])

    def mismatches(self, record: Any) -> list[str]:
        """Return how `record` differs from the fingerprint (empty when it matches)."""
        found: list[str] = []
        for pointer in self.required:
            if not find(record, pointer):
                found.append(f"no {pointer}")
        for group in self.groups:
            if not any(find(record, pointer) for pointer in group):
                found.append(f"none of {', '.join(group)}")
        for pointer in self.forbidden:
            found += [f"has {hit}" for hit in find(record, pointer)[:1]]
        for pointer, allowed in self.equals.items():
            value = resolve(record, pointer)
            if value is MISSING:
                found.append(f"no {pointer}")
            elif not any(value == a and type(value) is type(a) for a in allowed):
                found.append(f"{pointer} is {value!r}, not one of {list(allowed)!r}")
        return found

    def explain(self, record: Any) -> str:
        """Return what `record` shows of the fingerprint: the pointers found, the ones absent."""
        parts = [hit for pointer in self.required for hit in find(record, pointer)[:1]]
        parts += [hit for group in self.groups for p in group for hit in find(record, p)[:1]]
        parts += [f"{p} = {resolve(record, p)!r}" for p in self.equals]
        forbidden = self._tokens[2]
        absent = [
            p for p, t in zip(self.forbidden, forbidden, strict=True) if not _exists(record, t)
        ]
        if absent:
            more = len(absent) - _SHOWN_ABSENT
            named = ", ".join(absent[:_SHOWN_ABSENT] if more > 0 else absent)
            parts.append(f"none of {named}" + (f" (and {more} more)" if more > 0 else ""))
        return ", ".join(parts)

    def describe(self) -> str:
        """Return a short human description of what the fingerprint requires."""
        parts = [*self.required]
        parts += [f"one of {', '.join(group)}" for group in self.groups]
        parts += [f"no {p}" for p in self.forbidden]
        parts += [f"{p} in {list(v)!r}" for p, v in self.equals.items()]
        return ", ".join(parts)


@dataclass(frozen=True)
class FamilyManifest:
    """Everything the registry knows about a family apart from its schemas and steps."""

    name: str
    title: str
    description: str
    kind: FileKind
    files: tuple[str, ...] = ()
    markers: tuple[Marker, ...] = ()
    structure: Fingerprint = field(default_factory=Fingerprint)
    version_structure: Mapping[str, Fingerprint] = field(default_factory=dict)
    options: Mapping[str, Any] = field(default_factory=dict)
    path: str = ""
    rules: tuple[RuleSpec, ...] = ()
    """Its declarative rules (Python rules are files of the registry directory)."""

    def matches_filename(self, filename: str) -> bool:
        """Return whether a file name suggests this family."""
        name = Path(filename).name
        for suffix in (".gz",):
            if name.endswith(suffix):
                name = name[: -len(suffix)]
        return any(fnmatch.fnmatchcase(name, pattern) for pattern in self.files)

    def read_version(self, record: Any) -> tuple[Marker, Any, str | None] | None:
        """Return the first marker present in `record`, its raw value and the version it states."""
        for marker in self.markers:
            raw, version = marker.read(record)
            if raw is not MISSING:
                return marker, raw, version
        return None


def _strings(value: Any, where: str, key: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise RegistryError(where, f"{key} must be a list of strings")
    return tuple(value)


def _pointers(value: Any, where: str, key: str) -> tuple[str, ...]:
    pointers = _strings(value, where, key)
    for pointer in pointers:
        try:
            split(pointer)
        except ValueError as err:
            raise RegistryError(where, f"{key}: {err}") from err
    return pointers


def _fingerprint(data: Any, where: str, key: str) -> Fingerprint:
    if data is None:
        return Fingerprint()
    if not isinstance(data, dict):
        raise RegistryError(where, f"{key} must be a mapping")
    unknown = set(data) - {"required", "forbidden", "equals", "any"}
    if unknown:
        raise RegistryError(where, f"{key} has unknown keys: {', '.join(sorted(unknown))}")
    equals = data.get("equals") or {}
    if not isinstance(equals, dict):
        raise RegistryError(where, f"{key}.equals must map pointers to lists of values")
    _pointers(list(equals), where, f"{key}.equals")
    groups: list[Any] = [data.get("any")]
    if isinstance(groups[0], list) and groups[0] and all(isinstance(g, list) for g in groups[0]):
        groups = groups[0]  # a list of lists: each group needs one of its pointers
    return Fingerprint(
        required=_pointers(data.get("required"), where, f"{key}.required"),
        forbidden=_pointers(data.get("forbidden"), where, f"{key}.forbidden"),
        any=_pointers(groups[0], where, f"{key}.any"),
        any_groups=tuple(_pointers(g, where, f"{key}.any") for g in groups[1:]),
        equals={p: tuple(v) if isinstance(v, list) else (v,) for p, v in equals.items()},
    )


def _marker(data: Any, where: str) -> Marker:
    if not isinstance(data, dict) or not isinstance(data.get("pointer"), str):
        raise RegistryError(where, "every marker needs a `pointer`")
    _pointers(data["pointer"], where, "markers.pointer")
    pattern = None
    if data.get("pattern") is not None:
        pattern = safe_pattern(data["pattern"], where, "marker pattern")
        if "version" not in pattern.groupindex:
            raise RegistryError(where, "a marker pattern needs a named group (?P<version>...)")
    when = data.get("when", "always")
    if when not in ("always", "present"):
        raise RegistryError(where, "marker `when` must be `always` or `present`")
    template = data.get("template")
    if template is not None and "{version}" not in str(template):
        raise RegistryError(where, "a marker template must contain {version}")
    return Marker(
        pointer=data["pointer"],
        pattern=pattern,
        template=None if template is None else str(template),
        when=when,
    )


def parse_manifest(data: Any, where: str) -> FamilyManifest:
    """Build a manifest from parsed YAML.

    Raises:
        RegistryError: a field is missing or malformed.
    """
    if not isinstance(data, dict):
        raise RegistryError(where, "a manifest must be a mapping")
    for key in ("name", "title", "kind"):
        if not isinstance(data.get(key), str) or not data[key]:
            raise RegistryError(where, f"the manifest needs a `{key}` string")
    check_family_name(data["name"], where)
    if data["kind"] not in _KINDS:
        raise RegistryError(where, f"kind must be one of {', '.join(_KINDS)}")
    markers = data.get("markers") or []
    if not isinstance(markers, list):
        raise RegistryError(where, "markers must be a list")
    versions = data.get("versions") or {}
    if not isinstance(versions, dict):
        raise RegistryError(where, "versions must map version strings to settings")
    if not all(s is None or isinstance(s, dict) for s in versions.values()):
        raise RegistryError(where, "versions must map version strings to settings")
    version_structure = {
        str(v): _fingerprint((s or {}).get("structure"), where, f"versions.{v}.structure")
        for v, s in versions.items()
    }
    known = {
        "name",
        "title",
        "description",
        "kind",
        "files",
        "markers",
        "structure",
        "versions",
        "rules",
    }
    return FamilyManifest(
        name=data["name"],
        title=data["title"],
        description=str(data.get("description", "")).strip(),
        kind=data["kind"],
        files=_strings(data.get("files"), where, "files"),
        markers=tuple(_marker(m, where) for m in markers),
        structure=_fingerprint(data.get("structure"), where, "structure"),
        version_structure=version_structure,
        options={k: v for k, v in data.items() if k not in known},
        path=where,
        rules=parse_rules(data.get("rules"), data["name"], where),
    )


def check_family_name(name: str, where: str) -> str:
    """Return `name` if it is a safe family name.

    Raises:
        RegistryError: it is longer than `MAX_NAME_LENGTH`, or not letters, digits, `_`, `-`
            and single dots between them (no path separator, no leading dot, no `..`).
    """
    if len(name) > MAX_NAME_LENGTH or not FAMILY_NAME.fullmatch(name):
        raise RegistryError(
            where,
            f"family name {cut_repr(name, 60)} must be letters, digits, '_', '-' and single dots "
            f"between them, at most {MAX_NAME_LENGTH} characters (such as acme.run)",
        )
    return name


def _yaml_problem(err: yaml.YAMLError) -> str:
    """Return a YAML error as one line: where, the problem, and its context."""
    import yaml

    if isinstance(err, yaml.MarkedYAMLError):
        mark = err.problem_mark or err.context_mark
        where = "" if mark is None else f"line {mark.line + 1}, column {mark.column + 1}: "
        problem = " ".join(str(err.problem or err.context or "malformed YAML").split())
        context = ""
        if err.context and err.problem and err.context_mark is not None:
            context_mark = err.context_mark
            context = (
                f" ({' '.join(err.context.split())} at line {context_mark.line + 1}, "
                f"column {context_mark.column + 1})"
            )
        return f"{where}{problem}{context}"
    return " ".join(str(err).split())


def _parse_yaml(raw: bytes, where: str) -> Any:
    """Return what a manifest's bytes hold, read by the strict YAML loader.

    Raises:
        RegistryError: the bytes are not UTF-8, not YAML, or nested too deeply.
    """
    import yaml

    from evalreg.io.yamlstrict import strict_loader

    try:
        return yaml.load(raw.decode("utf-8"), Loader=strict_loader())
    except UnicodeDecodeError as err:
        raise RegistryError(where, f"cannot read manifest: not UTF-8 at byte {err.start}") from err
    except yaml.YAMLError as err:
        raise RegistryError(where, f"cannot read manifest: {_yaml_problem(err)}") from err
    except RecursionError as err:
        raise RegistryError(where, "cannot read manifest: nested too deeply") from err


def load_manifest(path: Path, cache: RegistryCache | None = None) -> FamilyManifest:
    """Load one manifest file; with a `cache`, its YAML is parsed only when the cache lacks it
    (the data is checked whichever way it came).

    Raises:
        RegistryError: the file cannot be read, is larger than `MAX_MANIFEST_BYTES`, is not
            YAML (the message names its line and column), or is malformed.
    """
    try:
        with path.open("rb") as stream:
            raw = stream.read(MAX_MANIFEST_BYTES + 1)
    except OSError as err:
        raise RegistryError(str(path), f"cannot read manifest: {err.strerror or err}") from err
    if len(raw) > MAX_MANIFEST_BYTES:
        raise RegistryError(
            str(path), f"manifest is larger than {MAX_MANIFEST_BYTES:,} bytes; is it one?"
        )
    data = decoded(cache, "manifest", raw, lambda raw: _parse_yaml(raw, str(path)))
    manifest = parse_manifest(data, str(path))
    if path.stem != manifest.name:
        raise RegistryError(
            str(path), f"manifest file name must be {manifest.name}.yaml (its `name`)"
        )
    return manifest


_BUMP_CHECKS = ("error", "warning")


@dataclass(frozen=True)
class Versioning:
    """A family's `versioning` manifest settings."""

    bump_check: Literal["error", "warning"] = "error"
    exceptions: Mapping[str, str] = field(default_factory=dict)
    """Version -> why its bump does not follow the diff ("" when no reason is given)."""
    policy: str = "lenient"


def versioning(manifest: FamilyManifest) -> Versioning:
    """Return a family's versioning settings (defaults when the manifest has none).

    Raises:
        RegistryError: the `versioning` key is malformed.
    """
    data = manifest.options.get("versioning")
    if data is None:
        return Versioning()
    where = manifest.path
    if not isinstance(data, dict):
        raise RegistryError(where, "versioning must map bump_check, exceptions and policy")
    unknown = set(data) - {"bump_check", "exceptions", "policy"}
    if unknown:
        raise RegistryError(
            where,
            f"versioning has unknown keys: {', '.join(sorted(unknown))} "
            "(known: bump_check, exceptions, policy)",
        )
    bump_check = data.get("bump_check", "error")
    if bump_check not in _BUMP_CHECKS:
        raise RegistryError(where, "versioning.bump_check must be `error` or `warning`")
    policy = data.get("policy", "lenient")
    if policy not in ("lenient", "strict"):
        raise RegistryError(where, "versioning.policy must be `lenient` or `strict`")
    raw = data.get("exceptions") or {}
    if isinstance(raw, list):
        raw = {version: "" for version in raw}
    if not isinstance(raw, dict):
        raise RegistryError(
            where, "versioning.exceptions must list versions, or map versions to reasons"
        )
    exceptions: dict[str, str] = {}
    for version, reason in raw.items():
        if not is_version(str(version)):
            raise RegistryError(where, f"versioning.exceptions: {version!r} is not a version")
        exceptions[str(version)] = "" if reason is None else str(reason)
    return Versioning(bump_check, exceptions, policy)
