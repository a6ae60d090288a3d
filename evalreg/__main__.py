"""Run the command line: `python -m evalreg`."""

from evalreg.cli import program

program()
