"""Check that the schema diff reports every documented change between consecutive EEE versions.

Each documented difference between two consecutive versions of an Every Eval Ever schema is one
row of a table: the step, the instance path, the change kind, and the directions it breaks. A row
may also say what the change must show before and after. A second table lists the documented
changes that have no effect on which instances are valid, where the diff must report nothing;
a third gives each step's overall compatibility. Every change the diff reports that can matter
to validation must be one of the rows, so the tables are the whole story of each step.
"""

from __future__ import annotations

import functools
import itertools
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pytest

import evalreg
from evalreg import Registry
from evalreg.cli import main
from evalreg.diff import BACKWARD, FORWARD, Change, SchemaDiff

AGGREGATE = "eee.aggregate"
INSTANCE = "eee.instance"

ONLY_B = frozenset({BACKWARD})
ONLY_F = frozenset({FORWARD})
BOTH = frozenset({BACKWARD, FORWARD})
NONE: frozenset[str] = frozenset()

#: Every step between consecutive published versions, oldest first.
STEPS: tuple[tuple[str, str, str], ...] = (
    (AGGREGATE, "0.1.0", "0.2.0"),
    (AGGREGATE, "0.2.0", "0.2.1"),
    (AGGREGATE, "0.2.1", "0.2.2"),
    (AGGREGATE, "0.2.2", "0.2.3"),
    (AGGREGATE, "0.2.3", "0.3.0"),
    (INSTANCE, "0.2.0", "0.2.1"),
    (INSTANCE, "0.2.1", "0.2.2"),
    (INSTANCE, "0.2.2", "0.2.3"),
    (INSTANCE, "0.2.3", "0.3.0"),
)

# Change kinds that never affect validation.
INFORMATIONAL = frozenset({"description-changed", "annotation-changed"})


class _Unset:
    """Marks an expectation a row does not state."""

    def __repr__(self) -> str:
        return "<unset>"


UNSET: Any = _Unset()


@dataclass(frozen=True)
class Fact:
    """One documented change: the diff must report ``kind`` at the instance ``path``.

    ``breaks`` is the set of directions the change breaks (``None``: not checked). When the diff
    reports the change as undecided, it must at least name these directions. ``before`` and
    ``after``, when given, must be contained in the change's values (see :func:`_contains`).
    ``xfail`` names why the diff does not report the change yet.
    """

    family: str
    old: str
    new: str
    path: str
    kind: str
    breaks: frozenset[str] | None
    before: Any = UNSET
    after: Any = UNSET
    xfail: str | None = None

    @property
    def step(self) -> tuple[str, str, str]:
        return (self.family, self.old, self.new)


def _on(family: str, old: str, new: str) -> Callable[..., Fact]:
    """Return a maker of facts of one step."""
    return functools.partial(Fact, family, old, new)


STRINGS_ONLY = {"type": "object", "additionalProperties": {"type": "string"}}
STRING = {"type": "string"}
SAMPLES_FILE = (
    "data/gsm8k/Qwen/Qwen2.5-7B-Instruct/5b0c2e7a-91d4-4f3e-a6b8-2d7c9e1f0a34_samples.jsonl"
)
NOT_SAMPLES_FILES = (
    "results/5b0c2e7a-91d4-4f3e-a6b8-2d7c9e1f0a34_samples.jsonl",
    "data/gsm8k/Qwen/Qwen2.5-7B-Instruct/5b0c2e7a-91d4-4f3e-a6b8-2d7c9e1f0a34_samples.json",
    "data/gsm8k/Qwen/Qwen2.5-7B-Instruct/5b0c2e7a-91d4-1f3e-a6b8-2d7c9e1f0a34_samples.jsonl",
    "data/gsm8k/Qwen/5b0c2e7a-91d4-4f3e-a6b8-2d7c9e1f0a34_samples.jsonl",
)


def _samples_pattern(after: Any) -> bool:
    """Tell whether ``after`` holds a pattern that admits exactly the per-sample file paths."""
    pattern = re.compile(after["pattern"])
    return bool(pattern.search(SAMPLES_FILE)) and not any(
        pattern.search(path) for path in NOT_SAMPLES_FILES
    )


def _mentions(present: str, absent: str) -> Callable[[Any], bool]:
    """Return a check that a value's JSON text names ``present`` and not ``absent``."""

    def check(value: Any) -> bool:
        text = json.dumps(value)
        return f'"{present}"' in text and f'"{absent}"' not in text

    return check


# -- aggregate 0.1.0 -> 0.2.0 -------------------------------------------------------------------

_a010 = _on(AGGREGATE, "0.1.0", "0.2.0")
_GEN = "/evaluation_results/*/generation_config"
AGGREGATE_0_1_0 = [
    _a010("/source_data", "property-removed", BOTH, before={"required": True}),
    _a010(
        "/evaluation_results/*/source_data",
        "property-added",
        ONLY_B,
        after={
            "required": True,
            "schema": {
                "oneOf": [
                    {"$ref": "#/$defs/source_data_url"},
                    {"$ref": "#/$defs/source_data_hf"},
                    {"$ref": "#/$defs/source_data_private"},
                ]
            },
        },
    ),
    _a010(
        "/model_info/inference_engine", "type-changed", BOTH, before=["string"], after=["object"]
    ),
    _a010(
        "/evaluation_results/*/detailed_evaluation_results_url",
        "property-removed",
        NONE,
        before={"required": False},
    ),
    _a010(
        "/detailed_evaluation_results_per_samples",
        "property-removed",
        ONLY_B,
        before={"required": False},
    ),
    _a010("/evaluation_timestamp", "property-added", ONLY_F, after={"required": False}),
    _a010("/detailed_evaluation_results", "property-added", ONLY_F, after={"required": False}),
    _a010("/evaluation_results/*/metric_config/llm_scoring", "property-added", NONE),
    _a010(
        "/evaluation_results/*/score_details",
        "type-narrowed",
        ONLY_B,
        before=None,
        after=["object"],
    ),
    _a010("/evaluation_results/*/score_details/uncertainty", "property-added", NONE),
    # 0.1.0 wrote these two beside `properties`, where they constrain nothing.
    _a010(f"{_GEN}/generation_args", "property-added", NONE, after={"required": False}),
    _a010(f"{_GEN}/additional_details", "property-added", NONE, after={"required": False}),
    _a010(_GEN, "annotation-changed", NONE, before={"generation_args": {"type": "object"}}),
    _a010(_GEN, "annotation-changed", NONE, before={"additional_details": STRING}),
]

# -- aggregate 0.2.0 -> 0.2.1 -------------------------------------------------------------------

_a020 = _on(AGGREGATE, "0.2.0", "0.2.1")
_METRIC = "/evaluation_results/*/metric_config"
_JUDGE = f"{_METRIC}/llm_scoring/judges/*"
_ARGS = f"{_GEN}/generation_args"
AGGREGATE_0_2_0 = [
    _a020(
        "/eval_library",
        "property-added",
        BOTH,
        after={
            "required": True,
            "schema": {
                "type": "object",
                "required": ["name", "version"],
                "properties": {
                    "name": STRING,
                    "version": STRING,
                    "additional_details": STRINGS_ONLY,
                },
            },
        },
    ),
    *(
        _a020(path, "additional-properties-tightened", ONLY_B, before=True, after=STRING)
        for path in (
            "/model_info/additional_details",
            "/evaluation_results/*/source_data/additional_details",
            f"{_JUDGE}/model_info/additional_details",
            f"{_METRIC}/llm_scoring/additional_details",
            "/evaluation_results/*/score_details/details",
            f"{_ARGS}/agentic_eval_config/available_tools/*/parameters",
            f"{_ARGS}/agentic_eval_config/additional_details",
            f"{_ARGS}/eval_plan/config",
            f"{_GEN}/additional_details",
        )
    ),
    _a020(
        "/source_metadata/additional_details",
        "property-added",
        NONE,
        after={"required": False, "schema": STRINGS_ONLY},
    ),
    _a020("/detailed_evaluation_results", "type-narrowed", ONLY_B, before=None, after=["object"]),
    _a020(
        "/detailed_evaluation_results/additional_details",
        "property-added",
        NONE,
        after={"required": False, "schema": STRINGS_ONLY},
    ),
    _a020(_ARGS, "additional-properties-tightened", ONLY_B, before=True, after=False),
    _a020(f"{_ARGS}/eval_plan/steps/*", "type-narrowed", ONLY_B, before=None, after=["string"]),
    _a020(
        "/evaluation_results/*/source_data/sample_ids/*",
        "type-narrowed",
        ONLY_B,
        before=["integer", "string"],
        after=["string"],
    ),
    _a020(
        "/evaluation_results/*/evaluation_result_id",
        "property-added",
        NONE,
        after={"required": False, "schema": STRING},
    ),
    *(
        _a020(
            f"{_METRIC}/{name}",
            "property-added",
            NONE,
            after={"required": False, "schema": STRING},
        )
        for name in ("metric_id", "metric_name", "metric_kind", "metric_unit")
    ),
    _a020(
        f"{_METRIC}/metric_parameters",
        "property-added",
        NONE,
        after={
            "required": False,
            "schema": {
                "type": "object",
                "additionalProperties": {"type": ["string", "number", "boolean", "null"]},
            },
        },
    ),
    _a020(
        f"{_METRIC}/additional_details",
        "property-added",
        NONE,
        after={"required": False, "schema": STRINGS_ONLY},
    ),
    _a020(
        f"{_JUDGE}/additional_details",
        "property-added",
        NONE,
        after={"required": False, "schema": STRINGS_ONLY},
    ),
]

# -- aggregate 0.2.2 -> 0.2.3 -------------------------------------------------------------------

_a022 = _on(AGGREGATE, "0.2.2", "0.2.3")
_DEPLOYMENT = ["self_deployed", "externally_managed", "unknown"]
_AVAILABILITY = ["open_weights", "closed_weights", "unknown"]
_UNBOUNDED = {"oneOf": [{"type": "string", "enum": ["Infinity", "-Infinity"]}, {"type": "null"}]}
AGGREGATE_0_2_2 = [
    *itertools.chain.from_iterable(
        (
            _a022(f"{model}/additional_details", "required-added", ONLY_B),
            _a022(
                f"{model}/additional_details/deployment_type",
                "property-added",
                ONLY_B,
                after={"required": True, "schema": {"type": "string", "enum": _DEPLOYMENT}},
            ),
            _a022(
                f"{model}/additional_details/model_availability",
                "property-added",
                ONLY_B,
                after={"required": True, "schema": {"type": "string", "enum": _AVAILABILITY}},
            ),
        )
        # The judges' model_info is the same definition.
        for model in ("/model_info", f"{_JUDGE}/model_info")
    ),
    # Without score_type the old `if` held vacuously and demanded the levels fields; now nothing
    # is demanded, so the new schema accepts more (FORWARD only; the diff may leave it undecided).
    _a022(
        _METRIC,
        "branches-changed",
        ONLY_F,
        after={"if": {"required": ["score_type"]}},
    ),
    _a022(f"{_METRIC}/min_score", "branches-changed", ONLY_F, after=_UNBOUNDED),
    _a022(f"{_METRIC}/max_score", "branches-changed", ONLY_F, after=_UNBOUNDED),
    _a022("/detailed_evaluation_results/format", "required-added", ONLY_B),
    _a022("/detailed_evaluation_results/file_path", "required-added", ONLY_B),
    _a022(
        "/detailed_evaluation_results/format",
        "enum-removed",
        ONLY_B,
        before=["jsonl", "json"],
        after=["jsonl"],
    ),
    _a022(
        "/detailed_evaluation_results/file_path",
        "constraint-tightened",
        ONLY_B,
        before=lambda value: value == {},
        after=_samples_pattern,
    ),
]

# -- instance 0.2.0 -> 0.2.1 --------------------------------------------------------------------

_i020 = _on(INSTANCE, "0.2.0", "0.2.1")
_NULLABLE_STRINGS = {"type": ["array", "null"], "items": STRING}
INSTANCE_0_2_0 = [
    _i020("", "additional-properties-tightened", ONLY_B, before=True, after=False),
    _i020(
        "/evaluation_result_id",
        "property-added",
        NONE,
        after={"required": False, "schema": STRING},
    ),
    _i020("/interactions", "property-removed", ONLY_B, before={"required": False}),
    _i020(
        "/messages",
        "property-added",
        NONE,
        after={
            "required": False,
            "schema": {
                "type": ["array", "null"],
                "items": {
                    "required": ["turn_idx", "role"],
                    "properties": {
                        "tool_call_id": _NULLABLE_STRINGS,
                        "tool_calls": {
                            "items": {
                                "properties": {
                                    "arguments": {
                                        "type": ["object", "null"],
                                        "additionalProperties": STRING,
                                    }
                                }
                            }
                        },
                    },
                },
            },
        },
    ),
    # The items keep their shape, so the diff pairs the two and compares what is inside.
    _i020("/messages", "property-renamed", NONE, before="/interactions", after="/messages"),
    # A string or strings became strings or null.
    _i020(
        "/messages/*/tool_call_id",
        "type-changed",
        BOTH,
        before=["array", "string"],
        after=["array", "null"],
    ),
    _i020("/messages/*/tool_calls/*/arguments", "type-widened", ONLY_F, after=["null", "object"]),
    _i020(
        "/messages/*/tool_calls/*/arguments",
        "additional-properties-tightened",
        ONLY_B,
        before=True,
        after=STRING,
    ),
    # The single_turn / multi_turn conditions now name messages instead of interactions.
    _i020(
        "",
        "branches-changed",
        BOTH,
        before=_mentions("interactions", "messages"),
        after=_mentions("messages", "interactions"),
    ),
    _i020("/sample_id", "type-narrowed", ONLY_B, before=["integer", "string"], after=["string"]),
    _i020("/sample_hash", "type-widened", ONLY_F, after=["null", "string"]),
    _i020("/input/formatted", "type-widened", ONLY_F, after=["null", "string"]),
    _i020("/input/reference", "type-changed", BOTH, before=["string"], after=["array"]),
    _i020("/input/choices", "type-widened", ONLY_F, before=["array"], after=["array", "null"]),
    _i020("/output/raw", "type-changed", BOTH, before=["string"], after=["array"]),
    _i020(
        "/output/reasoning_trace",
        "type-changed",
        BOTH,
        before=["null", "string"],
        after=["array", "null"],
    ),
    _i020("/evaluation/score", "type-narrowed", ONLY_B, before=["boolean", "number"]),
    _i020("/evaluation/num_turns", "type-widened", ONLY_F, after=["integer", "null"]),
    _i020("/evaluation/tool_calls_count", "type-widened", ONLY_F, after=["integer", "null"]),
    _i020(
        "/performance/additional_details",
        "property-added",
        NONE,
        after={
            "required": False,
            "schema": {"type": ["object", "null"], "additionalProperties": STRING},
        },
    ),
    _i020("/metadata", "type-widened", ONLY_F, before=["object"], after=["null", "object"]),
    _i020("/metadata", "additional-properties-tightened", ONLY_B, before=True, after=STRING),
]

FACTS: tuple[Fact, ...] = (*AGGREGATE_0_1_0, *AGGREGATE_0_2_0, *AGGREGATE_0_2_2, *INSTANCE_0_2_0)


@dataclass(frozen=True)
class Unchanged:
    """A documented difference that does not change which instances are valid at ``path``.

    The diff must report nothing but informational changes there (and below, when ``below``).
    """

    family: str
    old: str
    new: str
    path: str
    why: str
    below: bool = False


UNCHANGED: tuple[Unchanged, ...] = (
    Unchanged(AGGREGATE, "0.1.0", "0.2.0", "/source_metadata", "same as in 0.2.0", below=True),
    Unchanged(AGGREGATE, "0.1.0", "0.2.0", "/model_info", "inline in 0.1.0, a $ref in 0.2.0"),
    Unchanged(AGGREGATE, "0.1.0", "0.2.0", "/model_info/additional_details", "any values in both"),
    Unchanged(
        AGGREGATE,
        "0.1.0",
        "0.2.0",
        "/evaluation_results/*/score_details/details",
        "any values in both",
    ),
    Unchanged(AGGREGATE, "0.1.0", "0.2.0", _METRIC, "the same if/then/else on score_type"),
    Unchanged(
        AGGREGATE,
        "0.2.0",
        "0.2.1",
        "/evaluation_results/*/source_data",
        "source_data_url and source_data_hf drop additionalProperties: true, the default",
    ),
    Unchanged(
        AGGREGATE,
        "0.2.0",
        "0.2.1",
        f"{_METRIC}/llm_scoring",
        "llm_scoring drops additionalProperties: true, the default",
    ),
    Unchanged(
        AGGREGATE, "0.2.0", "0.2.1", "", "$defs.additional_properties_object is only a definition"
    ),
    *(
        Unchanged(AGGREGATE, "0.2.2", "0.2.3", f"{model}/additional_details/*", "still strings")
        for model in ("/model_info", f"{_JUDGE}/model_info")
    ),
    Unchanged(
        INSTANCE, "0.2.0", "0.2.1", "/token_usage", "counts stay integer-or-null", below=True
    ),
    Unchanged(
        INSTANCE,
        "0.2.0",
        "0.2.1",
        "/performance",
        "performance drops additionalProperties: true, the default",
    ),
    *(
        Unchanged(INSTANCE, "0.2.0", "0.2.1", f"/performance/{name}", "number-or-null in both")
        for name in ("latency_ms", "time_to_first_token_ms", "generation_time_ms")
    ),
    Unchanged(INSTANCE, "0.2.0", "0.2.1", "/input/choices/*", "items stay strings"),
)

#: The overall compatibility of each step; version-string-only steps are FULL.
COMPATIBILITY: dict[tuple[str, str, str], str] = {
    (AGGREGATE, "0.1.0", "0.2.0"): "NONE",
    (AGGREGATE, "0.2.0", "0.2.1"): "NONE",
    (AGGREGATE, "0.2.1", "0.2.2"): "FULL",
    (AGGREGATE, "0.2.2", "0.2.3"): "NONE",
    (AGGREGATE, "0.2.3", "0.3.0"): "FULL",
    (INSTANCE, "0.2.0", "0.2.1"): "NONE",
    (INSTANCE, "0.2.1", "0.2.2"): "FULL",
    (INSTANCE, "0.2.2", "0.2.3"): "FULL",
    (INSTANCE, "0.2.3", "0.3.0"): "FULL",
}
VERSION_ONLY = tuple(step for step, verdict in COMPATIBILITY.items() if verdict == "FULL")


# -- helpers -------------------------------------------------------------------------------------


@functools.cache
def _registry() -> Registry:
    return evalreg.load_registry()


@functools.cache
def _diff(family: str, old: str, new: str, policy: str = "lenient") -> SchemaDiff:
    return _registry().diff(family, old, new, policy=policy)


def _contains(actual: Any, expected: Any) -> bool:
    """Tell whether ``actual`` holds ``expected``.

    A mapping must hold each expected key with a matching value (other keys may be there); a
    list must match item by item; a callable is a check on the value; anything else is equal.
    """
    if callable(expected):
        return bool(expected(actual))
    if isinstance(expected, Mapping):
        return isinstance(actual, Mapping) and all(
            key in actual and _contains(actual[key], value) for key, value in expected.items()
        )
    if isinstance(expected, list):
        return (
            isinstance(actual, list)
            and len(actual) == len(expected)
            and all(_contains(a, e) for a, e in zip(actual, expected, strict=True))
        )
    return bool(actual == expected) and type(actual) is type(expected)


def _step_id(family: str, old: str, new: str) -> str:
    return f"{family.removeprefix('eee.')}-{old}-{new}"


def _fact_param(fact: Fact) -> Any:
    marks = [pytest.mark.xfail(strict=True, reason=fact.xfail)] if fact.xfail else []
    where = fact.path or "(root)"
    return pytest.param(fact, id=f"{_step_id(*fact.step)}:{where}:{fact.kind}", marks=marks)


def _shown(changes: tuple[Change, ...] | list[Change]) -> list[str]:
    return [f"{c.path or '(root)'} {c.kind} {sorted(c.breaks)}" for c in changes]


# -- tests ---------------------------------------------------------------------------------------


def test_the_steps_are_every_consecutive_pair_of_versions() -> None:
    for family in (AGGREGATE, INSTANCE):
        expected = [(family, a, b) for a, b in itertools.pairwise(_registry().versions(family))]
        assert [step for step in STEPS if step[0] == family] == expected
    assert set(COMPATIBILITY) == set(STEPS)
    assert {fact.step for fact in FACTS} | set(VERSION_ONLY) == set(STEPS)


@pytest.mark.parametrize("fact", [_fact_param(fact) for fact in FACTS])
def test_the_diff_reports_the_fact(fact: Fact) -> None:
    diff = _diff(*fact.step)
    candidates = [c for c in diff.changes if c.path == fact.path and c.kind == fact.kind]
    assert candidates, f"no {fact.kind} at {fact.path!r}; the diff has {_shown(diff.changes)}"
    matches = [
        c
        for c in candidates
        if (fact.before is UNSET or _contains(c.before, fact.before))
        and (fact.after is UNSET or _contains(c.after, fact.after))
    ]
    assert matches, (
        f"{fact.kind} at {fact.path!r} shows {[(c.before, c.after) for c in candidates]}"
    )
    if fact.breaks is None:
        return
    for change in matches:
        if change.undecided:
            # An undecided change must at least name every direction the fact breaks.
            assert fact.breaks <= change.breaks, change
        else:
            assert change.breaks == fact.breaks, change


@pytest.mark.parametrize(
    "unchanged",
    [
        pytest.param(u, id=f"{_step_id(u.family, u.old, u.new)}:{u.path or '(root)'}")
        for u in UNCHANGED
    ],
)
def test_the_diff_reports_nothing_where_validation_is_unchanged(unchanged: Unchanged) -> None:
    diff = _diff(unchanged.family, unchanged.old, unchanged.new)
    there = [
        c
        for c in diff.changes
        if c.kind not in INFORMATIONAL
        and (
            c.path == unchanged.path
            or (unchanged.below and c.path.startswith(unchanged.path + "/"))
        )
    ]
    assert not there, f"{unchanged.why}, yet the diff reports {_shown(there)}"


@pytest.mark.parametrize("step", [pytest.param(s, id=_step_id(*s)) for s in STEPS])
def test_every_reported_change_is_a_documented_fact(step: tuple[str, str, str]) -> None:
    documented = {(f.path, f.kind) for f in FACTS if f.step == step and not f.xfail}
    extra = [
        c
        for c in _diff(*step).changes
        if c.kind not in INFORMATIONAL and (c.path, c.kind) not in documented
    ]
    assert not extra, f"undocumented changes: {_shown(extra)}"


@pytest.mark.parametrize("step", [pytest.param(s, id=_step_id(*s)) for s in STEPS])
def test_the_step_has_its_documented_compatibility(step: tuple[str, str, str]) -> None:
    diff = _diff(*step)
    assert diff.compatibility == COMPATIBILITY[step], _shown(diff.breaking)


@pytest.mark.parametrize("policy", ["lenient", "strict"])
@pytest.mark.parametrize("step", [pytest.param(s, id=_step_id(*s)) for s in VERSION_ONLY])
def test_a_version_string_only_step_changes_nothing_else(
    step: tuple[str, str, str], policy: str
) -> None:
    diff = _diff(*step, policy=policy)
    assert diff.compatibility == "FULL"
    assert diff.breaking == () and diff.undecided == ()
    assert [(c.path, c.kind, set(c.before) | set(c.after)) for c in diff.changes] == [
        ("", "annotation-changed", {"version"})
    ]


def test_the_command_line_reports_what_the_library_reports(
    capsys: pytest.CaptureFixture[str],
) -> None:
    def run(*args: str) -> tuple[int, str]:
        with pytest.raises(SystemExit) as info:
            main(list(args))
        return int(info.value.code or 0), capsys.readouterr().out

    for family, old, new in STEPS:
        code, out = run("diff", family, old, new, "--format", "json")
        assert code == 0
        library = json.loads(json.dumps(_diff(family, old, new).to_json(), default=str))
        assert json.loads(out) == library, (family, old, new)
        code, _ = run("diff", family, old, new, "--require", "FULL")
        assert code == (0 if COMPATIBILITY[(family, old, new)] == "FULL" else 1)
    code, out = run("diff", AGGREGATE, "0.2.0", "0.2.1")
    assert "/eval_library  added (required)  breaks BACKWARD, FORWARD" in out
    assert "Compatibility: NONE" in out
