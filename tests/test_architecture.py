"""The house: rooms that depend only downward, with no cycles, and no oversized module or class."""

from __future__ import annotations

import ast
import importlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "evalreg"
MAX_MODULE_LINES = 600
MAX_CLASS_LINES = 300
ROOMS = sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file())
MODULES = sorted(p for p in PACKAGE.rglob("*.py") if "_builtin" not in p.parts)


def test_the_rooms_are_the_ones_the_development_page_maps() -> None:
    page = (PACKAGE.parent / "docs" / "development.md").read_text(encoding="utf-8")
    for room in ROOMS:
        assert f"`{room}/`" in page, f"docs/development.md does not map {room}/"


@pytest.mark.parametrize("room", ROOMS)
def test_each_room_has_its_tests_in_a_folder_of_its_name(room: str) -> None:
    folder = PACKAGE.parent / "tests" / room
    assert (folder / "__init__.py").is_file() and any(folder.glob("test_*.py")), folder


@pytest.mark.parametrize("room", ROOMS)
def test_each_room_says_what_it_is_for_and_what_it_may_import(room: str) -> None:
    doc = importlib.import_module(f"evalreg.{room}").__doc__ or ""
    assert len(doc.splitlines()) > 1 and "May import" in doc


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_or_class_is_oversized(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= MAX_MODULE_LINES
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ClassDef):
            size = (node.end_lineno or node.lineno) - node.lineno + 1
            assert size <= MAX_CLASS_LINES, f"class {node.name} has {size} lines"


def test_the_import_contracts_hold() -> None:
    """Rooms import only the rooms below them, and no modules import each other in a circle."""
    command = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    if command is None:
        pytest.skip("import-linter is not installed (it comes with the test extra)")
    done = subprocess.run(
        [command, "--no-cache"], cwd=PACKAGE.parent, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout[-3000:]
    assert "0 broken" in done.stdout
