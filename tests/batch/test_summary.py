"""The closing summary of validate: files and findings per rule, and per family and version."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from evalreg import Registry, load_registry
from evalreg.batch import parallel
from evalreg.batch.check import ValidRun, validate_paths
from evalreg.batch.summary import Summary
from evalreg.cli import main
from tests.conftest import RegistryFactory

DEMO = Path(__file__).parents[2] / "evalreg" / "examples" / "eee" / "data"
FOLDER = "gsm8k/Qwen/Qwen2.5-7B-Instruct"
UUID = "5b0c2e7a-91d4-4f3e-a6b8-2d7c9e1f0a34"
OLD = "hellaswag/mistralai/Mistral-7B-v0.1/c41f8d20-3b6e-4a57-9e02-7f5a1b8c6d93.json"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as done:
        main(list(args))
    out, err = capsys.readouterr()
    return int(done.value.code or 0), out, err


def edit(path: Path, change: Any) -> None:
    record = json.loads(path.read_text())
    change(record)
    path.write_text(json.dumps(record, indent=2))


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A datastore with problems: two scores out of bounds, a copy out of place, a bad file."""
    root = tmp_path / "data"
    shutil.copytree(DEMO, root)
    aggregate = root / FOLDER / f"{UUID}.json"

    def spoil(record: dict[str, Any]) -> None:
        record["evaluation_results"][0]["score_details"]["score"] = 1.5
        record["evaluation_results"][0]["metric_config"]["min_score"] = 2

    edit(aggregate, spoil)
    moved = root / "misplaced.json"
    shutil.copy(root / OLD, moved)
    (root / "notes.json").write_text('{"what": "not a record"}')
    (root / "cut.jsonl").write_text('{"a": 1}\n{"b"')
    return root


def test_findings_are_counted_per_rule_and_per_version(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "validate", "--format", "json", str(store))
    assert code == 1
    summary = json.loads(out.splitlines()[-1])["summary"]
    rules = {r["rule"]: (r["files"], r["errors"], r["warnings"]) for r in summary["rules"]}
    assert rules == {
        "eee.score-bounds": (1, 3, 0),  # two bounds broken, and min_score above max_score
        "eee.layout": (1, 2, 0),  # no folders below data/, and not named by a UUID
        "eee.duplicate": (1, 1, 0),  # the copy out of place
        "detect": (2, 2, 0),  # notes.json, and the one line of cut.jsonl that parses
        "unreadable": (1, 1, 0),
    }
    versions = {(v["family"], v["version"]): v for v in summary["versions"]}
    assert list(versions) == [
        ("eee.aggregate", "0.1.0"),
        ("eee.aggregate", "0.2.0"),
        ("eee.instance", "0.2.0"),
        (None, None),
    ]
    assert versions["eee.aggregate", "0.1.0"] == {
        "family": "eee.aggregate",
        "version": "0.1.0",
        "files": 2,
        "records": 2,
        "invalid": 1,
        "findings": 2,
    }
    current = versions["eee.aggregate", "0.2.0"]
    assert (current["invalid"], current["findings"]) == (1, 3)
    assert versions["eee.instance", "0.2.0"]["records"] == 2
    assert versions[None, None]["files"] == 2


def test_text_ends_with_the_tables_and_statistics_prints_only_them(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "validate", str(store))
    lines = out.splitlines()
    header = lines.index("rule              files  errors  warnings")
    assert all("[eee." in x or ": " in x for x in lines[:header])  # problems come first
    assert lines[header + 1].split() == ["eee.score-bounds", "1", "3", "0"]
    family = next(x for x in lines if x.split()[:2] == ["family", "version"])
    assert lines.index(family) > header
    assert lines[-1].startswith("6 files, 7 records: ")
    code, stats, _ = run(capsys, "validate", "--statistics", str(store))
    assert code == 1 and stats.splitlines() == lines[header:]
    code, out, _ = run(capsys, "validate", "--quiet", str(store))
    assert "rule" not in out.split()
    valid = str(store / FOLDER)
    store.joinpath(FOLDER, f"{UUID}.json").unlink()
    (store / FOLDER / f"{UUID}_samples.jsonl").unlink()
    shutil.copy(DEMO / FOLDER / f"{UUID}.json", valid)
    shutil.copy(DEMO / FOLDER / f"{UUID}_samples.jsonl", valid)
    code, out, _ = run(capsys, "validate", valid)
    assert code == 0 and len(out.splitlines()) == 1  # nothing to count: the summary line alone
    code, out, _ = run(capsys, "validate", "--statistics", valid)
    assert out.splitlines()[0].split()[:2] == ["family", "version"]


def test_runs_of_valid_records_say_their_version(
    make_registry_dir: RegistryFactory, tmp_path: Path
) -> None:
    manifest = "name: x.run\ntitle: Runs\nkind: jsonl\nmarkers:\n  - pointer: /v\n"
    schemas = {"1": {"type": "object"}, "2": {"type": "object"}}
    root = make_registry_dir({"x.run": {"manifest": manifest, "schemas": schemas}})
    registry = load_registry([root], builtin=False)
    path = tmp_path / "mixed.jsonl"
    path.write_text("".join(json.dumps({"v": v}) + "\n" for v in ["1", "1", "2", "1"]))
    found = list(validate_paths(registry, [str(path)]))
    assert found == [
        ValidRun(str(path), 2, "x.run", "1"),
        ValidRun(str(path), 1, "x.run", "2"),
        ValidRun(str(path), 1, "x.run", "1"),
    ]
    summary = Summary()
    summary.extend(found)
    assert {v: (t.files, t.records) for (_, v), t in summary.versions.items()} == {
        "1": (1, 3),
        "2": (1, 1),
    }


def test_the_summary_is_the_same_with_workers(
    store: Path, registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(parallel, "POOL_MIN_BYTES", 0)
    one, two = Summary(), Summary()
    one.extend(validate_paths(registry, [str(store)], jobs=1))
    two.extend(validate_paths(registry, [str(store)], jobs=2))
    assert one.as_dict() == two.as_dict()
    assert {v["version"] for v in one.as_dict()["versions"]} == {"0.1.0", "0.2.0", None}
