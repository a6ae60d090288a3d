"""evalreg: the schema registry and migration framework for LLM-evaluation data.

Detect the family and version of evaluation records, validate them, migrate them along chains of
small steps, diff schema versions, and publish the schemas.
"""

from typing import TYPE_CHECKING, Any

from evalreg.batch.load import load
from evalreg.engine.detect import Candidate, Detection, Evidence
from evalreg.engine.migrate import MigrationResult
from evalreg.engine.registry import Registry, default_registry, load_registry
from evalreg.engine.steps import Note, Param, Step, StepContext
from evalreg.engine.validators import Issue
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
from evalreg.registry.manifest import FamilyManifest
from evalreg.stepkit import (
    as_text,
    at,
    carry,
    clone,
    gather,
    insert_after,
    relabel,
    rename_key,
    rename_key_each,
    strings_only,
    to_pointer,
    to_text,
    unchanged,
)

if TYPE_CHECKING:
    from evalreg.diff import Change, SchemaDiff, changelog_markdown, diff_schemas
    from evalreg.publish.site import published_registry, schema_uri

__version__ = "0.1.0"

# Schema diffs pull in deepdiff and referencing; load them only when asked for, so that
# `import evalreg` and the command line start quickly.
_LAZY = {
    "Change": "evalreg.diff",
    "SchemaDiff": "evalreg.diff",
    "changelog_markdown": "evalreg.diff",
    "diff_schemas": "evalreg.diff",
    "published_registry": "evalreg.publish.site",
    "schema_uri": "evalreg.publish.site",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'evalreg' has no attribute {name!r}")


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
    "at",
    "carry",
    "changelog_markdown",
    "clone",
    "default_registry",
    "diff_schemas",
    "gather",
    "insert_after",
    "load",
    "load_registry",
    "published_registry",
    "relabel",
    "rename_key",
    "rename_key_each",
    "schema_uri",
    "strings_only",
    "to_pointer",
    "to_text",
    "unchanged",
]
