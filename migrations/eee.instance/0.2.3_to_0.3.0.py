"""Relabel the record as 0.3.0: 0.2.3 and 0.3.0 differ only in the version string.

The EEE instance-level schema documents of the two versions are identical apart from
their `version` keyword, so every record valid at one is valid at the other: the step copies
the record and sets `schema_version`, and it can go back down without losing anything. The
step writes the label itself, although the engine writes it after every step too, so that
the step called on its own returns a record of its version.
"""

from __future__ import annotations

from evalreg.stepkit import relabel

FROM = "0.2.3"
TO = "0.3.0"
PARAMS = ()

upgrade = relabel("/schema_version", TO)
downgrade = relabel("/schema_version", FROM)
