"""Compare two JSON Schemas and classify every change by schema-registry compatibility."""

from evalreg.diff._walker import (
    BACKWARD,
    FORWARD,
    KINDS,
    POLICIES,
    Change,
    Compatibility,
    SchemaDiff,
    changelog_markdown,
    diff_schemas,
)

__all__ = [
    "BACKWARD",
    "FORWARD",
    "KINDS",
    "POLICIES",
    "Change",
    "Compatibility",
    "SchemaDiff",
    "changelog_markdown",
    "diff_schemas",
]
