"""The command line is thin: its modules format what the library counted, and count nothing.

Each command calls a library function whose result carries its counts (`MigrationRun.summary`,
`CheckRun.summary`, `Inventory.summary`, `PublishResult.versions`); a command module that kept
a tally of its own (a counter in a dict or on an object, a `sum`, a summary object it builds)
would make a Python caller of the same function count again, and could drift from it.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import evalreg
from evalreg.publish.site import publish

CLI = Path(__file__).resolve().parents[2] / "evalreg" / "cli"
DISPLAY = {"progress.py"}
"""Modules that count for a display of their own: the progress bar counts what it shows."""
BUILT_BY_THE_LIBRARY = re.compile(r"(Summary|Tally|Tallies|Counts|Counter)$")
"""Classes of counts that only the library makes (the runs that return them)."""


def tallies(source: str) -> list[str]:
    """Return each place in `source` that counts: what it does, and its line (in line order)."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.AugAssign)
            and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult))
            and isinstance(node.target, (ast.Attribute, ast.Subscript))
        ):
            found.append((node.lineno, f"a count kept in {ast.unparse(node.target)}"))
        elif isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else None
            if isinstance(node.func, ast.Name):
                name = node.func.id
            if name == "sum":
                found.append((node.lineno, "a sum"))
            elif name is not None and BUILT_BY_THE_LIBRARY.search(name):
                found.append((node.lineno, f"{name}() built"))
    return [f"{what}, line {line}" for line, what in sorted(found)]


def _modules() -> list[Path]:
    return sorted(p for p in CLI.glob("*.py") if p.name not in DISPLAY)


@pytest.mark.parametrize("module", _modules(), ids=lambda p: p.name)
def test_no_command_module_computes_a_summary_or_a_tally(module: Path) -> None:
    assert tallies(module.read_text()) == []


def test_the_check_finds_the_tallies_a_command_used_to_keep() -> None:
    kept = """
class Report:
    def __init__(self):
        self.totals = {"written": 0}
        self.notes = Tallies()
        self.failed = 0

    def file(self, event):
        self.totals[event.status] += 1
        self.failed += event.failed

def command(checks, result):
    summary = Summary()
    versions = sum(len(f.versions) for f in result.families)
    line = "a"
    line += "b"  # text being built is no count
"""
    assert tallies(kept) == [
        "Tallies() built, line 5",
        "a count kept in self.totals[event.status], line 9",
        "a count kept in self.failed, line 10",
        "Summary() built, line 13",
        "a sum, line 14",
    ]


def test_only_the_display_is_left_out() -> None:
    assert {p.name for p in CLI.glob("*.py")} >= DISPLAY
    assert {"migrating.py", "migrate_report.py", "validating.py", "detection.py"} <= {
        p.name for p in _modules()
    }


def test_a_publish_result_counts_its_schema_versions(tmp_path: Path) -> None:
    result = publish(evalreg.load_registry(), tmp_path, families=["eee.instance"])
    (family,) = result.families
    assert result.versions == len(family.versions) > 1
