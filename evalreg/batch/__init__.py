"""The batch room: runs over files and directories, as streams of plain results.

`walk` (the files under paths: directories walked in sorted order, include and exclude globs),
`check` (detect and validate every record under paths; valid records counted in runs),
`rules` (the state of the families' rules over a run: file rules, collectors, summaries),
`migrate_file` (migrate one file, written only if every record succeeded; the options and the
outcomes of a migration), `migrate` (migrate every file under paths, in one process or many),
`parallel` (units of work, and their results in input order from a pool of processes),
`pool` (the pool: worker processes whose death costs the unit they held, not the run),
`inventory` (files and records per family and version, and what is behind a required version),
`extent` (the sizes of the files a run reads, for progress displays) and `load` (`evalreg.load`:
the records of one file for other programs, migrated on the fly).
Nothing here prints or exits, and one bad file or record never stops the rest of a run.

May import: `evalreg.engine`, `evalreg.registry`, `evalreg.io`, `evalreg.errors`,
`evalreg.defaults`; never `evalreg.publish` or `evalreg.cli`.
"""
