"""evalreg: the schema registry and migration framework for LLM-evaluation data.

Detect the family and version of evaluation records, validate them, migrate them along chains of
small steps, diff schema versions, and publish the schemas.
"""

from typing import TYPE_CHECKING, Any

from evalreg.batch.config import Config, find_config, load_config
from evalreg.batch.load import load
from evalreg.engine.detect import Candidate, Detection, Evidence
from evalreg.engine.migrate import MigrationResult
from evalreg.engine.registry import Registry, default_registry, load_registry
from evalreg.engine.steps import Note, Param, Step, StepContext
from evalreg.engine.validators import Issue
from evalreg.errors import (
    ClusterError,
    ConfigError,
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
    TableError,
    UnfinishedStepError,
    UnknownFamilyError,
    UnknownVersionError,
)
from evalreg.registry.manifest import FamilyManifest
from evalreg.stepkit import (
    as_text,
    at,
    carry,
    clone,
    convert_types,
    drop_member,
    gather,
    insert_after,
    move_value,
    param_object,
    param_value,
    relabel,
    rename_key,
    rename_key_each,
    rename_member,
    require_target,
    require_valid,
    schema_at,
    set_missing,
    strings_only,
    to_pointer,
    to_text,
    unchanged,
    update_at,
    values_at,
)

if TYPE_CHECKING:
    from evalreg.batch.tabulate import iter_batches, to_arrow
    from evalreg.diff import Change, SchemaDiff, changelog_markdown, diff_schemas
    from evalreg.publish.site import published_registry, schema_uri
    from evalreg.tables.api import arrow_schema, from_arrow

__version__ = "0.1.0"

# Schema diffs pull in deepdiff and referencing, tables pyarrow; load them only when asked
# for, so that `import evalreg` and the command line start quickly.
_LAZY = {
    "Change": "evalreg.diff",
    "SchemaDiff": "evalreg.diff",
    "changelog_markdown": "evalreg.diff",
    "diff_schemas": "evalreg.diff",
    "published_registry": "evalreg.publish.site",
    "schema_uri": "evalreg.publish.site",
    "arrow_schema": "evalreg.tables.api",
    "iter_batches": "evalreg.batch.tabulate",
    "to_arrow": "evalreg.batch.tabulate",
    "from_arrow": "evalreg.tables.api",
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
    "Config",
    "ConfigError",
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
    "TableError",
    "UnfinishedStepError",
    "UnknownFamilyError",
    "UnknownVersionError",
    "__version__",
    "arrow_schema",
    "as_text",
    "at",
    "carry",
    "changelog_markdown",
    "clone",
    "convert_types",
    "default_registry",
    "diff_schemas",
    "drop_member",
    "find_config",
    "from_arrow",
    "gather",
    "insert_after",
    "iter_batches",
    "load",
    "load_config",
    "load_registry",
    "move_value",
    "param_object",
    "param_value",
    "published_registry",
    "relabel",
    "rename_key",
    "rename_key_each",
    "rename_member",
    "require_target",
    "require_valid",
    "schema_at",
    "schema_uri",
    "set_missing",
    "strings_only",
    "to_arrow",
    "to_pointer",
    "to_text",
    "unchanged",
    "update_at",
    "values_at",
]
