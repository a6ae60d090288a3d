"""The Every Eval Ever conformance scripts: the fault planter and the mapping of findings."""

from __future__ import annotations

import importlib.util
import json
import sys
import uuid
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

BENCHMARKS = Path(__file__).parents[2] / "benchmarks"


def _module(name: str, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)  # its dataclasses look it up there
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def faults(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.setattr(sys, "path", list(sys.path))  # it adds benchmarks/ to import its sibling
    _module("conformance_eee", monkeypatch)
    return _module("eee_faults", monkeypatch)


@pytest.fixture
def conformance(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    return _module("conformance_eee", monkeypatch)


def _model(model_id: str) -> dict[str, Any]:
    details = {"deployment_type": "unknown", "model_availability": "open_weights"}
    return {"name": model_id, "id": model_id, "additional_details": details}


def _aggregate(number: int, judged: bool = False) -> dict[str, Any]:
    metric: dict[str, Any] = {
        "lower_is_better": False,
        "score_type": "continuous",
        "min_score": 0.0,
        "max_score": 1.0,
    }
    if judged:
        metric["llm_scoring"] = {
            "judges": [{"model_info": _model("acme/judge")}],
            "input_prompt": "?",
        }
    return {
        "schema_version": "0.3.0",
        "evaluation_id": f"bench/acme/m{number}",
        "retrieved_timestamp": "1",
        "model_info": _model(f"acme/m{number}"),
        "evaluation_results": [
            {"evaluation_name": "bench", "metric_config": metric, "score_details": {"score": 0.5}}
        ],
    }


def _tree(root: Path) -> Path:
    """Write a small datastore: one judged aggregate, one with samples, five plain ones."""
    data = root / "data"
    for number in range(7):
        folder = data / "bench" / "acme" / f"m{number}"
        folder.mkdir(parents=True)
        name = str(uuid.UUID(int=number + 1, version=4))
        record = _aggregate(number, judged=number == 0)
        if number == 1:
            samples = folder / f"{name}_samples.jsonl"
            record["detailed_evaluation_results"] = {
                "format": "jsonl",
                "file_path": samples.relative_to(root).as_posix(),
                "total_rows": 2,
            }
            rows = [{"evaluation_id": record["evaluation_id"], "sample_id": str(i)} for i in "ab"]
            samples.write_text("".join(json.dumps(row) + "\n" for row in rows))
        (folder / f"{name}.json").write_text(json.dumps(record, indent=2))
    return data


def _strict(text: str) -> Any:
    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [key for key, _ in items]
        assert len(keys) == len(set(keys)), f"duplicate key in {keys}"
        return dict(items)

    def constant(word: str) -> Any:
        raise AssertionError(f"non-finite number {word}")

    return json.loads(text, object_pairs_hook=pairs, parse_constant=constant)


def test_every_fault_is_planted_in_a_file_of_its_own(faults: ModuleType, tmp_path: Path) -> None:
    data = _tree(tmp_path)
    planted = {p.fault: p for p in faults.plant(data)}
    assert list(planted) == [name for name, _ in faults.FAULTS]
    assert len({p.path for p in planted.values()}) == len(planted)

    def record(fault: str) -> Any:
        return json.loads((tmp_path / planted[fault].path).read_text())

    result = record("score-out-of-bounds")["evaluation_results"][0]
    assert result["score_details"]["score"] > result["metric_config"]["max_score"]
    metric = record("min-above-max")["evaluation_results"][0]["metric_config"]
    assert metric["min_score"] > metric["max_score"]
    judged = record("judge-without-deployment")["evaluation_results"][0]["metric_config"]
    judge_details = judged["llm_scoring"]["judges"][0]["model_info"]["additional_details"]
    assert "deployment_type" not in judge_details
    assert "model_availability" not in judge_details
    companion = planted["companion-row-count"]
    assert companion.also is not None and (tmp_path / companion.also).is_file()
    assert record("companion-row-count")["detailed_evaluation_results"]["total_rows"] == 3
    assert len(Path(planted["path-depth"].path).parts) == 6
    with pytest.raises(AssertionError, match="duplicate key"):
        _strict((tmp_path / planted["duplicate-key"].path).read_text())
    with pytest.raises(AssertionError, match="non-finite number NaN"):
        _strict((tmp_path / planted["nan"].path).read_text())


def test_a_fault_avoids_files_already_reported_in_its_category(
    faults: ModuleType, tmp_path: Path
) -> None:
    data = _tree(tmp_path)
    first = sorted(str(p.resolve()) for p in data.rglob("*.json"))
    judged = next(
        p
        for p in first
        if json.loads(Path(p).read_text())["evaluation_results"][0]["metric_config"].get(
            "llm_scoring"
        )
    )
    avoid = {path: {"score"} for path in first[:4] if path != judged}
    planted = {p.fault: p for p in faults.plant(data, avoid)}
    for fault in ("score-out-of-bounds", "min-above-max"):
        assert str((tmp_path / planted[fault].path).resolve()) not in avoid


def test_the_tree_needs_a_file_for_every_fault(faults: ModuleType, tmp_path: Path) -> None:
    data = _tree(tmp_path)
    for path in data.rglob("*_samples.jsonl"):
        path.unlink()
    with pytest.raises(SystemExit, match="companion"):
        faults.plant(data)


@pytest.mark.parametrize(
    ("item", "category"),
    [
        (
            {"type": "json_parse_error", "loc": "(json)", "msg": "duplicate JSON object key 'a'"},
            "strict-json",
        ),
        (
            {
                "type": "semantic_rule_error",
                "loc": "Unexpected path depth",
                "msg": "expected 'data/b/d/m/uuid.json' or 'data/b/d/m/uuid_samples.jsonl', got 6",
            },
            "layout",
        ),
        (
            {
                "type": "semantic_rule_error",
                "loc": "detailed_evaluation_results.total_rows does not match the companion file",
                "msg": "declared 6, found 5",
            },
            "companion",
        ),
        (
            {
                "type": "semantic_rule_error",
                "loc": "evaluation_results[0]",
                "msg": "score 2.0 is outside [min_score=0.0, max_score=1.0]",
            },
            "score",
        ),
        (
            {
                "type": "semantic_rule_error",
                "loc": "model_info.additional_details",
                "msg": "missing 'deployment_type' (expected self_deployed|unknown)",
            },
            "deployment",
        ),
        (
            {
                "type": "value_error",
                "loc": "line 1",
                "msg": "Value error, single_turn interaction_type requires output",
            },
            "interaction",
        ),
        (
            {"type": "semantic_warning", "loc": "model_info", "msg": "id 'a/b' addresses c/a/b/"},
            "model-path",
        ),
        (
            {
                "type": "extra_forbidden",
                "loc": "detailed_evaluation_results_per_samples",
                "msg": "Extra inputs are not permitted",
            },
            "schema",
        ),
        ({"type": "missing", "loc": "eval_library", "msg": "Field required"}, "schema"),
        (
            {
                "type": "float_parsing",
                "loc": "evaluation_results[0] -> score_details -> score",
                "msg": "Input should be a valid number, unable to parse string as a number",
            },
            "score",
        ),
        ({"type": "truncated", "loc": "(truncated)", "msg": "Error limit reached (50)."}, None),
    ],
)
def test_every_eval_ever_findings_map_to_categories(
    conformance: ModuleType, item: dict[str, str], category: str | None
) -> None:
    assert conformance.eee_category(item) == category


def test_evalreg_findings_map_to_categories(conformance: ModuleType) -> None:
    lines = [
        {"path": "a.json", "kind": "unreadable", "message": "not valid JSON"},
        {
            "path": "b.json",
            "kind": "invalid",
            "pointer": "/model_info/additional_details",
            "keyword": "required",
            "message": "'deployment_type' is a required property",
        },
        {
            "path": "c.json",
            "kind": "invalid",
            "pointer": "/evaluation_results/0",
            "keyword": "rule",
            "rule": "eee.score-bounds",
            "severity": "error",
            "message": "m",
        },
        {
            "path": "d.json",
            "kind": "warning",
            "pointer": "/model_info/id",
            "keyword": "rule",
            "rule": "eee.model-path",
            "severity": "warning",
            "message": "m",
        },
        {
            "path": "e.json",
            "kind": "invalid",
            "pointer": "/eval_library",
            "keyword": "type",
            "message": "{'min_score': 1} is not of type 'string'",
        },
        {
            "path": "f.jsonl",
            "line": 2,
            "family": "eee.instance",
            "kind": "invalid",
            "pointer": "/messages",
            "keyword": "type",
            "message": "None is not of type 'array'",
            "schema_path": "/allOf/1/then/properties/messages/type",
        },
        {"summary": {"files": 6}},
    ]
    found = conformance.evalreg_findings(json.dumps(line) for line in lines)
    assert [(Path(f.path).name, f.category, f.severity) for f in found] == [
        ("a.json", "strict-json", "error"),
        ("b.json", "deployment", "error"),
        ("c.json", "score", "error"),
        ("d.json", "model-path", "warning"),
        ("e.json", "schema", "error"),
        ("f.jsonl", "interaction", "error"),
    ]


def test_findings_that_do_not_apply_at_a_version_are_set_aside(conformance: ModuleType) -> None:
    old = conformance.FileView("a.json", "0.2.0")
    old.eee["deployment"].append("missing 'deployment_type'")
    old.eee["schema"].append("eval_library: Field required")
    old.eee["score"].append("score -1.0 is outside")
    new = conformance.FileView("b.json", "0.3.0")
    new.eee["deployment"].append("missing 'deployment_type'")
    new.evalreg["deployment"].append("'deployment_type' is a required property")
    raw = conformance.tally([old, new], by_version=False)
    by_version = conformance.tally([old, new], by_version=True)
    assert (raw.same, by_version.same) == (1, 1)
    assert conformance.comparable(old, "eee") == {"score"}
    assert by_version.per_category["deployment"] == (1, 1, 1, 2)
    assert by_version.per_category["score"] == (1, 0, 0, 1)
