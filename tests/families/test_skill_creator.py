"""The skill-creator families: the tool's formats by period, the seed's, variants, detection."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from evalreg import Registry
from evalreg.io.readers import read_items

ROOT = Path(__file__).parents[2]
BUNDLED = ROOT / "evalreg" / "examples" / "skill-creator"
# The bundled example datastore has one grading file broken on purpose.
BROKEN = BUNDLED / "csv-cleaner-workspace/iteration-1/eval-0-dedupe-rows/without_skill/grading.json"
SEED_EXAMPLES = sorted(
    p
    for p in [
        *BUNDLED.rglob("*.json"),
        *(ROOT / "tests/examples").glob("skill-creator.*/valid/**/*.json"),
    ]
    if p != BROKEN
)

# -- files as the skill-creator tool wrote them, by period (small, written for these tests) --

FEB17 = {  # first release with evaluation modes, 17 to 23 Feb 2026
    "timing.json": {
        "executor_start": "2026-02-18T09:00:00Z",
        "executor_end": "2026-02-18T09:02:10Z",
        "executor_duration_seconds": 130.0,
        "grader_start": "2026-02-18T09:02:11Z",
        "grader_end": "2026-02-18T09:02:40Z",
        "grader_duration_seconds": 29.0,
        "total_duration_seconds": 159.0,
    },
    "eval_metadata.json": {
        "eval_id": 2,
        "prompt": "Split the invoices PDF into one file per customer.",
        "assertions": ["One PDF per customer exists", "No page is lost"],
        "input_files": ["/tmp/ws/eval-2/with_skill/inputs/invoices.pdf"],
        "skill_path": "/tmp/ws/eval-2/with_skill/skill",
        "output_dir": "/tmp/ws/eval-2/with_skill",
        "inputs_dir": "/tmp/ws/eval-2/with_skill/inputs",
        "outputs_dir": "/tmp/ws/eval-2/with_skill/outputs",
        "no_skill": False,
        "original_skill_path": "/home/me/skills/pdf-split",
    },
}

FEB24 = {  # 24 Feb 2026 through July 2026
    "evals.json": {
        "skill_name": "pdf-split",
        "evals": [
            {
                "id": 1,
                "prompt": "Split the invoices PDF into one file per customer.",
                "expected_output": "One PDF per customer, named after the customer",
                "files": ["evals/files/invoices.pdf"],
                "expectations": ["One PDF per customer exists", "No page is lost"],
            },
            {"id": 2, "prompt": "Merge the two reports.", "files": []},
        ],
    },
    "eval_metadata.json": {
        "eval_id": 0,
        "eval_name": "split-by-customer",
        "prompt": "Split the invoices PDF into one file per customer.",
        "assertions": [],
    },
    "timing.json": {"total_tokens": 51234, "duration_ms": 80412, "total_duration_seconds": 80.4},
    "grading.json": {
        "expectations": [
            {"text": "One PDF per customer exists", "passed": True, "evidence": "4 files in out/"},
            {"text": "No page is lost", "passed": False, "evidence": "12 of 13 pages found"},
        ],
        "summary": {"passed": 1, "failed": 1, "total": 2, "pass_rate": 0.5},
        "execution_metrics": {"tool_calls": {"Bash": 4}, "total_tool_calls": 4},
        "timing": {"executor_duration_seconds": 80.4, "total_duration_seconds": 95.0},
        "claims": [{"claim": "All customers found", "type": "factual", "verified": True}],
        "user_notes_summary": {"uncertainties": [], "needs_review": [], "workarounds": []},
        "eval_feedback": {"suggestions": [{"reason": "No check on file names"}], "overall": "ok"},
    },
    "benchmark.json": {
        "metadata": {
            "skill_name": "pdf-split",
            "skill_path": "<path/to/skill>",
            "executor_model": "<model-name>",
            "analyzer_model": "<model-name>",
            "timestamp": "2026-03-02T10:00:00Z",
            "evals_run": [0, 1],
            "runs_per_configuration": 3,
        },
        "runs": [
            {
                "eval_id": 0,
                "configuration": "new_skill",
                "run_number": 1,
                "result": {
                    "pass_rate": 0.5,
                    "passed": 1,
                    "failed": 1,
                    "total": 2,
                    "time_seconds": 95.0,
                    "tokens": 51234,
                    "tool_calls": 4,
                    "errors": 0,
                },
                "expectations": [{"text": "No page is lost", "passed": False, "evidence": "12/13"}],
                "notes": [],
            }
        ],
        "run_summary": {
            "new_skill": {
                "pass_rate": {"mean": 0.5, "stddev": 0.0, "min": 0.5, "max": 0.5},
                "time_seconds": {"mean": 95.0, "stddev": 0.0, "min": 95.0, "max": 95.0},
                "tokens": {"mean": 51234, "stddev": 0, "min": 51234, "max": 51234},
            },
            "delta": {"pass_rate": "+0.50", "time_seconds": "+95.0", "tokens": "+51234"},
        },
        "notes": [],
    },
    "feedback.json": {
        "reviews": [{"run_id": "eval-0-with_skill", "feedback": "", "timestamp": "2026-03-02"}],
        "status": "complete",
    },
    "metrics.json": {
        "tool_calls": {"Read": 2, "Bash": 4},
        "total_tool_calls": 6,
        "total_steps": 3,
        "files_created": ["out/acme.pdf"],
        "errors_encountered": 0,
        "output_chars": 9100,
        "transcript_chars": 2300,
    },
    "history.json": {
        "started_at": "2026-03-01T08:00:00Z",
        "skill_name": "pdf-split",
        "current_best": "v1",
        "iterations": [
            {
                "version": "v0",
                "parent": None,
                "expectation_pass_rate": 0.5,
                "grading_result": "baseline",
                "is_current_best": False,
            },
            {
                "version": "v1",
                "parent": "v0",
                "expectation_pass_rate": 0.75,
                "grading_result": "won",
                "is_current_best": True,
            },
        ],
    },
    "comparison-1.json": {
        "winner": "A",
        "reasoning": "A keeps every page.",
        "rubric": {
            "A": {
                "content": {"correctness": 5},
                "structure": {"organization": 4},
                "content_score": 5.0,
                "structure_score": 4.0,
                "overall_score": 9.0,
            }
        },
        "output_quality": {"A": {"score": 9, "strengths": ["complete"], "weaknesses": []}},
        "expectation_results": {
            "A": {
                "passed": 2,
                "total": 2,
                "pass_rate": 1.0,
                "details": [{"text": "No page is lost", "passed": True}],
            }
        },
    },
    "analysis.json": {
        "comparison_summary": {"winner": "A", "comparator_reasoning": "A keeps every page."},
        "winner_strengths": ["Counts pages before and after"],
        "loser_weaknesses": ["Skips blank pages"],
        "instruction_following": {"winner": {"score": 9, "issues": []}},
        "improvement_suggestions": [
            {"priority": "high", "category": "instructions", "suggestion": "Say how to count"}
        ],
        "transcript_insights": {"winner_execution_pattern": "read -> split -> count"},
    },
}

LATEST = {
    "skill-creator.evals": "2.0.0",
    "skill-creator.eval-metadata": "2.0.0",
    "skill-creator.grading": "2.0.0",
    "skill-creator.benchmark": "2.0.0",
    "skill-creator.timing": "1.0.0",
    "skill-creator.feedback": "1.0.0",
    "skill-creator.comparison": "2.0.0",
    "skill-creator.history": "2.0.0",
    "skill-creator.metrics": "2.0.0",
    "skill-creator.analysis": "2.0.0",
}
FAMILY_OF = {
    "evals.json": "skill-creator.evals",
    "eval_metadata.json": "skill-creator.eval-metadata",
    "grading.json": "skill-creator.grading",
    "benchmark.json": "skill-creator.benchmark",
    "timing.json": "skill-creator.timing",
    "feedback.json": "skill-creator.feedback",
    "comparison-1.json": "skill-creator.comparison",
    "history.json": "skill-creator.history",
    "metrics.json": "skill-creator.metrics",
    "analysis.json": "skill-creator.analysis",
}


def _detect(registry: Registry, record: dict[str, Any], name: str) -> tuple[str, str]:
    detection = registry.detect(record, f"ws/iteration-1/{name}")
    assert detection.ok, detection.summary()
    assert detection.family is not None and detection.version is not None
    return detection.family, detection.version


# -- versions and their order ------------------------------------------------------------------


def test_versions_order_the_periods_with_the_official_format_latest(registry: Registry) -> None:
    assert registry.versions("skill-creator.timing") == ("0.1.0", "1.0.0")
    assert registry.versions("skill-creator.eval-metadata") == ("0.1.0", "1.0.0", "2.0.0")
    for family in ("grading", "evals", "benchmark", "comparison", "history"):
        assert registry.versions(f"skill-creator.{family}") == ("1.0.0", "2.0.0")
    assert registry.versions("skill-creator.feedback") == ("1.0.0",)
    assert registry.versions("skill-creator.metrics") == ("2.0.0",)
    assert registry.versions("skill-creator.analysis") == ("2.0.0",)


@pytest.mark.parametrize("path", SEED_EXAMPLES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_seeds_examples_stay_valid_at_the_seeds_version(registry: Registry, path: Path) -> None:
    [item] = list(read_items(str(path)))
    detection = registry.detect(item.record, str(path))
    assert detection.family is not None, detection.summary()
    assert registry.validate(item.record, detection.family, "1.0.0") == []


@pytest.mark.parametrize("name", sorted(FEB17))
def test_files_of_17_feb_2026_are_valid_at_0_1_0(registry: Registry, name: str) -> None:
    record = FEB17[name]
    assert _detect(registry, record, name) == (FAMILY_OF[name], "0.1.0")
    assert registry.validate(record, FAMILY_OF[name], "0.1.0") == []


@pytest.mark.parametrize("name", sorted(FEB24))
def test_files_of_24_feb_to_jul_2026_are_valid_at_their_version(
    registry: Registry, name: str
) -> None:
    record = FEB24[name]
    family = FAMILY_OF[name]
    assert _detect(registry, record, name) == (family, LATEST[family])
    assert registry.validate(record, family, LATEST[family]) == []


def test_the_official_evals_also_name_the_checks_assertions(registry: Registry) -> None:
    case = {"id": 0, "prompt": "Do it.", "assertions": ["It is done"]}
    record = {"skill_name": "x", "evals": [case]}
    assert _detect(registry, record, "evals.json") == ("skill-creator.evals", "2.0.0")
    assert registry.validate(record, "skill-creator.evals", "2.0.0") == []


def test_string_assertions_are_the_tools_format_not_the_seeds(registry: Registry) -> None:
    record = {"eval_id": 1, "prompt": "Do it.", "assertions": ["It is done"]}
    assert _detect(registry, record, "eval_metadata.json") == (
        "skill-creator.eval-metadata",
        "2.0.0",
    )
    [issue] = registry.validate(record, "skill-creator.eval-metadata", "1.0.0")
    assert issue.pointer == "/assertions/0"


# -- grading: the seed's format and real variants, to what the viewer reads ---------------------

SEED_GRADING = {
    "expectations": [
        {"text": "Output is JSON", "passed": True, "evidence": "parsed"},
        {"text": "All rows kept", "passed": False, "evidence": "3 of 4"},
    ],
    "pass_rate": 0.5,
    "metrics": {"execution_time_ms": 1200, "tokens_used": 800, "tool_calls": 3},
    "claims": ["Fast"],
    "critique": "The second check is vague",
}


def _viewer_reads(record: dict[str, Any]) -> None:
    """Check `record` has what the result viewer reads of a grading file, under its names."""
    summary = record["summary"]
    assert set(summary) >= {"passed", "failed", "total", "pass_rate"}
    for exp in record["expectations"]:
        assert isinstance(exp["text"], str)
        assert isinstance(exp["passed"], bool)
        assert isinstance(exp["evidence"], str)


def test_a_migrated_grading_file_opens_with_the_names_the_viewer_reads(
    registry: Registry,
) -> None:
    assert _detect(registry, SEED_GRADING, "grading.json") == ("skill-creator.grading", "1.0.0")
    result = registry.migrate(SEED_GRADING, to="latest", filename="grading.json")
    assert result.status == "migrated", result.error
    _viewer_reads(result.record)
    assert result.record["summary"] == {"passed": 1, "failed": 1, "total": 2, "pass_rate": 0.5}
    assert list(result.record)[:2] == ["expectations", "summary"]
    assert result.record["claims"] == [{"claim": "Fast"}]
    assert result.record["eval_feedback"] == {"overall": "The second check is vague"}
    notes = {str(n) for n in result.notes}
    assert "moved /pass_rate -> /summary/pass_rate" in notes
    assert "moved /critique -> /eval_feedback/overall" in notes
    assert any(n.startswith("kept /metrics") for n in notes)
    assert "pass_rate" not in result.record


def test_variant_expectation_names_are_renamed_and_reported(registry: Registry) -> None:
    record = {
        "expectations": [
            {"name": "Has a title", "met": True, "details": "h1 found"},
            {"text": "Has a date", "passed": "FAIL", "reason": "none"},
        ]
    }
    result = registry.migrate(record, to="latest", filename="grading.json")
    assert result.status == "migrated", result.error
    _viewer_reads(result.record)
    assert result.record["expectations"][1]["passed"] is False
    notes = {str(n) for n in result.notes}
    assert "renamed /expectations/0/met -> /expectations/0/passed" in notes
    assert "renamed /expectations/0/details -> /expectations/0/evidence" in notes
    assert "renamed /expectations/0/name -> /expectations/0/text" in notes
    assert result.record["summary"] == {"passed": 1, "failed": 1, "total": 2, "pass_rate": 0.5}
    assert "added /summary/passed (derived 1): counted from expectations" in notes
    verdict = 'converted /expectations/1/passed: string -> boolean ("FAIL"'
    assert any(n.startswith(verdict) for n in notes)


def test_stated_counts_move_into_the_summary(registry: Registry) -> None:
    record = {
        "eval_id": 3,
        "expectations": [{"text": "a", "passed": True, "evidence": "x", "id": "a1"}],
        "passed_count": 1,
        "total": 1,
    }
    result = registry.migrate(record, to="latest", filename="grading.json")
    assert result.status == "migrated", result.error
    assert result.record["summary"] == {"passed": 1, "failed": 0, "total": 1, "pass_rate": 1.0}
    assert result.record["expectations"][0]["id"] == "a1"
    assert result.record["eval_id"] == 3
    assert "passed_count" not in result.record and "total" not in result.record


def test_a_bare_verdict_cannot_be_invented(registry: Registry) -> None:
    record = {"expectations": ["It works"], "pass_rate": 1.0}
    result = registry.migrate(record, to="latest", filename="grading.json")
    assert result.status == "failed"
    assert "/expectations/0 is not an object with a verdict" in str(result.error)


def test_grading_goes_back_to_the_seeds_top_level_pass_rate(registry: Registry) -> None:
    up = registry.migrate(SEED_GRADING, to="latest", filename="grading.json").record
    down = registry.migrate(up, to="1.0.0", filename="grading.json", allow_loss=True)
    assert down.status == "migrated", down.error
    assert down.record["pass_rate"] == 0.5 and "summary" not in down.record
    assert registry.validate(down.record, "skill-creator.grading", "1.0.0") == []
    strict = registry.migrate(FEB24["grading.json"], to="1.0.0", filename="grading.json")
    assert strict.status == "failed" and "claims/0/type" in str(strict.error)


# -- evals and eval_metadata: assertion strings and objects ------------------------------------


def test_seed_assertion_objects_become_strings_and_come_back_with_their_ids(
    registry: Registry,
) -> None:
    seed = {
        "skill_name": "csv",
        "evals": [
            {
                "id": 0,
                "prompt": "Dedupe rows",
                "assertions": [
                    {"id": "assertion-1", "text": "No duplicate rows"},
                    {"id": "assertion-2", "text": "Header kept"},
                ],
            },
            {
                "id": 1,
                "prompt": "Sort rows",
                "assertions": [{"id": "sorted", "text": "Rows sorted", "type": "llm"}],
            },
        ],
    }
    up = registry.migrate(seed, to="latest", filename="evals.json")
    assert up.status == "migrated", up.error
    first, second = up.record["evals"]
    assert first["assertions"] == ["No duplicate rows", "Header kept"]
    assert "assertion_ids" not in first
    assert second["assertion_ids"] == ["sorted"]
    assert second["assertion_details"] == [{"type": "llm"}]
    down = registry.migrate(up.record, to="1.0.0", filename="evals.json")
    assert down.status == "migrated", down.error
    assert down.record == seed


def test_official_string_checks_get_generated_ids_in_the_seeds_format(
    registry: Registry,
) -> None:
    result = registry.migrate(FEB24["evals.json"], to="1.0.0", filename="evals.json")
    assert result.status == "migrated", result.error
    assert result.record["evals"][0]["assertions"] == [
        {"id": "assertion-1", "text": "One PDF per customer exists"},
        {"id": "assertion-2", "text": "No page is lost"},
    ]
    assert registry.validate(result.record, "skill-creator.evals", "1.0.0") == []
    assert "renamed /evals/0/expectations -> /evals/0/assertions" in {str(n) for n in result.notes}


def test_first_release_metadata_keeps_its_staging_paths_under_staging(
    registry: Registry,
) -> None:
    result = registry.migrate(
        FEB17["eval_metadata.json"], to="latest", filename="eval_metadata.json"
    )
    assert result.status == "migrated", result.error
    assert result.steps == ("0.1.0 -> 2.0.0",)
    assert result.record["staging"]["outputs_dir"] == "/tmp/ws/eval-2/with_skill/outputs"
    assert "outputs_dir" not in result.record
    assert registry.detect(result.record, "eval_metadata.json").version == "2.0.0"


# -- benchmark ------------------------------------------------------------------------------------


def test_the_seeds_benchmark_is_laid_out_as_the_viewer_reads_it(registry: Registry) -> None:
    seed = {
        "metadata": {"skill_name": "csv", "timestamp": "2026-03-01"},
        "runs": [
            {"eval_id": 0, "config": "with_skill", "pass_rate": 0.75},
            {"eval_id": 0, "config": "with_skill", "pass_rate": 0.25},
            {"eval_id": 0, "config": "without_skill", "pass_rate": 0.5},
        ],
        "summaries": {
            "with_skill": {"mean_pass_rate": 0.5, "stddev": 0.35},
            "without_skill": {"mean_pass_rate": 0.5, "stddev": 0.0},
        },
        "deltas": {"pass_rate_delta": 0.0, "tokens_delta": -2000},
    }
    assert _detect(registry, seed, "benchmark.json") == ("skill-creator.benchmark", "1.0.0")
    result = registry.migrate(seed, to="latest", filename="benchmark.json")
    assert result.status == "migrated", result.error
    runs, summary = result.record["runs"], result.record["run_summary"]
    assert [r["configuration"] for r in runs] == ["with_skill", "with_skill", "without_skill"]
    assert [r["run_number"] for r in runs] == [1, 2, 1]
    assert runs[0]["result"] == {"pass_rate": 0.75}
    assert summary["with_skill"]["pass_rate"] == {"mean": 0.5, "stddev": 0.35}
    assert summary["delta"] == {"pass_rate": "+0.0", "tokens": "-2000"}
    down = registry.migrate(result.record, to="1.0.0", filename="benchmark.json")
    assert down.status == "migrated", down.error
    assert down.record["deltas"] == seed["deltas"]
    assert down.record["summaries"] == seed["summaries"]


def test_results_grouped_by_configuration_become_runs(registry: Registry) -> None:
    record = {
        "iteration": 2,
        "timestamp": "2026-03-24T14:45:45Z",
        "with_skill": {
            "evals": [{"eval_id": 1, "pass_rate": 1.0, "pass_count": 3, "total": 3}],
            "overall_pass_rate": 1.0,
        },
        "without_skill": {"evals": [{"eval_id": 1, "pass_rate": 0.5, "pass_count": 1, "total": 2}]},
        "delta": {"pass_rate_improvement": 0.5},
    }
    result = registry.migrate(record, to="latest", filename="benchmark.json")
    assert result.status == "migrated", result.error
    out = result.record
    assert out["metadata"] == {"timestamp": "2026-03-24T14:45:45Z"}
    assert out["runs"][1] == {
        "eval_id": 1,
        "configuration": "without_skill",
        "run_number": 1,
        "result": {"pass_rate": 0.5, "passed": 1, "total": 2},
    }
    assert out["run_summary"]["with_skill"]["overall_pass_rate"] == 1.0
    assert out["run_summary"]["delta"] == {"pass_rate_improvement": 0.5}
    assert out["iteration"] == 2


# -- timing, comparison, history ----------------------------------------------------------------


def test_first_release_timing_needs_the_token_count_it_never_had(registry: Registry) -> None:
    record = FEB17["timing.json"]
    refused = registry.migrate(record, to="latest", filename="timing.json")
    assert refused.status == "failed" and "--set total_tokens=N" in str(refused.error)
    result = registry.migrate(
        record, to="latest", filename="timing.json", params={"total_tokens": "40000"}
    )
    assert result.status == "migrated", result.error
    assert result.record["total_tokens"] == 40000
    assert result.record["duration_ms"] == 159000
    assert result.record["executor_start"] == "2026-02-18T09:00:00Z"


def test_the_seeds_comparison_scores_become_output_quality(registry: Registry) -> None:
    seed = {
        "winner": "output_a",
        "reasoning": "More complete",
        "scores": {"output_a": 8, "output_b": 6},
        "content_score": {"correctness": 4},
    }
    result = registry.migrate(seed, to="latest", filename="comparison.json")
    assert result.status == "migrated", result.error
    assert result.record["winner"] == "A"
    assert result.record["output_quality"] == {"A": {"score": 8}, "B": {"score": 6}}
    assert result.record["content_score"] == {"correctness": 4}


def test_the_seeds_history_needs_the_skill_name(registry: Registry) -> None:
    seed = {
        "versions": [
            {"iteration": 0, "description": "d0", "pass_rate": 0.5},
            {"iteration": 1, "description": "d1", "pass_rate": 0.75, "precision": 0.8},
        ]
    }
    refused = registry.migrate(seed, to="latest", filename="history.json")
    assert refused.status == "failed" and "--set skill_name=NAME" in str(refused.error)
    result = registry.migrate(
        seed, to="latest", filename="history.json", params={"skill_name": "csv"}
    )
    assert result.status == "migrated", result.error
    first, second = result.record["iterations"]
    assert first["grading_result"] == "baseline" and second["grading_result"] == "won"
    assert second["parent"] == "v0" and second["precision"] == 0.8
    assert result.record["current_best"] == "v1"


# -- detection: file kind and file name weigh ---------------------------------------------------

AGENTV_SHAPED = {"tests": [{"id": "t1", "criteria": "Says hello", "input": "hi"}]}


def test_a_json_file_is_never_taken_for_a_yaml_family(registry: Registry) -> None:
    assert registry.detect(AGENTV_SHAPED, "suite.eval.yaml").family == "agentv.eval"
    for name in ("evals.json", "trigger-evals.json", "cases.jsonl"):
        detection = registry.detect(AGENTV_SHAPED, name)
        assert detection.family is None, (name, detection.summary())
        assert "agentv" not in detection.summary()
    assert registry.detect(AGENTV_SHAPED).family == "agentv.eval"


def test_a_file_named_for_a_family_is_not_taken_for_another_one(registry: Registry) -> None:
    evals_shaped = {"skill_name": "x", "evals": [{"id": 0, "prompt": "p"}]}
    assert registry.detect(evals_shaped, "evals.json").family == "skill-creator.evals"
    detection = registry.detect(evals_shaped, "iteration-1/benchmark.json")
    assert detection.status == "unknown"
    assert "closest family skill-creator.benchmark" in detection.summary()


def test_the_closest_family_is_the_one_the_file_name_names(registry: Registry) -> None:
    detection = registry.detect({"scores": [1, 2]}, "run-1/grading.json")
    assert detection.status == "unknown"
    assert "closest family skill-creator.grading" in detection.summary()


def test_validate_of_an_undecided_file_says_why_once(registry: Registry, tmp_path: Path) -> None:
    path = tmp_path / "evals.json"
    path.write_text(json.dumps(AGENTV_SHAPED))
    run = subprocess.run(
        [sys.executable, "-m", "evalreg", "validate", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 1
    assert "agentv" not in run.stdout
    assert "no family's structure fits" in run.stdout


# -- the conformance script ---------------------------------------------------------------------


def test_conformance_script_prints_the_shares_per_kind(tmp_path: Path) -> None:
    workspace = tmp_path / "someone+repo" / "skill-workspace" / "iteration-1"
    (workspace / "eval-0" / "with_skill").mkdir(parents=True)
    (workspace / "eval-0" / "with_skill" / "grading.json").write_text(json.dumps(SEED_GRADING))
    (workspace / "eval-0" / "with_skill" / "timing.json").write_text(
        json.dumps(FEB24["timing.json"])
    )
    (workspace / "benchmark.json").write_text(json.dumps({"note": "not a benchmark"}))
    (workspace / "evals.json").write_text(json.dumps([{"query": "q", "should_trigger": True}]))
    details = tmp_path / "details.jsonl"
    run = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "conformance_skill_creator.py"),
            str(tmp_path),
            "--details",
            str(details),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    lines = {line.split()[0]: line.split() for line in run.stdout.splitlines() if line.strip()}
    assert lines["grading.json"][1:] == ["1", "100.0%", "100.0%", "100.0%"]
    assert lines["timing.json"][1:] == ["1", "100.0%", "100.0%", "100.0%"]
    assert lines["benchmark.json"][1:] == ["1", "0.0%", "0.0%", "0.0%"]
    assert lines["evals.json"][1:] == ["1", "0.0%", "0.0%", "0.0%"]
    assert lines["all"][1:] == ["4", "50.0%", "50.0%", "50.0%"]
    assert ".json files detected as a YAML family: 0 (of 4 .json files)" in run.stdout
    assert len(details.read_text().splitlines()) == 4
