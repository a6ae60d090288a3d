"""The publish room: what ships from a registry, and the check that it is fit to ship.

`site` (the static site: each schema at its published `$id` with its `$ref`s rewritten, its
Arrow schema and Hugging Face `features` beside it, a changelog per family and the catalog,
written beside the output folder and swapped in whole; `published_registry` for offline
`$ref`s), `pages` (the index and each family's changes page, plain HTML), `docs` (a
documentation page per version, by json-schema-for-humans) and `check` (`evalreg check`: a
registry verified end to end, from its schemas, lock, steps and version history to its steps run
on records generated with Hypothesis). Results are plain values; nothing here prints or exits.

May import: `evalreg.tables`, `evalreg.engine`, `evalreg.registry`, `evalreg.diff`,
`evalreg.io`, `evalreg.errors`, `evalreg.defaults`; never `evalreg.batch` or `evalreg.cli`.
"""
