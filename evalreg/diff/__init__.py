"""The diff room: compare two JSON Schemas and classify every change by compatibility.

BACKWARD holds when the new schema accepts everything the old one accepted (readers on the new
schema read old data); FORWARD holds when the old schema accepts everything the new one accepts
(readers on the old schema read new data). ``diff_schemas`` walks both schemas in parallel and
returns a ``SchemaDiff`` of ``Change`` values, each located at the instance pointer it governs;
``changelog_markdown`` writes a family's history as release notes.

The modules, from the bottom up; each imports only modules listed before it:

- ``_schema``: the keywords the diff knows and how it treats each; helpers over JSON values.
- ``_changes``: ``Change``, the compatibility directions, the policies and the change kinds.
- ``_report``: ``SchemaDiff`` in text, Markdown and JSON, and ``changelog_markdown``.
- ``_protocol``: ``Side`` and the ``Walker`` protocol, all that keyword rules know of the walk.
- ``_types``, ``_constraints``, ``_annotations``, ``_arrays``, ``_objects``, ``_combinators``:
  the keyword rules by concern, functions that take the walker as their first argument.
- ``_moves``: renames and moves, paired after the walk by equal schemas.
- ``_walker``: ``diff_schemas`` and ``_Differ``, which resolves ``$ref``, guards against
  recursion, collects the changes and hands each pair of subschemas to the keyword rules.

May import: ``evalreg.errors``, ``evalreg.regex`` and third-party libraries (``referencing``,
``deepdiff``); nothing else of evalreg. Other rooms use only the names below.
"""

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
