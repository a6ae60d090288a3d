from __future__ import annotations

import pytest

from evalreg import Registry
from tests.examples_index import ALL, Example


@pytest.mark.parametrize("example", ALL, ids=lambda e: e.id)
def test_every_example_is_detected_as_its_family(registry: Registry, example: Example) -> None:
    for record in example.records():
        detection = registry.detect(record, str(example.path))
        assert detection.ok, detection.summary()
        assert detection.family == example.family
        assert detection.evidence


def test_aggregate_and_instance_share_versions_and_differ_by_structure(registry: Registry) -> None:
    aggregate = {"schema_version": "0.2.0", "evaluation_results": [], "model_info": {}}
    instance = {"schema_version": "0.2.0", "sample_id": 3, "interaction_type": "single_turn"}
    a, i = registry.detect(aggregate), registry.detect(instance)
    assert (a.family, a.version) == ("eee.aggregate", "0.2.0")
    assert (i.family, i.version) == ("eee.instance", "0.2.0")
    assert [e.rule for e in a.evidence] == ["marker", "structure"]


def test_instance_level_version_spelling_of_the_schema_documents(registry: Registry) -> None:
    record = {
        "schema_version": "instance_level_eval_0.2.0",
        "sample_id": "s1",
        "interaction_type": "single_turn",
    }
    detection = registry.detect(record)
    assert (detection.family, detection.version) == ("eee.instance", "0.2.0")


def test_agentv_tag_in_dollar_schema(registry: Registry) -> None:
    detection = registry.detect({"$schema": "agentv-eval-v2", "evalcases": []})
    assert (detection.family, detection.version) == ("agentv.eval", "2")
    assert detection.evidence[0].detail == "/$schema = 'agentv-eval-v2'"


def test_a_stale_label_gives_way_to_the_era_the_structure_shows(registry: Registry) -> None:
    test = {"id": "t", "criteria": "c", "input": "hi", "assertions": [{"type": "contains"}]}
    detection = registry.detect({"$schema": "agentv-eval-v2", "tests": [test]})
    assert (detection.family, detection.version) == ("agentv.eval", "3.1")
    assert [e.rule for e in detection.evidence] == ["marker", "structure"]
    assert "the label's era 2 differs (no /evalcases" in detection.evidence[-1].detail
    assert detection.evidence[-1].detail.endswith("so the structure decides")


def test_a_label_stands_where_the_record_has_the_shape_of_its_era(registry: Registry) -> None:
    # Labelled v2, with an addition of the later v2 files: the structure says 2.1.
    case = {"id": "c", "expected_outcome": "o", "input_messages": []}
    detection = registry.detect({"$schema": "agentv-eval-v2", "evalcases": [case]})
    assert (detection.version, len(detection.evidence)) == ("2.1", 2)
    # Labelled v2 and of era 2's shape, though not valid there: the label stands, and
    # validation at 2 reports what is wrong.
    detection = registry.detect({"$schema": "agentv-eval-v2", "evalcases": [{"id": "c"}]})
    assert (detection.version, [e.rule for e in detection.evidence]) == ("2", ["marker"])


def test_an_eval_file_named_config_yaml_is_an_eval_file(registry: Registry) -> None:
    evals = {"tests": [{"id": "t", "criteria": "c", "input": "hi"}]}
    detection = registry.detect(evals, "examples/quickstart/.agentv/config.yaml")
    assert (detection.family, detection.version) == ("agentv.eval", "3")
    assert any("suggests agentv.config" in e.detail for e in detection.evidence)
    settings = {"eval_patterns": ["evals/**/*.yaml"]}
    detection = registry.detect(settings, "examples/quickstart/.agentv/config.yaml")
    assert (detection.family, detection.version) == ("agentv.config", "2")


def test_valid_at_several_eras_and_fitting_none(registry: Registry) -> None:
    # Checks under `assert` (eras 3 and 4) beside a conversation test (`turns`, 3.1 on): era 3
    # forbids `turns`, era 3.1 forbids `assert`, era 4 forbids neither.
    test = {"id": "t", "input": "hi", "assert": ["Greets back"], "turns": [{"input": "hi"}]}
    detection = registry.detect({"tests": [test]})
    assert (detection.family, detection.version) == ("agentv.eval", "4")
    assert detection.evidence[-1].detail.startswith("valid at 4 and at 3, whose fingerprints")


def test_skill_creator_files_by_name_and_by_structure(registry: Registry) -> None:
    record = {"expectations": [], "pass_rate": 1.0}
    by_name = registry.detect(record, "workspace/eval-0/with_skill/grading.json")
    assert by_name.family == "skill-creator.grading"
    assert [e.rule for e in by_name.evidence][:2] == ["file-name", "structure"]
    by_structure = registry.detect(record)
    assert by_structure.family == "skill-creator.grading"
    assert "file-name" not in [e.rule for e in by_structure.evidence]


def test_mnemoverse_events_by_type_without_schema_version(registry: Registry) -> None:
    event = {
        "type": "feedback_action",
        "request_id": "r",
        "action": "rerank_tweak",
        "scope": {},
        "ts": "t",
    }
    detection = registry.detect(event)
    assert (detection.family, detection.version) == ("mnemoverse.events", "0.1")
    wrong = registry.detect({**event, "type": "something_else"})
    assert wrong.family != "mnemoverse.events"


def test_unknown_version_is_reported_with_the_known_ones(registry: Registry) -> None:
    detection = registry.detect({"schema_version": "0.9.9", "evaluation_results": []})
    assert detection.status == "unknown-version"
    assert detection.family == "eee.aggregate"
    assert detection.version is None
    assert detection.stated_version == "0.9.9"
    assert "'0.9.9' is not known (known: 0.1.0, 0.2.0" in detection.summary()


def test_record_of_no_family_is_unknown_with_reasons(registry: Registry) -> None:
    detection = registry.detect({"hello": "world"}, "notes.json")
    assert detection.status == "unknown"
    assert not detection.ok
    assert "no version marker" in detection.reasons
    assert any(r.startswith("closest family") for r in detection.reasons)


def test_non_objects_are_unknown(registry: Registry) -> None:
    detection = registry.detect([1, 2])
    assert detection.status == "unknown"
    assert "not list" in detection.summary()


def test_shared_marker_without_structure_is_ambiguous_not_guessed(registry: Registry) -> None:
    detection = registry.detect({"schema_version": "0.2.0"})
    assert detection.status == "ambiguous"
    assert {c.family for c in detection.candidates} == {"eee.aggregate", "eee.instance"}
    assert "ambiguous" in detection.summary()


def test_file_name_breaks_a_tie_between_marker_families(registry: Registry) -> None:
    detection = registry.detect({"schema_version": "0.2.0"}, "run_samples.jsonl")
    assert detection.family == "eee.instance"
