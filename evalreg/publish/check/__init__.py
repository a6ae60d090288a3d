"""Checking a registry end to end before it ships.

`check_registry` verifies, family by family: every schema against its metaschema and its
`$ref`s; released schemas against `registry.lock`; every step module (its `FROM`/`TO`, its file
name); that every version reaches the latest through steps; that every step turns generated
records valid at its source into records valid at its target; that every pair of consecutive
versions whose diff breaks BACKWARD has a step between them; and that version numbers follow the
diffs (a change that breaks BACKWARD needs a minor or major bump).

The manifest key `versioning` tunes the last check:

    versioning:
      bump_check: error          # or warning
      exceptions:                # versions whose bump is known not to follow the diff
        "0.2.1": added a required field in a patch release
      policy: lenient            # diff policy: lenient or strict

Findings are plain values; nothing here prints or exits.

`checker` holds the entry points and runs the checks family by family: `schemas` (metaschema,
refs, lock, amendments, drafts), `steps` (step modules, paths to the latest version), `history`
(missing steps, bumps, exceptions) and `exercise` (steps run on records from `generate`, which
inlines `$ref`s and hands the schema to `compose`). Each check adds findings to the `Run` of
`report`, which also holds `Finding` and `CheckReport`.
"""

from evalreg.publish.check.checker import check_directories, check_registry
from evalreg.publish.check.generate import GenerationError, record_strategy
from evalreg.publish.check.history import BumpLevel, bump_level
from evalreg.publish.check.report import CheckReport, Finding, Severity

__all__ = [
    "BumpLevel",
    "CheckReport",
    "Finding",
    "GenerationError",
    "Severity",
    "bump_level",
    "check_directories",
    "check_registry",
    "record_strategy",
]
