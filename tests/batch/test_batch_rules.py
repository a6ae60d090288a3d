"""Rules in validate runs: Every Eval Ever's datastore checks, selection, output, parallel runs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from evalreg.batch import parallel
from evalreg.cli import main

DEMO = Path(__file__).parents[2] / "evalreg" / "examples" / "eee" / "data"
UUID = "5b0c2e7a-91d4-4f3e-a6b8-2d7c9e1f0a34"
FOLDER = "gsm8k/Qwen/Qwen2.5-7B-Instruct"
OTHER = "0d6f1c4e-2b3a-4c5d-8e9f-a1b2c3d4e5f6"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as done:
        main(list(args))
    out, err = capsys.readouterr()
    return int(done.value.code or 0), out, err


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A copy of the bundled datastore: an aggregate with its samples file, and an old one."""
    root = tmp_path / "data"
    shutil.copytree(DEMO, root)
    return root


def aggregate_path(root: Path, uuid: str = UUID) -> Path:
    return root / FOLDER / f"{uuid}.json"


def edit(path: Path, change: Any) -> None:
    record = json.loads(path.read_text())
    change(record)
    path.write_text(json.dumps(record, indent=2))


def test_the_bundled_datastore_keeps_every_rule(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "validate", str(store))
    assert code == 0 and "[eee." not in out


def test_a_score_out_of_bounds_is_a_located_error(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def spoil(record: dict[str, Any]) -> None:
        record["evaluation_results"][0]["score_details"]["score"] = 1.5

    edit(aggregate_path(store), spoil)
    code, out, _ = run(capsys, "validate", str(store))
    assert code == 1
    (line,) = [x for x in out.splitlines() if "[eee.score-bounds]" in x]
    assert line.startswith(f"{aggregate_path(store)}: /evaluation_results/0/score_details/score: ")
    assert "/score_details/score = 1.5, /metric_config/max_score = 1" in line
    assert out.splitlines()[-1] == "3 files, 4 records: 3 valid, 1 invalid, 0 unreadable"
    code, out, _ = run(capsys, "validate", "--no-rules", str(store))
    assert code == 0 and "[eee." not in out


def test_a_companion_that_disagrees_is_reported_on_both_files(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edit(aggregate_path(store), lambda r: r["detailed_evaluation_results"].update(total_rows=3))
    code, out, _ = run(capsys, "validate", str(store), "--format", "json")
    assert code == 1
    rows = [json.loads(x) for x in out.splitlines()]
    found = [r for r in rows if r.get("rule") == "eee.companion"]
    assert [Path(r["path"]).name for r in found] == [f"{UUID}.json", f"{UUID}_samples.jsonl"]
    assert found[0]["pointer"] == "/detailed_evaluation_results/total_rows"
    assert found[0]["message"] == "total_rows is 3, but the samples file has 2 rows"
    assert {r["kind"] for r in found} == {"invalid"} and {r["severity"] for r in found} == {"error"}
    assert rows[-1]["summary"]["across_files"] == 2


def test_companion_of_a_file_outside_the_run_is_read_from_disk(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    samples = store / FOLDER / f"{UUID}_samples.jsonl"
    samples.write_text(samples.read_text().splitlines()[0] + "\n")
    code, out, _ = run(capsys, "validate", str(aggregate_path(store)))
    assert code == 1 and "total_rows is 2, but the samples file has 1 rows" in out
    samples.unlink()
    code, out, _ = run(capsys, "validate", str(aggregate_path(store)))
    assert code == 1 and f"its samples file {samples} does not exist [eee.companion]" in out


def test_a_wrong_path_depth_and_a_duplicate(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    deeper = store / FOLDER / "extra" / f"{UUID}.json"
    deeper.parent.mkdir()
    shutil.move(aggregate_path(store), deeper)
    twin = aggregate_path(store, OTHER)
    shutil.copy(deeper, twin)
    edit(twin, lambda r: r.update(evaluation_id="another id", retrieved_timestamp="1"))
    edit(twin, lambda r: r.pop("detailed_evaluation_results"))
    edit(deeper, lambda r: r.pop("detailed_evaluation_results"))
    (store / FOLDER / f"{UUID}_samples.jsonl").unlink()
    code, out, _ = run(capsys, "validate", str(store))
    assert code == 1
    assert (
        f"{deeper}: /: the file is 4 folders below data/ (gsm8k/Qwen/Qwen2.5-7B-Instruct/extra), "
        "not 3 (<collection>/<developer>/<model>) (an aggregate lives at data/<collection>/"
    ) in out
    assert out.count("[eee.layout]") == 1
    assert f"{deeper}: /: a duplicate of {twin} [eee.duplicate]" in out


def test_warnings_are_reported_and_leave_the_exit_code_alone(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edit(aggregate_path(store), lambda r: r["model_info"].update(id="Qwen/Qwen2.5-72B"))
    samples = store / FOLDER / f"{UUID}_samples.jsonl"
    rows = [json.loads(x) for x in samples.read_text().splitlines()]
    samples.write_text(
        "".join(json.dumps({**r, "model_id": "Qwen/Qwen2.5-72B"}) + "\n" for r in rows)
    )
    code, out, _ = run(capsys, "validate", str(store))
    assert code == 0
    assert (
        f"{aggregate_path(store)}: warning: /model_info/id: the id 'Qwen/Qwen2.5-72B' belongs in "
        "Qwen/Qwen2.5-72B, not Qwen/Qwen2.5-7B-Instruct [eee.model-path]"
    ) in out
    assert out.splitlines()[-1].endswith(", 1 warnings")
    code, out, _ = run(capsys, "validate", "--severity", "error", str(store))
    assert code == 0 and "warning" not in out
    code, out, _ = run(capsys, "validate", "--format", "github", str(store))
    assert "::warning file=" in out and "title=eee.model-path::" in out


def test_rules_can_be_chosen_by_id_or_prefix(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def spoil(record: dict[str, Any]) -> None:
        record["evaluation_results"][0]["score_details"]["score"] = 1.5
        record["detailed_evaluation_results"]["total_rows"] = 3

    edit(aggregate_path(store), spoil)
    found = {}
    for selection in (("--rule", "eee.companion"), ("--rule", "eee.s*"), ("--rule", "nope")):
        _, out, _ = run(capsys, "validate", *selection, str(store))
        found[selection[1]] = {x.rsplit("[", 1)[1] for x in out.splitlines() if "[eee." in x}
    assert found == {
        "eee.companion": {"eee.companion]"},
        "eee.s*": {"eee.score-bounds]"},
        "nope": set(),
    }


def test_parallel_runs_report_what_one_process_reports(
    store: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    samples = store / FOLDER / f"{UUID}_samples.jsonl"
    rows = [json.loads(x) for x in samples.read_text().splitlines()]
    many = [{**rows[i % 2], "sample_id": f"s{i}"} for i in range(300)]
    samples.write_text("".join(json.dumps(r) + "\n" for r in many))
    edit(aggregate_path(store), lambda r: r["detailed_evaluation_results"].update(total_rows=299))
    for uuid in (OTHER, "1e2d3c4b-5a69-4788-9a0b-c1d2e3f4a5b6"):
        shutil.copy(aggregate_path(store), aggregate_path(store, uuid))
        edit(aggregate_path(store, uuid), lambda r: r.pop("detailed_evaluation_results"))
    code1, one, _ = run(capsys, "validate", "--jobs", "1", str(store))
    monkeypatch.setattr(parallel, "POOL_MIN_BYTES", 0)
    monkeypatch.setattr(parallel, "RANGE_MIN_BYTES", 4000)
    monkeypatch.setattr(parallel, "RANGE_MAX_BYTES", 4000)
    monkeypatch.setattr(parallel, "UNIT_FILES", 2)
    code2, two, _ = run(capsys, "validate", "--jobs", "2", str(store))
    assert (code1, one) == (code2, two)
    assert "total_rows is 299, but the samples file has 300 rows" in one
    assert one.count("[eee.duplicate]") == 1
