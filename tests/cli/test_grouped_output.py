"""Text output counts problems alike on one line: many places of a record, many lines of a file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalreg.cli import main
from tests.conftest import RegistryFactory

MANIFEST = "name: acme.run\ntitle: Runs\nkind: jsonl\nmarkers:\n  - pointer: /v\n"
SCHEMA = {
    "properties": {
        "scores": {"type": "array", "items": {"type": "number"}},
        "name": {"type": "string"},
    }
}


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str]]:
    with pytest.raises(SystemExit) as done:
        main(list(args))
    out = capsys.readouterr().out
    return int(done.value.code or 0), [x for x in out.splitlines() if ": /" in x]


@pytest.fixture
def registry_dir(make_registry_dir: RegistryFactory) -> str:
    root = make_registry_dir({"acme.run": {"manifest": MANIFEST, "schemas": {"1": SCHEMA}}})
    return str(root)


def test_alike_problems_are_counted_on_one_line(
    registry_dir: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "runs.jsonl"
    rows = [
        {"v": "1", "scores": [1, "a", "b", 2, "c"]},
        {"v": "1", "name": 5},
        {"v": "1", "name": 5},
        {"v": "1", "scores": ["a", "a"], "name": 6},
        {"v": "1", "name": 5},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, lines = run(capsys, "--registry", registry_dir, "validate", str(path))
    assert code == 1
    assert lines == [
        f"{path}: /scores/*: 'a' is not of type 'number' (3 times in 2 records, first at line 1)",
        f"{path}:1: /scores/2: 'b' is not of type 'number'",
        f"{path}:1: /scores/4: 'c' is not of type 'number'",
        f"{path}: /name: 5 is not of type 'string' (3 records, first at line 2)",
        f"{path}:4: /name: 6 is not of type 'string'",
    ]
    code, every = run(capsys, "--registry", registry_dir, "validate", "--verbose", str(path))
    assert len(every) == 9 and every[0] == f"{path}:1: /scores/1: 'a' is not of type 'number'"
    code, shown = run(
        capsys, "--registry", registry_dir, "validate", "--max-errors", "2", str(path)
    )
    assert shown == lines[:2]


def test_places_within_one_record(
    registry_dir: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps({"v": "1", "scores": [None, None, 1, None]}) + "\n")
    code, lines = run(capsys, "--registry", registry_dir, "validate", str(path))
    assert code == 1
    assert lines == [f"{path}:1: /scores/*: None is not of type 'number' (3 places)"]
    with pytest.raises(SystemExit):
        main(["--registry", registry_dir, "validate", "--format", "json", str(path)])
    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [r["pointer"] for r in rows[:-1]] == ["/scores/0", "/scores/1", "/scores/3"]
