"""Relabel `$schema: agentv-targets-v2` as `agentv-targets-v2.1`; nothing else changes.

Targets files said `$schema: agentv-targets-v2`, then `-v2.1` (November 2025). The published
facts about the format record only that label change, nothing about the targets themselves,
so the step changes only the label: a file that carries `$schema` gets the new one, in place,
and a file without `$schema` stays without. Every target and setting is carried as it is,
which is also why the downgrade, which restores the old label, loses nothing.

The step itself only copies the record: the engine writes the label after every step, from
the family's marker template, and only where the record carried one.
"""

from __future__ import annotations

from evalreg.stepkit import unchanged

FROM = "2"
TO = "2.1"
PARAMS = ()

upgrade = downgrade = unchanged
