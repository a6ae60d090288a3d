"""Move the run's staging paths under `staging`, leaving the case as SKILL.md describes it.

0.1.0 is what scripts/prepare_eval.py wrote in the first release with evaluation modes (17 to
23 Feb 2026): the case id, prompt and assertions (strings) beside where the run's skill copy,
inputs and outputs were staged. From 24 Feb 2026 the file holds the case only (2.0.0). The
staging fields are moved, unchanged, under `staging`, so nothing is lost and the file no longer
looks like a 0.1.0 one.
"""

from __future__ import annotations

from typing import Any

from evalreg import StepContext
from evalreg.errors import MigrationError
from evalreg.stepkit import at, clone

FROM = "0.1.0"
TO = "2.0.0"
PARAMS = ()

STAGING = (
    "input_files",
    "skill_path",
    "output_dir",
    "inputs_dir",
    "outputs_dir",
    "no_skill",
    "original_skill_path",
)


def upgrade(record: dict[str, Any], ctx: StepContext) -> dict[str, Any]:
    """Return `record` at 2.0.0."""
    if "staging" in record:
        raise MigrationError(
            "skill-creator.eval-metadata", f"{FROM} -> {TO}", "/staging is already taken"
        )
    out: dict[str, Any] = {}
    staging: dict[str, Any] = {}
    for key, value in record.items():
        if key in STAGING:
            ctx.moved(at("", key), at("/staging", key))
            staging[key] = clone(value)
        elif key == "assertions" and isinstance(value, list):
            if not all(isinstance(text, str) and text for text in value):
                raise MigrationError(
                    "skill-creator.eval-metadata",
                    f"{FROM} -> {TO}",
                    "/assertions holds an empty text, which 2.0.0 does not allow",
                )
            out[key] = clone(value)
        else:
            out[key] = clone(value)
    out["staging"] = staging
    if not staging:
        ctx.default("/staging", staging, "the file names no staging paths")
    return out
