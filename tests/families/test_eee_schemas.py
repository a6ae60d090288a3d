"""Tests for the EEE schema documents: each version states exactly the documented facts."""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft7Validator

from evalreg import load_registry

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = ROOT / "schemas"
AGG, INST = "eee.aggregate", "eee.instance"
STRINGS_ONLY = {"type": "object", "additionalProperties": {"type": "string"}}
UUID4 = "3f2b8c1e-9a4d-4e7b-8c2a-1d5e6f7a8b9c"

VERSION_KEYWORD = {
    (AGG, "0.1.0"): "0.1.0",
    (AGG, "0.2.0"): "0.2.0",
    (AGG, "0.2.1"): "0.2.1",
    (AGG, "0.2.2"): "0.2.2",
    (AGG, "0.2.3"): "0.2.3",
    (AGG, "0.3.0"): "0.3.0",
    (INST, "0.2.0"): "instance_level_eval_0.2.0",
    (INST, "0.2.1"): "instance_level_eval_0.2.1",
    (INST, "0.2.2"): "instance_level_eval_0.2.2",
    (INST, "0.2.3"): "instance_level_eval_0.2.3",
    (INST, "0.3.0"): "0.3.0",
}
SEEDS = {(AGG, "0.2.0"), (INST, "0.2.0")}
WRITTEN = sorted(set(VERSION_KEYWORD) - SEEDS)


def ids(pairs: Any) -> list[str]:
    """Return readable test ids for (family, version) pairs."""
    return [f"{family}@{version}" for family, version in sorted(pairs)]


@cache
def _schema(family: str, version: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(
        (SCHEMAS / family / f"{version}.schema.json").read_text(encoding="utf-8")
    )
    return document


def schema(family: str, version: str) -> dict[str, Any]:
    """Return a private copy of one schema document."""
    return copy.deepcopy(_schema(family, version))


def at(document: dict[str, Any], path: str) -> Any:
    """Return the node of `document` at a slash-separated path of keys."""
    node: Any = document
    for key in path.strip("/").split("/"):
        node = node[int(key)] if isinstance(node, list) else node[key]
    return node


def is_valid(record: Any, family: str, version: str) -> bool:
    """Return whether `record` is valid at one version."""
    return Draft7Validator(_schema(family, version)).is_valid(record)


def strings_only(node: dict[str, Any]) -> bool:
    """Return whether a subschema is a strings-only object (descriptions aside)."""
    return {k: v for k, v in node.items() if k != "description"} == STRINGS_ONLY


def walk(node: Any) -> list[Any]:
    """Return every dict and list inside `node`, itself included."""
    found = [node]
    children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else []
    for child in children:
        found += walk(child)
    return found


def minimal_aggregate(version: str) -> dict[str, Any]:
    """Return a small aggregate record valid at `version` (0.2.1 or later)."""
    record: dict[str, Any] = {
        "schema_version": version,
        "evaluation_id": "demo/org_model/1",
        "retrieved_timestamp": "1",
        "source_metadata": {
            "source_type": "evaluation_run",
            "source_organization_name": "Example",
            "evaluator_relationship": "first_party",
        },
        "model_info": {"name": "Model", "id": "org/model"},
        "eval_library": {"name": "harness", "version": "1.0"},
        "evaluation_results": [
            {
                "evaluation_name": "demo",
                "source_data": {"source_type": "other", "dataset_name": "demo"},
                "metric_config": {"lower_is_better": False, "score_type": "binary"},
                "score_details": {"score": 0.5},
            }
        ],
    }
    if version in ("0.2.3", "0.3.0"):
        record["model_info"]["additional_details"] = {
            "deployment_type": "unknown",
            "model_availability": "unknown",
        }
    return record


# -- every document ------------------------------------------------------------------------


@pytest.mark.parametrize(("family", "version"), sorted(VERSION_KEYWORD), ids=ids(VERSION_KEYWORD))
def test_schema_is_valid_draft7_without_id(family: str, version: str) -> None:
    document = _schema(family, version)
    Draft7Validator.check_schema(document)
    assert document["$schema"] == "http://json-schema.org/draft-07/schema#"
    assert "$id" not in document
    assert document["version"] == VERSION_KEYWORD[(family, version)]


@pytest.mark.parametrize(("family", "version"), WRITTEN, ids=ids(WRITTEN))
def test_schema_file_is_pretty_printed_with_two_spaces(family: str, version: str) -> None:
    text = (SCHEMAS / family / f"{version}.schema.json").read_text(encoding="utf-8")
    assert text == json.dumps(json.loads(text), indent=2, ensure_ascii=False) + "\n"


@pytest.mark.parametrize(
    ("family", "version", "same_as"),
    [
        (AGG, "0.2.2", "0.2.1"),
        (AGG, "0.3.0", "0.2.3"),
        (INST, "0.2.2", "0.2.1"),
        (INST, "0.2.3", "0.2.1"),
        (INST, "0.3.0", "0.2.1"),
    ],
    ids=lambda value: str(value),
)
def test_versions_that_differ_only_in_the_version_string(
    family: str, version: str, same_as: str
) -> None:
    one, other = schema(family, version), schema(family, same_as)
    del one["version"], other["version"]
    assert one == other


def test_registry_knows_every_version_and_assigns_ids() -> None:
    registry = load_registry([ROOT], builtin=False)
    assert registry.versions(AGG) == ("0.1.0", "0.2.0", "0.2.1", "0.2.2", "0.2.3", "0.3.0")
    assert registry.versions(INST) == ("0.2.0", "0.2.1", "0.2.2", "0.2.3", "0.3.0")
    assert registry.schema_id(AGG, "0.2.1") == "urn:evalreg:eee.aggregate:0.2.1"
    assert registry.schema_id(INST, "0.3.0") == "urn:evalreg:eee.instance:0.3.0"


# -- aggregate 0.1.0 -----------------------------------------------------------------------


def test_aggregate_0_1_0_top_level() -> None:
    document = _schema(AGG, "0.1.0")
    assert document["additionalProperties"] is False
    assert document["required"] == [
        "schema_version",
        "evaluation_id",
        "retrieved_timestamp",
        "source_data",
        "source_metadata",
        "model_info",
        "evaluation_results",
    ]
    assert "$defs" not in document
    assert "evaluation_timestamp" not in document["properties"]
    assert "detailed_evaluation_results" not in document["properties"]
    seed = _schema(AGG, "0.2.0")["properties"]["source_metadata"]
    assert document["properties"]["source_metadata"] == seed


def test_aggregate_0_1_0_source_data_forms() -> None:
    node = at(_schema(AGG, "0.1.0"), "properties/source_data")
    validator = Draft7Validator(node)
    assert validator.is_valid(["https://example.org/a", "https://example.org/b"])
    hf = {
        "dataset_name": "gsm8k",
        "hf_repo": "openai/gsm8k",
        "hf_split": "test",
        "samples_number": 10,
        "sample_ids": [1, "two"],
        "additional_details": {"shots": 8, "nested": {"any": [1]}},
    }
    assert validator.is_valid(hf)
    assert not validator.is_valid({"hf_repo": "openai/gsm8k"})
    assert not validator.is_valid({"dataset_name": "x", "samples_number": "10"})
    assert not validator.is_valid([1, 2])


def test_aggregate_0_1_0_model_info_and_results() -> None:
    document = _schema(AGG, "0.1.0")
    model_info = Draft7Validator(document["properties"]["model_info"])
    assert model_info.is_valid({"name": "m", "id": "o/m", "inference_engine": "vllm"})
    assert not model_info.is_valid({"name": "m", "id": "o/m", "inference_engine": {"name": "x"}})
    assert model_info.is_valid({"name": "m", "id": "o/m", "additional_details": {"n": 7}})
    assert not model_info.is_valid({"name": "m"})

    items = at(document, "properties/evaluation_results/items")
    assert items["required"] == ["evaluation_name", "metric_config", "score_details"]
    assert "source_data" not in items["properties"]
    assert "llm_scoring" not in items["properties"]["metric_config"]["properties"]
    assert "if" in items["properties"]["metric_config"]
    score_details = items["properties"]["score_details"]
    assert "type" not in score_details
    assert "uncertainty" not in score_details["properties"]
    result = Draft7Validator(items)
    base = {
        "evaluation_name": "e",
        "metric_config": {"lower_is_better": False, "score_type": "binary"},
        "score_details": {"score": 1},
    }
    # generation_args and additional_details sit beside `properties`: any object passes.
    assert result.is_valid(
        base
        | {
            "generation_config": {
                "subject": "anatomy",
                "generation_args": "not an object",
                "additional_details": {"not": "a string"},
            },
            "detailed_evaluation_results_url": "https://example.org/r.json",
        }
    )
    assert not result.is_valid(base | {"generation_config": "text"})
    assert not result.is_valid(base | {"score_details": {"score": "high"}})
    assert result.is_valid(base | {"score_details": 0.5})
    assert not result.is_valid(
        base | {"metric_config": {"lower_is_better": False, "score_type": "levels"}}
    )


def test_aggregate_0_1_0_per_sample_results() -> None:
    node = at(_schema(AGG, "0.1.0"), "properties/detailed_evaluation_results_per_samples")
    validator = Draft7Validator(node)
    sample = {"sample_id": "1", "input": "q", "ground_truth": "a", "response": "a"}
    assert validator.is_valid("data/samples.jsonl")
    assert validator.is_valid([sample])
    assert validator.is_valid([sample | {"ground_truth": ["a", "b"], "prompt": "p"}])
    assert validator.is_valid([sample | {"choices": ["x", "y"]}])
    assert validator.is_valid([sample | {"choices": [["A", "x"], ["B", "y"]]}])
    assert not validator.is_valid([sample | {"choices": [["A", "x", "extra"]]}])
    token = {"token_id": 5, "logprob": -0.1, "decoded_token": "a"}
    assert validator.is_valid([sample | {"full_logprobs": [[token]]}])
    assert not validator.is_valid([sample | {"full_logprobs": [[{"token_id": 5}]]}])
    missing = dict(sample)
    del missing["response"]
    assert not validator.is_valid([missing])


# -- aggregate 0.2.1 / 0.2.2 ---------------------------------------------------------------

RESULT = "properties/evaluation_results/items/properties"
METRIC = RESULT + "/metric_config/properties"
GENERATION = RESULT + "/generation_config/properties"
ARGS = GENERATION + "/generation_args/properties"

STRINGS_ONLY_AT_0_2_1 = [
    "properties/source_metadata/properties/additional_details",
    "properties/eval_library/properties/additional_details",
    "properties/detailed_evaluation_results/properties/additional_details",
    METRIC + "/additional_details",
    METRIC + "/llm_scoring/properties/additional_details",
    RESULT + "/score_details/properties/details",
    GENERATION + "/additional_details",
    ARGS + "/agentic_eval_config/properties/additional_details",
    ARGS + "/agentic_eval_config/properties/available_tools/items/properties/parameters",
    ARGS + "/eval_plan/properties/config",
    "$defs/judge_config/properties/additional_details",
    "$defs/model_info/properties/additional_details",
    "$defs/source_data_url/properties/additional_details",
    "$defs/source_data_hf/properties/additional_details",
    "$defs/source_data_private/properties/additional_details",
]


@pytest.mark.parametrize("path", STRINGS_ONLY_AT_0_2_1)
def test_aggregate_0_2_1_detail_objects_hold_only_strings(path: str) -> None:
    assert strings_only(at(_schema(AGG, "0.2.1"), path))


def test_aggregate_0_2_1_has_no_any_valued_objects_left() -> None:
    document = _schema(AGG, "0.2.1")
    assert "additional_properties_object" not in document["$defs"]
    assert all(
        node.get("additionalProperties") is not True
        for node in walk(document)
        if isinstance(node, dict)
    )
    refs = {node["$ref"] for node in walk(document) if isinstance(node, dict) and "$ref" in node}
    assert refs == {
        "#/$defs/model_info",
        "#/$defs/judge_config",
        "#/$defs/source_data_url",
        "#/$defs/source_data_hf",
        "#/$defs/source_data_private",
    }


def test_aggregate_0_2_1_eval_library_and_new_fields() -> None:
    document = _schema(AGG, "0.2.1")
    assert document["required"] == [*_schema(AGG, "0.2.0")["required"], "eval_library"]
    library = document["properties"]["eval_library"]
    assert library["required"] == ["name", "version"]
    assert library["properties"]["name"]["type"] == "string"
    assert library["properties"]["version"]["type"] == "string"
    assert at(document, RESULT + "/evaluation_result_id")["type"] == "string"
    for name in ("metric_id", "metric_name", "metric_kind", "metric_unit"):
        assert at(document, METRIC + "/" + name)["type"] == "string"
    parameters = at(document, METRIC + "/metric_parameters")
    assert parameters["type"] == "object"
    assert parameters["additionalProperties"] == {"type": ["string", "number", "boolean", "null"]}
    assert at(document, "properties/detailed_evaluation_results")["type"] == "object"


def test_aggregate_0_2_1_closed_and_narrowed_places() -> None:
    document = _schema(AGG, "0.2.1")
    assert at(document, GENERATION + "/generation_args")["additionalProperties"] is False
    assert at(document, ARGS + "/eval_plan/properties/steps/items") == {"type": "string"}
    assert at(document, "$defs/source_data_hf/properties/sample_ids/items") == {"type": "string"}
    for name in ("source_data_url", "source_data_hf"):
        assert "additionalProperties" not in document["$defs"][name]
    assert "additionalProperties" not in at(document, METRIC + "/llm_scoring")


def test_aggregate_0_2_1_rejects_what_0_2_0_accepted() -> None:
    record = minimal_aggregate("0.2.1")
    assert is_valid(record, AGG, "0.2.1")
    without_library = copy.deepcopy(record)
    del without_library["eval_library"]
    assert not is_valid(without_library, AGG, "0.2.1")
    number_detail = copy.deepcopy(record)
    number_detail["model_info"]["additional_details"] = {"params_b": 7}
    assert not is_valid(number_detail, AGG, "0.2.1")
    number_detail["model_info"]["additional_details"] = {"params_b": "7"}
    assert is_valid(number_detail, AGG, "0.2.1")
    unknown_arg = copy.deepcopy(record)
    unknown_arg["evaluation_results"][0]["generation_config"] = {"generation_args": {"seed": 1}}
    assert not is_valid(unknown_arg, AGG, "0.2.1")
    step_object = copy.deepcopy(record)
    step_object["evaluation_results"][0]["generation_config"] = {
        "generation_args": {"eval_plan": {"steps": [{"solver": "react"}]}}
    }
    assert not is_valid(step_object, AGG, "0.2.1")
    detailed = copy.deepcopy(record)
    detailed["detailed_evaluation_results"] = "data/x.jsonl"
    assert not is_valid(detailed, AGG, "0.2.1")


# -- aggregate 0.2.3 / 0.3.0 ---------------------------------------------------------------


def test_aggregate_0_2_3_model_info_details() -> None:
    model_info = _schema(AGG, "0.2.3")["$defs"]["model_info"]
    assert model_info["required"] == ["name", "id", "additional_details"]
    details = model_info["properties"]["additional_details"]
    assert details["required"] == ["deployment_type", "model_availability"]
    assert details["properties"]["deployment_type"]["enum"] == [
        "self_deployed",
        "externally_managed",
        "unknown",
    ]
    assert details["properties"]["model_availability"]["enum"] == [
        "open_weights",
        "closed_weights",
        "unknown",
    ]
    assert details["additionalProperties"] == {"type": "string"}
    record = minimal_aggregate("0.2.3")
    assert is_valid(record, AGG, "0.2.3")
    for bad in ({"deployment_type": "api"}, {"extra": 1}):
        broken = copy.deepcopy(record)
        broken["model_info"]["additional_details"].update(bad)
        assert not is_valid(broken, AGG, "0.2.3")
    del record["model_info"]["additional_details"]
    assert not is_valid(record, AGG, "0.2.3")


def test_aggregate_0_2_3_if_clauses_require_score_type() -> None:
    document = _schema(AGG, "0.2.3")
    config = at(document, "properties/evaluation_results/items/properties/metric_config")
    assert config["if"]["required"] == ["score_type"]
    assert config["else"]["if"]["required"] == ["score_type"]
    record = minimal_aggregate("0.2.3")
    del record["evaluation_results"][0]["metric_config"]["score_type"]
    assert is_valid(record, AGG, "0.2.3")
    # Without `required`, a missing score_type made the `levels` branch apply.
    older = minimal_aggregate("0.2.2")
    del older["evaluation_results"][0]["metric_config"]["score_type"]
    assert not is_valid(older, AGG, "0.2.2")
    older["evaluation_results"][0]["metric_config"].update(level_names=[], has_unknown_level=False)
    assert is_valid(older, AGG, "0.2.2")


@pytest.mark.parametrize(
    ("bound", "valid"),
    [(0, True), (1.5, True), ("Infinity", True), ("-Infinity", True), (None, True), ("inf", False)],
)
def test_aggregate_0_2_3_score_bounds(bound: Any, valid: bool) -> None:
    record = minimal_aggregate("0.2.3")
    record["evaluation_results"][0]["metric_config"] = {
        "lower_is_better": False,
        "score_type": "continuous",
        "min_score": bound,
        "max_score": bound,
    }
    assert is_valid(record, AGG, "0.2.3") is valid


@pytest.mark.parametrize(
    ("path", "valid"),
    [
        (f"data/helm/openai/gpt-4o/{UUID4}_samples.jsonl", True),
        # upstream's pattern takes either case ([0-9A-Fa-f]), as the amended schemas do
        (f"data/helm/openai/gpt-4o/{UUID4.upper()}_samples.jsonl", True),
        ("data/helm/openai/gpt-4o/3f2b8c1e-9a4d-4e7b-Cc2a-1d5e6f7a8b9c_samples.jsonl", False),
        ("data/helm/openai/gpt-4o/3f2b8c1e-9a4d-1e7b-8c2a-1d5e6f7a8b9c_samples.jsonl", False),
        (f"data/helm/openai/{UUID4}_samples.jsonl", False),
        (f"data/helm/openai/gpt-4o/extra/{UUID4}_samples.jsonl", False),
        (f"data/helm/openai/gpt-4o/{UUID4}_samples.json", False),
        (f"results/helm/openai/gpt-4o/{UUID4}_samples.jsonl", False),
    ],
)
def test_aggregate_0_2_3_detailed_results_path(path: str, valid: bool) -> None:
    for version in ("0.2.3", "0.3.0"):
        record = minimal_aggregate(version)
        record["detailed_evaluation_results"] = {"format": "jsonl", "file_path": path}
        assert is_valid(record, AGG, version) is valid


def test_aggregate_0_2_3_detailed_results_requires_jsonl_and_path() -> None:
    node = _schema(AGG, "0.2.3")["properties"]["detailed_evaluation_results"]
    assert node["required"] == ["format", "file_path"]
    assert node["properties"]["format"]["enum"] == ["jsonl"]
    record = minimal_aggregate("0.2.3")
    path = f"data/a/b/c/{UUID4}_samples.jsonl"
    for detailed in (
        {"format": "json", "file_path": path},
        {"file_path": path},
        {"format": "jsonl"},
    ):
        record["detailed_evaluation_results"] = detailed
        assert not is_valid(record, AGG, "0.2.3")


# -- instance 0.2.1 and later --------------------------------------------------------------


def test_instance_0_2_1_top_level() -> None:
    document = _schema(INST, "0.2.1")
    assert document["additionalProperties"] is False
    assert document["properties"]["evaluation_result_id"]["type"] == "string"
    names = {key for node in walk(document) if isinstance(node, dict) for key in node}
    names |= {
        item
        for node in walk(document)
        if isinstance(node, dict) and isinstance(node.get("required"), list)
        for item in node["required"]
    }
    assert "interactions" not in names
    assert "messages" in document["properties"]
    conditions = document["allOf"]
    assert conditions[0]["then"]["properties"]["messages"] == {"type": "null"}
    assert conditions[1]["then"]["required"] == ["messages"]
    seed = _schema(INST, "0.2.0")
    assert (
        document["properties"]["messages"]["items"]["required"]
        == (seed["properties"]["interactions"]["items"]["required"])
    )


def test_instance_0_2_1_types() -> None:
    p = _schema(INST, "0.2.1")["properties"]
    message = p["messages"]["items"]["properties"]
    assert message["tool_call_id"]["type"] == ["array", "null"]
    assert message["tool_call_id"]["items"] == {"type": "string"}
    arguments = message["tool_calls"]["items"]["properties"]["arguments"]
    assert arguments["type"] == ["object", "null"]
    assert arguments["additionalProperties"] == {"type": "string"}
    assert p["sample_id"]["type"] == "string"
    assert p["sample_hash"]["type"] == ["string", "null"]
    assert p["input"]["properties"]["formatted"]["type"] == ["string", "null"]
    assert p["input"]["properties"]["reference"]["type"] == "array"
    assert p["input"]["properties"]["reference"]["items"] == {"type": "string"}
    assert p["input"]["properties"]["choices"]["type"] == ["array", "null"]
    assert p["output"]["properties"]["raw"]["type"] == "array"
    assert p["output"]["properties"]["raw"]["items"] == {"type": "string"}
    assert p["output"]["properties"]["reasoning_trace"]["type"] == ["array", "null"]
    assert p["evaluation"]["properties"]["score"]["type"] == "number"
    assert p["evaluation"]["properties"]["num_turns"]["type"] == ["integer", "null"]
    assert p["evaluation"]["properties"]["tool_calls_count"]["type"] == ["integer", "null"]
    for count in ("input_tokens_cache_write", "input_tokens_cache_read", "reasoning_tokens"):
        assert p["token_usage"]["properties"][count]["type"] == ["integer", "null"]
    performance = p["performance"]
    assert "additionalProperties" not in performance
    for timing in ("latency_ms", "time_to_first_token_ms", "generation_time_ms"):
        assert performance["properties"][timing]["type"] == ["number", "null"]
    assert performance["properties"]["additional_details"]["type"] == ["object", "null"]
    assert performance["properties"]["additional_details"]["additionalProperties"] == {
        "type": "string"
    }
    assert p["metadata"]["type"] == ["object", "null"]
    assert p["metadata"]["additionalProperties"] == {"type": "string"}


def test_instance_0_2_1_rejects_what_0_2_0_accepted() -> None:
    record = {
        "schema_version": "0.2.1",
        "evaluation_id": "e",
        "model_id": "org/model",
        "evaluation_name": "demo",
        "sample_id": "1",
        "interaction_type": "single_turn",
        "input": {"raw": "q", "reference": ["a"]},
        "output": {"raw": ["a"]},
        "answer_attribution": [],
        "evaluation": {"score": 1.0, "is_correct": True},
    }
    assert is_valid(record, INST, "0.2.1")
    for change in (
        {"sample_id": 1},
        {"input": {"raw": "q", "reference": "a"}},
        {"output": {"raw": "a"}},
        {"evaluation": {"score": True, "is_correct": True}},
        {"metadata": {"difficulty": 2}},
        {"subset": "main"},
    ):
        assert not is_valid(record | change, INST, "0.2.1"), change
    assert is_valid(record | {"metadata": None, "sample_hash": None}, INST, "0.2.1")
