"""Which rules run, and at which severity: `Selection`, and `validate --select/--ignore`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from evalreg.cli import main
from evalreg.engine.selection import PathRules, Selection, names_none
from evalreg.engine.validators import Issue

DEMO = Path(__file__).parents[2] / "evalreg" / "examples" / "eee" / "data"
AGGREGATE = "gsm8k/Qwen/Qwen2.5-7B-Instruct/5b0c2e7a-91d4-4f3e-a6b8-2d7c9e1f0a34.json"


def on(selection: Selection, rule: str, severity: Any = "error") -> bool:
    return selection.wants(rule, severity)


def test_every_rule_runs_unless_selected_or_ignored() -> None:
    assert on(Selection(), "eee.layout")
    assert not on(Selection(enabled=False), "eee.layout")
    assert on(Selection(select=("eee.*",)), "eee.layout")
    assert not on(Selection(select=("acme.*",)), "eee.layout")
    assert not on(Selection(ignore=("eee.layout",)), "eee.layout")
    assert on(Selection(ignore=("eee.layout",)), "eee.layouts")  # an id is not a prefix


def test_the_more_specific_of_select_and_ignore_wins_and_ignore_wins_ties() -> None:
    assert on(Selection(select=("eee.layout",), ignore=("eee.*",)), "eee.layout")
    assert not on(Selection(select=("eee.layout",), ignore=("eee.*",)), "eee.companion")
    assert not on(Selection(select=("eee.*",), ignore=("eee.l*",)), "eee.layout")
    assert not on(Selection(select=("eee.*",), ignore=("eee.*",)), "eee.layout")
    assert on(Selection(select=("*",), ignore=("acme.*",)), "eee.layout")


def test_severities_most_specific_first_and_per_path_over_the_run() -> None:
    table = (("eee.layout", "warning"), ("eee.*", "error"))
    assert Selection(severity=table).severity_of("eee.layout", "error") == "warning"
    assert Selection(severity=table).severity_of("eee.model-path", "warning") == "error"
    assert Selection(severity=table).severity_of("acme.x", "warning") == "warning"
    folder = PathRules(lambda p: p.startswith("old/"), severity=(("eee.*", "warning"),))
    selection = Selection(severity=table, paths=(folder,))
    assert selection.at("old/a.json").severity_of("eee.model-path", "warning") == "warning"
    assert selection.at("new/a.json").severity_of("eee.model-path", "warning") == "error"
    # A warning made an error passes --severity error; an error made a warning does not.
    assert on(Selection(minimum="error", severity=table), "eee.model-path", "warning")
    assert not on(Selection(minimum="error", severity=table), "eee.layout", "error")


def test_per_path_ignores_win_over_any_select() -> None:
    folder = PathRules(lambda p: p.startswith("old/"), ignore=("eee.*",))
    selection = Selection(select=("eee.layout",), paths=(folder,))
    assert not on(selection.at("old/a.json"), "eee.layout")
    assert on(selection.at("new/a.json"), "eee.layout")
    assert selection.anywhere("eee.layout", "error")
    assert not Selection(ignore=("eee.*",), paths=(folder,)).anywhere("eee.layout", "error")


def test_judge_keeps_rule_findings_at_their_severity_here() -> None:
    issue = Issue("/x", "bad", "rule", rule="eee.score-bounds")
    schema = Issue("/x", "bad", "type")
    selection = Selection(severity=(("eee.score-bounds", "warning"),))
    judged = selection.judge(issue)
    assert judged is not None and judged.severity == "warning"
    assert Selection(ignore=("eee.*",)).judge(issue) is None
    assert Selection(ignore=("eee.*",)).judge(schema) is schema


def test_entries_name_rules_by_id_prefix_or_star() -> None:
    known = ["eee.layout", "eee.score-bounds"]
    assert not names_none("eee.*", known) and not names_none("*", known)
    assert names_none("eee.layouts", known) and names_none("acme.*", known)


# -- the command line --------------------------------------------------------------------------


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as done:
        main(list(args))
    out, err = capsys.readouterr()
    return int(done.value.code or 0), out, err


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """The bundled datastore with a score out of bounds and a model folder of another id."""
    root = tmp_path / "data"
    shutil.copytree(DEMO, root)
    path = root / AGGREGATE
    record = json.loads(path.read_text())
    record["evaluation_results"][0]["score_details"]["score"] = 1.5
    record["model_info"]["id"] = "Qwen/Qwen2.5-72B"
    path.write_text(json.dumps(record))
    samples = path.with_name(path.stem + "_samples.jsonl")
    rows = [json.loads(x) for x in samples.read_text().splitlines()]
    samples.write_text(
        "".join(json.dumps(r | {"model_id": "Qwen/Qwen2.5-72B"}) + "\n" for r in rows)
    )
    return root


def rules_found(out: str) -> list[str]:
    return sorted(
        line.rsplit("[", 1)[1].rstrip("]") for line in out.splitlines() if "[eee." in line
    )


def test_select_and_ignore_choose_the_rules(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "validate", str(store))
    assert code == 1 and rules_found(out) == ["eee.model-path", "eee.score-bounds"]
    code, out, _ = run(capsys, "validate", "--ignore", "eee.score-bounds", str(store))
    assert code == 0 and rules_found(out) == ["eee.model-path"]
    code, _, err = run(capsys, "validate", "--ignore", "eee.model-path,x.*", str(store))
    assert code == 2 and "--ignore x.*: names no rule" in err
    code, out, _ = run(capsys, "validate", "--select", "eee.*", "--ignore", "eee.m*", str(store))
    assert code == 1 and rules_found(out) == ["eee.score-bounds"]
    code, out, _ = run(capsys, "validate", "--rule", "eee.model-path", str(store))
    assert code == 0 and rules_found(out) == ["eee.model-path"]


def test_a_rule_that_does_not_exist_is_a_one_line_usage_error(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "validate", "--select", "eee.score-bound", str(store))
    assert code == 2 and out == ""
    (line,) = err.splitlines()
    assert line.startswith("evalreg: error: --select eee.score-bound: names no rule (known: ")
    assert "eee.score-bounds" in line
