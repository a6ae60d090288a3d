"""Migrating one record: detect it, plan its route, run the steps, write the marker, validate.

Each route (family, source version, target) is worked out once per registry: its chain of
steps, its parameter defaults and its marker writer.

One chain runs whatever is validated: every step of the route, in order, each followed by the
version marker of its version (but after a relabel of the marker's own place to that version,
which leaves nothing for the marker to do). `validate="each"` validates each step's result;
the others, only the last one. Relabelling steps in a row used to run as the last of them alone
unless each result was validated, so which steps ran depended on the mode; on a record the run
owns, a relabel sets one value in place, and running all of them costs 0.5 to 0.8 µs a record
(Every Eval Ever instance lines, two relabels more: about 1% of migrating a line), too little to
keep two chains for.

The steps change the record in place (`StepContext.owned`): the engine hands the chain a record
of its own, the caller's record itself where the caller hands it over (`copy_input=False`: a
record parsed for the run, say) and otherwise a copy. A record that fails is run again from the
caller's record as it was, to name the first step where it went wrong (`_cause`): where the
chain changed the caller's record, that record is got again with `reread` (parsing it again).
A caller that hands its record over without `reread` gets the steps told to leave it as it is
(`owned` false: each copies what it changes).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from evalreg.engine.detect import detect, remembered
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
    from evalreg.engine.validators import Issue, Validator
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


class _Run(NamedTuple):
    """One step of a route as the engine runs it."""

    function: StepFunction
    name: str
    target: str
    marks: bool
    """Whether the marker is written after the step: not after a relabel of the marker's own
    place to the marker's value, whose result the marker would leave as it is."""


@dataclass(frozen=True)
class _Route:
    """The way from one version of a family to another, worked out once for every record."""

    target: str
    chain: tuple[Step, ...]
    defaults: Mapping[str, Any]
    """The default of every parameter the chain declares (read-only: every step sees it)."""
    declared: Mapping[str, Param]
    """Every parameter the chain declares, by name (which of them are placeholders)."""
    runs: tuple[_Run, ...]
    """The chain as the engine runs it, step by step, whatever is validated."""
    names: tuple[str, ...]
    """The name of each step of the chain (a migrated record's `steps`)."""
    writer: _Writer | None
    """How each step's version is written into the record (None: the family writes none)."""
    family: str = ""
    checks: dict[str, Validator] = field(default_factory=dict, compare=False, repr=False)
    """The validator of the target, once asked for (`check`)."""

    def check(self, registry: BaseRegistry) -> Validator:
        """Return the validator of the target in `registry` (the registry the route is kept
        on): asked of it once, as every record of the route is validated there.

        Raises:
            RemoteRefError: the schema refers outside the registry.
        """
        found = self.checks.get(self.target)
        if found is None:
            found = self.checks[self.target] = validator(registry, self.family, self.target)
        return found

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
            writer = _Writer.of(registry, family)
            runs = tuple(
                _Run(s.function, s.name, s.target, writer is not None and writer.after(s))
                for s in chain
            )
            defaults = MappingProxyType(dict(steps.defaults(source, target)))
            declared = MappingProxyType({p.name: p for s in chain for p in s.module.params})
            names = tuple(s.name for s in chain)
            route = cls(target, chain, defaults, declared, runs, names, writer, family)
            cache[family, source, to, registry.drafts] = route
        return route


@dataclass(frozen=True)
class _Writer:
    """How `migrate` writes a family's version marker (its manifest's marker with a template)."""

    marker: Marker
    tokens: tuple[str, ...]
    values: Mapping[str, str | None]
    """The marker value of each version of the family (read-only)."""
    always: bool
    """Whether the marker is written whatever the step's input (else only where it has one)."""

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
                writer = _Writer(marker, tokens, values, marker.when != "present")
            cache[family] = writer
        return cache[family]

    def after(self, step: Step) -> bool:
        """Return whether the marker must be written after `step` (see `_Run.marks`).

        Not after a relabel of the marker's own place to the marker's value: where the relabel
        sets its label, the marker would set the same; where the place cannot be reached, the
        marker cannot reach it either; and a marker written only where present would leave the
        relabel's label as it is."""
        function = step.function
        return not (
            isinstance(function, Relabel)
            and function.pointer == self.marker.pointer
            and self.values.get(step.target) == function.label
        )

    def present(self, record: Any) -> bool:
        """Return whether the marker is to be written after a step given `record` (its input):
        always, or for a marker written only where present, where the input has one."""
        return self.always or resolve(record, self.marker.pointer) is not MISSING

    def write(self, record: Any, present: bool, version: str, owned: bool = False) -> Any:
        """Return `record` with the marker of `version` (`present`: see `present`, asked of the
        step's input); `owned`: set it in place, `record` being the run's own."""
        if not present or not isinstance(record, dict):
            return record
        tokens = self.tokens
        value = self.values.get(version, MISSING)
        if value is MISSING:  # a version the family did not list when the writer was made
            value = self.marker.render(version)
        if len(tokens) == 1:
            key = tokens[0]
            if key not in record:
                return {key: value, **record}
            if record[key] != value:
                if not owned:
                    return {**record, key: value}
                record[key] = value
            return record
        if resolve(record, self.marker.pointer) == value:
            return record
        updated = record if owned else dict(record)
        parent: Any = updated
        for token in tokens[:-1]:
            child = parent.get(token) if isinstance(parent, dict) else None
            if not isinstance(child, dict):
                return record
            if not owned:
                parent[token] = child = dict(child)
            parent = child
        parent[tokens[-1]] = value
        return updated


def _set_marker(registry: BaseRegistry, family: str, record: Any, before: Any, version: str) -> Any:
    """Return `record` with the family's version marker set to `version`, where it writes one
    (`before`: the step's input, which is left as it is)."""
    writer = _Writer.of(registry, family)
    return record if writer is None else writer.write(record, writer.present(before), version)


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
    the route is run again step by step on a copy, each result validated at its step's version,
    so that a failure names its cause rather than the step where it showed. `record` is the
    caller's record as it was (see the module). None: every result before step `upto` was
    valid (or the run again failed otherwise).
    """
    family = route.chain[0].module.family
    source = route.chain[0].source
    issues = validator(registry, family, source).issues(record)
    if issues:
        reason = (
            f"the record is not valid at its own version {source} to begin with: "
            f"{issues[0]}{_more(issues)}"
        )
        return _Cause(route.runs[0].name, reason, tuple(issues))
    current = clone(record)
    writer = route.writer
    ctx = StepContext(
        params, allow_loss=allow_loss, given=given, declared=route.declared, owned=True
    )
    for function, name, version, marks in route.runs[:upto]:
        ctx.step = name
        present = marks and writer is not None and writer.present(current)
        try:
            migrated = function(current, ctx)
        except Exception:  # the run again fails otherwise than the first: nothing to add
            return None
        if not isinstance(migrated, dict):
            return None
        current = (
            migrated
            if writer is None or not present
            else writer.write(migrated, True, version, True)
        )
        issues = validator(registry, family, version).issues(current)
        if issues:
            reason = f"not valid at {version} after this step: {issues[0]}{_more(issues)}"
            return _Cause(name, reason, tuple(issues))
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
    reread: Callable[[], Any] | None = None,
) -> MigrationResult:
    """Migrate one record to version `to` (or `latest`); failures are reported, not raised.

    By default the chain runs on a copy of `record`, which it changes in place: the result
    shares nothing with the caller's record, which stays as it was. A caller that owns `record`
    (a freshly parsed one) may pass `copy_input=False` to save the copy: with `reread`, a
    function that returns the record as it was (parsing it again), the chain changes `record`
    itself, and `reread` is called only if the record fails (to name the cause, and as the
    failed result's record); without it, the steps leave `record` as it is and the result may
    share its unchanged parts.

    Raises:
        UnknownFamilyError: `family` is given and unknown.
        ParameterError: `validate` is not one of final, each, none.
    """
    if validate not in VALIDATE_MODES:
        raise ParameterError(f"validate must be one of {', '.join(VALIDATE_MODES)}")
    if family is None:
        # Most records are of a shape decided before: two lookups rather than detection.
        detection = remembered(registry, record) or detect(registry, record, filename)
        if not detection.ok:
            if detection.status == "unknown-version" and detection.family is not None:
                message = version_not_known(
                    detection.stated_version or "",
                    registry.versions(detection.family),
                    detection.family,
                )
                return _failed(_base(record, detection.family), message)
            return _failed(_base(record), f"cannot detect the record: {detection.summary()}")
        family, source = detection.family, detection.version
    else:
        found = _source_of(registry, record, family, filename)
        if isinstance(found, MigrationResult):
            return found
        source = found
    assert family is not None and source is not None
    try:
        route = _Route.find(registry, family, source, to)
    except EvalregError as err:
        return _failed(_base(record, family, source), str(err))
    target, runs = route.target, route.runs

    # The chain runs on a record of its own where it may (see the module's docstring).
    in_place = reread is not None and not copy_input
    owned = copy_input or in_place
    current: Any = clone(record) if copy_input and runs else record
    all_params = MappingProxyType({**route.defaults, **params}) if params else route.defaults
    given = frozenset(params) if params else _NONE_GIVEN
    writer = route.writer
    each = validate == "each"
    ctx = StepContext(
        all_params, allow_loss=allow_loss, given=given, declared=route.declared, owned=owned
    )
    for done, (function, name, version, marks) in enumerate(runs):  # `done`: steps before
        ctx.step = name
        present = marks and writer is not None and writer.present(current)
        try:
            migrated = function(current, ctx)
        except DataLossError as err:
            base = _as_was(_base(record, family, source, target), in_place, reread)
            return _failed(base, str(err), name, steps=route.names[:done])
        except BaseException as err:  # a step is user code: report the failure, keep going
            if not fails_alone(err):
                raise
            message = f"{type(err).__name__}: {err}"
            if not message.isprintable():  # a line of the report, whatever the step raised
                message = one_line(message, 1000)
            base = _as_was(_base(record, family, source, target), in_place, reread)
            cause = _cause(registry, route, base["record"], done, all_params, given, allow_loss)
            return _failed(base, message, name, steps=route.names[:done], cause=cause)
        if not isinstance(migrated, dict):
            base = _as_was(_base(record, family, source, target), in_place, reread)
            return _failed(base, "the step did not return an object", name)
        current = (
            migrated
            if writer is None or not present
            else writer.write(migrated, True, version, owned)
        )
        if each and version != target:
            issues = validator(registry, family, version).issues(current)
            if issues:
                message = f"not valid at {version} after this step: {issues[0]}"
                return _failed(
                    _as_was(_base(record, family, source, target), in_place, reread),
                    message,
                    name,
                    steps=route.names[: done + 1],
                    issues=tuple(issues),
                )
    if validate != "none":
        issues = route.check(registry).issues(current)
        if issues:
            base = _base(record, family, source, target)
            return _invalid(registry, route, base, issues, each, in_place, reread, ctx)
    # Made as `MigrationResult(status, current, ...)` would be, without the frozen dataclass's
    # `__init__`, which sets each field through `object.__setattr__`: a result per record.
    result: MigrationResult = object.__new__(MigrationResult)
    result.__dict__.update(
        status="migrated" if runs else "current",
        record=current,
        family=family,
        source=source,
        target=target,
        steps=route.names,
        notes=tuple(ctx.notes),
        error=None,
        failed_step=None,
        issues=(),
    )
    return result


def _base(
    record: Any, family: str | None = None, source: str | None = None, target: str | None = None
) -> dict[str, Any]:
    """Return the fields of a failed result that say what was known of the record."""
    base: dict[str, Any] = {"record": record}
    if family is not None:
        base["family"] = family
    if source is not None:
        base["source"] = source
    if target is not None:
        base["target"] = target
    return base


def _source_of(
    registry: BaseRegistry, record: Any, family: str, filename: str | None
) -> str | MigrationResult:
    """Return the version of `record` as a record of `family` (given by the caller), or the
    failed result of a record whose version cannot be told.

    Raises:
        UnknownFamilyError: `family` is unknown.
    """
    manifest = registry.manifest(family)
    detection = detect(registry, record, filename)
    stated = manifest.read_version(record)
    if detection.ok and detection.family == family:
        assert detection.version is not None
        return detection.version  # the label, or the structure where a label is stale
    if stated is not None and stated[2] is not None:
        source = match_version(stated[2], registry.versions(family))
        if source is None:
            message = version_not_known(stated[2], registry.versions(family), family)
            return _failed(_base(record, family), message)
        return source
    return _failed(_base(record, family), f"cannot tell which version of {family} this is")


def _invalid(
    registry: BaseRegistry,
    route: _Route,
    base: dict[str, Any],
    issues: list[Issue],
    each: bool,
    in_place: bool,
    reread: Callable[[], Any] | None,
    ctx: StepContext,
) -> MigrationResult:
    """Return the failed result of a record whose route ran to its end with these `issues` at
    the target (`base`: see `_base`; `each`: every step's result was validated on the way;
    `ctx`: the context the steps ran with)."""
    chain, target, extra = route.chain, route.target, _more(issues)
    if not chain:
        message = f"already at {target} but not valid: {issues[0]}{extra}"
        return _failed(base, message, None, steps=(), issues=tuple(issues))
    base = _as_was(base, in_place, reread)
    message = f"the result is not valid at {target}: {issues[0]}{extra}"
    cause = None
    if not each:  # with `each`, every step's result was valid
        last = len(route.runs) - 1
        params, given, loss = ctx.params, ctx.given, ctx.allow_loss
        cause = _cause(registry, route, base["record"], last, params, given, loss)
    return _failed(
        base, message, chain[-1].name, steps=route.names, issues=tuple(issues), cause=cause
    )


def _as_was(
    base: dict[str, Any], in_place: bool, reread: Callable[[], Any] | None
) -> dict[str, Any]:
    """Return `base` with the caller's record as it was, got again if the chain changed it."""
    if in_place and reread is not None:
        return base | {"record": reread()}
    return base
