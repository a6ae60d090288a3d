"""`evalreg status`: the inventory of a datastore, counted as `evalreg detect` counts."""

from __future__ import annotations

import importlib.util
import json
from collections import Counter, defaultdict
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from evalreg import Registry
from evalreg.batch.inventory import requirements
from evalreg.cli import main
from evalreg.errors import RequirementError, UnknownVersionError

DEMO = Path(__file__).parents[2] / "evalreg" / "examples"
BENCHMARKS = Path(__file__).parents[2] / "benchmarks"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as info:
        main(list(args))
    out, err = capsys.readouterr()
    return int(info.value.code or 0), out, err


def _from_detect(capsys: pytest.CaptureFixture[str], *paths: str) -> dict[str, Any]:
    """Count `evalreg detect --format json` by family and version, as status should."""
    code, out, _ = run(capsys, "detect", *paths, "--format", "json")
    records: Counter[tuple[Any, ...]] = Counter()
    files: defaultdict[tuple[Any, ...], set[str]] = defaultdict(set)
    summary: dict[str, int] = {}
    for line in out.splitlines():
        row = json.loads(line)
        if "summary" in row:
            summary = row["summary"]
            continue
        if row["status"] == "unreadable":
            key: tuple[Any, ...] = ("unreadable", None, None)
        elif row["status"] == "detected":
            key = ("detected", row["family"], row["version"])
        else:
            key = (row["status"], None, None)
        count = row["last_line"] - row["line"] + 1 if row["last_line"] else 1
        records[key] += count
        files[key].add(row["path"])
    return {"code": code, "records": records, "files": files, "summary": summary}


def _from_status(capsys: pytest.CaptureFixture[str], *paths: str) -> dict[str, Any]:
    code, out, _ = run(capsys, "status", *paths, "--format", "json")
    document = json.loads(out)
    records: Counter[tuple[Any, ...]] = Counter()
    files: dict[tuple[Any, ...], int] = {}
    for row in document["rows"]:
        state = "detected" if row["state"] in ("latest", "behind") else row["state"]
        family = row["family"] if state == "detected" else None
        key = (state, family, row["version"] if state == "detected" else None)
        records[key] += row["records"]
        files[key] = files.get(key, 0) + row["files"]
    return {"code": code, "records": records, "files": files, "summary": document["summary"]}


def _assert_same_counts(capsys: pytest.CaptureFixture[str], *paths: str) -> dict[str, Any]:
    detected = _from_detect(capsys, *paths)
    status = _from_status(capsys, *paths)
    assert status["records"] == detected["records"]
    assert status["files"] == {key: len(paths) for key, paths in detected["files"].items()}
    summary = detected["summary"]
    assert status["summary"]["files"] == summary["files"]
    assert status["summary"]["records"] == summary["records"]
    assert status["summary"]["detected"] == summary["valid"]
    assert status["summary"]["undecided"] == summary["invalid"]
    assert status["summary"]["unreadable"] == summary["unreadable"]
    return status


def test_status_counts_match_detect_on_the_bundled_examples(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status = _assert_same_counts(capsys, str(DEMO))
    assert status["code"] == 0
    assert status["summary"]["files"] == 17 and status["summary"]["records"] == 22
    assert status["records"][("detected", "eee.instance", "0.2.0")] == 2


def test_status_prints_a_row_per_family_and_version(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "status", str(DEMO))
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["family", "version", "files", "records", "state"]
    assert any(line.split()[:2] == ["eee.aggregate", "0.1.0"] for line in lines)
    row = next(line for line in lines if line.startswith("skill-creator.grading"))
    assert row.split() == ["skill-creator.grading", "1.0.0", "2", "2", "behind", "latest", "2.0.0"]
    row = next(line for line in lines if line.startswith("mnemoverse.events"))
    assert row.split()[-1] == "latest"
    assert err.strip() == (
        "17 files, 22 records: 22 detected (12 behind the latest version, in 11 files), "
        "0 undecided, 0 unreadable"
    )


def test_undecided_and_unreadable_records_have_rows(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "unknown.json").write_text('{"a": 1}')
    (tmp_path / "future.json").write_text('{"schema_version": "9.9.9", "evaluation_results": []}')
    (tmp_path / "empty.json").write_text("")
    (tmp_path / "lines.jsonl").write_text(
        '{"schema_version": "0.2.0", "sample_id": "1"}\n{broken\n'
    )
    status = _assert_same_counts(capsys, str(tmp_path))
    assert status["code"] == 0  # an inventory judges nothing unless asked to
    _code, out, _ = run(capsys, "status", str(tmp_path))
    states = {line.split("  ")[0].strip(): line for line in out.splitlines()[1:]}
    assert "unknown version" in states["eee.aggregate"]
    unreadable = next(line for line in out.splitlines() if line.endswith("unreadable"))
    assert unreadable.split()[:4] == ["-", "-", "2", "2"]


def test_require_latest_lists_the_files_behind_and_exits_1(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(capsys, "status", str(DEMO / "eee"), "--require-latest")
    assert code == 1
    behind = [line for line in out.splitlines() if ", required " in line]
    assert len(behind) == 3
    assert any(
        "_samples.jsonl: eee.instance@0.2.0 (2 records), required 0.3.0" in b for b in behind
    )
    assert err.strip().endswith("; 3 files behind a required version")
    code, out, _ = run(capsys, "status", str(DEMO / "mnemoverse"), "--require-latest")
    assert code == 0 and ", required " not in out


def test_require_a_version(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "status", str(DEMO / "eee"), "--require", "eee.aggregate@0.2.0")
    assert code == 1
    behind = [line for line in out.splitlines() if ", required " in line]
    assert len(behind) == 1 and "hellaswag" in behind[0] and "eee.aggregate@0.1.0" in behind[0]
    code, _, _ = run(capsys, "status", str(DEMO / "eee"), "--require", "0.2.0")
    assert code == 1  # the hellaswag aggregate is at 0.1.0
    code, out, _ = run(capsys, "status", str(DEMO / "eee" / "data" / "gsm8k"), "--require", "0.2")
    assert code == 0
    code, out, _ = run(capsys, "status", str(DEMO), "--require", "0.2.0", "--format", "json")
    document = json.loads(out)
    assert code == 1
    assert document["required"]["eee.aggregate"] == "0.2.0"
    assert document["required"]["eee.instance"] == "0.2.0"
    assert "agentv.eval" not in document["required"]
    assert [b["family"] for b in document["behind_required"]] == ["eee.aggregate"]
    assert document["summary"]["behind_required_files"] == 1


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("9.9", "no family has version '9.9'; name the family as FAMILY@VERSION"),
        ("eee.aggregate@9", "unknown version '9' of eee.aggregate"),
        ("nope@1", "unknown family 'nope'"),
    ],
)
def test_an_unknown_requirement_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], spec: str, message: str
) -> None:
    code, _, err = run(capsys, "status", str(DEMO), "--require", spec)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_requirements(registry: Registry) -> None:
    assert requirements(registry, []) == {}
    latest = requirements(registry, [], latest=True)
    assert latest["eee.aggregate"] == registry.latest("eee.aggregate")
    both = requirements(registry, ["eee.aggregate@0.2", "0.2.1"], latest=True)
    assert both["eee.aggregate"] == "0.2.0"  # a named family wins over a bare version
    assert both["eee.instance"] == "0.2.1"
    assert both["agentv.eval"] == registry.latest("agentv.eval")
    with pytest.raises(RequirementError):
        requirements(registry, ["7.7.7"])
    with pytest.raises(UnknownVersionError):
        requirements(registry, ["eee.aggregate@7"])


def _generate() -> ModuleType:
    spec = importlib.util.spec_from_file_location("generate", BENCHMARKS / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_status_counts_match_detect_on_a_generated_datastore_of_20000_files(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    generate = _generate()
    generate.write_aggregates(tmp_path / "old", 10_000, "0.1.0")
    generate.write_aggregates(tmp_path / "new", 9_995, "0.2.0", invalid_every=1000)
    generate.write_jsonl(tmp_path / "new" / "samples.jsonl", 3_000, invalid_every=500)
    (tmp_path / "odd").mkdir()
    (tmp_path / "odd" / "unknown.json").write_text('{"a": 1}')
    (tmp_path / "odd" / "future.json").write_text(
        '{"schema_version": "9.9", "evaluation_results": []}'
    )
    (tmp_path / "odd" / "empty.jsonl").write_text("")
    (tmp_path / "odd" / "broken.json").write_text("{")
    assert sum(1 for p in tmp_path.rglob("*") if p.is_file()) == 20_000
    status = _assert_same_counts(capsys, str(tmp_path))
    summary = status["summary"]
    assert summary["files"] == 20_000
    assert summary["records"] == 10_000 + 9_995 + 2_999 + 2  # one line of the JSONL is cut short
    assert status["records"][("detected", "eee.aggregate", "0.1.0")] == 10_000
    assert status["files"][("detected", "eee.instance", "0.2.0")] == 1
    assert summary["unreadable"] == 3
    code, out, _ = run(capsys, "status", str(tmp_path), "--require", "eee.aggregate@0.2.0")
    assert code == 1 and sum(", required 0.2.0" in line for line in out.splitlines()) == 10_000
