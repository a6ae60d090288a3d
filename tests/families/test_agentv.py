"""AgentV's eval-file history: each era detected by structure, migrated up to the latest era and
back to v2 where nothing is lost, under the loss policy; targets and config files as families."""

from __future__ import annotations

import copy
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from evalreg import Registry
from evalreg.batch.check import check_paths
from evalreg.cli import main
from evalreg.publish.check import check_registry

ERAS = Path(__file__).parents[1] / "agentv_eras"
SEED = Path(__file__).parents[2] / "schemas" / "agentv.eval" / "2.schema.json"
FAMILY = "agentv.eval"
LATEST = "5"

FILES = {
    "era1-greetings.test.yaml": "1",
    "era2-unit-conversion.eval.yaml": "2",
    "era2.1-support-triage.eval.yaml": "2.1",
    "era3-code-review.eval.yaml": "3",
    "era3.1-export-screening.eval.yaml": "3.1",
    "era4-translation.eval.yaml": "4",
    "era5-summaries.eval.yaml": "5",
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
            given = test["vars"]["input"] if version in ("4", "5") else test["input"]
            if version == "5":
                expected = test["vars"].get("expected_output")
            else:
                expected = test.get("expected_output")
            found.append(
                (
                    test["id"],
                    test.get("criteria"),
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
    # Checks under `assert` (never in 3.1) beside a conversation test (`turns`, never in 3),
    # and an id that is no string, so that no era's schema takes the file either.
    record = {"tests": [{"id": 5, "input": "hi", "assert": [], "turns": []}]}
    detection = registry.detect(record, "mixed.eval.yaml")
    assert detection.status == "unknown"
    assert {(c.family, c.version) for c in detection.candidates} == {(FAMILY, "3"), (FAMILY, "3.1")}
    [reason] = detection.reasons
    assert "agentv.eval structure, but no era of it fits" in reason
    assert "3 (differs: has /tests/0/turns)" in reason
    assert "3.1 (differs: has /tests/0/assert)" in reason


def test_one_closest_era_is_named_with_what_differs(registry: Registry) -> None:
    record = {"cases": [{"id": "b"}], "prompts": ["x"], "providers": ["p"]}
    detection = registry.detect(record)
    assert detection.status == "unknown"
    assert "closest era 5 differs: has /cases" in detection.summary()


def test_a_file_with_no_case_list_names_the_closest_family(registry: Registry) -> None:
    detection = registry.detect({"description": "d", "testcase": []}, "x.eval.yaml")
    assert detection.status == "unknown"
    assert "closest family agentv.eval differs: none of /testcases, /evalcases" in (
        detection.summary()
    )


def test_the_schema_label_is_taken_at_its_word(registry: Registry) -> None:
    for label, era, key in (
        ("agentv-eval-v2", "2", "evalcases"),
        ("agentevo-eval-v2", "2", "evalcases"),
        ("agentv-eval-v3", "3", "tests"),
    ):
        detection = registry.detect({"$schema": label, key: []})
        assert (detection.family, detection.version) == (FAMILY, era)


def test_a_stale_label_gives_way_to_the_structure(registry: Registry) -> None:
    # AgentV files kept `$schema: agentv-eval-v2` long after the format moved on.
    record = {"$schema": "agentv-eval-v2", **_load("era3-code-review.eval.yaml")}
    detection = registry.detect(record)
    assert (detection.family, detection.version) == (FAMILY, "3")
    assert str(detection.evidence[0]) == "marker: /$schema = 'agentv-eval-v2'"
    assert "the label's era 2 differs" in detection.evidence[-1].detail
    assert registry.validate(record, FAMILY, "3") == []


def test_an_early_v2_file_stating_version_2_0(registry: Registry) -> None:
    record = {"version": "2.0", **_load("era2-unit-conversion.eval.yaml")}
    assert registry.detect(record).version == "2"
    # The v2 schema did not list `version`; the migration drops the old format marker.
    assert [i.pointer for i in registry.validate(record, FAMILY, "2")] == [""]
    result = registry.migrate(record, "2.1")
    assert result.ok and "version" not in result.record
    assert [(n.kind, n.pointer) for n in result.notes] == [
        ("dropped", "/version"),
        ("renamed", "/evalcases/0/expected_outcome"),
        ("renamed", "/evalcases/1/expected_outcome"),
    ]
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
    assert "10 files, 10 records: 10 detected, 0 undecided" in err


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
    assert back.steps == ("5 -> 4", "4 -> 3.1", "3.1 -> 3", "3 -> 2.1", "2.1 -> 2")
    assert not [n for n in back.notes if n.kind == "lost"]
    assert registry.validate(back.record, FAMILY, "2") == []
    assert _cases(back.record, "2") == _cases(record, era)
    if era == "2":
        assert back.record == record


def test_the_v2_examples_go_to_every_era_and_come_back_unchanged(registry: Registry) -> None:
    examples = Path(__file__).parents[1] / "examples" / FAMILY / "valid"
    for path in (examples / "code-review.eval.yaml", examples / "sql-helper.eval.yml"):
        record = yaml.safe_load(path.read_text())
        for target in ("2.1", "3", "3.1", "4", "5"):
            there = registry.migrate(record, target, family=FAMILY)
            assert there.ok, there.error
            back = registry.migrate(there.record, "2", family=FAMILY)
            assert back.ok and back.record == record, (path.name, target, back.error)


@pytest.mark.parametrize(
    ("name", "lost"),
    [
        ("era2.1-support-triage.eval.yaml", "/dataset"),
        ("era3-code-review.eval.yaml", "/name"),
        ("era3.1-export-screening.eval.yaml", "/name"),
        ("era4-translation.eval.yaml", "/prompts"),
        ("era5-summaries.eval.yaml", "/prompts"),
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


def test_the_schema_label_is_the_one_agentv_writes_in_every_era_and_never_added(
    registry: Registry,
) -> None:
    # AgentV's files and validator know one eval label, agentv-eval-v2, in every era since 2.
    record = _load("era2-unit-conversion.eval.yaml")
    labelled = {"$schema": "agentv-eval-v2", **record}
    up = registry.migrate(labelled, "latest")
    assert up.ok and up.record["$schema"] == "agentv-eval-v2"
    assert registry.detect(up.record).version == LATEST  # the structure tells the era
    assert "$schema" not in str([n.pointer for n in up.notes])  # the label did not change
    assert registry.migrate(up.record, "2", family=FAMILY).record == labelled
    assert "$schema" not in registry.migrate(record, "latest").record
    old_name = registry.migrate({**record, "$schema": "agentevo-eval-v2"}, "2.1")
    assert old_name.record["$schema"] == "agentv-eval-v2"
    assert [str(n) for n in old_name.notes if n.pointer == "/$schema"] == [
        'converted /$schema: string -> string ("agentevo-eval-v2" -> "agentv-eval-v2"): '
        "the label since the project's rename"
    ]


# -- what each step does with values the next era renamed or cannot hold ---------------------


def test_era1_grader_llm_judge_becomes_an_evaluator_of_every_case(registry: Registry) -> None:
    result = registry.migrate(_load("era1-greetings.test.yaml"), "2")
    assert result.ok
    assert "grader" not in result.record
    for case in result.record["evalcases"]:
        assert case["execution"]["evaluators"] == [{"name": "llm_judge", "type": "llm_judge"}]
    notes = [(n.kind, n.source or n.pointer) for n in result.notes]
    assert notes[:2] == [("dropped", "/grader"), ("renamed", "/testcases")]
    assert [n.pointer for n in result.notes if n.kind == "added"] == [
        "/evalcases/0/execution/evaluators",
        "/evalcases/1/execution/evaluators",
    ]
    assert ("moved", "/testcases/1/messages/2") in notes  # the expected turn


def test_era1_heuristic_grader_is_lost_only_when_allowed(registry: Registry) -> None:
    record = {**_load("era1-greetings.test.yaml"), "grader": "heuristic"}
    refused = registry.migrate(record, "2")
    assert not refused.ok and (refused.error or "").startswith("/grader: ")
    allowed = registry.migrate(record, "2", allow_loss=True)
    assert allowed.ok and [n.kind for n in allowed.notes if n.kind != "moved"] == [
        "lost",
        "renamed",
    ]
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
    # Era 2.1 cases took other fields (values a judge prompt refers to); era 3 tests do not.
    record["evalcases"][1]["reference_answer"] = "See status.example.com."
    result = registry.migrate(record, "3")
    assert result.record["dataset"] == record["dataset"]  # era 3 reads these two
    assert result.record["tests"][1]["note"] == record["evalcases"][1]["note"]
    assert result.record["tests"][1]["metadata"] == {"reference_answer": "See status.example.com."}
    moves = [(n.source, n.pointer) for n in result.notes if n.kind == "moved"]
    assert ("/evalcases/1/reference_answer", "/tests/1/metadata/reference_answer") in moves
    assert ("/evalcases/0/rubrics", "/tests/0/assert/1/criteria") in moves
    assert ("/execution/evaluators", "/assert") in moves
    assert ("renamed", "/tests") in [(n.kind, n.pointer) for n in result.notes]
    # Era 3.1 has no file-level dataset: kept in the metadata, and back in its place below.
    era31 = registry.migrate(record, "3.1")
    assert era31.record["metadata"] == {"dataset": record["dataset"]}
    assert ("moved", "/dataset", "/metadata/dataset") in [
        (n.kind, n.source, n.pointer) for n in era31.notes
    ]
    for there in (result.record, era31.record):
        back = registry.migrate(there, "2.1", family=FAMILY)
        assert back.ok, back.error
        assert back.record["dataset"] == record["dataset"]
        assert back.record["evalcases"][1]["note"] == record["evalcases"][1]["note"]
        assert back.record["evalcases"][1]["reference_answer"] == "See status.example.com."


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
    assert [(n.kind, n.source, n.pointer) for n in result.notes if n.kind != "renamed"] == [
        ("added", None, "/prompts"),
        ("moved", "/tests/0/input", "/tests/0/vars/input"),
        ("moved", "/tests/0/input_files", "/tests/0/vars/input_files"),
        ("moved", "/assertions", "/default_test/assert"),
        ("moved", "/input", "/default_test/metadata/input"),
    ]
    assert registry.migrate(result.record, "3.1", family=FAMILY).record == record


def test_targets_become_providers_and_back(registry: Registry) -> None:
    record = _load("era3-code-review.eval.yaml")
    record["execution"] = {"targets": ["default", "azure"], "trials": 3}
    result = registry.migrate(record, "4")
    assert result.record["targets"] == ["default", "azure"]  # era 4 reads them at the top
    assert "target" not in result.record
    assert result.record["execution"] == {"trials": 3}
    down = registry.migrate(result.record, "3.1", family=FAMILY)
    assert down.record["execution"] == {"targets": ["default", "azure"], "trials": 3}
    assert "target" not in down.record  # the two places cannot be told apart again
    era5 = registry.migrate(record, "5")
    assert era5.ok, era5.error
    assert era5.record["providers"] == ["default", "azure"]
    assert era5.record["evaluate_options"] == {"repeat": 3}  # AgentV's place for the trials
    assert "execution" not in era5.record and "targets" not in era5.record


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
    assert [(n.kind, n.pointer) for n in allowed.notes][:2] == [
        ("lost", "/target"),
        ("added", "/prompts"),
    ]
    assert registry.validate(allowed.record, FAMILY, "4") == []


@pytest.mark.parametrize(
    ("execution", "lost", "target"),
    [
        ({"target": ""}, ["/execution/target"], None),
        (
            {"targets": ["", "azure", ""], "trials": 2},
            ["/execution/targets/0", "/execution/targets/2"],
            "azure",
        ),
    ],
)
def test_an_empty_execution_target_is_lost_and_the_others_stay(
    registry: Registry, execution: dict[str, Any], lost: list[str], target: str | None
) -> None:
    record = {**{k: v for k, v in EMPTY_TARGET.items() if k != "target"}, "execution": execution}
    assert not registry.migrate(record, "4", family=FAMILY).ok
    result = registry.migrate(record, "4", family=FAMILY, allow_loss=True)
    assert result.ok, result.error
    assert [n.pointer for n in result.notes if n.kind == "lost"] == lost
    assert result.record.get("target") == target  # one target is era 4's `target`
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
    record = _load("era5-summaries.eval.yaml")
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
    assert "moved /tests/*/note -> /tests/*/metadata/note" in out
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


# -- constructs of AgentV's own files that the eras hold -----------------------------------


def test_each_era_says_which_upstream_period_it_covers(registry: Registry) -> None:
    for version in registry.versions(FAMILY):
        description = registry.schema(FAMILY, version)["description"]
        if version == "2":
            continue  # the seed, kept as published
        assert description.startswith("AgentV eval files from 2025-") or description.startswith(
            "AgentV eval files from 2026-"
        )


def test_checks_written_as_sentences_go_up_and_come_back_as_rubrics(registry: Registry) -> None:
    record = _load("era3-code-review.eval.yaml")
    record["tests"][1]["assert"] = ["Approves the change", {"type": "contains", "value": "ok"}]
    assert registry.validate(record, FAMILY, "3") == []
    latest = registry.migrate(record, "latest")
    assert latest.ok, latest.error
    assert latest.record["tests"][1]["assert"] == record["tests"][1]["assert"]
    down = registry.migrate(record, "2.1", family=FAMILY, allow_loss=True)
    assert down.ok, down.error
    evaluators = down.record["evalcases"][1]["execution"]["evaluators"]
    assert evaluators == [{"name": "rubric", "type": "rubric", "rubrics": ["Approves the change"]}]
    assert ("lost", "/tests/1/assert/1") in [(n.kind, n.pointer) for n in down.notes]


def test_a_test_list_in_another_file_goes_up_and_is_refused_going_down(registry: Registry) -> None:
    record = {"description": "d", "tests": "./cases.yaml", "assertions": ["Is polite"]}
    assert registry.detect(record).version == "3.1"
    latest = registry.migrate(record, "latest")
    assert latest.ok, latest.error
    assert latest.record["tests"] == "./cases.yaml"
    assert latest.record["default_test"] == {"assert": ["Is polite"]}
    refused = registry.migrate(record, "2.1", family=FAMILY, allow_loss=True)
    assert not refused.ok and refused.failed_step == "3 -> 2.1"
    assert "/tests: the tests are in another file" in (refused.error or "")


def test_test_file_references_are_lost_going_down_only_when_allowed(registry: Registry) -> None:
    record = _load("era3-code-review.eval.yaml")
    record["tests"].append("file://cases/regression.jsonl")
    assert registry.validate(record, FAMILY, "3") == []
    assert registry.migrate(record, "latest").record["tests"][-1] == record["tests"][-1]
    refused = registry.migrate(record, "2.1", family=FAMILY)
    assert not refused.ok and (refused.error or "").startswith("/name: ")
    allowed = registry.migrate(record, "2.1", family=FAMILY, allow_loss=True)
    assert allowed.ok and len(allowed.record["evalcases"]) == 2
    assert ("lost", "/tests/2") in [(n.kind, n.pointer) for n in allowed.notes]


def test_a_target_definition_becomes_a_provider(registry: Registry) -> None:
    target = {"name": "fixer", "provider": "claude", "model": "opus"}
    record = {**_load("era3.1-export-screening.eval.yaml"), "target": target}
    assert registry.detect(record).version == "3.1"
    result = registry.migrate(record, "4")
    assert result.ok, result.error
    assert result.record["target"] == target
    era5 = registry.migrate(record, "5")
    assert era5.ok, era5.error
    # The backend is the provider's id, the target's name its label, the model a setting.
    assert era5.record["providers"] == [
        {"id": "claude", "label": "fixer", "config": {"model": "opus"}}
    ]
    assert "target" not in era5.record


def test_an_era4_file_may_still_name_its_target_and_test_inputs(registry: Registry) -> None:
    # 2026-07-03 .. 2026-07-06: promptfoo-style checks, but `target` and test `input` still.
    record = {
        "name": "fizzbuzz",
        "target": "default",
        "governance": {"risk_tier": "low"},
        "tests": [{"id": "t", "criteria": "c", "input": "Write FizzBuzz", "assert": ["Loops"]}],
    }
    detection = registry.detect(record, "fizzbuzz.eval.yaml")
    assert (detection.version, detection.evidence[-1].rule) == ("4", "validity")
    assert registry.validate(record, FAMILY, "4") == []


def test_tool_call_turns_and_the_aliases_of_the_turns(registry: Registry) -> None:
    call = {"tool": "get_status", "input": {"service": "api"}}
    case = {
        "id": "status",
        "expected_outcome": "Calls the status tool",
        "input": "Is the API down?",
        "expected_output": [{"role": "assistant", "tool_calls": [call]}],
    }
    record = {"evalcases": [case]}
    assert registry.detect(record).version == "2.1"
    assert registry.validate(record, FAMILY, "2.1") == []
    latest = registry.migrate(record, "latest")
    assert latest.ok, latest.error
    test = latest.record["tests"][0]
    # Era 5 reads the input and the reference answer as test variables.
    assert test["vars"] == {"input": "Is the API down?", "expected_output": case["expected_output"]}
    # v2 turns have content; the tool-call turn is the only expected one, so v2 cannot hold it.
    refused = registry.migrate(record, "2", family=FAMILY, allow_loss=True)
    assert not refused.ok and "no expected_messages" in (refused.error or "")
    both = {
        **case,
        "expected_output": [*case["expected_output"], {"role": "assistant", "content": "Up."}],
    }
    v2 = registry.migrate({"evalcases": [both]}, "2", family=FAMILY, allow_loss=True)
    assert v2.ok, v2.error
    assert v2.record["evalcases"][0]["input_messages"] == [
        {"role": "user", "content": "Is the API down?"}
    ]
    assert v2.record["evalcases"][0]["expected_messages"] == [
        {"role": "assistant", "content": "Up."}
    ]
    # The alias's first turn (the tool call) is lost where it was.
    assert [(n.kind, n.pointer) for n in v2.notes if n.kind == "lost"] == [
        ("lost", "/evalcases/0/expected_output/0")
    ]
    assert ("moved", "/evalcases/0/input", "/evalcases/0/input_messages/0/content") in [
        (n.kind, n.source, n.pointer) for n in v2.notes
    ]


def test_a_default_test_in_another_file_keeps_the_suite_checks_at_the_top(
    registry: Registry,
) -> None:
    record = {**_load("era3.1-export-screening.eval.yaml"), "default_test": "file://defaults.yaml"}
    result = registry.migrate(record, "4")
    assert result.ok, result.error
    assert result.record["default_test"] == "file://defaults.yaml"
    assert result.record["assert"] == record["assertions"]
    assert result.record["input"] == record["input"]
    # Era 5 has no suite input and a file reference has no metadata: kept in the suite's.
    era5 = registry.migrate(record, "5")
    assert era5.ok, era5.error
    assert era5.record["metadata"] == {"input": record["input"]}
    assert era5.record["assert"] == record["assertions"]
    back = registry.migrate(era5.record, "4", family=FAMILY)
    assert back.ok and back.record["input"] == record["input"] and "metadata" not in back.record


# -- the conformance script ------------------------------------------------------------------


def _commit(repo: Path, date: str, files: dict[str, str]) -> None:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text, encoding="utf-8")
    env = {**os.environ, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    env |= {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t"}
    env |= {"GIT_COMMITTER_EMAIL": "t@t"}
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True, env=env)
    subprocess.run(["git", "-C", str(repo), "commit", "-qm", date], check=True, env=env)


def test_conformance_script_judges_each_file_by_its_dates_schema(tmp_path: Path) -> None:
    repo = tmp_path / "agentv"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    # AgentV's schema of February asks for `tests`; in April it asks for `cases` (invented).
    schema = '{"type": "object", "required": ["%s"]}'
    era3 = (ERAS / "era3-code-review.eval.yaml").read_text()
    era31 = (ERAS / "era3.1-export-screening.eval.yaml").read_text()
    _commit(
        repo,
        "2026-02-20T12:00:00+00:00",
        {
            "skills/references/eval-schema.json": schema % "tests",
            "evals/review.eval.yaml": era3,
            "evals/.agentv/targets.yaml": (ERAS / "targets.yaml").read_text(),
        },
    )
    _commit(
        repo,
        "2026-04-02T12:00:00+00:00",
        {
            "skills/references/eval-schema.json": schema % "cases",
            "evals/review.eval.yaml": era31,
            "evals/runs.exp.yaml": "eval_cases: '*'\n",
        },
    )
    script = Path(__file__).parents[2] / "benchmarks" / "conformance_agentv.py"
    details = tmp_path / "outcomes.jsonl"
    run = subprocess.run(
        [sys.executable, str(script), str(repo), "--json", str(details), "--refused"],
        capture_output=True,
        text=True,
        check=True,
    )
    out = run.stdout
    assert out.startswith("2 eval files (distinct contents) first seen in 2 commits")
    assert "2 versions of AgentV's published eval-file schema" in out
    rows = [json.loads(line) for line in details.read_text().splitlines()]
    assert [(r["date"], r["era"], r["valid"], r["upstream"]) for r in rows] == [
        ("2026-02-20", "3", True, True),
        ("2026-04-02", "3.1", True, False),
    ]
    assert "parity (of those, valid at the era evalreg detects): 100.0% (1/1)" in out
    assert "migrated to 5 and valid there: 100.0% (2/2)" in out
    assert "still refused, by first problem:\n" in out


# -- era 5: providers (2026-07-07) -----------------------------------------------------------

ERA5_BASE: dict[str, Any] = {
    "prompts": ["{{ input }}"],
    "tests": [{"id": "t", "vars": {"input": "Hi"}, "assert": ["Greets back"]}],
}


@pytest.mark.parametrize(
    ("extra", "era"),
    [
        ({"target": "default"}, "4"),
        ({"targets": ["default", "azure"]}, "4"),
        ({"defaults": {"target": "default"}}, "4"),
        ({"workspace": "./workspace.yaml"}, "4"),
        ({"providers": ["default"]}, "5"),
        ({"defaults": {"provider": "default"}}, "5"),
        ({}, "5"),  # valid in both eras, and AgentV's newest validator takes it: current
    ],
)
def test_era4_and_era5_are_told_apart_by_the_names_retired_on_7_july(
    registry: Registry, extra: dict[str, Any], era: str
) -> None:
    record = {**ERA5_BASE, **extra}
    detection = registry.detect(record, "greetings.eval.yaml")
    assert (detection.status, detection.version) == ("detected", era)
    assert detection.evidence[-1].rule == "structure"
    assert registry.validate(record, FAMILY, era) == []


def test_a_file_naming_both_a_target_and_providers_fits_no_era(registry: Registry) -> None:
    record = {**ERA5_BASE, "target": "default", "providers": ["default"]}
    detection = registry.detect(record)
    assert detection.status == "unknown"
    assert "closest eras 4 (differs: has /providers), 5 (differs: has /target)" in (
        detection.summary()
    )
    # Era 4 is amended: AgentV refused a top-level `providers` until 2026-07-07.
    assert registry.validate({**ERA5_BASE, "providers": ["default"]}, FAMILY, "4") != []
    assert registry.validate({**ERA5_BASE, "target": "default"}, FAMILY, "5") != []


def test_targets_become_providers_with_their_labels_and_come_back(registry: Registry) -> None:
    hooks = {"before_each": {"command": ["./setup.sh"]}}
    derived = {"name": "variant", "extends": "default"}  # refers to another target
    record = {
        **ERA5_BASE,
        "targets": [
            "default",
            {"id": "fixer", "provider": "claude-cli", "model": "opus", "hooks": hooks},
            {"id": "azure"},  # a target named by itself
            derived,
            "default",
        ],
        "defaults": {"target": "fixer", "grader": "azure"},
    }
    result = registry.migrate(record, "5", family=FAMILY)
    assert result.ok, result.error
    assert result.record["providers"] == [
        "default",
        {"id": "claude-cli", "label": "fixer", "hooks": hooks, "config": {"model": "opus"}},
        "azure",
    ]
    assert result.record["defaults"] == {"provider": "fixer", "grader": "azure"}
    assert result.record["metadata"] == {"targets": [derived]}  # no provider form: kept
    assert registry.validate(result.record, FAMILY, "5") == []
    notes = [(n.kind, n.source, n.pointer) for n in result.notes]
    assert ("renamed", "/targets/1/provider", "/providers/1/id") in notes
    assert ("renamed", "/targets/1/id", "/providers/1/label") in notes
    assert ("moved", "/targets/1/model", "/providers/1/config/model") in notes
    assert ("dropped", None, "/targets/4") in notes
    assert ("moved", "/targets/3", "/metadata/targets/0") in notes
    back = registry.migrate(result.record, "4", family=FAMILY)
    assert back.ok, back.error
    assert back.record["targets"] == [
        "default",
        {"id": "fixer", "provider": "claude-cli", "hooks": hooks, "config": {"model": "opus"}},
        "azure",
    ]
    assert back.record["defaults"] == record["defaults"]
    assert registry.validate(back.record, FAMILY, "4") == []


def test_run_settings_go_where_agentv_reads_them_and_the_rest_is_kept(registry: Registry) -> None:
    trials = {"count": 3, "strategy": "pass_at_k", "cost_limit_usd": 1.5}
    record = {
        **ERA5_BASE,
        "target": "default",
        "execution": {
            "workers": 4,
            "trials": trials,
            "threshold": 0.8,
            "fail_on_error": False,
            "evaluators": [{"type": "contains", "value": "Hi"}],
        },
        "experiment": {"target": "default", "workers": 2},
    }
    result = registry.migrate(record, "5", family=FAMILY)
    assert result.ok, result.error
    assert result.record["providers"] == ["default"]
    assert result.record["evaluate_options"] == {
        "max_concurrency": 4,
        "repeat": {**trials, "strategy": "pass_any"},
    }
    assert result.record["threshold"] == 0.8
    assert result.record["assert"] == record["execution"]["evaluators"]
    # The second concurrency and what AgentV no longer reads from the file stay in the metadata.
    assert result.record["metadata"] == {
        "execution": {"fail_on_error": False},
        "experiment": {"workers": 2},
    }
    assert "execution" not in result.record and "experiment" not in result.record
    assert (
        'converted /evaluate_options/repeat/strategy: string -> string ("pass_at_k" -> '
        '"pass_any"): its name at era 5'
    ) in [str(n) for n in result.notes]
    back = registry.migrate(result.record, "4", family=FAMILY)
    assert back.ok, back.error
    assert back.record["execution"] == {"fail_on_error": False}
    assert back.record["experiment"] == {"workers": 2}
    assert "metadata" not in back.record
    assert registry.validate(back.record, FAMILY, "4") == []


def test_test_fields_era5_refuses_take_their_new_places_and_come_back(registry: Registry) -> None:
    first = {
        "id": "a",
        "input": "Hi",
        "expected_output": "Hello",
        "assertions": [{"type": "contains", "value": "Hello"}],
        "evaluators": [{"type": "equals", "value": "Hello"}],
        "rubrics": ["Is polite"],
        "workspace": "./workspace.yaml",
        "execution": {"evaluators": [{"type": "latency", "max_ms": 900}], "target": "azure"},
    }
    second = {
        "id": "b",
        "vars": {"input": "Bye"},
        "input": "Farewell",  # vars holds another input: kept
        "turns": [{"input": "And?", "assertions": ["Answers"]}],
    }
    record = {**ERA5_BASE, "target": "default", "tests": [first, second]}
    result = registry.migrate(record, "5", family=FAMILY)
    assert result.ok, result.error
    a, b = result.record["tests"]
    assert a["vars"] == {"input": "Hi", "expected_output": "Hello"}
    assert a["assert"] == [
        *first["assertions"],
        *first["evaluators"],
        {"type": "rubrics", "criteria": ["Is polite"]},
    ]
    assert a["execution"] == {"assert": [{"type": "latency", "max_ms": 900}]}
    assert a["metadata"] == {"workspace": "./workspace.yaml", "execution": {"target": "azure"}}
    assert b["metadata"] == {"input": "Farewell"}
    assert b["turns"] == [{"input": "And?", "assert": ["Answers"]}]
    assert registry.validate(result.record, FAMILY, "5") == []
    back = registry.migrate(result.record, "4", family=FAMILY)
    assert back.ok, back.error
    a, b = back.record["tests"]
    assert (a["expected_output"], a["workspace"]) == ("Hello", "./workspace.yaml")
    assert a["execution"]["target"] == "azure"
    assert b["input"] == "Farewell" and "metadata" not in b


def test_a_test_input_moved_under_vars_gets_the_default_prompt(registry: Registry) -> None:
    test = {"id": "t", "input": "Hi", "options": {"transform": "output.trim()"}}
    record = {"target": "default", "tests": [test]}
    assert registry.detect(record).version == "4"
    result = registry.migrate(record, "5", family=FAMILY)
    assert result.ok, result.error
    assert list(result.record) == ["prompts", "providers", "tests"]
    assert result.record["prompts"] == ["{{ input }}"]
    assert ("added", "/prompts") in [(n.kind, n.pointer) for n in result.notes]


def test_a_file_whose_tests_are_all_imported_has_no_era5_form(registry: Registry) -> None:
    from evalreg import StepContext
    from evalreg.errors import MigrationError

    record = {"prompts": ["{{ input }}"], "imports": {"suites": ["./base.eval.yaml"]}}
    assert registry.validate(record, FAMILY, "4") == []
    (step,) = registry.plan(FAMILY, "4", "5")
    with pytest.raises(MigrationError, match="/imports: the file's tests are all imported"):
        step.function(record, StepContext())


def test_promptfoos_map_of_providers_goes_down_as_one_target_per_id(registry: Registry) -> None:
    providers = {"openai:gpt-5": {"label": "gpt", "config": {"temperature": 0}}, "mock": {}}
    record = {**ERA5_BASE, "providers": [providers]}
    assert registry.detect(record).version == "5"
    assert registry.validate(record, FAMILY, "5") == []
    down = registry.migrate(record, "4", family=FAMILY)
    assert down.ok, down.error
    assert down.record["targets"] == [
        {"id": "gpt", "provider": "openai:gpt-5", "config": {"temperature": 0}},
        {"id": "mock", "provider": "mock"},
    ]
    assert not [n for n in down.notes if n.kind == "lost"]
    # An id inside the map, which AgentV ignores, is lost only when allowed.
    ignored = {**ERA5_BASE, "providers": {"mock": {"id": "ignored"}}}
    assert registry.validate(ignored, FAMILY, "5") == []
    assert not registry.migrate(ignored, "4", family=FAMILY).ok
    allowed = registry.migrate(ignored, "4", family=FAMILY, allow_loss=True)
    assert allowed.ok and allowed.record["target"] == {"id": "mock", "provider": "mock"}


def test_the_era5_example_goes_down_to_era4_and_back_unchanged(registry: Registry) -> None:
    record = _load("era5-summaries.eval.yaml")
    down = registry.migrate(record, "4", family=FAMILY)
    assert down.ok, down.error
    assert registry.detect(down.record).version == "4"
    assert down.record["targets"][1] == {
        "id": "sonnet",
        "provider": "anthropic:messages:claude-sonnet-4",
        "config": {"temperature": 0},
    }
    up = registry.migrate(down.record, "5", family=FAMILY)
    assert up.ok and up.record == record


def test_a_downgrade_to_v2_gives_the_one_label_v2_knows(registry: Registry) -> None:
    """The 2.1 schema also names `agentv-eval-v2.1`; v2 knows only `agentv-eval-v2`."""
    turn = [{"role": "user", "content": "hi"}]
    case = {"id": "c", "outcome": "o", "input_messages": turn, "expected_messages": turn}
    record = {"$schema": "agentv-eval-v2.1", "evalcases": [case]}
    result = registry.migrate(record, to="2", family="agentv.eval")
    assert result.status == "migrated", result.error
    assert result.record["$schema"] == "agentv-eval-v2"
    assert registry.validate(result.record, family="agentv.eval", version="2") == []
    assert [n.kind for n in result.notes if n.pointer == "/$schema"] == ["converted"]


@pytest.mark.parametrize("label", ["", "invalid-schema-value"])
def test_a_label_era_2_1_does_not_know_is_lost_going_down_only_if_allowed(
    registry: Registry, label: str
) -> None:
    """Era 3 takes any `$schema` text; era 2.1 only its two labels: the step refuses, naming the
    label, or (allowed to lose it) leaves it out with a note."""
    record = {"$schema": label, "cases": [{"id": "c", "input": "hi"}]}
    assert registry.validate(record, family="agentv.eval", version="3") == []
    refused = registry.migrate(record, to="2.1", family="agentv.eval")
    assert refused.status == "failed" and refused.failed_step == "3 -> 2.1"
    assert (refused.error or "").startswith("/$schema: era 2.1 knows only the labels")
    allowed = registry.migrate(record, to="2.1", family="agentv.eval", allow_loss=True)
    assert allowed.status == "migrated", allowed.error
    assert "$schema" not in allowed.record
    assert registry.validate(allowed.record, family="agentv.eval", version="2.1") == []
    assert [n.kind for n in allowed.notes if n.pointer == "/$schema"] == ["lost"]
