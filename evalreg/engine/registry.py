"""`Registry`: the registry's data with the engine's operations as methods, and loading it.

The methods are the convenient spelling of the engine's functions (`registry.detect(record)`
is `detect(registry, record)`), so the rooms below never depend on the engine.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from evalreg.engine.detect import Detection, detect
from evalreg.engine.validate import validate_record
from evalreg.engine.validators import Issue, Validator, validator
from evalreg.registry.core import BaseRegistry
from evalreg.registry.load import load_directories

if TYPE_CHECKING:
    from evalreg.diff import SchemaDiff
    from evalreg.engine.migrate import MigrationResult
    from evalreg.engine.steps import Step, StepSet


class Registry(BaseRegistry):
    """Every family known to evalreg, with what can be done with its records and schemas.

    Build one with `load_registry`. A registry is immutable once built; validators, steps and
    the `referencing` registry are built on first use and cached.
    """

    def detect(self, record: Any, filename: str | None = None) -> Detection:
        """Return the family and version of `record`, with the evidence that decided them."""
        return detect(self, record, filename)

    def validator(self, family: str, version: str | None = None) -> Validator:
        """Return the (cached) validator of a family's version (the newest when None).

        Raises:
            UnknownFamilyError: no such family.
            UnknownVersionError: the family has no such version.
            RemoteRefError: the schema refers outside the registry.
        """
        return validator(self, family, version)

    def validate(
        self, record: Any, family: str | None = None, version: str | None = None
    ) -> list[Issue]:
        """Return every problem of `record` against its schema (empty when valid).

        Without `family`, the record is detected first; an undecided detection is one issue.
        """
        return validate_record(self, record, family, version)

    def steps(self, family: str) -> StepSet:
        """Return a family's migration steps (loaded on first use).

        Raises:
            UnknownFamilyError: no such family.
            RegistryError: a step module is malformed.
        """
        from evalreg.engine.steps import step_set  # migration only: not imported to validate

        return step_set(self, family)

    def plan(self, family: str, from_version: str, to_version: str) -> tuple[Step, ...]:
        """Return the shortest chain of steps from one version to another (empty if equal).

        Raises:
            UnknownFamilyError, UnknownVersionError: the family or a version is unknown.
            NoMigrationPathError: no chain of steps connects the two versions.
        """
        return self.steps(family).plan(
            self.resolve_version(family, from_version), self.resolve_version(family, to_version)
        )

    def migrate(
        self,
        record: Any,
        to: str,
        family: str | None = None,
        params: Mapping[str, Any] | None = None,
        *,
        allow_loss: bool = False,
        validate: str = "final",
        filename: str | None = None,
    ) -> MigrationResult:
        """Migrate one record to version `to` (or `latest`) and report what happened.

        The input record is never mutated. A failure is reported in the result, not raised.
        """
        from evalreg.engine.migrate import migrate_record

        return migrate_record(
            self,
            record,
            to,
            family=family,
            params=params,
            allow_loss=allow_loss,
            validate=validate,
            filename=filename,
        )

    def diff(self, family: str, a: str, b: str, *, policy: str = "lenient") -> SchemaDiff:
        """Compare two versions of a family's schema.

        Raises:
            UnknownFamilyError, UnknownVersionError: the family or a version is unknown.
        """
        from evalreg.diff import diff_schemas

        old, new = self.entry(family, a), self.entry(family, b)
        return diff_schemas(
            old.document,
            new.document,
            registry=self.referencing_registry(),
            policy=policy,
            old_label=f"{family}@{old.version}",
            new_label=f"{family}@{new.version}",
        )

    def history(self, family: str, *, policy: str = "lenient") -> list[SchemaDiff]:
        """Return the diff of every pair of consecutive versions of a family, oldest first.

        Raises:
            UnknownFamilyError: no such family.
        """
        versions = self.versions(family)
        return [self.diff(family, a, b, policy=policy) for a, b in itertools.pairwise(versions)]


def load_registry(
    paths: Iterable[str | os.PathLike[str]] | None = None,
    *,
    builtin: bool = True,
    verify: bool = True,
    drafts: bool = False,
) -> Registry:
    """Load the built-in registry directory, those in `EVALREG_PATH`, and `paths`.

    With `verify` (the default), every released schema is checked against the digest in its
    directory's `registry.lock`. A version not recorded there is a draft: "latest" (in
    `migrate`, `load(to=)`, status and detection's preferences) is the newest released version
    unless `drafts` is true.

    Raises:
        RegistryError: a directory is missing or malformed, or two directories define one family.
        RemoteRefError: a schema of a directory other than the built-in one refers outside the
            registry.
        IntegrityError: a released schema was edited or removed after its release.
    """
    return load_directories(paths, Registry, builtin=builtin, verify=verify, drafts=drafts)


@lru_cache(maxsize=1)
def default_registry() -> Registry:
    """Return the registry of the built-in directory and `EVALREG_PATH`, loaded once."""
    return load_registry()
