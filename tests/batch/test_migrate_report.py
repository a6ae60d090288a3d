"""What `evalreg migrate` reports: every note in every run, per file, for the run, in JSON."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from evalreg.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "evalreg" / "examples" / "eee" / "data"
AGGREGATE = next(EXAMPLES.rglob("*-????-????-????-????????????.json"))
"""A bundled 0.2.0 aggregate record."""


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as info:
        main(list(args))
    out, err = capsys.readouterr()
    return int(info.value.code or 0), out, err


def _aggregate(folder: Path, name: str = "run.json", **details: Any) -> Path:
    """Write a 0.2.0 aggregate whose model_info holds `details` (numbers 0.2.1 makes text)."""
    record = json.loads(AGGREGATE.read_text())
    assert record["schema_version"] == "0.2.0"
    record["model_info"]["additional_details"] = details
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(json.dumps(record, indent=2) + "\n")
    return path


def test_a_real_run_reports_placeholders_and_conversions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _aggregate(tmp_path / "in", params_billions=7.242)
    code, out, err = run(
        capsys, "migrate", str(path), "--to", "latest", "--out", str(tmp_path / "o")
    )
    assert code == 0, out + err
    lines = out.splitlines()
    counts = "4 added (4 placeholders), 1 converted"
    assert lines[0] == f"{path}: written: 1 migrated, 0 current, 0 failed; {counts}"
    assert (
        'added /eval_library/name (placeholder "unknown"): the record does not say; give it with '
        f"--set eval_library_name=VALUE [1 record; {path}]"
    ) in lines
    assert (
        "converted /model_info/additional_details/params_billions: number -> string "
        f"[1 record; {path}]"
    ) in lines
    assert err.strip().endswith(
        "records: 1 migrated, 0 current, 0 failed; notes: 4 added, 1 converted; "
        "4 placeholders in 1 record"
    )
    written = json.loads((tmp_path / "o" / "run.json").read_text())
    assert written["model_info"]["additional_details"]["params_billions"] == "7.242"


def test_json_rows_hold_every_note_with_its_origin(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _aggregate(tmp_path / "in", params_billions=7.242)
    code, out, _ = run(
        capsys, "migrate", str(path), "--to", "latest", "--out", str(tmp_path / "o"),
        "--format", "json", "--set", "eval_library_name=lm-eval",
    )  # fmt: skip
    assert code == 0
    record, file, summary = (json.loads(line) for line in out.splitlines())
    notes = {n["pointer"]: n for n in record["notes"]}
    assert notes["/eval_library/name"] | {"detail": ""} == {
        "kind": "added",
        "pointer": "/eval_library/name",
        "value": "lm-eval",
        "origin": "parameter",
        "placeholder": False,
        "detail": "",
        "step": "0.2.0 -> 0.2.1",
    }
    assert notes["/eval_library/version"]["placeholder"] is True
    assert notes["/model_info/additional_details/params_billions"] | {"detail": ""} == {
        "kind": "converted",
        "pointer": "/model_info/additional_details/params_billions",
        "from_type": "number",
        "to_type": "string",
        "before": 7.242,
        "after": "7.242",
        "detail": "",
        "step": "0.2.0 -> 0.2.1",
    }
    assert "changes" not in record  # only with --diff
    assert file["notes"]["added"] == 4 and file["placeholders"] == 3
    assert summary["summary"]["placeholders"] == {"notes": 3, "records": 1}
    assert summary["summary"]["notes"]["converted"] == 1


def test_each_distinct_note_once_for_the_run_and_every_one_with_verbose(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for index in range(3):
        _aggregate(tmp_path / "in" / f"m{index}", params_billions=index + 0.5)
    args = ("migrate", str(tmp_path / "in"), "--to", "latest", "--dry-run")
    code, out, err = run(capsys, *args)
    assert code == 0
    converted = [line for line in out.splitlines() if line.startswith("converted ")]
    assert len(converted) == 1 and "[3 records in 3 files; first: " in converted[0]
    assert "12 placeholders in 3 records" in err
    code, verbose, _ = run(capsys, *args, "--verbose")
    listed = [line for line in verbose.splitlines() if ": converted " in line]
    assert len(listed) == 3
    assert all(re.search(r'm\d/run.json: converted .*: number -> string \(\d.5 -> "\d.5"\)', x)
               for x in listed)  # fmt: skip


def test_the_dry_run_prints_what_the_run_prints(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _aggregate(tmp_path / "in" / "a", params_billions=1)
    _aggregate(tmp_path / "in" / "b")
    common = ("migrate", str(tmp_path / "in"), "--to", "latest")
    _, dry, dry_err = run(capsys, *common, "--dry-run")
    _, real, real_err = run(capsys, *common, "--out", str(tmp_path / "o"))
    plan = [line for line in dry.splitlines() if line.startswith("plan ")]
    assert plan == [
        "plan eee.aggregate: 0.2.0 -> 0.2.1, 0.2.1 -> 0.2.2, 0.2.2 -> 0.2.3, 0.2.3 -> 0.3.0"
    ]
    dry_lines = [line.replace(": planned: ", ": written: ") for line in dry.splitlines()]
    assert dry_lines[1:] == real.splitlines()
    assert dry_err.split("; records: ")[1] == real_err.split("; records: ")[1].rstrip() + (
        " (dry run: nothing written)\n"
    )


def test_diff_lists_every_difference_of_every_record(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _aggregate(tmp_path / "in", params_billions=7.242)
    code, out, _ = run(capsys, "migrate", str(path), "--to", "0.2.1", "--dry-run", "--diff")
    assert code == 0
    lines = out.splitlines()
    start = lines.index(f"{path}: 0.2.0 -> 0.2.1")
    assert lines[start + 1 : start + 4] == [
        '  ~ /schema_version: "0.2.0" -> "0.2.1"',
        '  ~ /model_info/additional_details/params_billions: 7.242 -> "7.242"',
        '  + /eval_library = {"name": "unknown", "version": "unknown"}',
    ]
    code, out, _ = run(
        capsys, "migrate", str(path), "--to", "0.2.1", "--dry-run", "--diff", "--format", "json"
    )
    changes = json.loads(out.splitlines()[0])["changes"]
    assert changes[1] == {
        "op": "changed",
        "pointer": "/model_info/additional_details/params_billions",
        "before": 7.242,
        "after": "7.242",
    }
    assert changes[2] == {
        "op": "added",
        "pointer": "/eval_library",
        "after": {"name": "unknown", "version": "unknown"},
    }


def test_the_notes_of_a_file_left_as_it_was_are_not_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = _aggregate(tmp_path / "in", "good.json")
    record = json.loads(good.read_text())
    broken = tmp_path / "in" / "broken.jsonl"
    broken.write_text(
        json.dumps(record) + "\n" + json.dumps(record | {"schema_version": "9.9"}) + "\n"
    )
    code, out, err = run(capsys, "migrate", str(tmp_path / "in"), "--to", "latest", "--dry-run")
    assert code == 1
    assert f"{broken}: failed: 1 migrated, 0 current, 1 failed (left as it was" in out
    assert "4 placeholders in 1 record" in err  # good.json's only
    assert f"[1 record; {good}]" in out and f"{broken}:1]" not in out
