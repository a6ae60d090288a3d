from __future__ import annotations

import pytest

from evalreg import Registry
from tests.examples_index import ALL, Example

VALID = [e for e in ALL if e.valid]
INVALID = [e for e in ALL if not e.valid]


@pytest.mark.parametrize("example", VALID, ids=lambda e: e.id)
def test_valid_examples_have_no_issues(registry: Registry, example: Example) -> None:
    for record in example.records():
        detection = registry.detect(record, str(example.path))
        assert registry.validate(record, detection.family, detection.version) == []


@pytest.mark.parametrize("example", INVALID, ids=lambda e: e.id)
def test_invalid_examples_report_the_pointer_keyword_and_message(
    registry: Registry, example: Example
) -> None:
    assert example.expect is not None
    [record] = example.records()[-1:]
    detection = registry.detect(record, str(example.path))
    issues = registry.validate(record, detection.family, detection.version)
    assert issues, "expected a problem"
    best = issues[0]
    assert best.pointer == example.expect["pointer"]
    assert best.keyword == example.expect["keyword"]
    assert example.expect["message_contains"] in best.message


def test_every_error_is_reported_with_its_pointer(registry: Registry) -> None:
    record = {
        "schema_version": "0.2.0",
        "evaluation_id": "e",
        "retrieved_timestamp": "1",
        "source_metadata": {"source_type": "evaluation_run", "source_organization_name": "o"},
        "model_info": {"name": "m"},
        "evaluation_results": [{"evaluation_name": "x", "score_details": {"score": "high"}}],
    }
    issues = registry.validate(record)
    found = {(i.pointer, i.keyword) for i in issues}
    assert found == {
        ("/source_metadata", "required"),
        ("/model_info", "required"),
        ("/evaluation_results/0", "required"),
        ("/evaluation_results/0/score_details/score", "type"),
    }
    assert all(i.schema_path.startswith("/") for i in issues)


def test_long_values_are_shortened_in_messages(registry: Registry) -> None:
    record = {
        "expectations": [{"text": "t" * 500, "passed": "yes", "evidence": "e"}],
        "pass_rate": 1,
    }
    [issue] = registry.validate(record, "skill-creator.grading")
    assert issue.pointer == "/expectations/0/passed"
    assert len(issue.message) < 120


def test_undecided_records_get_one_detect_issue(registry: Registry) -> None:
    [issue] = registry.validate({"schema_version": "0.2.0"})
    assert issue.keyword == "detect"
    assert "ambiguous" in issue.message


def test_unknown_version_is_an_issue_naming_known_versions(registry: Registry) -> None:
    [issue] = registry.validate({"schema_version": "7.0", "evaluation_results": []})
    assert (issue.pointer, issue.keyword) == ("/schema_version", "version")
    assert "'7.0' is not known" in issue.message
    [issue] = registry.validate({"schema_version": "7.0"}, "eee.aggregate")
    assert (issue.pointer, issue.keyword) == ("/schema_version", "version")
    assert "known: 0.1.0" in issue.message


def test_family_without_version_reads_the_marker(registry: Registry) -> None:
    issues = registry.validate({"schema_version": "0.2.0"}, "eee.aggregate")
    assert {i.keyword for i in issues} == {"required"}


def test_fast_and_reference_paths_agree_on_nan(registry: Registry) -> None:
    # jsonschema-rs refuses NaN (which YAML can produce); the reference implementation decides.
    validator = registry.validator("skill-creator.timing")
    record = {"total_tokens": 1, "duration_ms": float("nan")}
    assert validator.is_valid(record) == validator.reference.is_valid(record)
