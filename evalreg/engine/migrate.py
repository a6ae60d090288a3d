"""Migrating one record: detect it, plan its route, run the steps, write the marker, validate.

Each route (family, source version, target) is worked out once per registry: its chain of
steps, its parameter defaults, its marker writer, and which steps run fused.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from evalreg.engine.detect import detect
from evalreg.engine.modules import fails_alone
from evalreg.engine.steps import (
    Note,
    Param,
    Relabel,
    Step,
    StepContext,
    StepFunction,
    step_set,
)
from evalreg.engine.validators import validator
from evalreg.errors import (
    DataLossError,
    EvalregError,
    ParameterError,
    one_line,
    version_not_known,
)
from evalreg.io.codec import clone
from evalreg.io.pointer import MISSING, resolve, split
from evalreg.registry.versions import match_version

if TYPE_CHECKING:
    from evalreg.engine.validators import Issue
    from evalreg.registry.core import BaseRegistry
    from evalreg.registry.manifest import Marker

ValidateMode = Literal["final", "each", "none"]
_NONE_GIVEN: frozenset[str] = frozenset()
VALIDATE_MODES: tuple[ValidateMode, ...] = ("final", "each", "none")


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


class _Routes:
    """The routes of one registry and its families' marker writers, each worked out once.

    Kept on the registry (`BaseRegistry.derived`), which never changes once loaded, so that
    they live exactly as long as it does.
    """

    def __init__(self, registry: BaseRegistry) -> None:
        self.routes: dict[tuple[str, str, str, bool], _Route] = {}
        """By family, source version, target as asked (`latest` too) and whether drafts count:
        registries that differ only there share the cache, and `latest` depends on it."""
        self.writers: dict[str, _Writer | None] = {}
        """By family (None: the family writes no marker)."""

    @staticmethod
    def of(registry: BaseRegistry) -> _Routes:
        """Return the routes of `registry`."""
        routes: _Routes = registry.derived("migrate:routes", _Routes)
        return routes


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
    declared: Mapping[str, Param]
    """Every parameter the chain declares, by name (which of them are placeholders)."""
    moves: tuple[_Move, ...]
    """The chain to run when nothing is checked in between: relabels in a row fused."""
    each: tuple[_Move, ...]
    """The chain step by step, for validation after each."""
    writer: _Writer | None
    """How each step's version is written into the record (None: the family writes none)."""

    @classmethod
    def find(cls, registry: BaseRegistry, family: str, source: str, to: str) -> _Route:
        """Return the (cached) route of `family` from `source` to `to` (or `latest`).

        Raises:
            UnknownVersionError: `to` is no version of the family.
            NoMigrationPathError: no chain connects the two versions.
        """
        cache = _Routes.of(registry).routes
        route = cache.get((family, source, to, registry.drafts))
        if route is None:
            target = registry.resolve_version(family, to)
            steps = step_set(registry, family)
            chain = steps.plan(source, target)
            each = tuple(_Move(s.function, (s.name,), s.target) for s in chain)
            defaults = MappingProxyType(dict(steps.defaults(source, target)))
            declared = MappingProxyType({p.name: p for s in chain for p in s.module.params})
            writer = _Writer.of(registry, family)
            route = cls(target, chain, defaults, declared, _fuse(each), each, writer)
            cache[family, source, to, registry.drafts] = route
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
    values: Mapping[str, str | None]
    """The marker value of each version of the family (read-only)."""

    @staticmethod
    def of(registry: BaseRegistry, family: str) -> _Writer | None:
        """Return the family's marker writer (None: the family has no marker it writes)."""
        cache = _Routes.of(registry).writers
        if family not in cache:
            markers = registry.manifest(family).markers
            marker = next((m for m in markers if m.template is not None), None)
            writer = None
            if marker is not None:
                tokens = tuple(split(marker.pointer))
                versions = registry.versions(family)
                values = MappingProxyType({v: marker.render(v) for v in versions})
                writer = _Writer(marker, tokens, values)
            cache[family] = writer
        return cache[family]

    def write(self, record: Any, before: Any, version: str) -> Any:
        """Return `record` with the marker of `version` (`before`: the step's input)."""
        marker, tokens = self.marker, self.tokens
        if not isinstance(record, dict):
            return record
        if marker.when == "present" and resolve(before, marker.pointer) is MISSING:
            return record
        value = self.values.get(version, MISSING)
        if value is MISSING:  # a version the family did not list when the writer was made
            value = marker.render(version)
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


def _set_marker(registry: BaseRegistry, family: str, record: Any, before: Any, version: str) -> Any:
    """Return `record` with the family's version marker set to `version`, where it writes one."""
    writer = _Writer.of(registry, family)
    return record if writer is None else writer.write(record, before, version)


def _failed(
    result: dict[str, Any],
    error: str,
    step: str | None = None,
    cause: _Cause | None = None,
    **more: Any,
) -> MigrationResult:
    """Return a failed result; where `cause` names an earlier place the record went wrong,
    the failure is put there, with what became of it at the failing step after it."""
    if cause is not None:
        at = f"at step {step}: " if step != cause.step else ""
        error = f"{cause.reason} (then {at}{error})"
        step = cause.step
        more["issues"] = cause.issues
    return MigrationResult("failed", error=error, failed_step=step, **result, **more)


class _Cause(NamedTuple):
    """Where a record first went wrong on its route: the step, why, and the problems."""

    step: str
    reason: str
    issues: tuple[Issue, ...]


def _cause(
    registry: BaseRegistry,
    route: _Route,
    record: Any,
    upto: int,
    params: Mapping[str, Any],
    given: frozenset[str],
    allow_loss: bool,
) -> _Cause | None:
    """Return the first place before step `upto` of `route` where `record` went wrong.

    Run only for a record that failed later on: its input is validated at its own version, then
    the route is run again step by step, each result validated at its step's version, so that
    a failure names its cause rather than the step where it showed. `record` is the caller's
    record, which the first run did not change (steps never change their input). None: every
    result before step `upto` was valid (or the run again failed otherwise).
    """
    family = route.chain[0].module.family
    source = route.chain[0].source
    issues = validator(registry, family, source).issues(record)
    if issues:
        reason = (
            f"the record is not valid at its own version {source} to begin with: "
            f"{issues[0]}{_more(issues)}"
        )
        return _Cause(route.each[0].names[-1], reason, tuple(issues))
    current = clone(record)
    writer = route.writer
    for function, names, version in route.each[:upto]:
        ctx = StepContext(
            params, allow_loss=allow_loss, step=names[-1], given=given, declared=route.declared
        )
        try:
            migrated = function(current, ctx)
        except Exception:  # the run again fails otherwise than the first: nothing to add
            return None
        if not isinstance(migrated, dict):
            return None
        current = migrated if writer is None else writer.write(migrated, current, version)
        issues = validator(registry, family, version).issues(current)
        if issues:
            reason = f"not valid at {version} after this step: {issues[0]}{_more(issues)}"
            return _Cause(names[-1], reason, tuple(issues))
    return None


def _more(issues: Any) -> str:
    return f" (and {len(issues) - 1} more)" if len(issues) > 1 else ""


def migrate_record(
    registry: BaseRegistry,
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
            message = version_not_known(
                detection.stated_version or "",
                registry.versions(detection.family),
                detection.family,
            )
            return _failed(base | {"family": detection.family}, message)
        if not detection.ok:
            return _failed(base, f"cannot detect the record: {detection.summary()}")
        family, source = detection.family, detection.version
    else:
        registry.manifest(family)
        stated = registry.manifest(family).read_version(record)
        if detection.ok and detection.family == family:
            source = detection.version  # the label, or the structure where a label is stale
        elif stated is not None and stated[2] is not None:
            source = match_version(stated[2], registry.versions(family))
            if source is None:
                message = version_not_known(stated[2], registry.versions(family), family)
                return _failed(base | {"family": family}, message)
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
    given = frozenset(params) if params else _NONE_GIVEN
    writer = route.writer
    each = validate == "each"
    for function, names, version in route.each if each else route.moves:
        name = names[-1]
        ctx = StepContext(
            all_params, allow_loss=allow_loss, step=name, given=given, declared=route.declared
        )
        try:
            migrated = function(current, ctx)
        except DataLossError as err:
            return _failed(base, str(err), name, steps=tuple(done))
        except BaseException as err:  # a step is user code: report the failure, keep going
            if not fails_alone(err):
                raise
            message = f"{type(err).__name__}: {err}"
            if not message.isprintable():  # a line of the report, whatever the step raised
                message = one_line(message, 1000)
            cause = _cause(registry, route, record, len(done), all_params, given, allow_loss)
            return _failed(base, message, name, steps=tuple(done), cause=cause)
        if not isinstance(migrated, dict):
            return _failed(base, "the step did not return an object", name)
        current = migrated if writer is None else writer.write(migrated, current, version)
        notes += ctx.notes
        done += names
        if each and version != target:
            issues = validator(registry, family, version).issues(current)
            if issues:
                message = f"not valid at {version} after this step: {issues[0]}"
                return _failed(base, message, name, steps=tuple(done), issues=tuple(issues))
    if validate != "none":
        issues = validator(registry, family, target).issues(current)
        if issues:
            extra = f" (and {len(issues) - 1} more)" if len(issues) > 1 else ""
            label = "already at" if not chain else "the result is not valid at"
            message = (
                f"{label} {target} but not valid: {issues[0]}{extra}"
                if not chain
                else (f"{label} {target}: {issues[0]}{extra}")
            )
            step_name = chain[-1].name if chain else None
            cause = None
            if chain and not each:  # with `each`, every step's result was valid
                last = len(route.each) - 1
                cause = _cause(registry, route, record, last, all_params, given, allow_loss)
            return _failed(
                base, message, step_name, steps=tuple(done), issues=tuple(issues), cause=cause
            )
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
