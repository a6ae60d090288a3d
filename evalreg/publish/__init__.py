"""The publish room: what ships from a registry, and the check that it is fit to ship.

`site` (the static site: each schema at its published `$id` with its `$ref`s rewritten, a
changelog per family, the catalog and an index page; `published_registry` for offline `$ref`s)
and `check` (`evalreg check`: a registry verified end to end, from its schemas, lock, steps and
version history to its steps run on records generated with Hypothesis). Results are plain
values; nothing here prints or exits.

May import: `evalreg.engine`, `evalreg.registry`, `evalreg.diff`, `evalreg.io`,
`evalreg.errors`, `evalreg.defaults`; never `evalreg.batch` or `evalreg.cli`.
"""
