"""The registry room: what a registry directory holds, loaded and checked, as data.

`core` (`BaseRegistry`: families, versions, schema documents, `$ref` resolution, and a place for
values derived from them), `load` (reading registry directories), `manifest` (a family's
manifest and its fingerprints), `rules` (rule declarations), `versions` (version numbers) and
`lock` (released versions, their digests and amendments), `drafting` (where draft versions
are written, and starting one) and `scaffold` (a new registry
directory with an example family, for `evalreg init`). Nothing here detects, validates or
migrates a record.

May import: `evalreg.io`, `evalreg.errors`, `evalreg.defaults`, `evalreg.regex`.
"""
