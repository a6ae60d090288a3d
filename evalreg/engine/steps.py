"""Migration steps: step modules, the context a step sees, the version graph and its planner.

A step is one module `migrations/<family>/<from>_to_<to>.py` declaring `FROM`, `TO`, a pure
`upgrade(record, ctx)`, optionally `downgrade(record, ctx)` (only where nothing is lost) and
`PARAMS` (values the old record cannot supply). Steps are discovered in every registry directory.
The graph of a family's steps is pure data, built once and searched by the planner.
"""

from __future__ import annotations

import inspect
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

from evalreg.engine.modules import load_module
from evalreg.engine.notes import Note, Origin, converted_note, make_note

__all__ = [
    "Note",
    "Param",
    "Relabel",
    "Step",
    "StepContext",
    "StepFunction",
    "StepModule",
    "StepSet",
    "check_params",
    "load_step",
    "parse_params",
    "step_set",
]
from evalreg.errors import DataLossError, NoMigrationPathError, ParameterError, RegistryError
from evalreg.io.pointer import split
from evalreg.registry.versions import match_version, parse_version

if TYPE_CHECKING:
    from evalreg.registry.core import BaseRegistry

StepFunction = Callable[[dict[str, Any], "StepContext"], dict[str, Any]]


@dataclass(frozen=True)
class Param:
    """A value a step needs that an old record cannot supply; set with `--set NAME=VALUE`.

    `placeholder`: the default stands in for a fact the record does not hold (such as
    "unknown"), so values a step takes from it are reported as placeholders, not defaults.
    """

    name: str
    help: str
    default: Any = None
    placeholder: bool = False


class StepContext:
    """What a step sees besides the record: its parameters, and where to report its changes.

    Every change a step makes to the record is reported here, one `Note` each: `added`
    (`placeholder`, `default`, `param` for the common origins), `moved`, `renamed`,
    `converted`, `dropped` (nothing lost), `lose` (a loss, allowed only with allow-loss) and
    `kept` (a value left where the target declares no place for it). Pointers of the step's
    output are those of the record it returns (array indices as they are there); pointers of
    its input, those of the record it was given.

    `owned`: the record the step is given belongs to the run, which needs it no more once the
    step returns, so the step may change it in place and return it (`stepkit.writable` gives
    a step the record to change: itself when owned, else a copy). Not owned, the step must
    leave its input as it is (it may share unchanged parts of it with its output): the audits
    compare each step's input with its output. The engine decides (see `engine.migrate`).
    """

    __slots__ = ("allow_loss", "declared", "given", "notes", "owned", "params", "step")

    def __init__(
        self,
        params: Mapping[str, Any] | None = None,
        *,
        allow_loss: bool = False,
        step: str = "",
        given: Iterable[str] = (),
        declared: Mapping[str, Param] | None = None,
        owned: bool = False,
    ) -> None:
        # The engine hands every step of a route the same read-only parameters: no copy needed.
        self.params: Mapping[str, Any] = (
            params if isinstance(params, MappingProxyType) else MappingProxyType(dict(params or {}))
        )
        self.allow_loss = allow_loss
        self.step = step
        self.notes: list[Note] = []
        self.given: frozenset[str] = given if isinstance(given, frozenset) else frozenset(given)
        """The parameters the user set (the others have their defaults)."""
        self.declared: Mapping[str, Param] = declared or {}
        """The parameters the steps of the route declare, by name."""
        self.owned = owned
        """Whether the step may change the record it is given in place (see above)."""

    def kept(self, pointer: str, reason: str) -> None:
        """Report a value left where it is although the target declares no place for it."""
        self.notes.append(make_note("kept", pointer, reason, self.step))

    def moved(self, source: str, target: str, detail: str = "") -> None:
        """Report that the value at `source` (input) is now at `target` (output), unchanged."""
        self.notes.append(make_note("moved", target, detail, self.step, source))

    def renamed(self, source: str, target: str, detail: str = "") -> None:
        """Report a key renamed: the value at `source` is now at `target`, in the same place."""
        self.notes.append(make_note("renamed", target, detail, self.step, source))

    def added(
        self,
        pointer: str,
        value: Any,
        origin: Origin = "derived",
        detail: str = "",
        *,
        source: str | None = None,
    ) -> None:
        """Report a value put at `pointer` that the input did not hold there.

        `origin`: a `default` of the format, a `placeholder` for a fact the record does not
        hold, a `parameter` the user set, or `derived` from the record (from `source`).
        """
        self.notes.append(
            make_note("added", pointer, detail, self.step, source, value, None, origin)
        )

    def placeholder(self, pointer: str, value: Any, detail: str = "") -> None:
        """Report a placeholder put at `pointer`: a stand-in for a fact the record lacks."""
        self.added(pointer, value, "placeholder", detail)

    def default(self, pointer: str, value: Any, detail: str = "") -> None:
        """Report a default of the format put at `pointer`."""
        self.added(pointer, value, "default", detail)

    def origin(self, name: str) -> Origin:
        """Return where the value of parameter `name` comes from: the user, or its default."""
        if name in self.given:
            return "parameter"
        param = self.declared.get(name)
        return "placeholder" if param is not None and param.placeholder else "default"

    def param(self, pointer: str, name: str, value: Any, detail: str = "") -> None:
        """Report `value`, taken from parameter `name`, put at `pointer`."""
        origin = self.origin(name)
        if not detail:  # only the one it uses is built: a step reports many
            if origin == "placeholder":
                detail = f"the record does not say; give it with --set {name}=VALUE"
            elif origin == "parameter":
                detail = f"--set {name}"
            else:
                detail = f"the default of parameter {name}"
        self.added(pointer, value, origin, detail)

    def converted(
        self, pointer: str, before: Any, after: Any, detail: str = "", *, lossy: bool = False
    ) -> None:
        """Report the value at `pointer` converted from `before` to `after` (another type).

        `lossy`: the conversion loses what the old type said (structure as text, say), so it
        is allowed only with allow-loss, as `lose` is; `detail` then says what is lost.

        Raises:
            DataLossError: the conversion is lossy and loss was not allowed.
        """
        if lossy and not self.allow_loss:
            raise DataLossError(pointer, detail or "the conversion loses information")
        self.notes.append(converted_note(pointer, before, after, detail, self.step))

    def dropped(self, pointer: str, reason: str) -> None:
        """Report a value left out that loses nothing (it repeats what the record says)."""
        self.notes.append(make_note("dropped", pointer, reason, self.step))

    def lose(self, pointer: str, reason: str) -> None:
        """Report a value the target cannot hold; allowed only when the user accepted loss.

        Raises:
            DataLossError: loss was not allowed (the record then fails, naming the field).
        """
        if not self.allow_loss:
            raise DataLossError(pointer, reason)
        self.notes.append(make_note("lost", pointer, reason, self.step))


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


def load_step(path: Path, family: str, versions: Iterable[str]) -> StepModule:
    """Load and check one step module.

    Raises:
        RegistryError: the module is malformed, names unknown versions, or its file name disagrees.
    """
    module = load_module(path, "evalreg_steps", family)
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
    def load(cls, registry: BaseRegistry, family: str) -> StepSet:
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


def check_params(
    registry: BaseRegistry, params: Mapping[str, Any], family: str | None = None
) -> None:
    """Refuse parameter names no step declares (in `family`, or in any family).

    Raises:
        ParameterError: a name is declared by no step.
    """
    families = [family] if family else registry.families()
    declared = {p.name for f in families for p in step_set(registry, f).params()}
    unknown = sorted(set(params) - declared)
    if unknown:
        known = ", ".join(sorted(declared)) or "none"
        raise ParameterError(f"unknown parameter {', '.join(unknown)} (known: {known})")


def _load_all(registry: BaseRegistry) -> dict[str, StepSet]:
    return {f: StepSet.load(registry, f) for f in registry.families()}


def step_set(registry: BaseRegistry, family: str) -> StepSet:
    """Return a family's migration steps (every family's are loaded on first use).

    Raises:
        UnknownFamilyError: no such family.
        RegistryError: a step module is malformed.
    """
    registry.manifest(family)
    return registry.derived("steps", _load_all)[family]


class Relabel:
    """A step function that sets the value at one pointer to a fixed label (`stepkit.relabel`).

    Given a record it owns (`StepContext.owned`), it sets the label in place; otherwise it
    copies only the objects on the way to the label and shares the rest, unchanged.
    """

    def __init__(self, pointer: str, label: str) -> None:
        tokens = split(pointer)
        if not tokens:
            raise ValueError("relabel needs a pointer to a place inside the record, not ''")
        self.pointer = pointer
        self.label = label
        *self._parents, self._last = tokens
        self.__doc__ = f"Return a copy of `record` with {pointer} set to {label!r}."

    def __call__(self, record: dict[str, Any], ctx: StepContext | None = None) -> dict[str, Any]:
        owned = ctx is not None and ctx.owned
        out = record if owned else dict(record)
        if not self._parents:  # a top-level key, as most version labels are
            out[self._last] = self.label
            return out
        holder: dict[str, Any] = out
        for token in self._parents:
            child = holder.get(token)
            if not isinstance(child, dict):
                return out
            if not owned:
                holder[token] = child = dict(child)
            holder = child
        holder[self._last] = self.label
        return out

    def __repr__(self) -> str:
        return f"relabel({self.pointer!r}, {self.label!r})"
