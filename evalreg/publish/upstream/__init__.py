"""Keeping up with an upstream format: `evalreg sync`, generated steps, and walking a history.

`stepgen` turns the diff of two versions into a migration step written on `evalreg.stepkit`
(renames and moves, new required values from defaults or parameters, losses, lossless
conversions, and a `TODO` that refuses the records it concerns for whatever it cannot decide);
`source` reads a family's `upstream:` manifest key and the schema it names (a file, an fsspec URL,
or a path in a local git checkout, at any commit); `sync` compares an upstream schema with the
newest version, numbers a draft by the diff and the family's `versioning` settings and writes
it, with its step, into a registry directory. Results are plain values; nothing here prints or
exits.

May import: `evalreg.engine`, `evalreg.registry`, `evalreg.diff`, `evalreg.io`,
`evalreg.errors`, `evalreg.defaults`; never `evalreg.batch` or `evalreg.cli`.
"""

from evalreg.publish.upstream.source import Upstream, read_upstream, upstream_of
from evalreg.publish.upstream.stepgen import GeneratedStep, generate_step
from evalreg.publish.upstream.sync import Proposal, propose, sync_history, write_proposal

__all__ = [
    "GeneratedStep",
    "Proposal",
    "Upstream",
    "generate_step",
    "propose",
    "read_upstream",
    "sync_history",
    "upstream_of",
    "write_proposal",
]
