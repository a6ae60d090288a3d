"""Relabel `$schema: agentv-targets-v2` as `agentv-targets-v2.1`; nothing else changes.

Targets files said `$schema: agentv-targets-v2`, then `-v2.1` (November 2025). The published
facts about the format record only that label change, nothing about the targets themselves,
so the step changes only the label: a file that carries `$schema` gets the new one, in place,
and a file without `$schema` stays without. Every target and setting is carried as it is,
which is also why the downgrade, which restores the old label, loses nothing.
"""

from __future__ import annotations

import copy
from typing import Any

from evalreg.migrate import StepContext

FROM = "2"
TO = "2.1"
PARAMS = ()


def _label(version: str) -> str:
    return f"agentv-targets-v{version}"


def _relabel(record: dict[str, Any], version: str) -> dict[str, Any]:
    """Return a copy of `record` whose `$schema`, if it has one, names `version`."""
    out = copy.deepcopy(record)
    if "$schema" in out:
        out["$schema"] = _label(version)
    return out


def upgrade(record: dict[str, Any], ctx: StepContext) -> dict[str, Any]:
    """Return a copy of `record` labelled 2.1 where it carries a label."""
    return _relabel(record, TO)


def downgrade(record: dict[str, Any], ctx: StepContext) -> dict[str, Any]:
    """Return a copy of `record` labelled 2 where it carries a label."""
    return _relabel(record, FROM)
