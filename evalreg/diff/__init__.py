"""Compare two JSON Schemas and classify every change by schema-registry compatibility."""

from evalreg.diff._changes import BACKWARD, FORWARD, KINDS, POLICIES, Change, Compatibility
from evalreg.diff._report import SchemaDiff, changelog_markdown
from evalreg.diff._walker import diff_schemas

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
