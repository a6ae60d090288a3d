"""The schema checks: each schema against its metaschema and its `$ref`s; the lock and drafts."""

from __future__ import annotations

from typing import Any

from evalreg.errors import EvalregError, RegistryError
from evalreg.publish.check.report import Run


def check_schema(run: Run, family: str, version: str) -> None:
    """Check one schema against its metaschema, then its `$ref`s (`metaschema`, `refs`)."""
    from jsonschema.exceptions import best_match
    from jsonschema.validators import Draft202012Validator, validator_for

    from evalreg.io.pointer import to_pointer

    entry = run.registry.entry(family, version)
    document = dict(entry.document)
    cls: Any = Draft202012Validator
    if "$schema" in document:
        cls = validator_for(document, default=None)  # type: ignore[arg-type]
    if cls is None:
        run.add(
            "error",
            "metaschema",
            f"$schema {document['$schema']!r} is not a JSON Schema dialect evalreg knows",
            family,
            version,
            entry.path,
        )
        return
    errors = list(cls(cls.META_SCHEMA).iter_errors(document))
    if errors:
        best = best_match(errors)
        where = to_pointer(best.absolute_path) or "/"
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        run.add(
            "error",
            "metaschema",
            f"not a valid schema: {where}: {best.message}{more}",
            family,
            version,
            entry.path,
        )
        return
    try:
        run.registry.check_refs(family, version)
        run.registry.validator(family, version)
    except EvalregError as err:
        run.add("error", "refs", str(err), family, version, entry.path)


def check_lock(run: Run, family: str) -> None:
    """Check a family's released schemas against the lock; note amendments, warn of drafts."""
    from evalreg.registry.lock import amendments, drafts, lock_errors

    try:
        for error in lock_errors(run.registry, [family]):
            run.add("error", "lock", str(error), family, error.version, error.path)
        for version, recorded in amendments(run.registry, family).items():
            path = run.registry.entry(family, version).path
            for amendment in recorded:
                run.add("note", "amendment", str(amendment), family, version, path)
        for entry in drafts(run.registry, [family]):
            run.add(
                "warning",
                "draft",
                f"not released (no entry in registry.lock); when it is final, run "
                f"`evalreg release {family} {entry.version}`",
                family,
                entry.version,
                entry.path,
            )
    except RegistryError as err:
        run.add("error", "lock", str(err), family, None, err.path)
