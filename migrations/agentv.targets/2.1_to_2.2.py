"""Relabel `$schema: agentv-targets-v2.1` as `agentv-targets-v2.2`; nothing else changes.

Targets files said `$schema: agentv-targets-v2.1`, then `-v2.2` (November 2025). The published
facts about the format record only that label change, nothing about the targets themselves,
so the step changes only the label: a file that carries `$schema` gets the new one, in place,
and a file without `$schema` stays without. Every target and setting is carried as it is,
which is also why the downgrade, which restores the old label, loses nothing. (Files dropped
`$schema` on 2025-12-30, while 2.2 was current; the step does not drop it, since a file
without one is read as 2.2 anyway.)
"""

from __future__ import annotations

import copy
from typing import Any

from evalreg.migrate import StepContext

FROM = "2.1"
TO = "2.2"
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
    """Return a copy of `record` labelled 2.2 where it carries a label."""
    return _relabel(record, TO)


def downgrade(record: dict[str, Any], ctx: StepContext) -> dict[str, Any]:
    """Return a copy of `record` labelled 2.1 where it carries a label."""
    return _relabel(record, FROM)
