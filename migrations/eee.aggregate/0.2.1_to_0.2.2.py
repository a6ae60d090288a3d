"""Relabel the record as 0.2.2: 0.2.1 and 0.2.2 differ only in the version string.

The EEE aggregate schema documents of the two versions are identical apart from
their `version` keyword, so every record valid at one is valid at the other: the step copies
the record and sets `schema_version`, and it can go back down without losing anything.
"""

from __future__ import annotations

import copy
from typing import Any

from evalreg.migrate import StepContext

FROM = "0.2.1"
TO = "0.2.2"
PARAMS = ()


def upgrade(record: dict[str, Any], ctx: StepContext) -> dict[str, Any]:
    """Return a copy of `record` labelled 0.2.2."""
    out = copy.deepcopy(record)
    out["schema_version"] = TO
    return out


def downgrade(record: dict[str, Any], ctx: StepContext) -> dict[str, Any]:
    """Return a copy of `record` labelled 0.2.1."""
    out = copy.deepcopy(record)
    out["schema_version"] = FROM
    return out
