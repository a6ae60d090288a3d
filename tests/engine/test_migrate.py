from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import evalreg
from evalreg import Param, StepContext
from evalreg.engine.migrate import migrate_record
from evalreg.engine.steps import StepModule, StepSet, check_params, parse_params
from evalreg.errors import NoMigrationPathError, ParameterError, RegistryError
from evalreg.io.codec import clone

# -- the planner, on fake steps ---------------------------------------------------------------


def _fake(source: str, target: str, *, down: bool = False) -> StepModule:
    def upgrade(record: dict[str, Any], ctx: StepContext) -> dict[str, Any]:
        return {**record, "trail": [*record.get("trail", []), f"{source}>{target}"]}

    def downgrade(record: dict[str, Any], ctx: StepContext) -> dict[str, Any]:
        return {**record, "trail": [*record.get("trail", []), f"{target}<{source}"]}

    return StepModule(
        "fake",
        source,
        target,
        Path(f"{source}_to_{target}.py"),
        "",
        (),
        upgrade,
        downgrade if down else None,
    )


VERSIONS = ("1", "2", "3", "4")


def test_plan_follows_the_chain() -> None:
    steps = StepSet.build("fake", VERSIONS, [_fake("3", "4"), _fake("1", "2"), _fake("2", "3")])
    assert [s.name for s in steps.plan("1", "4")] == ["1 -> 2", "2 -> 3", "3 -> 4"]
    assert steps.plan("2", "2") == ()


def test_plan_takes_the_shortest_path() -> None:
    steps = StepSet.build(
        "fake", VERSIONS, [_fake("1", "2"), _fake("2", "3"), _fake("3", "4"), _fake("2", "4")]
    )
    assert [s.name for s in steps.plan("1", "4")] == ["1 -> 2", "2 -> 4"]


def test_plan_goes_down_only_through_lossless_steps() -> None:
    steps = StepSet.build(
        "fake", VERSIONS, [_fake("1", "2"), _fake("2", "3", down=True), _fake("3", "4", down=True)]
    )
    assert [s.name for s in steps.plan("4", "2")] == ["4 -> 3", "3 -> 2"]
    with pytest.raises(NoMigrationPathError, match="from 2 to 1: no lossless downgrade"):
        steps.plan("2", "1")


def test_plan_refuses_a_gap() -> None:
    steps = StepSet.build("fake", VERSIONS, [_fake("1", "2"), _fake("3", "4")])
    with pytest.raises(
        NoMigrationPathError, match="fake from 1 to 4: a step between them is missing"
    ):
        steps.plan("1", "4")


def test_duplicate_steps_are_refused() -> None:
    with pytest.raises(RegistryError, match="duplicate step 1 -> 2"):
        StepSet.build("fake", VERSIONS, [_fake("1", "2"), _fake("1", "2")])


# -- steps in a registry directory -----------------------------------------------------------

MANIFEST = """\
name: acme.run
title: Acme runs
kind: json
markers:
  - pointer: /version
    template: "{version}"
"""

SCHEMAS = {
    "1.0": {
        "type": "object",
        "required": ["version", "score"],
        "properties": {"score": {"type": "number"}},
    },
    "2.0": {
        "type": "object",
        "required": ["version", "result", "library"],
        "additionalProperties": False,
        "properties": {
            "version": {"type": "string"},
            "result": {
                "type": "object",
                "properties": {"score": {"type": "number"}},
                "required": ["score"],
            },
            "library": {"type": "string"},
            "extra": {"type": "object"},
        },
    },
}
# 3.0 accepts exactly what 2.0 does: a version-only step connects them.
SCHEMAS["3.0"] = SCHEMAS["2.0"]

STEP_1_2 = '''\
"""Move the score under result; the library name is new and required."""
from evalreg import Param

FROM = "1.0"
TO = "2.0"
PARAMS = (Param("library", help="Name of the library that produced the run.", default="unknown"),)


def upgrade(record, ctx):
    out = {k: v for k, v in record.items() if k not in ("score", "note")}
    out["result"] = {"score": record["score"]}
    out["library"] = ctx.params["library"]
    if "note" in record:
        ctx.lose("/note", "2.0 has no place for free-text notes")
    for key in list(out):
        if key not in ("version", "result", "library"):
            out.setdefault("extra", {})[key] = out.pop(key)
            ctx.moved("/" + key, "/extra/" + key)
    return out
'''

STEP_2_3 = '''\
"""Version bump only."""
FROM = "2.0"
TO = "3.0"


def upgrade(record, ctx):
    return dict(record)


def downgrade(record, ctx):
    return dict(record)
'''


def _write_acme(root: Path) -> Path:
    (root / "registry").mkdir(parents=True)
    (root / "registry" / "acme.run.yaml").write_text(MANIFEST)
    for version, schema in SCHEMAS.items():
        path = root / "schemas" / "acme.run" / f"{version}.schema.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(schema))
    (root / "migrations" / "acme.run").mkdir(parents=True)
    (root / "migrations" / "acme.run" / "1.0_to_2.0.py").write_text(STEP_1_2)
    (root / "migrations" / "acme.run" / "2.0_to_3.0.py").write_text(STEP_2_3)
    return root


@pytest.fixture(scope="module")
def acme(tmp_path_factory: pytest.TempPathFactory) -> evalreg.Registry:
    root = _write_acme(tmp_path_factory.mktemp("acme"))
    return evalreg.load_registry([root], builtin=False)


def test_migrate_sets_the_version_marker_and_validates(acme: evalreg.Registry) -> None:
    record = {"version": "1.0", "score": 0.5}
    result = acme.migrate(record, "latest")
    assert result.status == "migrated"
    assert result.record == {"version": "3.0", "result": {"score": 0.5}, "library": "unknown"}
    assert result.steps == ("1.0 -> 2.0", "2.0 -> 3.0")
    assert record == {"version": "1.0", "score": 0.5}, "the input must not be mutated"


def _containers(value: Any) -> set[int]:
    """Return the ids of every dict and list inside `value`, itself included."""
    found: set[int] = set()
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            found.add(id(node))
            stack += node.values()
        elif isinstance(node, list):
            found.add(id(node))
            stack += node
    return found


@pytest.mark.parametrize("note", [[1, {"deep": [2]}], (1, 2), 2**70, float("nan")])
def test_the_result_shares_no_object_with_the_callers_record(
    acme: evalreg.Registry, note: Any
) -> None:
    # The 1.0 -> 2.0 step shares the extra field with its output, as steps may.
    record = {"version": "1.0", "score": 0.5, "comment": {"text": ["a"], "note": note}}
    result = acme.migrate(record, "latest")
    assert result.status == "migrated", result.error
    assert result.record["extra"]["comment"]["text"] == ["a"]
    assert not _containers(record) & _containers(result.record)
    assert record["comment"]["note"] is note


def test_a_caller_that_owns_the_record_may_skip_the_copy(acme: evalreg.Registry) -> None:
    from evalreg.engine.migrate import migrate_record

    record = {"version": "1.0", "score": 0.5, "comment": {"text": ["a"]}}
    shared = migrate_record(acme, record, "latest", copy_input=False)
    copied = migrate_record(acme, record, "latest")
    assert shared.record == copied.record
    assert shared.record["extra"]["comment"] is record["comment"]
    assert record == {"version": "1.0", "score": 0.5, "comment": {"text": ["a"]}}


def test_a_route_validates_at_its_target_with_the_registrys_validator(
    acme: evalreg.Registry,
) -> None:
    from evalreg.engine.migrate import _Route
    from evalreg.engine.validators import validator

    route = _Route.find(acme, "acme.run", "1.0", "latest")
    assert route.check(acme) is validator(acme, "acme.run", "3.0")
    assert route.check(acme) is route.check(acme) and route.family == "acme.run"
    bad = migrate_record(acme, {"version": "1.0", "score": "high"}, "latest")
    assert bad.status == "failed" and bad.issues, "the target's schema still decides"


def test_plans_are_computed_once_per_pair_of_versions() -> None:
    steps = StepSet.build("fake", VERSIONS, [_fake("1", "2"), _fake("2", "3"), _fake("3", "4")])
    first = steps.plan("1", "4")
    assert steps.plan("1", "4") is first
    assert [s.name for s in steps.plan("2", "4")] == ["2 -> 3", "3 -> 4"]
    with pytest.raises(NoMigrationPathError):
        steps.plan("4", "1")
    with pytest.raises(NoMigrationPathError):
        steps.plan("4", "1")


def test_params_override_defaults(acme: evalreg.Registry) -> None:
    result = acme.migrate({"version": "1.0", "score": 1}, "2.0", params={"library": "lm-eval"})
    assert result.record["library"] == "lm-eval"


def test_steps_share_read_only_parameters(acme: evalreg.Registry) -> None:
    ctx = StepContext({"library": "x"})
    with pytest.raises(TypeError):
        ctx.params["library"] = "y"  # type: ignore[index]
    first = acme.migrate({"version": "1.0", "score": 1}, "2.0", params={"library": "a"})
    second = acme.migrate({"version": "1.0", "score": 2}, "2.0")
    assert (first.record["library"], second.record["library"]) == ("a", "unknown")


def test_unknown_params_are_refused(acme: evalreg.Registry) -> None:
    check_params(acme, {"library": "x"})
    with pytest.raises(ParameterError, match=r"unknown parameter libary \(known: library\)"):
        check_params(acme, {"libary": "x"})
    assert parse_params(["a=1", "b=x=y"]) == {"a": "1", "b": "x=y"}
    with pytest.raises(ParameterError, match="expected NAME=VALUE"):
        parse_params(["novalue"])


def test_loss_is_refused_unless_allowed(acme: evalreg.Registry) -> None:
    record = {"version": "1.0", "score": 1, "note": "re-run after outage"}
    refused = acme.migrate(record, "2.0")
    assert refused.status == "failed"
    assert refused.failed_step == "1.0 -> 2.0"
    assert refused.error is not None and refused.error.startswith("/note: 2.0 has no place")
    assert refused.record is record
    allowed = acme.migrate(record, "2.0", allow_loss=True)
    assert allowed.status == "migrated"
    assert [(n.kind, n.pointer) for n in allowed.notes] == [("lost", "/note")]


def test_moved_values_are_reported(acme: evalreg.Registry) -> None:
    result = acme.migrate({"version": "1.0", "score": 1, "seed": 7}, "2.0")
    assert result.record["extra"] == {"seed": 7}
    assert [str(n) for n in result.notes] == ["moved /seed -> /extra/seed"]


def test_already_current_records_are_unchanged(acme: evalreg.Registry) -> None:
    record = {"version": "3.0", "result": {"score": 1}, "library": "x"}
    result = acme.migrate(record, "3.0")
    assert result.status == "current"
    assert result.record is record


def test_downgrade_where_lossless(acme: evalreg.Registry) -> None:
    result = acme.migrate({"version": "3.0", "result": {"score": 1}, "library": "x"}, "2.0")
    assert result.status == "migrated"
    assert result.record["version"] == "2.0"
    failed = acme.migrate({"version": "2.0", "result": {"score": 1}, "library": "x"}, "1.0")
    assert failed.status == "failed"
    assert failed.error is not None and "no lossless downgrade" in failed.error


def test_invalid_results_fail_with_the_first_problem(acme: evalreg.Registry) -> None:
    result = acme.migrate({"version": "1.0", "score": "high"}, "2.0", validate="final")
    assert result.status == "failed"
    assert result.error is not None and "/result/score" in result.error
    unchecked = acme.migrate({"version": "1.0", "score": "high"}, "2.0", validate="none")
    assert unchecked.status == "migrated"


def test_validate_each_checks_between_steps(acme: evalreg.Registry) -> None:
    result = acme.migrate({"version": "1.0", "score": "high"}, "3.0", validate="each")
    assert result.status == "failed"
    assert result.failed_step == "1.0 -> 2.0"
    assert result.error is not None and "not valid at 2.0 after this step" in result.error


def test_unknown_source_version_fails_clearly(acme: evalreg.Registry) -> None:
    result = acme.migrate({"version": "9.0", "score": 1}, "3.0", family="acme.run")
    assert result.status == "failed"
    assert result.error == "version '9.0' of acme.run is not known (known: 1.0, 2.0, 3.0)"


def test_a_crashing_step_is_reported_not_raised(acme: evalreg.Registry) -> None:
    result = acme.migrate({"version": "1.0"}, "2.0")
    assert result.status == "failed" and result.failed_step == "1.0 -> 2.0"
    # The record lacked the score at 1.0 already: that is the cause the failure names.
    assert result.error == (
        "the record is not valid at its own version 1.0 to begin with: /: 'score' is a "
        "required property (then KeyError: 'score')"
    )


@given(score=st.floats(allow_nan=False, allow_infinity=False), library=st.text(max_size=5))
def test_migrating_a_current_record_is_the_identity(
    acme: evalreg.Registry, score: float, library: str
) -> None:
    once = acme.migrate({"version": "1.0", "score": score}, "3.0", params={"library": library})
    twice = acme.migrate(once.record, "3.0")
    assert twice.status == "current"
    assert twice.record == once.record


@given(score=st.floats(allow_nan=False, allow_infinity=False))
def test_a_chain_equals_its_steps_one_by_one(acme: evalreg.Registry, score: float) -> None:
    record = {"version": "1.0", "score": score}
    chained = acme.migrate(record, "3.0").record
    stepwise = acme.migrate(acme.migrate(record, "2.0").record, "3.0").record
    assert chained == stepwise


@pytest.mark.parametrize(
    ("file_name", "source", "message"),
    [
        ("1.0_to_2.0.py", "FROM = '1.0'\n", "must declare FROM and TO"),
        (
            "1.0_to_2.0.py",
            "FROM = '1.0'\nTO = '7.0'\ndef upgrade(r, c): return r\n",
            "TO = '7.0' is not a version",
        ),
        (
            "2.0_to_1.0.py",
            "FROM = '2.0'\nTO = '1.0'\ndef upgrade(r, c): return r\n",
            "must be older than TO",
        ),
        (
            "one_two.py",
            "FROM = '1.0'\nTO = '2.0'\ndef upgrade(r, c): return r\n",
            "must be named 1.0_to_2.0.py",
        ),
        ("1.0_to_2.0.py", "FROM = '1.0'\nTO = '2.0'\n", "must define upgrade"),
        ("1.0_to_2.0.py", "raise RuntimeError('boom')\n", "failed to load: RuntimeError"),
    ],
)
def test_malformed_steps_are_refused_naming_the_file(
    make_registry_dir, file_name: str, source: str, message: str
) -> None:  # type: ignore[no-untyped-def]
    root = make_registry_dir(
        {"acme.run": {"manifest": MANIFEST, "schemas": SCHEMAS, "steps": {file_name: source}}}
    )
    registry = evalreg.load_registry([root], builtin=False)
    with pytest.raises(RegistryError, match=message) as info:
        registry.steps("acme.run")
    assert file_name in str(info.value)


def test_step_context_records_notes() -> None:
    ctx = StepContext({"a": 1}, allow_loss=True, step="1 -> 2")
    ctx.kept("/x", "extra field")
    ctx.lose("/y", "no place")
    assert [(n.kind, n.step) for n in ctx.notes] == [("kept", "1 -> 2"), ("lost", "1 -> 2")]
    assert Param("a", "help").default is None


# -- relabels in a row: one chain, whatever is validated ---------------------------------------

RELABEL_MANIFEST = """\
name: acme.tag
title: Acme tags
kind: json
markers:
  - pointer: /meta/v
    template: "{version}"
    when: present
"""


def _relabel_registry(make_registry_dir: Any, pointer: str) -> evalreg.Registry:
    """Return a registry whose family goes 1 -> 2 -> 3 -> 4 by relabelling `pointer` only."""
    schema = {"type": "object"}
    steps = {
        f"{a}_to_{b}.py": (
            "from evalreg.stepkit import relabel\n"
            f"FROM = '{a}'\nTO = '{b}'\n"
            f"upgrade = relabel({pointer!r}, TO)\ndowngrade = relabel({pointer!r}, FROM)\n"
        )
        for a, b in (("1", "2"), ("2", "3"), ("3", "4"))
    }
    family = {
        "manifest": RELABEL_MANIFEST,
        "schemas": dict.fromkeys(("1", "2", "3", "4"), schema),
        "steps": steps,
    }
    return evalreg.load_registry([make_registry_dir({"acme.tag": family})], builtin=False)


RECORDS_TO_TAG = st.fixed_dictionaries(
    {"meta": st.fixed_dictionaries({"v": st.just("1")}, optional={"x": st.integers()})},
    optional={"v": st.just("1"), "y": st.text(max_size=3)},
)
"""Records at version 1 (stated at /meta/v), with or without the other places relabelled."""


@pytest.mark.parametrize("pointer", ["/meta/v", "/v", "/meta/deep/v"])
def test_relabels_in_a_row_give_what_the_steps_one_by_one_give(
    make_registry_dir: Any, pointer: str
) -> None:
    from evalreg.engine.migrate import _Route

    registry = _relabel_registry(make_registry_dir, pointer)
    route = _Route.find(registry, "acme.tag", "1", "4")
    assert [r.name for r in route.runs] == ["1 -> 2", "2 -> 3", "3 -> 4"]

    @given(record=RECORDS_TO_TAG)
    def check(record: dict[str, Any]) -> None:
        final = registry.migrate(record, "4", family="acme.tag")
        stepwise = registry.migrate(record, "4", family="acme.tag", validate="each")
        in_place = migrate_record(
            registry, clone(record), "4", family="acme.tag", copy_input=False, reread=dict
        )
        by_hand = record
        for version in ("2", "3", "4"):
            by_hand = registry.migrate(by_hand, version, family="acme.tag").record
        assert final.steps == stepwise.steps == in_place.steps == ("1 -> 2", "2 -> 3", "3 -> 4")
        assert final.record == stepwise.record == in_place.record == by_hand
        assert list(final.record) == list(in_place.record) == list(by_hand)  # key order too

    check()


def test_the_eee_instance_chain_runs_every_step_in_every_mode(registry: evalreg.Registry) -> None:
    from evalreg.engine.migrate import _Route

    route = _Route.find(registry, "eee.instance", "0.2.0", "latest")
    assert route.target == registry.latest("eee.instance")
    assert [r.name for r in route.runs] == [
        "0.2.0 -> 0.2.1",
        "0.2.1 -> 0.2.2",
        "0.2.2 -> 0.2.3",
        "0.2.3 -> 0.3.0",
    ]
    lines = Path(__file__).parents[1] / "eee_records" / "eee.instance" / "0.2.0" / "samples.jsonl"
    for line in lines.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        final = registry.migrate(record, "latest")
        stepwise = registry.migrate(record, "latest", validate="each")
        assert final.status == stepwise.status == "migrated"
        assert (final.record, final.steps, final.notes) == (
            stepwise.record,
            stepwise.steps,
            stepwise.notes,
        )
