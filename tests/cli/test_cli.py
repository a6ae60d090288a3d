"""The command line, end to end: output formats, exit codes, and what gets written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evalreg.cli import main
from tests.conftest import EXAMPLES

DEMO = Path(__file__).parents[2] / "evalreg" / "examples"
OLD_AGGREGATE = next((DEMO / "eee" / "data" / "hellaswag").rglob("*.json"))


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as info:
        main(list(args))
    out, err = capsys.readouterr()
    return int(info.value.code or 0), out, err


def test_version_and_help(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--version")
    assert code == 0 and out.startswith("evalreg, version ")
    for command in ("list", "show", "detect", "validate", "migrate"):
        code, out, _ = run(capsys, command, "--help")
        assert code == 0 and "Usage: evalreg" in out


def test_list_shows_every_family(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "list")
    assert code == 0
    assert "eee.aggregate" in out and "Every Eval Ever aggregate results" in out
    code, out, _ = run(capsys, "list", "--format", "json")
    rows = {row["family"]: row for row in json.loads(out)}
    assert rows["eee.aggregate"]["latest"] == rows["eee.aggregate"]["versions"][-1]
    assert rows["agentv.eval"]["kind"] == "yaml"


def test_show_prints_a_schema(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "show", "eee.instance@0.2.0")
    assert code == 0
    assert json.loads(out)["version"] == "instance_level_eval_0.2.0"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("show", "eee.nope"), "unknown family 'eee.nope' (known: "),
        (("show", "eee.aggregate@9"), "unknown version '9' of eee.aggregate (known: 0.1.0"),
        (("validate", "x", "--family", "nope"), "unknown family 'nope'"),
        (("validate", "x", "--version", "1"), "--version needs --family"),
        (
            ("migrate", "x", "--to", "0.2.0"),
            "choose exactly one of --out DIR, --in-place or --dry-run",
        ),
        (
            ("migrate", "x", "--to", "0.2.0", "--dry-run", "--set", "nope=1"),
            "unknown parameter nope",
        ),
        (("--registry", "/nonexistent/dir", "list"), "not a registry directory"),
    ],
)
def test_usage_errors_are_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], args: tuple[str, ...], message: str
) -> None:
    code, _, err = run(capsys, *args)
    assert code == 2
    assert message in err
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err


def test_validate_demo_reports_each_problem_with_its_place(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(capsys, "validate", str(DEMO))
    assert code == 1
    problem = out.splitlines()[0]
    assert "without_skill/grading.json: /expectations/0: " in problem
    assert "1 invalid, 0 unreadable" in out


def test_validate_jsonl_line_numbers_and_unreadable_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = json.loads(
        (EXAMPLES / "eee.instance" / "valid").glob("*.jsonl").__next__().read_text().splitlines()[0]
    )
    bad = {**good, "evaluation": {"score": "x", "is_correct": True}}
    path = tmp_path / "run.jsonl"
    path.write_text(
        "\n".join([json.dumps(good), "{broken", json.dumps(bad), json.dumps(good)[:20]])
    )
    code, out, _ = run(capsys, "validate", str(path))
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith(f"{path}:2: not valid JSON")
    assert lines[1] == f"{path}:3: /evaluation/score: 'x' is not of type 'number', 'boolean'"
    assert lines[2].startswith(f"{path}:4: truncated last line")
    assert lines[-1] == "1 files, 2 records: 1 valid, 1 invalid, 2 unreadable"
    # Between them, the findings of each rule, and of each family and version.
    assert lines[3].split() == ["rule", "files", "errors", "warnings"]
    assert lines[4].split() == ["unreadable", "1", "2", "0"]
    assert lines[5].split() == ["schema", "1", "1", "0"]


def test_validate_json_and_github_formats(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "grading.json"
    path.write_text(
        json.dumps(
            {"expectations": [{"text": "t", "passed": "yes", "evidence": "e"}], "pass_rate": 1}
        )
    )
    code, out, _ = run(capsys, "validate", str(path), "--format", "json")
    problem, summary = (json.loads(line) for line in out.splitlines())
    assert code == 1
    assert problem["pointer"] == "/expectations/0/passed"
    assert problem["keyword"] == "type"
    assert problem["family"] == "skill-creator.grading"
    assert summary == {
        "summary": {
            "files": 1,
            "records": 1,
            "valid": 0,
            "invalid": 1,
            "unreadable": 0,
            "across_files": 0,
            "warnings": 0,
            "rules": [{"rule": "schema", "files": 1, "errors": 1, "warnings": 0}],
            "versions": [
                {
                    "family": "skill-creator.grading",
                    "version": "1.0.0",
                    "files": 1,
                    "records": 1,
                    "invalid": 1,
                    "findings": 1,
                }
            ],
        }
    }
    code, out, _ = run(capsys, "validate", str(path), "--format", "github")
    assert out.startswith(
        f"::error file={path},title=skill-creator.grading type::/expectations/0/passed: "
    )


def test_validate_max_errors_and_quiet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text("{\n" * 5)
    code, out, _ = run(capsys, "validate", str(path), "--max-errors", "2")
    assert code == 1
    lines = out.splitlines()
    assert len(lines) == 5 and "(first 2 problems shown)" in lines[-1]
    assert lines[2].split() == ["rule", "files", "errors", "warnings"]
    assert lines[3].split() == ["unreadable", "1", "5", "0"]  # every problem is counted
    code, out, _ = run(capsys, "validate", str(path), "-q")
    assert len(out.splitlines()) == 5


def test_validate_all_valid_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "validate", str(EXAMPLES / "eee.aggregate" / "valid"))
    assert code == 0
    assert "0 invalid, 0 unreadable" in out


def test_validate_with_explicit_family_and_version(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(
        capsys, "validate", str(OLD_AGGREGATE), "--family", "eee.aggregate", "--version", "0.2.0"
    )
    assert code == 1
    assert "'source_data' is a required property" in out


def test_detect_prints_family_version_and_evidence(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "detect", str(DEMO))
    assert code == 0
    assert f"{OLD_AGGREGATE}: eee.aggregate@0.1.0 (marker: /schema_version = '0.1.0'" in out
    assert "_samples.jsonl:1-2: eee.instance@0.2.0" in out
    assert "0 undecided, 0 unreadable" in err


def test_detect_unknown_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "notes.json"
    path.write_text('{"hello": 1}')
    code, out, _ = run(capsys, "detect", str(path), "--format", "json")
    row = json.loads(out.splitlines()[0])
    assert code == 1
    assert row["status"] == "unknown" and "no version marker" in row["reasons"]


# -- migrate -----------------------------------------------------------------------------------


def _datastore(tmp_path: Path) -> Path:
    root = tmp_path / "data"
    shutil.copytree(DEMO / "eee", root)
    return root


def test_migrate_out_mirrors_the_tree(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _datastore(tmp_path)
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    code, out, err = run(
        capsys, "migrate", str(root), "--to", "0.2.0", "--out", str(tmp_path / "out")
    )
    assert code == 0, out + err
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == before, "inputs untouched"
    migrated = tmp_path / "out" / OLD_AGGREGATE.relative_to(DEMO / "eee")
    record = json.loads(migrated.read_text())
    assert record["schema_version"] == "0.2.0"
    assert record["evaluation_results"][0]["source_data"]["source_type"] == "url"
    assert record["evaluation_results"][0]["score_details"]["score"] == 83.31
    current = next((tmp_path / "out").rglob("*_samples.jsonl"))
    original = next(root.rglob("*_samples.jsonl"))
    assert current.read_bytes() == original.read_bytes()
    code, out, _ = run(capsys, "validate", str(tmp_path / "out"))
    assert code == 0, out


def test_migrate_in_place_with_backup_and_idempotence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _datastore(tmp_path)
    target = root / OLD_AGGREGATE.relative_to(DEMO / "eee")
    original = target.read_bytes()
    code, out, err = run(
        capsys, "migrate", str(root), "--to", "0.2.0", "--in-place", "--backup", ".bak"
    )
    assert code == 0, out + err
    assert Path(str(target) + ".bak").read_bytes() == original
    first = target.read_bytes()
    assert first != original
    stat = target.stat()
    code, out, err = run(
        capsys, "migrate", str(root), "--to", "0.2.0", "--in-place", "--exclude", "*.bak"
    )
    assert code == 0
    assert target.read_bytes() == first
    assert target.stat().st_mtime_ns == stat.st_mtime_ns, "a current file is not rewritten"
    assert "0 written" in err


def test_migrate_dry_run_writes_nothing_and_shows_changes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _datastore(tmp_path)
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    code, out, err = run(capsys, "migrate", str(root), "--to", "0.2.0", "--dry-run")
    assert code == 0
    assert "plan eee.aggregate: 0.1.0 -> 0.2.0" in out
    assert ": planned: 1 migrated, 0 current, 0 failed; " in out
    assert "moved /source_data -> /evaluation_results/*/source_data/url [1 record; " in out
    assert "dry run: nothing written" in err
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == before


def test_a_failing_record_leaves_the_whole_jsonl_file_untouched(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = (
        (EXAMPLES / "eee.instance" / "valid").glob("*.jsonl").__next__().read_text().splitlines()
    )
    path = tmp_path / "samples.jsonl"
    broken = json.loads(lines[0]) | {"schema_version": "0.0.1"}
    path.write_text("\n".join([lines[0], json.dumps(broken), *lines[1:]]) + "\n")
    original = path.read_bytes()
    code, out, _ = run(capsys, "migrate", str(path), "--to", "latest", "--in-place")
    assert code == 1
    assert f"{path}:2: failed: version '0.0.1' of eee.instance is not known" in out
    assert f"{path}: failed:" in out
    assert path.read_bytes() == original
    assert [p.name for p in tmp_path.iterdir()] == ["samples.jsonl"], (
        "no temporary file left behind"
    )


def test_migrate_jsonl_to_latest_validates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = next((EXAMPLES / "eee.instance" / "valid").glob("*.jsonl"))
    path = tmp_path / source.name
    shutil.copy(source, path)
    code, out, err = run(
        capsys, "migrate", str(path), "--to", "latest", "--in-place", "--format", "json"
    )
    assert code == 0, out + err
    rows = [json.loads(line) for line in out.splitlines()]
    assert rows[-1]["summary"]["records"]["failed"] == 0
    assert all(row["status"] == "migrated" for row in rows if "line" in row)
    assert [row["line"] for row in rows if "line" in row] == list(range(1, len(rows) - 1))
    code, out, _ = run(capsys, "validate", str(path))
    assert code == 0, out


def test_migrate_refuses_standard_input(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "migrate", "-", "--to", "latest", "--dry-run")
    assert code == 2 and "not standard input" in err


def test_unexpected_errors_are_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import evalreg.engine.registry

    def explode(*args: object, **kwargs: object) -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(evalreg.engine.registry, "load_registry", explode)
    code, _, err = run(capsys, "list")
    assert code == 3
    assert err.strip() == (
        "evalreg: error: internal error: RuntimeError: disk on fire "
        "(set EVALREG_DEBUG=1 for details)"
    )


# -- diff / changelog ----------------------------------------------------------------------------


def test_diff_names_the_moved_source_data(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "diff", "eee.aggregate", "0.1.0", "0.2.0")
    assert code == 0
    assert "/evaluation_results/*/source_data  added (required)  breaks BACKWARD" in out
    assert "/source_data  removed (was required)  breaks BACKWARD, FORWARD" in out
    assert "/model_info/inference_engine" in out
    code, out, _ = run(capsys, "diff", "eee.aggregate", "0.1.0", "0.2.0", "--format", "json")
    document = json.loads(out)
    assert document["compatibility"] == "NONE"


def test_diff_require_sets_the_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, _ = run(capsys, "diff", "eee.aggregate", "0.2.1", "0.2.2", "--require", "FULL")
    assert code == 0
    code, _, _ = run(capsys, "diff", "eee.aggregate", "0.2.0", "0.2.1", "--require", "BACKWARD")
    assert code == 1


def test_diff_of_two_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(json.dumps({"type": "object", "properties": {"a": {"type": "string"}}}))
    new.write_text(
        json.dumps({"type": "object", "properties": {"a": {"type": ["string", "null"]}}})
    )
    code, out, _ = run(capsys, "diff", "--files", str(old), str(new), "--format", "markdown")
    assert code == 0
    assert "`/a`" in out and "type-widened" in out
    code, _, err = run(capsys, "diff", "--files", str(old), str(tmp_path / "missing.json"))
    assert code == 2 and "missing.json: cannot read" in err
    code, _, err = run(capsys, "diff", "eee.aggregate", "0.1.0")
    assert code == 2 and "diff needs FAMILY FROM TO" in err


def test_changelog_lists_every_version_newest_first(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "changelog", "eee.aggregate")
    assert code == 0
    headings = [line for line in out.splitlines() if line.startswith("## ")]
    assert headings[0] == "## eee.aggregate@0.3.0"
    assert headings[-1] == "## eee.aggregate@0.2.0"


def _instance_lines(path: Path, pattern: str) -> Path:
    """Write instance-level 0.2.0 lines: `s` single-turn (no interactions), `m` multi-turn."""
    valid = EXAMPLES / "eee.instance" / "valid"
    lines = {
        "s": iter((valid / "gsm8k_single_turn_samples.jsonl").read_text().splitlines()),
        "m": iter((valid / "mt_bench_multi_turn_samples.jsonl").read_text().splitlines() * 3),
    }
    path.write_text("".join(next(lines[kind]) + "\n" for kind in pattern))
    return path


def test_migrate_counts_a_note_repeated_down_a_jsonl_file_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _instance_lines(tmp_path / "runs.jsonl", "smmsmmmm")
    code, out, err = run(
        capsys, "migrate", str(path), "--to", "0.2.1", "--out", str(tmp_path / "o")
    )
    assert code == 0, out + err
    moved = [line for line in out.splitlines() if "renamed /interactions" in line]
    assert moved == [f"renamed /interactions -> /messages [6 records; first: {path}:2]"]
    assert out.splitlines()[0].startswith(f"{path}: written: 8 migrated, 0 current, 0 failed; ")


def test_migrate_prints_a_single_note_with_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _instance_lines(tmp_path / "runs.jsonl", "sm")
    code, out, _ = run(capsys, "migrate", str(path), "--to", "0.2.1", "--dry-run")
    assert code == 0
    assert f"renamed /interactions -> /messages [1 record; {path}:2]" in out.splitlines()
