"""The io room: bytes in and out, knowing nothing of schemas, registries or versions.

`codec` (JSON parsing and writing, exact for every number), `readers` (a file's records, one
`Item` each, parse failures included as values), `remote` (files named by URL, read and
written through fsspec), `yamlstrict` (safe YAML loading that refuses
what JSON refuses), `writers` (atomic writes, and when to flush them to disk), `folders` (a
folder built beside its place and swapped in whole), `yamlio` (YAML written back with its order,
comments and layout) and `pointer` (JSON Pointers). Which files to read, walking directories, is
the batch room's part.

May import: `evalreg.errors`, `evalreg.defaults` and third-party libraries only (fsspec and
its protocol packages only in `remote`, when a URL comes).
"""
