"""AgentV's eval-file history: each era detected by structure, migrated up to the latest era and
back to v2 where nothing is lost, under the loss policy; targets and config files as families."""

from __future__ import annotations

import copy
import hashlib
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from evalreg import Registry
from evalreg.batch.check import check_paths
from evalreg.cli import main
from evalreg.publish.check import check_registry

ERAS = Path(__file__).parent / "agentv_eras"
SEED = Path(__file__).parent.parent / "schemas" / "agentv.eval" / "2.schema.json"
FAMILY = "agentv.eval"
LATEST = "4"

FILES = {
    "era1-greetings.test.yaml": "1",
    "era2-unit-conversion.eval.yaml": "2",
    "era2.1-support-triage.eval.yaml": "2.1",
    "era3-code-review.eval.yaml": "3",
    "era3.1-export-screening.eval.yaml": "3.1",
    "era4-translation.eval.yaml": "4",
}
OTHERS = {
    "targets.yaml": ("agentv.targets", "2.2"),
    "legacy.targets.yaml": ("agentv.targets", "2.1"),
    "config.yaml": ("agentv.config", "2"),
}


def _load(name: str) -> dict[str, Any]:
    record = yaml.safe_load((ERAS / name).read_text(encoding="utf-8"))
    assert isinstance(record, dict)
    return record


def _cases(record: dict[str, Any], version: str) -> list[tuple[Any, ...]]:
    """Return (id, expected outcome, input turns, expected reply) of every case, era-neutral."""

    def turns(value: Any, role: str) -> Any:
        return [{"role": role, "content": value}] if isinstance(value, (str, dict)) else value

    found: list[tuple[Any, ...]] = []
    if version == "1":
        for case in record["testcases"]:
            *inputs, expected = case["messages"]
            found.append((case["id"], case["outcome"], inputs, [expected]))
    elif version in ("2", "2.1"):
        for case in record["evalcases"]:
            outcome = case.get("expected_outcome", case.get("outcome"))
            expected = case.get("expected_messages")
            found.append((case["id"], outcome, case["input_messages"], expected))
    else:
        key = next(k for k in ("tests", "cases", "eval_cases") if k in record)
        for test in record[key]:
            given = test["vars"]["input"] if version == "4" else test["input"]
            expected = test.get("expected_output")
            found.append(
                (
                    test["id"],
                    test["criteria"],
                    turns(given, "user"),
                    None if expected is None else turns(expected, "assistant"),
                )
            )
    return found


def test_the_seed_v2_schema_is_kept_byte_for_byte() -> None:
    digest = hashlib.sha256(SEED.read_bytes()).hexdigest()
    assert digest == "7b53d8139467e5387bd13719c75d6d97e23d0fb80ad90fd0a831fce12903c707"


# -- detection -------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "era"), FILES.items())
def test_each_era_is_detected_by_structure_alone(registry: Registry, name: str, era: str) -> None:
    record = _load(name)
    assert "$schema" not in record
    for filename in (name, None):  # with and without the file-name hint
        detection = registry.detect(record, filename)
        assert (detection.status, detection.family, detection.version) == ("detected", FAMILY, era)
        assert any(e.detail.startswith(f"era {era}: ") for e in detection.evidence)


@pytest.mark.parametrize(("name", "era"), FILES.items())
def test_each_era_file_is_valid_at_its_era(registry: Registry, name: str, era: str) -> None:
    assert registry.validate(_load(name), FAMILY, era) == []


def test_the_evidence_names_what_the_file_shows(registry: Registry) -> None:
    detection = registry.detect(_load("era2.1-support-triage.eval.yaml"))
    era = detection.evidence[-1].detail
    assert era.startswith(
        "era 2.1: /evalcases, /execution, /dataset, /evalcases/0/expected_outcome"
    )


def test_a_mixture_of_eras_is_unknown_with_the_closest_eras(registry: Registry) -> None:
    record = {
        "tests": [
            {"id": "t", "criteria": "c", "vars": {"input": "x"}, "assertions": [{"type": "x"}]}
        ]
    }
    detection = registry.detect(record, "mixed.eval.yaml")
    assert detection.status == "unknown"
    assert {(c.family, c.version) for c in detection.candidates} == {(FAMILY, "3.1"), (FAMILY, "4")}
    [reason] = detection.reasons
    assert "agentv.eval structure, but no era of it fits" in reason
    assert "3.1 (differs: has /tests/0/vars)" in reason
    assert "4 (differs: has /tests/0/assertions)" in reason


def test_one_closest_era_is_named_with_what_differs(registry: Registry) -> None:
    record = {"tests": [{"id": "b", "assertions": []}], "prompts": ["x"], "providers": ["p"]}
    detection = registry.detect(record)
    assert detection.status == "unknown"
    assert "closest era 4 differs: has /tests/0/assertions" in detection.summary()


def test_a_file_with_no_case_list_names_the_closest_family(registry: Registry) -> None:
    detection = registry.detect({"description": "d", "testcase": []}, "x.eval.yaml")
    assert detection.status == "unknown"
    assert "closest family agentv.eval differs: none of /testcases, /evalcases" in (
        detection.summary()
    )


def test_the_schema_label_is_taken_at_its_word(registry: Registry) -> None:
    for label, era in (("agentv-eval-v2", "2"), ("agentevo-eval-v2", "2"), ("agentv-eval-v3", "3")):
        detection = registry.detect({"$schema": label, "tests": []})
        assert (detection.family, detection.version) == (FAMILY, era)


def test_an_early_v2_file_stating_version_2_0(registry: Registry) -> None:
    record = {"version": "2.0", **_load("era2-unit-conversion.eval.yaml")}
    assert registry.detect(record).version == "2"
    # The v2 schema did not list `version`; the migration drops the old format marker.
    assert [i.pointer for i in registry.validate(record, FAMILY, "2")] == [""]
    result = registry.migrate(record, "2.1")
    assert result.ok and "version" not in result.record and not result.notes
    lost = registry.migrate({**record, "version": "1.4"}, "2.1")
    assert not lost.ok and "/version" in (lost.error or "")


def test_a_directory_of_every_era_and_other_agentv_files(registry: Registry) -> None:
    checks = {Path(c.path).name: c for c in check_paths(registry, [ERAS])}
    assert set(checks) == set(FILES) | set(OTHERS)
    for name, check in checks.items():
        assert check.status == "valid", (name, check.detection, check.issues)
        expected = (FAMILY, FILES[name]) if name in FILES else OTHERS[name]
        assert (check.family, check.version) == expected


def test_targets_and_config_files_are_recognised(registry: Registry) -> None:
    targets = {"targets": [{"name": "default", "provider": "mock"}]}
    for label in ("2", "2.1", "2.2"):
        found = registry.detect({"$schema": f"agentv-targets-v{label}", **targets})
        assert (found.family, found.version) == ("agentv.targets", label)
    found = registry.detect(targets, ".agentv/targets.yaml")
    assert (found.family, found.version) == ("agentv.targets", "2.2")
    assert found.evidence[-1].detail == "era 2.2: none of /$schema"
    found = registry.detect({"guideline_patterns": ["*.md"]}, ".agentv/config.yaml")
    assert (found.family, found.version) == ("agentv.config", "2")
    for family in ("agentv.targets", "agentv.config"):
        for version in registry.versions(family):
            assert "Deliberately permissive" in registry.schema(family, version)["description"]


def test_detect_prints_one_line_per_file_with_era_and_evidence(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as info:
        main(["detect", str(ERAS)])
    out, err = capsys.readouterr()
    assert info.value.code == 0
    lines = {Path(line.split(": ", 1)[0]).name: line for line in out.splitlines()}
    assert set(lines) == set(FILES) | set(OTHERS)
    for name, era in FILES.items():
        assert f": agentv.eval@{era} (" in lines[name]
        assert f"structure: era {era}: " in lines[name]
    assert "9 files, 9 records: 9 detected, 0 undecided" in err


# -- migration -------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "era"), FILES.items())
def test_every_era_migrates_to_the_latest_and_keeps_ids_prompts_and_expected_outputs(
    registry: Registry, name: str, era: str
) -> None:
    record = _load(name)
    before = copy.deepcopy(record)
    result = registry.migrate(record, "latest", validate="each")
    assert result.ok, result.error
    assert record == before  # the input is not mutated
    assert (result.source, result.target) == (era, LATEST)
    assert registry.validate(result.record, FAMILY, LATEST) == []
    assert registry.detect(result.record).version == LATEST
    assert _cases(result.record, LATEST) == _cases(record, era)


@pytest.mark.parametrize("name", ["era1-greetings.test.yaml", "era2-unit-conversion.eval.yaml"])
def test_back_from_the_latest_era_to_v2_without_loss(registry: Registry, name: str) -> None:
    record = _load(name)
    era = FILES[name]
    latest = registry.migrate(record, "latest").record
    back = registry.migrate(latest, "2", family=FAMILY)
    assert back.ok, back.error
    assert back.steps == ("4 -> 3.1", "3.1 -> 3", "3 -> 2.1", "2.1 -> 2")
    assert not [n for n in back.notes if n.kind == "lost"]
    assert registry.validate(back.record, FAMILY, "2") == []
    assert _cases(back.record, "2") == _cases(record, era)
    if era == "2":
        assert back.record == record


def test_the_v2_examples_go_to_every_era_and_come_back_unchanged(registry: Registry) -> None:
    examples = Path(__file__).parent / "examples" / FAMILY / "valid"
    for path in (examples / "code-review.eval.yaml", examples / "sql-helper.eval.yml"):
        record = yaml.safe_load(path.read_text())
        for target in ("2.1", "3", "3.1", "4"):
            there = registry.migrate(record, target, family=FAMILY)
            assert there.ok, there.error
            back = registry.migrate(there.record, "2", family=FAMILY)
            assert back.ok and back.record == record, (path.name, target, back.error)


@pytest.mark.parametrize(
    ("name", "lost"),
    [
        ("era2.1-support-triage.eval.yaml", "/dataset"),
        ("era3-code-review.eval.yaml", "/name"),
        ("era3.1-export-screening.eval.yaml", "/input"),
        ("era4-translation.eval.yaml", "/prompts"),
    ],
)
def test_going_down_to_v2_loses_values_only_when_allowed(
    registry: Registry, name: str, lost: str
) -> None:
    record = _load(name)
    if name.startswith("era2.1"):  # give the outcome-only case a reply (see the next test)
        reply = [{"role": "assistant", "content": "See status.example.com."}]
        record["evalcases"][1]["expected_messages"] = reply
    refused = registry.migrate(record, "2", family=FAMILY)
    assert refused.status == "failed"
    assert (refused.error or "").startswith(f"{lost}: ")
    assert "--allow-loss" in (refused.error or "")
    allowed = registry.migrate(record, "2", family=FAMILY, allow_loss=True)
    assert allowed.ok, allowed.error
    assert any(n.kind == "lost" and n.pointer == lost for n in allowed.notes)
    ids = [case[0] for case in _cases(record, FILES[name])]
    assert [case[0] for case in _cases(allowed.record, "2")] == ids


def test_an_outcome_only_case_has_no_v2_form(registry: Registry) -> None:
    result = registry.migrate(_load("era2.1-support-triage.eval.yaml"), "2", allow_loss=True)
    assert not result.ok and result.failed_step == "2.1 -> 2"
    assert "/evalcases/1: the case has no expected_messages" in (result.error or "")


@pytest.mark.parametrize("allow_loss", [False, True])
def test_a_case_with_no_expected_turn_is_refused_going_down_to_v2(
    registry: Registry, allow_loss: bool
) -> None:
    # The smallest record `evalreg check` found: valid at 2.1, whose only turn is a tool turn.
    record = {
        "evalcases": [
            {"expected_outcome": "", "id": "", "input_messages": [{"content": "", "role": "tool"}]}
        ]
    }
    assert registry.validate(record, FAMILY, "2.1") == []
    result = registry.migrate(record, "2", family=FAMILY, allow_loss=allow_loss)
    assert result.status == "failed" and result.failed_step == "2.1 -> 2"
    assert (result.error or "").startswith("MigrationError: agentv.eval 2.1 -> 2: /evalcases/0: ")
    assert "which v2 requires" in (result.error or "")


def test_schema_label_is_relabelled_along_the_way_and_never_added(registry: Registry) -> None:
    record = _load("era2-unit-conversion.eval.yaml")
    labelled = {"$schema": "agentv-eval-v2", **record}
    up = registry.migrate(labelled, "latest")
    assert up.record["$schema"] == "agentv-eval-v4"
    assert registry.migrate(up.record, "2", family=FAMILY).record == labelled
    assert "$schema" not in registry.migrate(record, "latest").record
    old_name = registry.migrate({**record, "$schema": "agentevo-eval-v2"}, "2.1")
    assert old_name.record["$schema"] == "agentv-eval-v2.1"


# -- what each step does with values the next era renamed or cannot hold ---------------------


def test_era1_grader_llm_judge_becomes_an_evaluator_of_every_case(registry: Registry) -> None:
    result = registry.migrate(_load("era1-greetings.test.yaml"), "2")
    assert result.ok
    assert "grader" not in result.record
    for case in result.record["evalcases"]:
        assert case["execution"]["evaluators"] == [{"name": "llm_judge", "type": "llm_judge"}]
    assert [(n.kind, n.pointer) for n in result.notes] == [("moved", "/grader")]


def test_era1_heuristic_grader_is_lost_only_when_allowed(registry: Registry) -> None:
    record = {**_load("era1-greetings.test.yaml"), "grader": "heuristic"}
    refused = registry.migrate(record, "2")
    assert not refused.ok and (refused.error or "").startswith("/grader: ")
    allowed = registry.migrate(record, "2", allow_loss=True)
    assert allowed.ok and [n.kind for n in allowed.notes] == ["lost"]
    assert all("execution" not in case for case in allowed.record["evalcases"])


def test_era1_case_must_end_with_the_expected_turn(registry: Registry) -> None:
    record = _load("era1-greetings.test.yaml")
    record["testcases"][0]["messages"].reverse()
    result = registry.migrate(record, "2")
    assert not result.ok
    assert "/testcases/0/messages: the last turn is not an assistant turn" in (result.error or "")


def test_renamed_evaluator_types_and_fields(registry: Registry) -> None:
    record: dict[str, Any] = {
        "evalcases": [
            {
                "id": "a",
                "expected_outcome": "o",
                "input_messages": [{"role": "user", "content": "q"}],
                "expected_messages": [{"role": "assistant", "content": "a"}],
                "execution": {
                    "evaluators": [
                        {"name": "c", "type": "code", "script": "./check.py"},
                        {"name": "r", "type": "rubric", "rubrics": ["polite"], "weight": 2},
                        {
                            "name": "g",
                            "type": "composite",
                            "evaluators": [{"name": "j", "type": "llm_judge", "prompt": "p"}],
                        },
                    ]
                },
            }
        ]
    }
    era3 = registry.migrate(record, "3", family=FAMILY)
    assert era3.ok, era3.error
    checks = era3.record["tests"][0]["assert"]
    assert checks[0]["type"] == "code_judge"
    assert checks[1] == {"name": "r", "type": "rubrics", "criteria": ["polite"], "weight": 2}
    assert checks[2]["assert"] == [{"name": "j", "type": "llm_judge", "prompt": "p"}]
    era31 = registry.migrate(record, "3.1", family=FAMILY)
    assert era31.record["tests"][0]["assertions"][2]["assertions"][0]["name"] == "j"
    era4 = registry.migrate(record, "4", family=FAMILY)
    assert era4.record["tests"][0]["assert"][2]["assert"][0]["name"] == "j"
    down = registry.migrate(era4.record, "2.1", family=FAMILY)
    # 2.1 knows both `code` and `code_judge`: the new name stays until v2, which has only `code`.
    expected = copy.deepcopy(record)
    expected["evalcases"][0]["execution"]["evaluators"][0]["type"] = "code_judge"
    assert down.ok and down.record == expected
    v2 = registry.migrate(era4.record, "2", family=FAMILY, allow_loss=True)
    evaluators = v2.record["evalcases"][0]["execution"]["evaluators"]
    assert [e["type"] for e in evaluators] == ["code"]  # rubric and composite are not v2 types
    assert {n.pointer for n in v2.notes if n.kind == "lost"} >= {
        "/evalcases/0/execution/evaluators/1",
        "/evalcases/0/execution/evaluators/2",
    }


def test_values_with_no_field_are_kept_in_metadata_and_restored(registry: Registry) -> None:
    record = _load("era2.1-support-triage.eval.yaml")
    result = registry.migrate(record, "3")
    assert result.record["metadata"] == {"dataset": "support-tickets-2025-12"}
    assert result.record["tests"][1]["metadata"] == {
        "note": "Outcome-only case; there is no reference reply."
    }
    assert {(n.kind, n.pointer) for n in result.notes} == {
        ("kept", "/metadata/dataset"),
        ("kept", "/tests/1/metadata/note"),
    }
    back = registry.migrate(result.record, "2.1", family=FAMILY)
    assert back.ok
    assert back.record["dataset"] == record["dataset"]
    assert back.record["evalcases"][1]["note"] == record["evalcases"][1]["note"]


def test_suite_input_is_kept_in_default_test_and_restored(registry: Registry) -> None:
    record = _load("era3.1-export-screening.eval.yaml")
    result = registry.migrate(record, "4")
    assert result.record["default_test"]["metadata"]["input"] == record["input"]
    assert result.record["default_test"]["assert"] == record["assertions"]
    assert result.record["prompts"] == ["{{ input }}"]
    assert result.record["tests"][0]["vars"] == {
        "input": record["tests"][0]["input"],
        "input_files": record["tests"][0]["input_files"],
    }
    assert [(n.kind, n.pointer) for n in result.notes] == [("kept", "/default_test/metadata/input")]
    assert registry.migrate(result.record, "3.1", family=FAMILY).record == record


def test_targets_become_providers_and_back(registry: Registry) -> None:
    record = _load("era3-code-review.eval.yaml")
    record["execution"] = {"targets": ["default", "azure"], "trials": 3}
    result = registry.migrate(record, "4")
    assert result.record["providers"] == ["default", "azure"]
    assert result.record["execution"] == {"trials": 3}
    down = registry.migrate(result.record, "3.1", family=FAMILY)
    assert down.record["execution"] == {"targets": ["default", "azure"], "trials": 3}
    assert "target" not in down.record  # the two places cannot be told apart again


EMPTY_TARGET: dict[str, Any] = {
    # The smallest record `evalreg check` found: valid at 3.1, with an empty target.
    "$schema": "agentv-eval-v3.1",
    "assertions": [],
    "target": "",
    "tests": [{"criteria": "", "id": "", "input": [{"content": "", "role": "tool"}]}],
    "workspace": {},
}


def test_an_empty_target_names_no_provider_and_is_lost_only_when_allowed(
    registry: Registry,
) -> None:
    assert registry.validate(EMPTY_TARGET, FAMILY, "3.1") == []
    refused = registry.migrate(EMPTY_TARGET, "4", family=FAMILY)
    assert refused.status == "failed" and refused.failed_step == "3.1 -> 4"
    assert (refused.error or "").startswith("/target: an empty target names no provider")
    allowed = registry.migrate(EMPTY_TARGET, "4", family=FAMILY, allow_loss=True)
    assert allowed.ok, allowed.error
    assert "providers" not in allowed.record and "target" not in allowed.record
    assert [(n.kind, n.pointer) for n in allowed.notes] == [("lost", "/target")]
    assert registry.validate(allowed.record, FAMILY, "4") == []


@pytest.mark.parametrize(
    ("execution", "lost", "providers"),
    [
        ({"target": ""}, ["/execution/target"], None),
        (
            {"targets": ["", "azure", ""], "trials": 2},
            ["/execution/targets/0", "/execution/targets/2"],
            ["azure"],
        ),
    ],
)
def test_an_empty_execution_target_is_lost_and_the_others_stay(
    registry: Registry, execution: dict[str, Any], lost: list[str], providers: list[str] | None
) -> None:
    record = {**{k: v for k, v in EMPTY_TARGET.items() if k != "target"}, "execution": execution}
    assert not registry.migrate(record, "4", family=FAMILY).ok
    result = registry.migrate(record, "4", family=FAMILY, allow_loss=True)
    assert result.ok, result.error
    assert [n.pointer for n in result.notes if n.kind == "lost"] == lost
    assert result.record.get("providers") == providers
    assert result.record.get("execution") == ({"trials": 2} if "trials" in execution else None)


def test_an_execution_target_that_is_no_name_is_lost_going_down_to_3_1(
    registry: Registry,
) -> None:
    record = {
        "tests": [
            {
                "id": "t1",
                "criteria": "greets",
                "vars": {"input": "hi"},
                "execution": {"target": None},
            },
        ],
        "prompts": ["{{ input }}"],
    }
    assert registry.validate(record, FAMILY, "4") == []
    refused = registry.migrate(record, "3.1", family=FAMILY)
    assert refused.status == "failed" and refused.failed_step == "4 -> 3.1"
    assert "/tests/0/execution/target" in (refused.error or "")
    allowed = registry.migrate(record, "3.1", family=FAMILY, allow_loss=True)
    assert allowed.ok, allowed.error
    assert [(n.kind, n.pointer) for n in allowed.notes if n.kind == "lost"] == [
        ("lost", "/tests/0/execution/target")
    ]
    assert registry.validate(allowed.record, FAMILY, "3.1") == []


def test_a_record_at_the_latest_era_is_left_as_it_is(registry: Registry) -> None:
    record = _load("era4-translation.eval.yaml")
    result = registry.migrate(record, "latest")
    assert result.status == "current" and result.record is record


def test_migrate_in_place_keeps_comments_and_detects_the_latest_era(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], registry: Registry
) -> None:
    evals = tmp_path / "evals"
    evals.mkdir()
    for name in FILES:
        shutil.copy(ERAS / name, evals / name)
    with pytest.raises(SystemExit) as info:
        main(["migrate", str(evals), "--to", "latest", "--in-place"])
    out, _ = capsys.readouterr()
    assert info.value.code == 0, out
    assert "kept /tests/1/metadata/note" in out
    for name, era in FILES.items():
        text = (evals / name).read_text(encoding="utf-8")
        record = yaml.safe_load(text)
        assert registry.detect(record).version == LATEST
        assert _cases(record, LATEST) == _cases(_load(name), era)
        assert text.splitlines()[0] == (ERAS / name).read_text().splitlines()[0]  # header comment
    era1 = (evals / "era1-greetings.test.yaml").read_text()
    assert "  # The simplest case: one user turn.\n  - id: greets-back\n" in era1
    assert "# what a pass looks like" in era1


@pytest.mark.parametrize(("name", "era"), FILES.items())
def test_a_chain_equals_its_steps_applied_one_by_one(
    registry: Registry, name: str, era: str
) -> None:
    record = _load(name)
    versions = registry.versions(FAMILY)
    hop = record
    for version in versions[versions.index(era) + 1 :]:
        result = registry.migrate(hop, version, family=FAMILY, validate="none")
        assert result.ok, result.error
        hop = result.record
    assert registry.migrate(record, "latest").record == hop
    assert registry.migrate(hop, "latest").status == "current"


# -- targets files ---------------------------------------------------------------------------

TARGETS = "agentv.targets"


def test_targets_labels_are_relabelled_up_and_back_and_nothing_else_changes(
    registry: Registry,
) -> None:
    record = _load("legacy.targets.yaml")
    for label, other in (("2", "2.2"), ("2.1", "2.2"), ("2.2", "2")):
        labelled = {**record, "$schema": f"agentv-targets-v{label}"}
        result = registry.migrate(labelled, other, family=TARGETS)
        assert result.ok and not result.notes, result.error
        assert result.record == {**record, "$schema": f"agentv-targets-v{other}"}
        back = registry.migrate(result.record, label, family=TARGETS)
        assert back.ok and back.record == labelled


@pytest.mark.parametrize(("source", "target"), [("2", "2.1"), ("2.1", "2.2")])
def test_a_targets_file_without_a_label_stays_without(
    registry: Registry, source: str, target: str
) -> None:
    from evalreg import StepContext

    record = {"targets": [{"name": "default", "provider": "mock", "model": "m"}]}
    (up,) = registry.plan(TARGETS, source, target)
    (down,) = registry.plan(TARGETS, target, source)
    assert up.function(record, StepContext()) == record
    assert down.function(record, StepContext()) == record


def test_the_targets_history_checks_out(registry: Registry) -> None:
    report = check_registry(registry, [TARGETS], examples=10)
    assert report.ok, [str(f) for f in report.errors]
    assert report.steps == 4  # two relabelling steps, each with its lossless downgrade
