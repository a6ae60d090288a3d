"""evalreg: the schema registry and migration framework for LLM-evaluation data.

Detect the family and version of evaluation records, validate them, migrate them along chains of
small steps, diff schema versions, and publish the schemas.
"""

from __future__ import annotations

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

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import Any

    from evalreg.batch.config import Config, find_config, load_config
    from evalreg.batch.load import load
    from evalreg.batch.tabulate import iter_batches, to_arrow
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
        writable,
    )
    from evalreg.tables.api import arrow_schema, from_arrow

__version__ = "0.2.0"

# Every name but the errors is loaded when first used, so that `import evalreg` costs little
# and the command line imports only what a command needs (schema diffs pull in deepdiff and
# referencing, validation jsonschema-rs, registries PyYAML, tables pyarrow).
_LAZY = {
    "Config": "evalreg.batch.config",
    "find_config": "evalreg.batch.config",
    "load_config": "evalreg.batch.config",
    "load": "evalreg.batch.load",
    "iter_batches": "evalreg.batch.tabulate",
    "to_arrow": "evalreg.batch.tabulate",
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
    "at": "evalreg.stepkit",
    "carry": "evalreg.stepkit",
    "clone": "evalreg.stepkit",
    "convert_types": "evalreg.stepkit",
    "drop_member": "evalreg.stepkit",
    "gather": "evalreg.stepkit",
    "insert_after": "evalreg.stepkit",
    "move_value": "evalreg.stepkit",
    "param_object": "evalreg.stepkit",
    "param_value": "evalreg.stepkit",
    "relabel": "evalreg.stepkit",
    "rename_key": "evalreg.stepkit",
    "rename_key_each": "evalreg.stepkit",
    "rename_member": "evalreg.stepkit",
    "require_target": "evalreg.stepkit",
    "require_valid": "evalreg.stepkit",
    "schema_at": "evalreg.stepkit",
    "set_missing": "evalreg.stepkit",
    "strings_only": "evalreg.stepkit",
    "to_pointer": "evalreg.stepkit",
    "to_text": "evalreg.stepkit",
    "unchanged": "evalreg.stepkit",
    "update_at": "evalreg.stepkit",
    "values_at": "evalreg.stepkit",
    "writable": "evalreg.stepkit",
    "arrow_schema": "evalreg.tables.api",
    "from_arrow": "evalreg.tables.api",
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
    "writable",
]
