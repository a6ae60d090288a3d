"""Baselines: a datastore's known findings left out, new ones reported, moved files followed."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from evalreg import Registry
from evalreg.batch.baseline import Baseline, write_baseline
from evalreg.batch.check import RecordCheck, RuleFinding, validate_paths
from evalreg.cli import main
from evalreg.errors import ReadError

DEMO = Path(__file__).parents[2] / "evalreg" / "examples" / "eee" / "data"
FOLDER = "gsm8k/Qwen/Qwen2.5-7B-Instruct"
UUID = "5b0c2e7a-91d4-4f3e-a6b8-2d7c9e1f0a34"
OLD = "hellaswag/mistralai/Mistral-7B-v0.1/c41f8d20-3b6e-4a57-9e02-7f5a1b8c6d93.json"
OTHER = "0d6f1c4e-2b3a-4c5d-8e9f-a1b2c3d4e5f6"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as done:
        main(list(args))
    out, err = capsys.readouterr()
    return int(done.value.code or 0), out, err


def edit(path: Path, change: Any) -> None:
    record = json.loads(path.read_text())
    change(record)
    path.write_text(json.dumps(record, indent=2))


def score(value: float) -> Any:
    def change(record: dict[str, Any]) -> None:
        record["evaluation_results"][0]["score_details"]["score"] = value

    return change


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project whose datastore has old problems: a score out of bounds, a bad line, a
    misplaced file."""
    shutil.copytree(DEMO, tmp_path / "data")
    edit(tmp_path / "data" / FOLDER / f"{UUID}.json", score(1.5))
    stray = tmp_path / "data" / "hellaswag" / "stray.json"
    shutil.copy(tmp_path / "data" / OLD, stray)
    edit(stray, score(0.25))  # out of the datastore's layout, and no duplicate
    samples = tmp_path / "data" / FOLDER / f"{UUID}_samples.jsonl"
    samples.write_text(samples.read_text() + '{"cut": \n')
    monkeypatch.chdir(tmp_path)
    return tmp_path


def problems(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith("data/")]


def test_a_baseline_leaves_out_what_it_holds_and_reports_what_is_new(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "validate", "data")
    assert code == 1 and len(problems(out)) == 4
    code, out, err = run(capsys, "validate", "--write-baseline", "known.json", "data")
    assert code == 0 and not problems(out)
    assert "wrote the baseline known.json: 4 findings in 3 files" in err
    code, out, _ = run(capsys, "validate", "--baseline", "known.json", "data")
    assert code == 0 and not problems(out)
    assert out.splitlines()[-1] == (
        "4 files, 5 records: 3 valid, 0 invalid, 0 unreadable, "
        "2 known (4 findings of the baseline left out)"
    )
    # A new problem in a new file, and one in a file the baseline has, are reported.
    new = project / "data" / FOLDER / f"{OTHER}.json"
    shutil.copy(project / "data" / FOLDER / f"{UUID}.json", new)
    edit(new, lambda r: r.pop("detailed_evaluation_results"))
    edit(new, lambda r: r.update(evaluation_id="another"))
    edit(project / "data" / OLD, lambda r: r.pop("model_info"))
    code, out, _ = run(capsys, "validate", "--baseline", "known.json", "data")
    assert code == 1
    found = problems(out)
    assert any(x.startswith(f"data/{FOLDER}/{OTHER}.json: ") for x in found)
    assert any(x.startswith(f"data/{OLD}: ") and "'model_info'" in x for x in found)
    assert not any(f"{UUID}" in x for x in found)  # the old ones stay out


def test_findings_are_keyed_by_value_not_line(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run(capsys, "validate", "--write-baseline", "known.json", "data")
    samples = project / "data" / FOLDER / f"{UUID}_samples.jsonl"
    samples.write_text("\n\n" + samples.read_text())  # every line moves down two
    code, out, _ = run(capsys, "validate", "--baseline", "known.json", "data")
    assert code == 0 and not problems(out)
    edit(project / "data" / FOLDER / f"{UUID}.json", score(1.7))  # the same problem, new value
    code, out, _ = run(capsys, "validate", "--baseline", "known.json", "data")
    assert code == 1
    (line,) = problems(out)
    assert "/score_details/score = 1.7" in line


def test_a_moved_file_keeps_its_findings_and_a_copy_does_not(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run(capsys, "validate", "--write-baseline", "known.json", "data")
    stray = project / "data" / "hellaswag" / "stray.json"
    elsewhere = project / "data" / "archive" / "old-stray.json"
    elsewhere.parent.mkdir()
    shutil.copy(stray, elsewhere)  # a copy: the baseline's file is still there
    code, out, _ = run(capsys, "validate", "--baseline", "known.json", "data")
    assert code == 1
    assert any(x.startswith("data/archive/old-stray.json: /: ") for x in problems(out))
    assert "a duplicate of" in out  # a copy is a new duplicate, too
    stray.unlink()  # now it has moved
    code, out, _ = run(capsys, "validate", "--baseline", "known.json", "data")
    assert code == 0 and not problems(out), out


def test_findings_no_longer_found_are_counted(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run(capsys, "validate", "--write-baseline", "known.json", "data")
    edit(project / "data" / FOLDER / f"{UUID}.json", score(0.5))
    code, out, err = run(capsys, "validate", "--baseline", "known.json", "data")
    assert code == 0 and not problems(out)
    assert "1 findings of the baseline known.json were not found again" in err


def test_the_configuration_names_the_baseline_and_paths_are_from_its_folder(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / "ci").mkdir()
    (project / "evalreg.toml").write_text('baseline = "ci/known.json"\n')
    run(capsys, "validate", "--write-baseline", "ci/known.json", "data")
    names = json.loads((project / "ci" / "known.json").read_text())["files"]
    assert f"../data/{FOLDER}/{UUID}.json" in names
    code, out, _ = run(capsys, "validate", "data")
    assert code == 0 and not problems(out)
    code, out, _ = run(capsys, "validate", "--no-baseline", "data")
    assert code == 1 and len(problems(out)) == 4
    # From another working folder, with other spellings of the paths, the same files match.
    monkeypatch.chdir(project / "data")
    code, out, _ = run(capsys, "validate", ".", "--baseline", "../ci/known.json")
    assert code == 0, out
    code, out, _ = run(capsys, "validate", str(project / "data"))
    assert code == 0, out


def test_a_bad_baseline_is_one_line(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "known.json").write_text('{"files": {}}')
    code, _, err = run(capsys, "validate", "--baseline", "known.json", "data")
    assert code == 2 and err == (
        'evalreg: error: known.json: not a baseline: no "evalreg-baseline": 1\n'
    )
    code, _, err = run(capsys, "validate", "--baseline", "missing.json", "data")
    assert code == 2 and err.startswith("evalreg: error: missing.json: cannot read the baseline")
    with pytest.raises(ReadError, match="malformed entry"):
        (project / "known.json").write_text('{"evalreg-baseline": 1, "files": {"a": {}}}')
        Baseline.load(project / "known.json")


def test_the_library_filters_a_run(project: Path, registry: Registry) -> None:
    written = write_baseline(project / "known.json", validate_paths(registry, ["data"]))
    assert written == {"files": 3, "findings": 4}
    baseline = Baseline.load(project / "known.json")
    results = list(baseline.filter(validate_paths(registry, ["data"])))
    statuses = sorted(
        r.status for r in results if isinstance(r, (RecordCheck, RuleFinding)) and r.status
    )
    assert statuses == ["known"] * 3
    assert all(not r.issues for r in results if isinstance(r, (RecordCheck, RuleFinding)))
    assert baseline.fixed == 0
    assert os.path.exists(project / "known.json")
