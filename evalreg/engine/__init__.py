"""The engine room: detection, validation and migration, as functions of a registry.

`detect` (family and version of a record, with evidence), `validators` (compiled validators
and the `Issue`s they report; `schemaregex`: their patterns matched by RE2), `validate`
(detect, then validate), `steps` (step modules, the context a step sees, the version graph and
its planner), `migrate` (one record along its route), `rules` and `conditions` (rules beyond
JSON Schema: loading, compiling, running), `selection` (the one place that decides which rules
run, and at which severity, file by file),
`modules` (loading a registry directory's Python) and `registry` (`Registry`: the registry with
these as methods, and `load_registry`).
Every function takes one record at a time and never reads or writes files.

May import: `evalreg.registry`, `evalreg.diff`, `evalreg.io`, `evalreg.errors`,
`evalreg.defaults`, `evalreg.regex`.
"""
