"""Auditing a migration: each step's notes against the step's own input and output.

`audit_migration` runs a record's route step by step, as `migrate_record` does, and checks each
step's notes with `changes.audit`: every value the step added, changed, moved, renamed or left
out must be reported, and every note must point at something. It serves the conformance scripts
and tests that measure steps on real files; migrating never needs it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from evalreg.engine.changes import Audit, audit
from evalreg.engine.migrate import MigrationResult, _set_marker, migrate_record
from evalreg.engine.notes import Note
from evalreg.engine.steps import StepContext, step_set
from evalreg.io.codec import clone

if TYPE_CHECKING:
    from evalreg.registry.core import BaseRegistry


@dataclass(frozen=True)
class StepAudit:
    """One step of a route: its notes and what they leave unexplained."""

    step: str
    notes: tuple[Note, ...]
    audit: Audit


@dataclass(frozen=True)
class MigrationAudit:
    """A record's migration, step by step (no steps: it failed or was current)."""

    result: MigrationResult
    steps: tuple[StepAudit, ...] = ()

    @property
    def ok(self) -> bool:
        """Return whether every step reported every change it made."""
        return all(step.audit.ok for step in self.steps)

    def problems(self) -> list[str]:
        """Return one line per problem, each naming its step."""
        return [f"{s.step}: {line}" for s in self.steps for line in s.audit.lines()]


def audit_migration(
    registry: BaseRegistry,
    record: Any,
    to: str,
    *,
    family: str | None = None,
    params: Mapping[str, Any] | None = None,
    allow_loss: bool = False,
    filename: str | None = None,
) -> MigrationAudit:
    """Migrate `record` to `to` and audit each step of its route (only if it migrates).

    Raises:
        UnknownFamilyError: `family` is given and unknown.
    """
    result = migrate_record(
        registry,
        record,
        to,
        family=family,
        params=params,
        allow_loss=allow_loss,
        validate="none",
        filename=filename,
    )
    if result.status != "migrated" or not (result.family and result.source and result.target):
        return MigrationAudit(result)
    steps = step_set(registry, result.family)
    chain = steps.plan(result.source, result.target)
    values = MappingProxyType({**steps.defaults(result.source, result.target), **(params or {})})
    declared = {p.name: p for step in chain for p in step.module.params}
    markers = [m.pointer for m in registry.manifest(result.family).markers if m.template]
    current = clone(record)
    audited = []
    for step in chain:
        ctx = StepContext(
            values,
            allow_loss=allow_loss,
            step=step.name,
            given=frozenset(params or ()),
            declared=declared,
        )
        out = _set_marker(
            registry, result.family, step.function(current, ctx), current, step.target
        )
        audited.append(
            StepAudit(step.name, tuple(ctx.notes), audit(current, out, ctx.notes, markers))
        )
        current = out
    return MigrationAudit(result, tuple(audited))
