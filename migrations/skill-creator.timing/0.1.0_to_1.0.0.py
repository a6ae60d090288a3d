"""Record the run's token count and its duration in milliseconds.

0.1.0 is the timing file of the first release with evaluation modes (17 to 23 Feb 2026):
start, end and duration of the executor and of the grader, and the total in seconds, with no
token count. From 24 Feb 2026 the tool records `total_tokens` and `duration_ms` from the
subagent's notification (1.0.0). `duration_ms` is the total (or, without one, the executor's
duration) in milliseconds; the token count is not in a 0.1.0 file, so it must be given with
`--set total_tokens=N`. The 0.1.0 fields stay beside them, as the tool's own timing.json
still documents them.
"""

from __future__ import annotations

from typing import Any

from evalreg import Param, StepContext
from evalreg.errors import MigrationError
from evalreg.stepkit import clone

FROM = "0.1.0"
TO = "1.0.0"
PARAMS = (
    Param(
        "total_tokens",
        help="Tokens used by the run, which a 0.1.0 timing file does not record.",
        default=None,
    ),
)


_LONGEST = 10**12
"""Seconds beyond any run's duration (about 31,700 years): a duration past it is no duration."""


def _refuse(message: str) -> MigrationError:
    return MigrationError("skill-creator.timing", f"{FROM} -> {TO}", message)


def upgrade(record: dict[str, Any], ctx: StepContext) -> dict[str, Any]:
    """Return `record` at 1.0.0."""
    tokens = ctx.params.get("total_tokens")
    if tokens is None:
        raise _refuse("a 0.1.0 file has no token count; give it with --set total_tokens=N")
    try:
        count = int(tokens)
    except (TypeError, ValueError) as err:
        raise _refuse(f"total_tokens must be a whole number, not {tokens!r}") from err
    if count < 0:
        raise _refuse("total_tokens must not be negative")
    found = next(
        (
            key
            for key in ("total_duration_seconds", "executor_duration_seconds")
            if isinstance(record.get(key), (int, float)) and not isinstance(record[key], bool)
        ),
        None,
    )
    seconds = None if found is None else record[found]
    if seconds is None or not 0 <= seconds < _LONGEST:
        raise _refuse("the file has no duration in seconds to give duration_ms")
    out: dict[str, Any] = {"total_tokens": count, "duration_ms": round(seconds * 1000)}
    ctx.param("/total_tokens", "total_tokens", count)
    ctx.added("/duration_ms", out["duration_ms"], "derived", "in milliseconds", source=f"/{found}")
    if "total_duration_seconds" not in record:
        out["total_duration_seconds"] = seconds
        ctx.added("/total_duration_seconds", seconds, "derived", source=f"/{found}")
    out.update({k: clone(v) for k, v in record.items() if k not in out})
    return out
