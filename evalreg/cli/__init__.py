"""The `evalreg` command line: a thin shell over the library.

Each module registers its commands on the group in `app` when imported, which happens when one
of its commands runs (`app.COMMANDS`); options are parsed there, the work is done by library
functions, and results are printed by reporters chosen by name.
Exit codes: 0 success, 1 problems found, 2 usage or registry errors. The only room that
prints, reads options or exits.

May import: every other room.
"""

from evalreg.cli.app import cli, main, program

__all__ = ["cli", "main", "program"]
