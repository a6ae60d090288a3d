"""`evalreg.load` over what the command line reads: folders, globs, URLs; provenance; errors=."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import fsspec
import pytest

import evalreg
from evalreg.batch.load import Loaded, Problem
from evalreg.errors import MigrationError, ParameterError, ReadError

EXAMPLES = Path(evalreg.__file__).parent / "examples" / "eee"
AGGREGATE_010 = next((EXAMPLES / "data" / "hellaswag").rglob("*.json"))
AGGREGATE_020 = next((EXAMPLES / "data" / "gsm8k").rglob("*.json"))


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A folder of two aggregates (0.1.0 and 0.2.0), a hidden file and a bad JSON Lines file."""
    root = tmp_path / "runs"
    (root / "b" / "deep").mkdir(parents=True)
    (root / "a").mkdir()
    shutil.copy(AGGREGATE_010, root / "b" / "deep" / "old.json")
    shutil.copy(AGGREGATE_020, root / "a" / "new.json")
    (root / "a" / ".hidden.json").write_text("{not json")
    (root / "c.jsonl").write_text('{"a": 1}\n{oops\n')
    return root


def test_a_folder_is_walked_in_order_and_a_glob_expanded(folder: Path) -> None:
    found = list(evalreg.load(folder, provenance=True, exclude=["*.jsonl"]))
    assert [Path(r.source).relative_to(folder).as_posix() for r in found] == [
        "a/new.json",
        "b/deep/old.json",
    ]
    assert [r.version for r in found] == ["0.2.0", "0.1.0"]
    assert {r.family for r in found} == {"eee.aggregate"} and found[0].target is None
    globbed = list(evalreg.load(str(folder / "**" / "*.json"), to="latest"))
    assert [r["schema_version"] for r in globbed] == ["0.3.0", "0.3.0"]
    only = list(evalreg.load([folder / "b", str(folder / "a" / "*.json")], include=["*.json"]))
    assert len(only) == 2


def test_provenance_carries_the_place_the_versions_and_the_notes(folder: Path) -> None:
    [old] = evalreg.load(folder / "b", to="latest", provenance=True)
    assert isinstance(old, Loaded)
    assert old.source == str(folder / "b" / "deep" / "old.json") and old.line is None
    assert (old.family, old.version, old.target) == ("eee.aggregate", "0.1.0", "0.3.0")
    assert old.record["schema_version"] == "0.3.0"
    assert {n.source for n in old.notes if n.kind == "moved"} >= {"/source_data"}
    assert {n.origin for n in old.notes if n.pointer == "/eval_library/name"} == {"placeholder"}
    assert old.where == old.source


def test_errors_raise_skip_or_collect(folder: Path) -> None:
    with pytest.raises(ReadError, match=r"c\.jsonl:2: not valid JSON"):
        list(evalreg.load(folder))
    skipped = evalreg.load(folder, errors="skip")
    assert len(list(skipped)) == 3 and skipped.skipped == 1 and skipped.problems == []
    collected = evalreg.load(folder, to="latest", errors="collect", provenance=True)
    rows = list(collected)
    assert [r.record["schema_version"] for r in rows] == ["0.3.0", "0.3.0"]
    failed, unreadable = collected.problems
    assert isinstance(unreadable, Problem)
    assert (unreadable.kind, unreadable.where) == ("unreadable", f"{folder / 'c.jsonl'}:2")
    assert failed.kind == "failed" and failed.where == f"{folder / 'c.jsonl'}:1"
    assert "cannot detect the record" in failed.message
    with pytest.raises(MigrationError, match=r"c\.jsonl:1: cannot detect the record"):
        list(evalreg.load(folder / "c.jsonl", to="latest"))
    with pytest.raises(ParameterError, match="errors must be one of raise, skip, collect"):
        evalreg.load(folder, errors="ignore")  # type: ignore[arg-type]


def test_a_glob_matching_nothing_is_reported_as_such(tmp_path: Path) -> None:
    with pytest.raises(ReadError, match=r"nothing\*\.json"):
        list(evalreg.load(str(tmp_path / "nothing*.json")))


def test_urls_folders_and_globs_are_walked_as_the_command_line_walks_them() -> None:
    fs = fsspec.filesystem("memory")
    fs.pipe("/loadtest/x/one.json", AGGREGATE_010.read_bytes())
    fs.pipe("/loadtest/y/two.json", AGGREGATE_020.read_bytes())
    fs.pipe("/loadtest/y/.hidden.json", b"{")
    fs.pipe("/loadtest/y/notes.txt", b"not a record")
    try:
        folder = list(evalreg.load("memory://loadtest/", to="0.2.0", provenance=True))
        assert [r.source for r in folder] == [
            "memory://loadtest/x/one.json",
            "memory://loadtest/y/two.json",
        ]
        assert [r.version for r in folder] == ["0.1.0", "0.2.0"]
        globbed = list(evalreg.load("memory://loadtest/*/t*.json"))
        assert [json.dumps(r)[:20] for r in globbed] == [json.dumps(folder[1].record)[:20]]
    finally:
        fs.rm("/loadtest", recursive=True)
