"""Detect and validate runs as results: their checks counted once, in the library, as they pass."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evalreg import Registry
from evalreg.batch.baseline import Baseline, BaselineWriter
from evalreg.batch.check import RecordCheck, RuleFinding, check_paths, validate_paths
from evalreg.batch.inventory import take_inventory
from evalreg.batch.runs import CheckRun, detect_run, validate_run
from evalreg.batch.summary import ProblemGroups, Summary
from evalreg.cli import main
from evalreg.engine.validators import Issue
from tests.conftest import EXAMPLES

INVALID = EXAMPLES / "eee.aggregate" / "invalid"
VALID = EXAMPLES / "eee.aggregate" / "valid"
INSTANCE = next((EXAMPLES / "eee.instance" / "valid").glob("*.jsonl"))


@pytest.fixture
def mixed(tmp_path: Path) -> Path:
    """A folder of valid and invalid aggregates, an instance file with a bad line, a bad file."""
    folder = tmp_path / "data"
    folder.mkdir()
    for source in [*sorted(VALID.glob("*.json"))[:3], *sorted(INVALID.glob("*[!t].json"))[:3]]:
        shutil.copy(source, folder / source.name)
    lines = INSTANCE.read_text().splitlines()
    (folder / "samples.jsonl").write_text("\n".join([*lines, "{not json", *lines]) + "\n")
    (folder / "broken.json").write_text("{")
    return folder


def test_a_validate_run_counts_what_validate_paths_yields(registry: Registry, mixed: Path) -> None:
    by_hand = Summary()
    by_hand.extend(validate_paths(registry, [mixed]))
    run = validate_run(registry, [mixed])
    assert isinstance(run, CheckRun) and run.summary.files == 0  # nothing read before iterating
    checks = list(run)
    assert run.summary.as_dict() == by_hand.as_dict()
    assert run.summary.invalid >= 3 and run.summary.unreadable == 2 and not run.summary.ok
    assert len(checks) == len(list(validate_paths(registry, [mixed])))


def test_a_detect_run_counts_what_check_paths_yields(registry: Registry, mixed: Path) -> None:
    run = detect_run(registry, [mixed])
    checks = list(run)
    assert all(isinstance(check, RecordCheck) for check in checks)
    by_hand = Summary()
    by_hand.extend(check_paths(registry, [mixed], validate=False))
    assert run.summary.as_dict() == by_hand.as_dict()
    assert run.summary.valid == len([c for c in checks if c.status == "detected"]) > 0


def test_a_baseline_leaves_its_findings_out_of_the_count(
    registry: Registry, mixed: Path, tmp_path: Path
) -> None:
    writer = BaselineWriter(str(tmp_path / "baseline.json"))
    for check in validate_paths(registry, [mixed]):
        writer.add(check)
    writer.write()
    run = validate_run(registry, [mixed], baseline=Baseline.load(str(tmp_path / "baseline.json")))
    checks = list(run)
    assert run.summary.ok and run.summary.invalid == 0 and run.summary.known > 0
    assert not [c for c in checks if isinstance(c, RecordCheck) and c.issues]


def test_the_command_prints_the_summary_the_run_computed(
    registry: Registry, mixed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = validate_run(registry, [mixed])
    list(run)
    with pytest.raises(SystemExit) as info:
        main(["validate", str(mixed), "--format", "json"])
    assert info.value.code == 1
    last = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert last == {"summary": run.summary.as_dict()}


def _check(path: str, line: int | None, *issues: Issue) -> RecordCheck:
    return RecordCheck(path, line, "invalid", issues=issues)


def test_problem_groups_count_problems_alike_file_by_file() -> None:
    groups = ProblemGroups()
    one = Issue("/scores/0/value", "too large", "maximum")
    two = Issue("/scores/7/value", "too large", "maximum")
    other = Issue("/name", "too short", "minLength")
    assert groups.add(_check("a.jsonl", 1, one, two, other)) == []
    assert groups.add(_check("a.jsonl", 2, one)) == []
    unreadable = RecordCheck("a.jsonl", 3, "unreadable", error="bad")
    assert groups.add(unreadable) == []
    done = groups.add(_check("b.json", None, other))  # another file: a.jsonl's groups
    assert [(g.pattern, g.count, g.records) for g in done] == [
        ("/scores/*/value", 3, 2),
        ("/name", 1, 1),
        ("", 1, 1),
    ]
    assert done[0].issue is one and done[0].check.line == 1  # the first of them
    assert done[2].issue is None and done[2].check is unreadable
    (last,) = groups.flush()
    assert (last.check.path, last.pattern, last.count) == ("b.json", "/name", 1)
    assert groups.flush() == []


def test_problem_groups_tell_severities_and_rules_apart() -> None:
    groups = ProblemGroups()
    error = Issue("/a/1", "odd", "rule", rule="x.odd")
    warning = Issue("/a/2", "odd", "rule", severity="warning", rule="x.odd")
    finding = RuleFinding("c.json", None, Issue("/a/3", "odd", "rule", rule="y.odd"))
    groups.add(_check("c.json", None, error, warning))
    groups.add(finding)
    assert [(g.issue.severity, g.issue.rule) for g in groups.flush() if g.issue] == [
        ("error", "x.odd"),
        ("warning", "x.odd"),
        ("error", "y.odd"),
    ]


def test_the_inventory_summary_counts_what_is_behind_the_latest(
    registry: Registry, mixed: Path
) -> None:
    inventory = take_inventory(check_paths(registry, [mixed], validate=False))
    rows = inventory.rows(registry)
    summary = inventory.summary(rows)
    behind = [row for row in rows if row.state == "behind"]
    assert summary["behind_latest"] == sum(row.records for row in behind)
    assert summary.items() >= inventory.as_dict().items()
    assert summary["behind_latest_files"] <= summary["files"]
