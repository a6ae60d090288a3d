"""evalreg: the schema registry and migration framework for LLM-evaluation data.

Detect the family and version of evaluation records, validate them, migrate them along chains of
small steps, diff schema versions, and publish the schemas.
"""

from __future__ import annotations

from evalreg.errors import (
    ClusterError,
    DataLossError,
    EvalregError,
    IntegrityError,
    InvalidVersionError,
    MigrationError,
    MissingExtraError,
    NoMigrationPathError,
    ParameterError,
    ReadError,
    RegistryError,
    RemoteRefError,
    SchemaDiffError,
    UnknownFamilyError,
    UnknownVersionError,
)

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import Any

    from evalreg.batch.load import load
    from evalreg.diff import Change, SchemaDiff, changelog_markdown, diff_schemas
    from evalreg.engine.detect import Candidate, Detection, Evidence
    from evalreg.engine.migrate import MigrationResult
    from evalreg.engine.registry import Registry, default_registry, load_registry
    from evalreg.engine.steps import Note, Param, Step, StepContext
    from evalreg.engine.validators import Issue
    from evalreg.publish.site import published_registry, schema_uri
    from evalreg.registry.manifest import FamilyManifest
    from evalreg.stepkit import (
        as_text,
        carry,
        clone,
        insert_after,
        relabel,
        rename_key,
        rename_key_each,
        to_pointer,
        unchanged,
    )

__version__ = "0.1.0"

# Every name but the errors is loaded when first used, so that `import evalreg` costs little
# and the command line imports only what a command needs (schema diffs pull in deepdiff and
# referencing, validation jsonschema-rs, registries PyYAML).
_LAZY = {
    "load": "evalreg.batch.load",
    "Change": "evalreg.diff",
    "SchemaDiff": "evalreg.diff",
    "changelog_markdown": "evalreg.diff",
    "diff_schemas": "evalreg.diff",
    "Candidate": "evalreg.engine.detect",
    "Detection": "evalreg.engine.detect",
    "Evidence": "evalreg.engine.detect",
    "MigrationResult": "evalreg.engine.migrate",
    "Registry": "evalreg.engine.registry",
    "default_registry": "evalreg.engine.registry",
    "load_registry": "evalreg.engine.registry",
    "Note": "evalreg.engine.steps",
    "Param": "evalreg.engine.steps",
    "Step": "evalreg.engine.steps",
    "StepContext": "evalreg.engine.steps",
    "Issue": "evalreg.engine.validators",
    "published_registry": "evalreg.publish.site",
    "schema_uri": "evalreg.publish.site",
    "FamilyManifest": "evalreg.registry.manifest",
    "as_text": "evalreg.stepkit",
    "carry": "evalreg.stepkit",
    "clone": "evalreg.stepkit",
    "insert_after": "evalreg.stepkit",
    "relabel": "evalreg.stepkit",
    "rename_key": "evalreg.stepkit",
    "rename_key_each": "evalreg.stepkit",
    "to_pointer": "evalreg.stepkit",
    "unchanged": "evalreg.stepkit",
}
"""The public names loaded on first use, and the module of each."""


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'evalreg' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # found directly from now on
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = [
    "Candidate",
    "Change",
    "ClusterError",
    "DataLossError",
    "Detection",
    "EvalregError",
    "Evidence",
    "FamilyManifest",
    "IntegrityError",
    "InvalidVersionError",
    "Issue",
    "MigrationError",
    "MigrationResult",
    "MissingExtraError",
    "NoMigrationPathError",
    "Note",
    "Param",
    "ParameterError",
    "ReadError",
    "Registry",
    "RegistryError",
    "RemoteRefError",
    "SchemaDiff",
    "SchemaDiffError",
    "Step",
    "StepContext",
    "UnknownFamilyError",
    "UnknownVersionError",
    "__version__",
    "as_text",
    "carry",
    "changelog_markdown",
    "clone",
    "default_registry",
    "diff_schemas",
    "insert_after",
    "load",
    "load_registry",
    "published_registry",
    "relabel",
    "rename_key",
    "rename_key_each",
    "schema_uri",
    "to_pointer",
    "unchanged",
]
