"""Tests for the EEE migration steps: aggregate 0.1.0 -> 0.3.0 and instance 0.2.0 -> 0.3.0.

Each step is loaded from its file and called as a pure function with a real StepContext; the
records under tests/eee_records/ are hand-written at the older versions.
"""

from __future__ import annotations

import copy
import importlib.util
import json
from functools import cache
from itertools import pairwise
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft7Validator

from evalreg import Param, StepContext, load_registry
from evalreg.errors import DataLossError

ROOT = Path(__file__).resolve().parents[2]
RECORDS = Path(__file__).resolve().parents[1] / "eee_records"
AGG, INST = "eee.aggregate", "eee.instance"
BIG = 36893488147419103233  # 2**65 + 1: wider than 64 bits
UUID4 = "3f2b8c1e-9a4d-4e7b-8c2a-1d5e6f7a8b9c"
GOOD_PATH = f"data/lm_eval/mt_bench/qwen2-7b/{UUID4}_samples.jsonl"

AGG_CHAIN = ("0.1.0", "0.2.0", "0.2.1", "0.2.2", "0.2.3", "0.3.0")
INST_CHAIN = ("0.2.0", "0.2.1", "0.2.2", "0.2.3", "0.3.0")
LOSSLESS = {
    AGG: {("0.2.1", "0.2.2"), ("0.2.3", "0.3.0")},
    INST: {("0.2.1", "0.2.2"), ("0.2.2", "0.2.3"), ("0.2.3", "0.3.0")},
}
STEPS = [
    (family, a, b)
    for family, chain in ((AGG, AGG_CHAIN), (INST, INST_CHAIN))
    for a, b in pairwise(chain)
]


# -- utilities ------------------------------------------------------------------------------


@cache
def step(family: str, source: str, target: str) -> ModuleType:
    """Load one step module from its file, as the engine does."""
    path = ROOT / "migrations" / family / f"{source}_to_{target}.py"
    spec = importlib.util.spec_from_file_location(f"eee_step_{family}_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@cache
def _schema(family: str, version: str) -> dict[str, Any]:
    path = ROOT / "schemas" / family / f"{version}.schema.json"
    document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return document


def errors(record: Any, family: str, version: str) -> list[str]:
    """Return the validation errors of `record` at one version, each with its place."""
    validator = Draft7Validator(_schema(family, version))
    return [f"{e.json_path}: {e.message}" for e in validator.iter_errors(record)]


def assert_valid(record: Any, family: str, version: str) -> None:
    """Fail with every error if `record` is not valid at `version`."""
    found = errors(record, family, version)
    assert not found, "\n".join(found)


def containers(value: Any) -> set[int]:
    """Return the ids of every dict and list inside `value`."""
    if isinstance(value, dict):
        return {id(value)}.union(*(containers(v) for v in value.values()))
    if isinstance(value, list):
        return {id(value)}.union(*(containers(v) for v in value))
    return set()


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def run(
    family: str,
    source: str,
    target: str,
    record: dict[str, Any],
    ctx: StepContext | None = None,
) -> dict[str, Any]:
    """Apply one step (upgrade or downgrade); check it leaves its input as it was.

    A step may share what it does not change with its output: the engine copies the caller's
    record once before a chain (see test_migrate), so only mutation is checked here.
    """
    before = copy.deepcopy(record)
    ctx = ctx if ctx is not None else StepContext()
    upward = version_key(source) < version_key(target)
    module = step(family, source, target) if upward else step(family, target, source)
    out: dict[str, Any] = module.upgrade(record, ctx) if upward else module.downgrade(record, ctx)
    assert record == before, "the step changed its input"
    return out


def up(
    family: str, source: str, record: dict[str, Any], ctx: StepContext | None = None
) -> dict[str, Any]:
    """Apply the upgrade step that starts at `source`."""
    chain = AGG_CHAIN if family == AGG else INST_CHAIN
    target = chain[chain.index(source) + 1]
    return run(family, source, target, record, ctx)


def read(family: str, version: str, name: str) -> dict[str, Any]:
    """Return one hand-written JSON record."""
    path = RECORDS / family / version / name
    record: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return record


def instance_records() -> list[dict[str, Any]]:
    """Return the hand-written 0.2.0 instance records (one per JSONL line)."""
    text = (RECORDS / INST / "0.2.0" / "samples.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def notes(ctx: StepContext, kind: str) -> dict[str, str]:
    """Return the notes of one kind a step reported: by pointer, their detail; for moves and
    renames, by where the value was, where it went."""
    if kind in ("moved", "renamed"):
        return {n.source or "": n.pointer for n in ctx.notes if n.kind == kind}
    return {n.pointer: n.detail for n in ctx.notes if n.kind == kind}


def url_record() -> dict[str, Any]:
    return read(AGG, "0.1.0", "helm-url-sources.json")


def hf_record() -> dict[str, Any]:
    return read(AGG, "0.1.0", "hf-dataset-inline-samples.json")


def rich_record() -> dict[str, Any]:
    return read(AGG, "0.2.0", "inspect-agentic-rich-details.json")


def judged_record() -> dict[str, Any]:
    return read(AGG, "0.2.2", "lm-harness-judged.json")


def single_turn() -> dict[str, Any]:
    return instance_records()[0]


def multi_turn() -> dict[str, Any]:
    return instance_records()[1]


def agentic() -> dict[str, Any]:
    return instance_records()[2]


# -- every step ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("family", "source", "target"), STEPS, ids=[f"{f}:{a}_to_{b}" for f, a, b in STEPS]
)
def test_step_declares_its_versions_params_and_downgrade(
    family: str, source: str, target: str
) -> None:
    module = step(family, source, target)
    assert (source, target) == (module.FROM, module.TO)
    assert module.__doc__ and module.__doc__.splitlines()[0].strip()
    assert isinstance(module.PARAMS, tuple)
    assert all(isinstance(p, Param) for p in module.PARAMS)
    assert hasattr(module, "downgrade") is ((source, target) in LOSSLESS[family])


RECORD_FILES = sorted(p.relative_to(RECORDS) for p in RECORDS.rglob("*.json*"))


@pytest.mark.parametrize("relative", RECORD_FILES, ids=str)
def test_hand_written_records_are_valid_at_their_version(relative: Path) -> None:
    family, version = relative.parts[0], relative.parts[1]
    text = (RECORDS / relative).read_text(encoding="utf-8")
    lines = text.splitlines() if relative.suffix == ".jsonl" else [text]
    for line in lines:
        record = json.loads(line)
        assert record["schema_version"] == version
        assert_valid(record, family, version)


# -- aggregate 0.1.0 -> 0.2.0 --------------------------------------------------------------


def test_url_list_source_moves_into_every_result() -> None:
    record = url_record()
    ctx = StepContext()
    out = up(AGG, "0.1.0", record, ctx)
    assert_valid(out, AGG, "0.2.0")
    assert "source_data" not in out
    for result in out["evaluation_results"]:
        assert result["source_data"] == {
            "source_type": "url",
            "url": record["source_data"],
            "dataset_name": result["evaluation_name"],
        }
        assert list(result)[:2] == ["evaluation_name", "source_data"]
    moves = [(n.source, n.pointer) for n in ctx.notes if n.source == "/source_data"]
    assert moves == [
        ("/source_data", f"/evaluation_results/{i}/source_data/url")
        for i in range(len(out["evaluation_results"]))
    ]
    added = {n.pointer: (n.value, n.origin, n.source) for n in ctx.notes if n.kind == "added"}
    first = out["evaluation_results"][0]
    assert added["/evaluation_results/0/source_data/source_type"] == ("url", "derived", None)
    assert added["/evaluation_results/0/source_data/dataset_name"] == (
        first["evaluation_name"],
        "derived",
        "/evaluation_results/0/evaluation_name",
    )


def test_each_result_gets_its_own_copy_of_the_source() -> None:
    record = url_record()
    out = up(AGG, "0.1.0", record)
    first, second = (containers(r["source_data"]) for r in out["evaluation_results"])
    assert not first & second
    assert not (first | second) & containers(record)


def test_dataset_name_parameter_names_url_sources() -> None:
    out = up(AGG, "0.1.0", url_record(), StepContext({"dataset_name": "MMLU"}))
    assert {r["source_data"]["dataset_name"] for r in out["evaluation_results"]} == {"MMLU"}


def test_empty_url_list_becomes_an_other_source() -> None:
    record = url_record()
    record["source_data"] = []
    out = up(AGG, "0.1.0", record)
    assert_valid(out, AGG, "0.2.0")
    assert out["evaluation_results"][0]["source_data"] == {
        "source_type": "other",
        "dataset_name": "MMLU - Anatomy",
    }


@pytest.mark.parametrize("score_details", [None, "0.85", [0.85]])
def test_a_result_without_an_object_score_is_lost_only_when_allowed(score_details: Any) -> None:
    record = url_record()
    record["evaluation_results"][0]["score_details"] = score_details
    with pytest.raises(DataLossError, match=r"/evaluation_results/0: score_details is"):
        up(AGG, "0.1.0", record)
    ctx = StepContext(allow_loss=True)
    out = up(AGG, "0.1.0", record, ctx)
    assert_valid(out, AGG, "0.2.0")
    assert len(out["evaluation_results"]) == len(record["evaluation_results"]) - 1
    assert "/evaluation_results/0" in notes(ctx, "lost")


def test_hugging_face_source_keeps_every_field() -> None:
    record = hf_record()
    out = up(AGG, "0.1.0", record)
    assert_valid(out, AGG, "0.2.0")
    source = out["evaluation_results"][0]["source_data"]
    assert source == {"source_type": "hf_dataset", **record["source_data"]}
    assert source["samples_number"] == BIG
    assert type(source["samples_number"]) is int
    assert source["sample_ids"] == [0, 1, "gsm8k_0002"]


def test_result_with_its_own_source_keeps_it() -> None:
    record = url_record()
    own = {"source_type": "other", "dataset_name": "private"}
    record["evaluation_results"][1]["source_data"] = own
    out = up(AGG, "0.1.0", record)
    assert out["evaluation_results"][1]["source_data"] == own
    assert out["evaluation_results"][0]["source_data"]["source_type"] == "url"


def test_source_data_without_results_is_lost() -> None:
    record = url_record()
    record["evaluation_results"] = []
    with pytest.raises(DataLossError) as raised:
        up(AGG, "0.1.0", record)
    assert raised.value.pointer == "/source_data"
    ctx = StepContext(allow_loss=True)
    out = up(AGG, "0.1.0", record, ctx)
    assert "source_data" not in out
    assert "/source_data" in notes(ctx, "lost")


def test_string_inference_engine_becomes_an_object() -> None:
    out = up(AGG, "0.1.0", url_record())
    assert out["model_info"]["inference_engine"] == {"name": "vllm"}
    out = up(AGG, "0.1.0", hf_record())
    assert out["model_info"]["inference_engine"] == {"name": "ollama"}


def test_model_info_details_keep_their_numbers() -> None:
    record = url_record()
    out = up(AGG, "0.1.0", record)
    assert out["model_info"]["additional_details"] == record["model_info"]["additional_details"]
    assert out["model_info"]["additional_details"]["context_window"] == 128000


def test_generation_config_extras_move_into_additional_details() -> None:
    record = url_record()
    ctx = StepContext()
    out = up(AGG, "0.1.0", record, ctx)
    config = out["evaluation_results"][0]["generation_config"]
    assert config == {
        "generation_args": {"temperature": 0.0, "max_tokens": 1, "stop": ["\n"]},
        "additional_details": {
            "notes": "5-shot, answers scored by exact match on the letter",
            "subject": "anatomy",
            "method": "multiple_choice_joint",
            "num_fewshot": 5,
        },
    }
    moved = notes(ctx, "moved")
    base = "/evaluation_results/0/generation_config"
    assert moved[base + "/subject"] == f"{base}/additional_details/subject"
    assert moved[base + "/additional_details"] == f"{base}/additional_details/notes"


def test_generation_config_object_details_merge_and_collisions_are_lost() -> None:
    record = url_record()
    config = record["evaluation_results"][0]["generation_config"]
    config["additional_details"] = {"subject": "physics", "shots": 5}
    config["generation_args"] = "temperature=0"
    with pytest.raises(DataLossError) as raised:
        up(AGG, "0.1.0", record)
    assert raised.value.pointer == "/evaluation_results/0/generation_config/subject"
    ctx = StepContext(allow_loss=True)
    out = up(AGG, "0.1.0", record, ctx)
    assert_valid(out, AGG, "0.2.0")
    assert out["evaluation_results"][0]["generation_config"] == {
        "additional_details": {
            "subject": "physics",
            "shots": 5,
            "method": "multiple_choice_joint",
            "num_fewshot": 5,
            "generation_args": "temperature=0",
        }
    }
    assert list(notes(ctx, "lost")) == ["/evaluation_results/0/generation_config/subject"]


def test_detailed_results_url_is_kept_in_its_result() -> None:
    record = url_record()
    ctx = StepContext()
    out = up(AGG, "0.1.0", record, ctx)
    url = record["evaluation_results"][0]["detailed_evaluation_results_url"]
    assert out["evaluation_results"][0]["detailed_evaluation_results_url"] == url
    assert "/evaluation_results/0/detailed_evaluation_results_url" in notes(ctx, "kept")


@pytest.mark.parametrize(
    ("path", "fmt"),
    [
        (GOOD_PATH, "jsonl"),
        ("https://example.org/runs/samples.JSON?download=1", "json"),
        ("results/samples.parquet", None),
    ],
)
def test_per_sample_path_becomes_detailed_results(path: str, fmt: str | None) -> None:
    record = url_record()
    record["detailed_evaluation_results_per_samples"] = path
    ctx = StepContext()
    out = up(AGG, "0.1.0", record, ctx)
    assert_valid(out, AGG, "0.2.0")
    expected = {"file_path": path} if fmt is None else {"format": fmt, "file_path": path}
    assert out["detailed_evaluation_results"] == expected
    assert "detailed_evaluation_results_per_samples" not in out
    assert "/detailed_evaluation_results_per_samples" in notes(ctx, "moved")


def test_inline_per_sample_results_are_kept_in_detailed_results() -> None:
    record = hf_record()
    ctx = StepContext()
    out = up(AGG, "0.1.0", record, ctx)
    assert_valid(out, AGG, "0.2.0")
    samples = record["detailed_evaluation_results_per_samples"]
    assert out["detailed_evaluation_results"] == {"samples": samples}
    assert notes(ctx, "moved")["/detailed_evaluation_results_per_samples"] == (
        "/detailed_evaluation_results/samples"
    )


def test_bare_number_score_details_becomes_the_score() -> None:
    record = url_record()
    record["evaluation_results"][1]["score_details"] = 2
    assert_valid(record, AGG, "0.1.0")
    out = up(AGG, "0.1.0", record)
    assert out["evaluation_results"][1]["score_details"] == {"score": 2}
    assert_valid(out, AGG, "0.2.0")


def test_unknown_top_level_field_is_lost() -> None:
    record = url_record()
    record["notes"] = "hand-edited"
    with pytest.raises(DataLossError):
        up(AGG, "0.1.0", record)
    out = up(AGG, "0.1.0", record, StepContext(allow_loss=True))
    assert "notes" not in out


# -- aggregate 0.2.0 -> 0.2.1 --------------------------------------------------------------


def strings_read_back(converted: dict[str, str], original: dict[str, Any]) -> None:
    """Assert every converted value is a string that reads back to the original value."""
    assert list(converted) == list(original)
    for key, value in original.items():
        assert isinstance(converted[key], str)
        expected = value if isinstance(value, str) else json.loads(converted[key])
        assert expected == value, key


DETAIL_PLACES = [
    "/source_metadata/additional_details",
    "/model_info/additional_details",
    "/evaluation_results/0/source_data/additional_details",
    "/evaluation_results/0/metric_config/llm_scoring/additional_details",
    "/evaluation_results/0/metric_config/llm_scoring/judges/0/additional_details",
    "/evaluation_results/0/metric_config/llm_scoring/judges/0/model_info/additional_details",
    "/evaluation_results/0/score_details/details",
    "/evaluation_results/0/generation_config/generation_args/agentic_eval_config/additional_details",
    "/evaluation_results/0/generation_config/generation_args/agentic_eval_config/available_tools/0/parameters",
    "/evaluation_results/0/generation_config/generation_args/eval_plan/config",
    "/evaluation_results/1/source_data/additional_details",
    "/evaluation_results/2/source_data/additional_details",
    "/detailed_evaluation_results/additional_details",
]


def pointer(record: Any, where: str) -> Any:
    """Return the value at a JSON pointer (no escapes needed here)."""
    for part in where.strip("/").split("/"):
        record = record[int(part)] if isinstance(record, list) else record[part]
    return record


@pytest.mark.parametrize("where", DETAIL_PLACES)
def test_detail_objects_become_strings_that_read_back(where: str) -> None:
    record = rich_record()
    out = up(AGG, "0.2.0", record)
    strings_read_back(pointer(out, where), pointer(record, where))


def test_rich_record_is_valid_at_0_2_1_with_exact_conversions() -> None:
    record = rich_record()
    out = up(AGG, "0.2.0", record)
    assert_valid(out, AGG, "0.2.1")
    details = out["model_info"]["additional_details"]
    assert details["context_window"] == "200000"
    assert details["supports_tools"] == "true"
    assert details["license"] == "null"
    assert details["pricing"] == '{"input":3.0,"output":15.0}'
    assert details["modalities"] == '["text","image"]'
    assert details["request_id"] == str(BIG)
    assert details["family"] == "claude-3.5"
    result = out["evaluation_results"][0]
    assert result["evaluation_result_id"] == "101"
    assert result["source_data"]["sample_ids"] == ["1", "astropy__astropy-12907", str(BIG)]
    assert result["metric_config"]["metric_parameters"] == {
        "k": 1,
        "strict": True,
        "averaging": "micro",
        "bounds": "[0,1]",
    }
    limits = result["generation_config"]["generation_args"]["eval_limits"]
    assert limits["token_limit"] == BIG
    assert type(limits["token_limit"]) is int
    assert result["score_details"]["score"] == 0.49
    assert (
        result["score_details"]["uncertainty"]
        == (record["evaluation_results"][0]["score_details"]["uncertainty"])
    )


def test_eval_library_comes_from_parameters() -> None:
    out = up(AGG, "0.2.0", rich_record())
    assert out["eval_library"] == {"name": "unknown", "version": "unknown"}
    assert list(out).index("eval_library") == list(out).index("model_info") + 1
    ctx = StepContext({"eval_library_name": "inspect_ai", "eval_library_version": "0.3.25"})
    out = up(AGG, "0.2.0", rich_record(), ctx)
    assert out["eval_library"] == {"name": "inspect_ai", "version": "0.3.25"}
    assert_valid(out, AGG, "0.2.1")


def test_params_default_as_declared() -> None:
    declared = {p.name: p.default for p in step(AGG, "0.2.0", "0.2.1").PARAMS}
    assert declared == {"eval_library_name": "unknown", "eval_library_version": "unknown"}


def test_unknown_generation_args_move_into_additional_details() -> None:
    ctx = StepContext()
    out = up(AGG, "0.2.0", rich_record(), ctx)
    config = out["evaluation_results"][0]["generation_config"]
    assert "seed" not in config["generation_args"]
    assert "stop_sequences" not in config["generation_args"]
    assert config["additional_details"] == {
        "harness_commit": "9f1e2d3",
        "num_fewshot": "0",
        "seed": "42",
        "stop_sequences": '["###"]',
    }
    base = "/evaluation_results/0/generation_config"
    assert notes(ctx, "moved")[base + "/generation_args/seed"] == (
        f"{base}/additional_details/seed"
    )


def test_generation_arg_colliding_with_a_detail_is_lost() -> None:
    record = rich_record()
    record["evaluation_results"][0]["generation_config"]["additional_details"]["seed"] = 7
    with pytest.raises(DataLossError) as raised:
        up(AGG, "0.2.0", record)
    assert raised.value.pointer == "/evaluation_results/0/generation_config/generation_args/seed"
    out = up(AGG, "0.2.0", record, StepContext(allow_loss=True))
    assert out["evaluation_results"][0]["generation_config"]["additional_details"]["seed"] == "7"
    assert_valid(out, AGG, "0.2.1")


def test_generation_args_without_details_get_a_details_object() -> None:
    record = rich_record()
    del record["evaluation_results"][0]["generation_config"]["additional_details"]
    out = up(AGG, "0.2.0", record)
    details = out["evaluation_results"][0]["generation_config"]["additional_details"]
    assert details == {"seed": "42", "stop_sequences": '["###"]'}


def test_eval_plan_steps_become_strings() -> None:
    record = rich_record()
    out = up(AGG, "0.2.0", record)
    where = "/evaluation_results/0/generation_config/generation_args/eval_plan/steps"
    steps = pointer(out, where)
    assert steps[1] == "use_tools"
    assert [json.loads(s) for s in (steps[0], steps[2])] == [
        pointer(record, where)[0],
        pointer(record, where)[2],
    ]


def test_detailed_results_string_becomes_its_file_path() -> None:
    record = rich_record()
    record["detailed_evaluation_results"] = "logs/samples.jsonl"
    out = up(AGG, "0.2.0", record)
    assert out["detailed_evaluation_results"] == {"file_path": "logs/samples.jsonl"}
    record["detailed_evaluation_results"] = 5
    with pytest.raises(DataLossError):
        up(AGG, "0.2.0", record)


@settings(max_examples=50, deadline=None)
@given(
    st.dictionaries(
        st.text(max_size=5),
        st.recursive(
            st.none()
            | st.booleans()
            | st.integers()
            | st.floats(allow_nan=False, allow_infinity=False)
            | st.text(max_size=5),
            lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
            max_leaves=6,
        ),
        max_size=5,
    )
)
def test_any_detail_values_read_back_from_their_strings(details: dict[str, Any]) -> None:
    record = rich_record()
    record["model_info"]["additional_details"] = details
    out = up(AGG, "0.2.0", record)
    strings_read_back(out["model_info"]["additional_details"], details)
    assert_valid(out, AGG, "0.2.1")


# -- relabelling steps (both families) ------------------------------------------------------


def aggregate_at(version: str) -> dict[str, Any]:
    """Return the URL-sourced 0.1.0 record brought up to `version` step by step."""
    record = url_record()
    for source, target in pairwise(AGG_CHAIN):
        if source == version:
            break
        record = run(AGG, source, target, record)
    return record


def instance_at(version: str, record: dict[str, Any]) -> dict[str, Any]:
    """Return an instance record brought up to `version` step by step."""
    for source, target in pairwise(INST_CHAIN):
        if source == version:
            break
        record = run(INST, source, target, record)
    return record


LOSSLESS_PAIRS = sorted((f, a, b) for f, pairs in LOSSLESS.items() for a, b in pairs)


@pytest.mark.parametrize(
    ("family", "source", "target"),
    LOSSLESS_PAIRS,
    ids=[f"{f}:{a}<->{b}" for f, a, b in LOSSLESS_PAIRS],
)
def test_relabelling_steps_change_only_the_version(family: str, source: str, target: str) -> None:
    records = (
        [aggregate_at(source)]
        if family == AGG
        else [instance_at(source, r) for r in instance_records()]
    )
    for record in records:
        assert_valid(record, family, source)
        out = run(family, source, target, record)
        assert out == record | {"schema_version": target}
        assert_valid(out, family, target)
        back = run(family, target, source, out)
        assert back == record


# -- aggregate 0.2.2 -> 0.2.3 --------------------------------------------------------------


def test_model_info_gets_deployment_and_availability() -> None:
    record = judged_record()
    record["detailed_evaluation_results"] = {"format": "jsonl", "file_path": GOOD_PATH}
    out = up(AGG, "0.2.2", record)
    assert_valid(out, AGG, "0.2.3")
    assert out["model_info"]["additional_details"] == {
        "deployment_type": "self_deployed",
        "precision": "bf16",
        "model_availability": "unknown",
    }
    judges = out["evaluation_results"][0]["metric_config"]["llm_scoring"]["judges"]
    assert judges[0]["model_info"]["additional_details"] == {
        "deployment_type": "unknown",
        "model_availability": "unknown",
    }
    assert judges[1]["model_info"]["additional_details"] == {
        "model_availability": "closed_weights",
        "deployment_type": "unknown",
    }
    assert out["detailed_evaluation_results"] == record["detailed_evaluation_results"]


def test_deployment_parameters_fill_only_what_is_missing() -> None:
    record = judged_record()
    del record["detailed_evaluation_results"]
    params = {"deployment_type": "externally_managed", "model_availability": "open_weights"}
    out = up(AGG, "0.2.2", record, StepContext(params))
    details = out["model_info"]["additional_details"]
    assert details["deployment_type"] == "self_deployed"
    assert details["model_availability"] == "open_weights"
    del record["model_info"]["additional_details"]
    out = up(AGG, "0.2.2", record, StepContext(params))
    assert out["model_info"]["additional_details"] == params
    assert_valid(out, AGG, "0.2.3")


def test_deployment_value_outside_the_enum_is_lost() -> None:
    record = judged_record()
    del record["detailed_evaluation_results"]
    record["model_info"]["additional_details"]["deployment_type"] = "api"
    with pytest.raises(DataLossError) as raised:
        up(AGG, "0.2.2", record)
    assert raised.value.pointer == "/model_info/additional_details/deployment_type"
    ctx = StepContext(allow_loss=True)
    out = up(AGG, "0.2.2", record, ctx)
    assert out["model_info"]["additional_details"]["deployment_type"] == "unknown"
    assert "/model_info/additional_details/deployment_type" in notes(ctx, "lost")
    assert_valid(out, AGG, "0.2.3")


def test_deployment_parameter_outside_the_enum_is_refused() -> None:
    with pytest.raises(ValueError, match="deployment_type"):
        up(AGG, "0.2.2", judged_record(), StepContext({"deployment_type": "cloud"}))


def test_json_detailed_results_are_lost() -> None:
    record = judged_record()
    with pytest.raises(DataLossError) as raised:
        up(AGG, "0.2.2", record)
    assert raised.value.pointer == "/detailed_evaluation_results"
    assert "format 'json'" in raised.value.reason
    ctx = StepContext(allow_loss=True)
    out = up(AGG, "0.2.2", record, ctx)
    assert "detailed_evaluation_results" not in out
    assert "/detailed_evaluation_results" in notes(ctx, "lost")
    assert_valid(out, AGG, "0.2.3")


@pytest.mark.parametrize(
    "detailed",
    [
        {"format": "jsonl", "file_path": "results/mt_bench_samples.jsonl"},
        {"format": "jsonl"},
        "data/samples.jsonl",
    ],
    ids=["path-outside-layout", "no-path", "not-an-object"],
)
def test_detailed_results_outside_the_layout_are_lost(detailed: Any) -> None:
    record = judged_record()
    record["detailed_evaluation_results"] = detailed
    with pytest.raises(DataLossError) as raised:
        up(AGG, "0.2.2", record)
    assert raised.value.pointer == "/detailed_evaluation_results"


def test_missing_format_is_read_from_a_path_in_the_layout() -> None:
    record = judged_record()
    record["detailed_evaluation_results"] = {"file_path": GOOD_PATH, "total_rows": 160}
    out = up(AGG, "0.2.2", record)
    assert out["detailed_evaluation_results"] == {
        "format": "jsonl",
        "file_path": GOOD_PATH,
        "total_rows": 160,
    }
    assert_valid(out, AGG, "0.2.3")


def test_a_path_in_the_layout_with_upper_case_hex_is_kept() -> None:
    record = judged_record()
    upper = GOOD_PATH.replace(UUID4, UUID4.upper())
    record["detailed_evaluation_results"] = {"format": "jsonl", "file_path": upper}
    out = up(AGG, "0.2.2", record)
    assert out["detailed_evaluation_results"] == {"format": "jsonl", "file_path": upper}
    assert_valid(out, AGG, "0.2.3")


def test_relocated_detailed_results_keep_the_old_path_and_format() -> None:
    record = judged_record()
    ctx = StepContext({"detailed_results_file_path": GOOD_PATH})
    out = up(AGG, "0.2.2", record, ctx)
    assert out["detailed_evaluation_results"] == {
        "format": "jsonl",
        "file_path": GOOD_PATH,
        "total_rows": 160,
        "additional_details": {
            "original_file_path": "results/mt_bench_samples.json",
            "original_format": "json",
        },
    }
    assert set(notes(ctx, "moved")) == {
        "/detailed_evaluation_results/file_path",
        "/detailed_evaluation_results/format",
    }
    assert_valid(out, AGG, "0.2.3")
    with pytest.raises(ValueError, match="detailed_results_file_path"):
        up(AGG, "0.2.2", record, StepContext({"detailed_results_file_path": "x.jsonl"}))


def test_infinite_bounds_become_their_strings() -> None:
    record = judged_record()
    del record["detailed_evaluation_results"]
    config = record["evaluation_results"][0]["metric_config"]
    config["min_score"], config["max_score"] = float("-inf"), float("inf")
    out = up(AGG, "0.2.2", record)
    config = out["evaluation_results"][0]["metric_config"]
    assert (config["min_score"], config["max_score"]) == ("-Infinity", "Infinity")
    assert_valid(out, AGG, "0.2.3")


# -- instance 0.2.0 -> 0.2.1 ---------------------------------------------------------------


@pytest.mark.parametrize("index", [0, 1, 2], ids=["single_turn", "multi_turn", "agentic"])
def test_instance_records_are_valid_at_0_2_1(index: int) -> None:
    out = up(INST, "0.2.0", instance_records()[index])
    assert_valid(out, INST, "0.2.1")


def test_single_turn_values_take_their_0_2_1_types() -> None:
    record = single_turn()
    ctx = StepContext()
    out = up(INST, "0.2.0", record, ctx)
    assert out["sample_id"] == str(BIG)
    assert out["input"]["reference"] == ["72"]
    assert out["input"]["choices"] == ["72", "96"]
    assert out["output"] == {
        "raw": [record["output"]["raw"]],
        "reasoning_trace": [record["output"]["reasoning_trace"]],
    }
    assert out["evaluation"]["score"] == 1.0
    assert isinstance(out["evaluation"]["score"], float)
    assert out["token_usage"] == record["token_usage"]
    assert type(out["token_usage"]["input_tokens"]) is int
    metadata = out["metadata"]
    strings_read_back(
        {k: metadata[k] for k in record["metadata"]},
        record["metadata"],
    )
    assert metadata["subset"] == "main"
    assert json.loads(metadata["few_shot"]) == {"k": 8}
    assert "subset" not in out and "few_shot" not in out
    assert notes(ctx, "moved") == {
        "/subset": "/metadata/subset",
        "/few_shot": "/metadata/few_shot",
    }


def test_top_level_extra_colliding_with_metadata_is_lost() -> None:
    record = single_turn()
    record["metadata"]["subset"] = "other"
    with pytest.raises(DataLossError) as raised:
        up(INST, "0.2.0", record)
    assert raised.value.pointer == "/subset"
    out = up(INST, "0.2.0", record, StepContext(allow_loss=True))
    assert out["metadata"]["subset"] == "other"
    assert_valid(out, INST, "0.2.1")


def test_extras_create_metadata_when_there_is_none() -> None:
    record = multi_turn()
    record["judge"] = {"name": "gpt-4", "score": 3}
    out = up(INST, "0.2.0", record)
    assert out["metadata"] == {"judge": '{"name":"gpt-4","score":3}'}
    assert_valid(out, INST, "0.2.1")


def test_interactions_are_renamed_messages_in_place() -> None:
    record = multi_turn()
    ctx = StepContext()
    out = up(INST, "0.2.0", record, ctx)
    assert "interactions" not in out
    assert out["messages"] == record["interactions"]
    assert list(out).index("messages") == list(record).index("interactions")
    assert out["answer_attribution"][0]["source"] == "messages[3].content"
    assert out["answer_attribution"][0]["extracted_value"] == "Aloha again! A trip ..."
    assert out["evaluation"]["score"] == 0.0
    assert out["output"] is None
    assert notes(ctx, "renamed") == {"/interactions": "/messages"}


def test_agentic_tool_calls_take_their_0_2_1_types() -> None:
    record = agentic()
    ctx = StepContext()
    out = up(INST, "0.2.0", record, ctx)
    messages = out["messages"]
    assert messages[2]["tool_call_id"] == ["call_1"]
    assert messages[3]["tool_call_id"] == ["call_2"]
    arguments = messages[1]["tool_calls"][0]["arguments"]
    strings_read_back(arguments, record["interactions"][1]["tool_calls"][0]["arguments"])
    assert arguments["env"] == '{"LANG":"C"}'
    assert messages[4]["tool_calls"] is None
    assert out["answer_attribution"][0]["source"] == "messages[4].content"
    assert out["evaluation"]["score"] == 1
    performance = out["performance"]
    assert performance["sandbox_time_ms"] == 11000
    assert performance["additional_details"] == {"retries": "2", "region": "us-east-1"}
    assert "/performance/sandbox_time_ms" in notes(ctx, "kept")


def test_instance_step_shares_what_it_does_not_change() -> None:
    record = agentic()
    out = up(INST, "0.2.0", record)
    old, new = record["interactions"], out["messages"]
    assert [n is o for o, n in zip(old, new, strict=True)] == [True, False, False, True, True]
    calls = zip(old[1]["tool_calls"], new[1]["tool_calls"], strict=True)
    assert [n is o for o, n in calls] == [False, True]  # call_2's arguments were all text
    assert out["metadata"] is record["metadata"]
    assert out["token_usage"] is record["token_usage"]
    assert out["input"] is not record["input"]
    assert out["performance"] is not record["performance"]


def test_instance_evaluation_result_id_becomes_a_string() -> None:
    record = single_turn()
    record["evaluation_result_id"] = 7
    out = up(INST, "0.2.0", record)
    assert out["evaluation_result_id"] == "7"
    assert "evaluation_result_id" not in out["metadata"]


# -- whole chains --------------------------------------------------------------------------


def aggregate_essentials(record: dict[str, Any]) -> Any:
    """Return what no migration may change in an aggregate record."""
    return (
        record["evaluation_id"],
        record["retrieved_timestamp"],
        record["model_info"]["id"],
        record["model_info"]["name"],
        [
            (
                r["evaluation_name"],
                r["score_details"]["score"],
                r["metric_config"].get("evaluation_description"),
                r["metric_config"].get("level_names"),
            )
            for r in record["evaluation_results"]
        ],
    )


def as_list(value: Any) -> Any:
    return value if isinstance(value, list) or value is None else [value]


def instance_essentials(record: dict[str, Any]) -> Any:
    """Return what no migration may change in an instance record (0.2.0 types normalised)."""
    turns = record.get("messages", record.get("interactions")) or []
    return (
        record["evaluation_id"],
        str(record["sample_id"]),
        record["input"]["raw"],
        as_list(record["input"]["reference"]),
        as_list((record["output"] or {}).get("raw")),
        [(t["turn_idx"], t["role"], t.get("content")) for t in turns],
        [a["extracted_value"] for a in record["answer_attribution"]],
        float(record["evaluation"]["score"]),
        record["evaluation"]["is_correct"],
    )


def test_aggregate_chain_from_0_1_0_to_0_3_0_and_back_down() -> None:
    record = url_record()
    essentials = aggregate_essentials(record)
    seen: dict[str, dict[str, Any]] = {"0.1.0": record}
    for source, target in pairwise(AGG_CHAIN):
        ctx = StepContext()
        seen[target] = run(AGG, source, target, seen[source], ctx)
        assert not notes(ctx, "lost")
        assert_valid(seen[target], AGG, target)
        assert seen[target]["schema_version"] == target
        assert aggregate_essentials(seen[target]) == essentials
    latest = seen["0.3.0"]
    assert (
        latest["detailed_evaluation_results"]["file_path"]
        == (record["detailed_evaluation_results_per_samples"])
    )
    details = latest["evaluation_results"][0]["score_details"]["details"]
    assert details["seed"] == str(BIG)
    down = run(AGG, "0.3.0", "0.2.3", latest)
    assert down == seen["0.2.3"]
    assert_valid(down, AGG, "0.2.3")
    down = run(AGG, "0.2.2", "0.2.1", seen["0.2.2"])
    assert down == seen["0.2.1"]
    assert_valid(down, AGG, "0.2.1")
    assert aggregate_essentials(down) == essentials


def test_aggregate_chain_with_inline_samples_needs_loss_at_0_2_3() -> None:
    record = hf_record()
    essentials = aggregate_essentials(record)
    current = record
    for source, target in pairwise(AGG_CHAIN):
        if source == "0.2.2":
            with pytest.raises(DataLossError):
                run(AGG, source, target, current)
        ctx = StepContext(allow_loss=True)
        current = run(AGG, source, target, current, ctx)
        assert_valid(current, AGG, target)
        assert aggregate_essentials(current) == essentials
        assert bool(notes(ctx, "lost")) is (source == "0.2.2")
    assert current["evaluation_results"][0]["source_data"]["samples_number"] == BIG
    assert current["evaluation_results"][0]["source_data"]["sample_ids"] == ["0", "1", "gsm8k_0002"]


@pytest.mark.parametrize("index", [0, 1, 2], ids=["single_turn", "multi_turn", "agentic"])
def test_instance_chain_to_0_3_0_and_back_down_to_0_2_1(index: int) -> None:
    record = instance_records()[index]
    essentials = instance_essentials(record)
    seen = {"0.2.0": record}
    for source, target in pairwise(INST_CHAIN):
        seen[target] = run(INST, source, target, seen[source])
        assert_valid(seen[target], INST, target)
        assert instance_essentials(seen[target]) == essentials
    current = seen["0.3.0"]
    for source, target in pairwise(INST_CHAIN[:0:-1]):
        current = run(INST, source, target, current)
        assert current == seen[target]
        assert_valid(current, INST, target)
        assert instance_essentials(current) == essentials


# -- through the engine --------------------------------------------------------------------


@pytest.fixture(scope="module")
def registry() -> Any:
    return load_registry([ROOT], builtin=False)


def test_engine_migrates_a_0_1_0_aggregate_as_the_steps_do(registry: Any) -> None:
    record = url_record()
    result = registry.migrate(record, "latest", family=AGG)
    assert result.status == "migrated", result.error
    assert result.steps == tuple(f"{a} -> {b}" for a, b in pairwise(AGG_CHAIN))
    assert result.record == aggregate_at("0.3.0")
    assert record == url_record()
    down = registry.migrate(result.record, "0.2.3", family=AGG)
    assert down.status == "migrated", down.error
    assert down.record["schema_version"] == "0.2.3"


def test_engine_refuses_loss_unless_allowed(registry: Any) -> None:
    record = judged_record()
    result = registry.migrate(record, "0.3.0", family=AGG)
    assert result.status == "failed"
    assert "/detailed_evaluation_results" in (result.error or "")
    result = registry.migrate(record, "0.3.0", family=AGG, allow_loss=True)
    assert result.status == "migrated", result.error
    assert [n.pointer for n in result.notes if n.kind == "lost"] == ["/detailed_evaluation_results"]


def test_engine_migrates_instance_records_up_and_down(registry: Any) -> None:
    for record in instance_records():
        result = registry.migrate(record, "latest", family=INST)
        assert result.status == "migrated", result.error
        assert result.record["schema_version"] == "0.3.0"
        down = registry.migrate(result.record, "0.2.1", family=INST)
        assert down.status == "migrated", down.error
        assert down.record == instance_at("0.2.1", record)
