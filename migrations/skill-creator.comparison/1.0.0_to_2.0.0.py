"""Put the seed's per-output scores where the comparator's format has them.

1.0.0 (the seed document) labels the outputs `output_a` and `output_b` and gives one overall
score per output under `scores`. 2.0.0, the comparator's format (17 Feb to Jul 2026), labels
them `A` and `B` (the winner may be `TIE`) and gives each a quality summary under
`output_quality`. The step relabels the winner and moves each score to
`output_quality.<label>.score`. The seed's `content_score` and `structure_score` name criteria
without saying which output they score, so 2.0.0's per-output rubric cannot hold them: they are
kept as extra fields. A file with no `scores` cannot be placed in 2.0.0, which needs a rubric or
a quality summary, and stops the migration. There is no downgrade: the rubric does not fit 1.0.0.
"""

from __future__ import annotations

import re
from typing import Any

from evalreg import StepContext
from evalreg.errors import MigrationError
from evalreg.stepkit import at, clone

FROM = "1.0.0"
TO = "2.0.0"
PARAMS = ()

_LABEL = re.compile(r"^(?:output[_ -]?)?([a-z])$", re.IGNORECASE)


def _label(value: str) -> str:
    found = _LABEL.match(value)
    if found:
        return found.group(1).upper()
    return "TIE" if value.strip().lower() == "tie" else value


def upgrade(record: dict[str, Any], ctx: StepContext) -> dict[str, Any]:
    """Return `record` at 2.0.0."""
    scores = record.get("scores")
    if not isinstance(scores, dict) or not scores:
        raise MigrationError(
            "skill-creator.comparison",
            f"{FROM} -> {TO}",
            "the file has no scores per output, and 2.0.0 needs a rubric or output_quality",
        )
    out: dict[str, Any] = {}
    for key, value in record.items():
        if key == "winner" and isinstance(value, str):
            if _label(value) != value:
                ctx.converted("/winner", value, _label(value), "the comparator's label")
            out[key] = _label(value)
        elif key == "scores":
            quality: dict[str, Any] = {}
            for name, score in value.items():
                label = _label(name)
                if label in quality:
                    ctx.lose(at("/scores", name), f"another score is already output {label}'s")
                    continue
                ctx.moved(at("/scores", name), at("/output_quality", label, "score"))
                quality[label] = {"score": clone(score)}
            out["output_quality"] = quality
        elif key in ("content_score", "structure_score"):
            ctx.kept(at("", key), "2.0.0 scores criteria per output; this says not which")
            out[key] = clone(value)
        else:
            out[key] = clone(value)
    return out
