"""Give each assertion an id, and move the run's staging paths under `staging`.

0.1.0 is what scripts/prepare_eval.py wrote in the first release with evaluation modes (17 to
23 Feb 2026): the case id, prompt and assertions as strings, beside where the run's skill copy,
inputs and outputs were staged. 1.0.0 (the seed document) has assertion objects with an id and
a text: the ids are generated from the positions (`assertion-1`, `assertion-2`, ...). The
staging fields are moved, unchanged, under `staging`.
"""

from __future__ import annotations

from typing import Any

from evalreg import StepContext
from evalreg.errors import MigrationError
from evalreg.stepkit import at, clone

FROM = "0.1.0"
TO = "1.0.0"
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
    """Return `record` at 1.0.0."""
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
            out[key] = []
            for i, text in enumerate(value):
                if not isinstance(text, str) or not text:
                    raise MigrationError(
                        "skill-creator.eval-metadata",
                        f"{FROM} -> {TO}",
                        f"/assertions/{i} is not a text",
                    )
                ctx.moved(f"/assertions/{i}", f"/assertions/{i}/text")
                ctx.added(f"/assertions/{i}/id", f"assertion-{i + 1}", "derived", "its position")
                out[key].append({"id": f"assertion-{i + 1}", "text": text})
        else:
            out[key] = clone(value)
    out["staging"] = staging
    if not staging:
        ctx.default("/staging", staging, "the file names no staging paths")
    return out
