"""Migrations: step modules, the version graph, the planner, and migrating one record.

A step is one module `migrations/<family>/<from>_to_<to>.py` declaring `FROM`, `TO`, a pure
`upgrade(record, ctx)`, optionally `downgrade(record, ctx)` (only where nothing is lost) and
`PARAMS` (values the old record cannot supply). Steps are discovered in every registry directory.
"""

from __future__ import annotations

import importlib.util
import inspect
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from types import MappingProxyType, ModuleType
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from evalreg.engine.detect import detect
from evalreg.errors import (
    DataLossError,
    EvalregError,
    NoMigrationPathError,
    ParameterError,
    RegistryError,
)
from evalreg.io.pointer import MISSING, resolve, split
from evalreg.registry.versions import match_version, parse_version
from evalreg.stepkit import Relabel, clone

if TYPE_CHECKING:
    from evalreg.engine.validate import Issue
    from evalreg.registry.core import Registry
    from evalreg.registry.manifest import Marker

StepFunction = Callable[[dict[str, Any], "StepContext"], dict[str, Any]]
ValidateMode = Literal["final", "each", "none"]
VALIDATE_MODES: tuple[ValidateMode, ...] = ("final", "each", "none")


@dataclass(frozen=True)
class Param:
    """A value a step needs that an old record cannot supply; set with `--set NAME=VALUE`."""

    name: str
    help: str
    default: Any = None


@dataclass(frozen=True)
class Note:
    """Something a step reports about a value: kept as an extra field, moved, or lost."""

    kind: Literal["kept", "moved", "lost"]
    pointer: str
    detail: str
    step: str = ""

    def __str__(self) -> str:
        return f"{self.kind} {self.pointer or '/'}: {self.detail}"


class StepContext:
    """What a step sees besides the record: its parameters, and where to report values."""

    def __init__(
        self, params: Mapping[str, Any] | None = None, *, allow_loss: bool = False, step: str = ""
    ) -> None:
        # The engine hands every step of a route the same read-only parameters: no copy needed.
        self.params: Mapping[str, Any] = (
            params if isinstance(params, MappingProxyType) else MappingProxyType(dict(params or {}))
        )
        self.allow_loss = allow_loss
        self.step = step
        self.notes: list[Note] = []

    def kept(self, pointer: str, reason: str) -> None:
        """Report a value kept where the target allows extra fields, with no declared place."""
        self.notes.append(Note("kept", pointer, reason, self.step))

    def moved(self, source: str, target: str) -> None:
        """Report that a value moved from one place to another."""
        self.notes.append(Note("moved", source, f"moved to {target}", self.step))

    def lose(self, pointer: str, reason: str) -> None:
        """Report a value the target cannot hold; allowed only when the user accepted loss.

        Raises:
            DataLossError: loss was not allowed (the record then fails, naming the field).
        """
        if not self.allow_loss:
            raise DataLossError(pointer, reason)
        self.notes.append(Note("lost", pointer, reason, self.step))


@dataclass(frozen=True)
class StepModule:
    """One loaded step module: the pair of versions it connects and its functions."""

    family: str
    source: str
    target: str
    path: Path
    doc: str
    params: tuple[Param, ...]
    upgrade: StepFunction
    downgrade: StepFunction | None


@dataclass(frozen=True)
class Step:
    """One directed move along the version graph (an upgrade, or a lossless downgrade)."""

    module: StepModule
    direction: Literal["up", "down"]

    @property
    def source(self) -> str:
        """Return the version this move starts from."""
        return self.module.source if self.direction == "up" else self.module.target

    @property
    def target(self) -> str:
        """Return the version this move ends at."""
        return self.module.target if self.direction == "up" else self.module.source

    @cached_property
    def name(self) -> str:
        """Return e.g. `0.1.0 -> 0.2.0`."""
        return f"{self.source} -> {self.target}"

    @property
    def function(self) -> StepFunction:
        """Return the function that performs the move."""
        function = self.module.upgrade if self.direction == "up" else self.module.downgrade
        assert function is not None
        return function


def _load_module(path: Path, family: str) -> ModuleType:
    name = f"evalreg_steps.{family}.{path.stem}".replace("-", "_")
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise RegistryError(str(path), "cannot load the step module")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as err:  # a user's module may fail in any way; name the file
        raise RegistryError(str(path), f"the step module failed to load: {err!r}") from err
    return module


def load_step(path: Path, family: str, versions: Iterable[str]) -> StepModule:
    """Load and check one step module.

    Raises:
        RegistryError: the module is malformed, names unknown versions, or its file name disagrees.
    """
    module = _load_module(path, family)
    source, target = getattr(module, "FROM", None), getattr(module, "TO", None)
    if not isinstance(source, str) or not isinstance(target, str):
        raise RegistryError(str(path), "a step must declare FROM and TO version strings")
    known = tuple(versions)
    found = []
    for label, version in (("FROM", source), ("TO", target)):
        match = match_version(version, known)
        if match is None:
            raise RegistryError(
                str(path),
                f"{label} = {version!r} is not a version of {family} (known: {', '.join(known)})",
            )
        found.append(match)
    source, target = found
    if parse_version(source) >= parse_version(target):
        raise RegistryError(str(path), f"FROM ({source}) must be older than TO ({target})")
    if path.stem != f"{source}_to_{target}":
        raise RegistryError(str(path), f"the file must be named {source}_to_{target}.py")
    upgrade = getattr(module, "upgrade", None)
    if not callable(upgrade):
        raise RegistryError(str(path), "a step must define upgrade(record, ctx)")
    downgrade = getattr(module, "downgrade", None)
    if downgrade is not None and not callable(downgrade):
        raise RegistryError(str(path), "downgrade must be a function")
    params = tuple(getattr(module, "PARAMS", ()))
    if not all(isinstance(p, Param) for p in params):
        raise RegistryError(str(path), "PARAMS must be a tuple of evalreg.Param")
    doc = (inspect.getdoc(module) or "").strip()
    return StepModule(family, source, target, path, doc, params, upgrade, downgrade)


@dataclass(frozen=True)
class StepSet:
    """A family's steps: the version graph, built once, that the planner searches."""

    family: str
    versions: tuple[str, ...]
    modules: tuple[StepModule, ...] = field(default=())
    _plans: dict[tuple[str, str], tuple[Step, ...]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    """Chains already planned: the graph never changes, and migrating a file plans per record."""
    _defaults: dict[tuple[str, str], dict[str, Any]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    @classmethod
    def load(cls, registry: Registry, family: str) -> StepSet:
        """Load every step module of a family.

        Raises:
            RegistryError: a module is malformed, or two modules connect the same versions.
        """
        versions = registry.versions(family)
        modules = [load_step(p, family, versions) for p in registry.step_files(family)]
        return cls.build(family, versions, modules)

    @classmethod
    def build(cls, family: str, versions: Iterable[str], modules: Iterable[StepModule]) -> StepSet:
        """Build the graph from loaded modules, refusing duplicates.

        Raises:
            RegistryError: two modules connect the same pair of versions.
        """
        seen: dict[tuple[str, str], StepModule] = {}
        for module in modules:
            key = (module.source, module.target)
            if key in seen:
                raise RegistryError(
                    str(module.path), f"duplicate step {key[0]} -> {key[1]}: also {seen[key].path}"
                )
            seen[key] = module
        ordered = sorted(
            seen.values(), key=lambda m: (parse_version(m.source), parse_version(m.target))
        )
        return cls(family, tuple(versions), tuple(ordered))

    def moves(self) -> list[Step]:
        """Return every possible move: each upgrade, and each downgrade a step defines."""
        moves = [Step(m, "up") for m in self.modules]
        moves += [Step(m, "down") for m in self.modules if m.downgrade is not None]
        return moves

    def params(self) -> tuple[Param, ...]:
        """Return every parameter any step of the family declares."""
        return tuple(p for m in self.modules for p in m.params)

    def plan(self, source: str, target: str) -> tuple[Step, ...]:
        """Return the shortest chain of moves from `source` to `target` (empty if equal).

        Raises:
            NoMigrationPathError: no chain connects the two versions.
        """
        if source == target:
            return ()
        planned = self._plans.get((source, target))
        if planned is None:
            planned = self._plans[source, target] = self._search(source, target)
        return planned

    def defaults(self, source: str, target: str) -> dict[str, Any]:
        """Return the default of every parameter the chain from `source` to `target` declares.

        Raises:
            NoMigrationPathError: no chain connects the two versions.
        """
        found = self._defaults.get((source, target))
        if found is None:
            chain = self.plan(source, target)
            found = {p.name: p.default for step in chain for p in step.module.params}
            self._defaults[source, target] = found
        return dict(found)

    def _search(self, source: str, target: str) -> tuple[Step, ...]:
        """Return the shortest chain from `source` to `target` by breadth-first search."""
        edges: dict[str, list[Step]] = {}
        for move in self.moves():
            edges.setdefault(move.source, []).append(move)
        previous: dict[str, Step] = {}
        queue = deque([source])
        while queue:
            version = queue.popleft()
            for move in sorted(edges.get(version, ()), key=lambda m: parse_version(m.target)):
                if move.target in previous or move.target == source:
                    continue
                previous[move.target] = move
                queue.append(move.target)
        if target not in previous:
            downward = parse_version(target) < parse_version(source)
            reason = (
                "no lossless downgrade steps lead there"
                if downward
                else "a step between them is missing"
            )
            raise NoMigrationPathError(self.family, source, target, reason)
        chain = [previous[target]]
        while chain[-1].source != source:
            chain.append(previous[chain[-1].source])
        return tuple(reversed(chain))


@dataclass(frozen=True)
class MigrationResult:
    """What happened to one record."""

    status: Literal["migrated", "current", "failed"]
    record: Any
    """The migrated record; the input itself when current or failed."""
    family: str | None = None
    source: str | None = None
    target: str | None = None
    steps: tuple[str, ...] = ()
    notes: tuple[Note, ...] = ()
    error: str | None = None
    failed_step: str | None = None
    issues: tuple[Issue, ...] = ()

    @property
    def ok(self) -> bool:
        """Return whether the record is now valid at the target."""
        return self.status != "failed"


def parse_params(pairs: Iterable[str]) -> dict[str, str]:
    """Parse `NAME=VALUE` strings.

    Raises:
        ParameterError: a pair has no `=` or an empty name.
    """
    params: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise ParameterError(f"--set {pair!r}: expected NAME=VALUE")
        params[name.strip()] = value
    return params


def check_params(registry: Registry, params: Mapping[str, Any], family: str | None = None) -> None:
    """Refuse parameter names no step declares (in `family`, or in any family).

    Raises:
        ParameterError: a name is declared by no step.
    """
    families = [family] if family else registry.families()
    declared = {p.name for f in families for p in registry.steps(f).params()}
    unknown = sorted(set(params) - declared)
    if unknown:
        known = ", ".join(sorted(declared)) or "none"
        raise ParameterError(f"unknown parameter {', '.join(unknown)} (known: {known})")


def _memo(registry: Registry, name: str) -> dict[Any, Any]:
    """Return a cache kept on `registry` (which never changes once loaded) for what `name` holds."""
    memo: dict[Any, Any] = registry.__dict__.setdefault(f"_memo_{name}", {})
    return memo


class _Move(NamedTuple):
    """What the engine runs for one step, or for a run of relabelling steps taken as one."""

    function: StepFunction
    names: tuple[str, ...]
    """The steps it performs (several: consecutive relabels of one pointer, the last one run)."""
    target: str


@dataclass(frozen=True)
class _Route:
    """The way from one version of a family to another, worked out once for every record."""

    target: str
    chain: tuple[Step, ...]
    defaults: Mapping[str, Any]
    """The default of every parameter the chain declares (read-only: every step sees it)."""
    moves: tuple[_Move, ...]
    """The chain to run when nothing is checked in between: relabels in a row fused."""
    each: tuple[_Move, ...]
    """The chain step by step, for validation after each."""
    writer: _Writer | None
    """How each step's version is written into the record (None: the family writes none)."""

    @classmethod
    def find(cls, registry: Registry, family: str, source: str, to: str) -> _Route:
        """Return the (cached) route of `family` from `source` to `to` (or `latest`).

        Raises:
            UnknownVersionError: `to` is no version of the family.
            NoMigrationPathError: no chain connects the two versions.
        """
        cache: dict[tuple[str, str, str], _Route] = _memo(registry, "routes")
        route = cache.get((family, source, to))
        if route is None:
            target = registry.resolve_version(family, to)
            steps = registry.steps(family)
            chain = steps.plan(source, target)
            each = tuple(_Move(s.function, (s.name,), s.target) for s in chain)
            defaults = MappingProxyType(dict(steps.defaults(source, target)))
            writer = _Writer.of(registry, family)
            route = cls(target, chain, defaults, _fuse(each), each, writer)
            cache[family, source, to] = route
        return route


def _fuse(moves: Iterable[_Move]) -> tuple[_Move, ...]:
    """Return `moves` with each run of relabels of one pointer made one move: the last one.

    Each relabel sets the same value that the next one overwrites, and the version marker the
    engine writes after them depends only on the final version (and on whether the record had
    a marker, which no relabel of the marker's own pointer takes away), so the record is the
    same either way.
    """
    fused: list[_Move] = []
    for move in moves:
        last = fused[-1].function if fused else None
        function = move.function
        if (
            isinstance(last, Relabel)
            and isinstance(function, Relabel)
            and last.pointer == function.pointer
        ):
            fused[-1] = _Move(function, fused[-1].names + move.names, move.target)
        else:
            fused.append(move)
    return tuple(fused)


@dataclass(frozen=True)
class _Writer:
    """How `migrate` writes a family's version marker (its manifest's marker with a template)."""

    marker: Marker
    tokens: tuple[str, ...]
    values: dict[str, str | None] = field(default_factory=dict, compare=False)
    """The marker value of each version written so far."""

    @staticmethod
    def of(registry: Registry, family: str) -> _Writer | None:
        """Return the family's marker writer (None: the family has no marker it writes)."""
        cache: dict[str, _Writer | None] = _memo(registry, "marker_writers")
        if family not in cache:
            markers = registry.manifest(family).markers
            marker = next((m for m in markers if m.template is not None), None)
            tokens = () if marker is None else tuple(split(marker.pointer))
            cache[family] = None if marker is None else _Writer(marker, tokens)
        return cache[family]

    def write(self, record: Any, before: Any, version: str) -> Any:
        """Return `record` with the marker of `version` (`before`: the step's input)."""
        marker, tokens = self.marker, self.tokens
        if not isinstance(record, dict):
            return record
        if marker.when == "present" and resolve(before, marker.pointer) is MISSING:
            return record
        value = self.values.get(version, MISSING)
        if value is MISSING:
            value = self.values[version] = marker.render(version)
        if len(tokens) == 1:
            if record.get(tokens[0], MISSING) == value:
                return record
            if tokens[0] in record:
                return {**record, tokens[0]: value}
            return {tokens[0]: value, **record}
        if resolve(record, marker.pointer) == value:
            return record
        updated = dict(record)
        parent: Any = updated
        for token in tokens[:-1]:
            child = parent.get(token) if isinstance(parent, dict) else None
            if not isinstance(child, dict):
                return record
            parent[token] = dict(child)
            parent = parent[token]
        parent[tokens[-1]] = value
        return updated


def _set_marker(registry: Registry, family: str, record: Any, before: Any, version: str) -> Any:
    """Return `record` with the family's version marker set to `version`, where it writes one."""
    writer = _Writer.of(registry, family)
    return record if writer is None else writer.write(record, before, version)


def _failed(
    result: dict[str, Any], error: str, step: str | None = None, **more: Any
) -> MigrationResult:
    return MigrationResult("failed", error=error, failed_step=step, **result, **more)


def migrate_record(
    registry: Registry,
    record: Any,
    to: str,
    *,
    family: str | None = None,
    params: Mapping[str, Any] | None = None,
    allow_loss: bool = False,
    validate: ValidateMode | str = "final",
    filename: str | None = None,
    copy_input: bool = True,
) -> MigrationResult:
    """Migrate one record to version `to` (or `latest`); failures are reported, not raised.

    Steps never mutate their input but may share unchanged parts of it with their output, so
    the chain runs on a copy of `record`: the result shares nothing with the caller's record.
    A caller that owns `record` and will not change it (a freshly parsed one) may pass
    `copy_input=False` to save the copy.

    Raises:
        UnknownFamilyError: `family` is given and unknown.
        ParameterError: `validate` is not one of final, each, none.
    """
    if validate not in VALIDATE_MODES:
        raise ParameterError(f"validate must be one of {', '.join(VALIDATE_MODES)}")
    base: dict[str, Any] = {"record": record}
    detection = detect(registry, record, filename)
    if family is None:
        if detection.status == "unknown-version" and detection.family is not None:
            known = ", ".join(registry.versions(detection.family))
            message = (
                f"version {detection.stated_version!r} of {detection.family} is not known "
                f"(known: {known})"
            )
            return _failed(base | {"family": detection.family}, message)
        if not detection.ok:
            return _failed(base, f"cannot detect the record: {detection.summary()}")
        family, source = detection.family, detection.version
    else:
        registry.manifest(family)
        stated = registry.manifest(family).read_version(record)
        if stated is not None and stated[2] is not None:
            source = match_version(stated[2], registry.versions(family))
            if source is None:
                known = ", ".join(registry.versions(family))
                return _failed(
                    base | {"family": family},
                    f"version {stated[2]!r} of {family} is not known (known: {known})",
                )
        elif detection.ok and detection.family == family:
            source = detection.version
        else:
            return _failed(
                base | {"family": family}, f"cannot tell which version of {family} this is"
            )
    assert family is not None and source is not None
    base |= {"family": family, "source": source}
    try:
        route = _Route.find(registry, family, source, to)
    except EvalregError as err:
        return _failed(base, str(err))
    target, chain = route.target, route.chain
    base["target"] = target

    notes: list[Note] = []
    current: Any = clone(record) if copy_input and chain else record
    done: list[str] = []
    all_params = MappingProxyType({**route.defaults, **params}) if params else route.defaults
    writer = route.writer
    each = validate == "each"
    for function, names, version in route.each if each else route.moves:
        name = names[-1]
        ctx = StepContext(all_params, allow_loss=allow_loss, step=name)
        try:
            migrated = function(current, ctx)
        except DataLossError as err:
            return _failed(base, str(err), name, steps=tuple(done))
        except Exception as err:  # a step is user code: report the failure, keep going
            message = f"{type(err).__name__}: {err}"
            return _failed(base, message, name, steps=tuple(done))
        if not isinstance(migrated, dict):
            return _failed(base, "the step did not return an object", name)
        current = migrated if writer is None else writer.write(migrated, current, version)
        notes += ctx.notes
        done += names
        if each and version != target:
            issues = registry.validator(family, version).issues(current)
            if issues:
                message = f"not valid at {version} after this step: {issues[0]}"
                return _failed(base, message, name, steps=tuple(done), issues=tuple(issues))
    if validate != "none":
        issues = registry.validator(family, target).issues(current)
        if issues:
            extra = f" (and {len(issues) - 1} more)" if len(issues) > 1 else ""
            label = "already at" if not chain else "the result is not valid at"
            message = (
                f"{label} {target} but not valid: {issues[0]}{extra}"
                if not chain
                else (f"{label} {target}: {issues[0]}{extra}")
            )
            step_name = chain[-1].name if chain else None
            return _failed(base, message, step_name, steps=tuple(done), issues=tuple(issues))
    status: Literal["migrated", "current"] = "migrated" if chain else "current"
    return MigrationResult(
        status,
        current,
        family,
        source,
        target,
        tuple(done),
        tuple(notes),
    )
