"""`migrate_paths` as a pipeline: named stages, no closures, outputs taken by path.

The validation path (`batch/check.py`) is held to the same: no function defined in another.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest

from evalreg import Registry
from evalreg.batch import check, migrate, parallel
from evalreg.batch.migrate import _ByPath, migrate_paths
from evalreg.batch.migrate_file import FileMigration, MigrateOptions, RecordMigration
from tests.conftest import EXAMPLES

INSTANCE = next((EXAMPLES / "eee.instance" / "valid").glob("*.jsonl"))
SOURCE = Path(migrate.__file__).read_text()


@pytest.fixture
def small_units(monkeypatch: pytest.MonkeyPatch) -> None:
    """Use a pool for any input, and cut JSONL files into ranges of a few lines."""
    monkeypatch.setattr(parallel, "POOL_MIN_BYTES", 0)
    monkeypatch.setattr(parallel, "RANGE_MIN_BYTES", 3000)
    monkeypatch.setattr(parallel, "RANGE_MAX_BYTES", 3000)
    monkeypatch.setattr(parallel, "UNIT_FILES", 2)


def _tree(root: Path) -> Path:
    """Write JSONL files of instance records, one large enough to be cut into ranges."""
    lines = [line for line in INSTANCE.read_text().splitlines() if line.strip()]
    records = [json.loads(line) for line in lines]
    for index in range(3):
        chosen = records * (12 if index == 1 else 1)
        rows = [json.dumps(dict(r, sample_id=f"s{index}-{n}")) for n, r in enumerate(chosen)]
        path = root / ("sub" if index else "") / f"f{index}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(rows) + "\n")
    return root


def _outcomes(events: Any) -> list[tuple[Any, ...]]:
    """Return what is compared of a run: files with outputs and counts; records counted."""
    found: list[tuple[Any, ...]] = []
    for event in events:
        if isinstance(event, FileMigration):
            found.append((event.path, event.output, event.status, event.migrated, event.failed))
        elif isinstance(event, RecordMigration):
            found.extend([(event.path, event.status)] * event.count)
    return found


def test_a_file_under_two_paths_gets_each_output_in_turn(
    registry: Registry, tmp_path: Path, small_units: None
) -> None:
    root = _tree(tmp_path / "in")
    twice = [str(root), str(root / "sub" / "f1.jsonl"), str(root / "sub")]
    runs = {}
    for jobs in (1, 2):
        out = tmp_path / f"out{jobs}"
        options = MigrateOptions(to="latest", out=str(out))
        runs[jobs] = _outcomes(migrate_paths(registry, twice, options, jobs=jobs))
        written = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.jsonl"))
        assert written == ["f0.jsonl", "f1.jsonl", "f2.jsonl", "sub/f1.jsonl", "sub/f2.jsonl"]
        assert (out / "f1.jsonl").read_bytes() == (out / "sub" / "f1.jsonl").read_bytes()
    outputs = [(f[0], Path(f[1]).parent.name) for f in runs[1] if len(f) == 5]
    assert [name for _, name in outputs] == ["out1", "sub", "sub", "out1", "out1", "out1"]
    swapped = [tuple(str(x).replace("out2", "out1") for x in f) for f in runs[2]]
    assert swapped == [tuple(str(x) for x in f) for f in runs[1]]


def test_values_by_path_are_taken_in_turn_and_the_rest_left() -> None:
    held = _ByPath()
    held.put("a", 1)
    held.put("b", 2)
    held.put("a", 3)
    assert held.take("a") == 1 and held.take("a") == 3
    with pytest.raises(KeyError):
        held.take("a")
    assert held.left() == [2] and held.left() == []


def _function(name: str) -> ast.FunctionDef:
    for node in ast.walk(ast.parse(SOURCE)):
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    raise AssertionError(name)


@pytest.mark.parametrize("module", [migrate, check], ids=["migrate", "check"])
def test_the_paths_share_nothing_through_closures(module: Any) -> None:
    tree = ast.parse(Path(module.__file__).read_text())
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            inner = [
                n.name
                for n in ast.walk(node)
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
                and n is not node
                and hasattr(n, "name")
            ]
            assert inner == [], f"{node.name} defines {inner}"
        assert not isinstance(node, ast.Nonlocal)


def test_the_pipeline_takes_outputs_by_path_in_named_stages() -> None:
    # outputs and locks are taken by path, never by the order of a queue
    assert "outputs.take(part.path)" in SOURCE and "guards.take(part.path)" in SOURCE
    calls = {
        ast.unparse(n.func) for n in ast.walk(_function("migrate_paths")) if isinstance(n, ast.Call)
    }
    assert {"run.walk", "parallel.plan", "run.one_by_one", "run.tasks", "run.gather"} <= calls
