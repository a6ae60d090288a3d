"""The tables room: each schema version as typed columns, and records as rows of them.

`mapping` (one deterministic mapping from a JSON Schema version to a tree of `Column`s, made
once per version: structs, lists, scalars, string maps and JSON text), `rows` (records to the
Python values of rows and back, with what the typed columns cannot hold kept exactly in the
`_extra` column), `compiled` (the same record-to-row walk written out as one Python function
per version, for speed), `arrow` (the columns as a `pyarrow.Schema`, record batches built from
rows, provenance and exploded layouts), `features` (the Hugging Face `features` block and a
JSON rendering of the Arrow schema, for publishing without pyarrow) and `formats` (writing
record batches as Parquet, JSON Lines or CSV). pyarrow is imported by `arrow` and `formats`
only, so that nothing else here, and `import evalreg`, needs it. Nothing here reads files or
migrates.

`api` holds `arrow_schema` and `from_arrow`; reading files into tables is `evalreg.batch`'s part.

May import: `evalreg.engine`, `evalreg.registry`, `evalreg.io`, `evalreg.errors`,
`evalreg.defaults`; never `evalreg.batch`, `evalreg.publish` or `evalreg.cli`.
"""
