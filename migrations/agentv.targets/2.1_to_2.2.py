"""Relabel `$schema: agentv-targets-v2.1` as `agentv-targets-v2.2`; nothing else changes.

Targets files said `$schema: agentv-targets-v2.1`, then `-v2.2` (November 2025). The published
facts about the format record only that label change, nothing about the targets themselves,
so the step changes only the label: a file that carries `$schema` gets the new one, in place,
and a file without `$schema` stays without. Every target and setting is carried as it is,
which is also why the downgrade, which restores the old label, loses nothing. (Files dropped
`$schema` on 2025-12-30, while 2.2 was current; the step does not drop it, since a file
without one is read as 2.2 anyway.)

The step itself only copies the record: the engine writes the label after every step, from
the family's marker template, and only where the record carried one.
"""

from __future__ import annotations

from evalreg.stepkit import unchanged

FROM = "2.1"
TO = "2.2"
PARAMS = ()

upgrade = downgrade = unchanged
