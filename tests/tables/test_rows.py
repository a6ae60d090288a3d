"""Records to rows and back: every record of every built-in version comes back as it was."""

from __future__ import annotations

import functools
import re
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, Phase, given, settings

import evalreg
from evalreg import Registry
from evalreg.io.codec import ExactNumber, loads
from evalreg.publish.check.generate import record_strategy
from evalreg.tables.arrow import BatchBuilder, TableSpec
from evalreg.tables.mapping import layout
from evalreg.tables.rows import RowError, json_equal
from tests.conftest import builtin_versions


def round_trip(registry: Registry, family: str, version: str, records: list[Any]) -> list[Any]:
    """Return the records of the rows of `records` at a version, through an Arrow batch."""
    spec = TableSpec(layout(registry, family, version))
    builder = BatchBuilder(spec)
    for record in records:
        builder.add(record)  # RowError: the record cannot be a row
    batch, failed = builder.flush()
    assert failed == []
    assert batch.schema == spec.schema
    table = pa.Table.from_batches([batch])
    return list(evalreg.from_arrow(table, registry=registry))


@functools.cache
def strategy(family: str, version: str) -> Any:
    return record_strategy(evalreg.default_registry(), family, version)


SLOW = {"agentv.eval"}
"""Families whose schemas take Hypothesis long to draw from: fewer records each, in the slow run."""
INT64 = r"expected a number the column can hold \(it cannot be null\), found (-?\d{19,}|an integer)"


def check_round_trip(registry: Registry, family: str, version: str, record: Any) -> None:
    """Check that `record` comes back from a row equal, or is refused for a named reason."""
    try:
        [back] = round_trip(registry, family, version, [record])
    except RowError as err:
        # An integer beyond int64 where a number is required: named, never changed.
        assert re.search(INT64, str(err)), err
        return
    assert json_equal(back, record), (back, record)


@pytest.mark.parametrize(
    ("family", "version"),
    builtin_versions(slow_families=SLOW),
)
def test_generated_records_come_back_equal_at_their_version_and_at_the_latest(
    registry: Registry, family: str, version: str
) -> None:
    @settings(
        max_examples=4 if family in SLOW else 6,
        deadline=None,
        phases=[Phase.explicit, Phase.generate],  # a failure is shown as drawn: shrinking is slow
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        database=None,
    )
    @given(record=strategy(family, version))
    def check(record: Any) -> None:
        if registry.validator(family, version).issues(record):
            return  # hypothesis-jsonschema draws a few records the schema refuses
        check_round_trip(registry, family, version, record)
        result = registry.migrate(record, "latest", family=family)
        if result.ok:
            check_round_trip(registry, family, result.target or "", result.record)

    check()


DEMO = {
    "type": "object",
    "required": ["id"],
    "properties": {
        "id": {"type": "string"},
        "score": {"type": "number"},
        "count": {"type": "integer"},
        "note": {"type": ["string", "null"]},
        "free": {"type": "object"},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "results": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"value": {"type": "number"}, "name": {"type": "string"}},
            },
        },
    },
}


@pytest.fixture
def demo(make_registry_dir: Any) -> Registry:
    root = make_registry_dir({"demo.score": {"schemas": {"1.0": DEMO}}})
    return evalreg.load_registry([root], builtin=False)


def test_what_the_columns_cannot_hold_comes_back_from_extra(demo: Registry) -> None:
    exact = loads(b"0.1000000000000000055511151231257827")
    assert isinstance(exact, ExactNumber)
    record = {
        "id": "a",
        "score": exact,
        "count": 2**70,
        "note": None,
        "free": None,
        "undeclared": {"x": [1, 2]},
        "results": [{"value": 2**60, "name": "n", "other": True}],
    }
    builder = BatchBuilder(TableSpec(layout(demo, "demo.score", "1.0")))
    builder.add(record)
    batch, _ = builder.flush()
    row = batch.to_pylist()[0]
    assert row["score"] == float(exact) and row["count"] is None and row["note"] is None
    assert row["free"] == "null"  # JSON text holds null as text: no _extra needed
    assert set(loads(row["_extra"])) == {
        "/score",
        "/count",
        "/note",
        "/undeclared",
        "/results/0/value",
        "/results/0/other",
    }
    [back] = evalreg.from_arrow(batch, registry=demo)
    assert json_equal(back, record)
    assert back["score"].text == "0.1000000000000000055511151231257827"
    assert back["count"] == 2**70 and type(back["count"]) is int
    assert "note" in back and back["note"] is None
    # a missing optional value stays missing
    builder.add({"id": "b"})
    [plain] = evalreg.from_arrow(builder.flush()[0], registry=demo)
    assert plain == {"id": "b"}


def test_a_property_of_one_union_branch_takes_any_value_where_another_is_open(
    registry: Registry,
) -> None:
    """mnemoverse events: `model_id` is a string in observations, and any value in the other
    (open) kinds of event: a number there goes to `_extra`, the column stays a string."""
    spec = TableSpec(layout(registry, "mnemoverse.events", "0.1"))
    assert evalreg.arrow_schema("mnemoverse.events", "0.1").field("model_id").type == pa.string()
    records = [
        {
            "type": "feedback_action",
            "request_id": "r",
            "action": "a",
            "scope": "s",
            "ts": "2026-01-01T00:00:00Z",
            "model_id": 7,
        },
        {
            "type": "evaluation_observation",
            "request_id": "q",
            "ts": "2026-01-01T00:00:00Z",
            "model_id": "m",
        },
    ]
    builder = BatchBuilder(spec)
    for record in records:
        builder.add(record)
    batch, _ = builder.flush()
    rows = batch.to_pylist()
    assert [row["model_id"] for row in rows] == [None, "m"]
    assert loads(rows[0]["_extra"]) == {"/model_id": 7}
    assert list(evalreg.from_arrow(batch, registry=registry)) == records


def test_a_record_that_cannot_be_a_row_is_named_and_the_others_kept(demo: Registry) -> None:
    builder = BatchBuilder(TableSpec(layout(demo, "demo.score", "1.0")))
    with pytest.raises(RowError, match=r"/results/0/value: expected a number, found str"):
        builder.add({"id": "x", "results": [{"value": "high"}]})
    with pytest.raises(RowError, match=r"/labels/k: expected a string, found 1"):
        builder.add({"id": "x", "labels": {"k": 1}})
    builder = BatchBuilder(TableSpec(layout(demo, "demo.score", "1.0")))
    builder.add({"id": "ok"})
    builder.add({"id": "bad \ud800"})  # no UTF-8 for a lone surrogate: pyarrow refuses it
    builder.add({"id": "ok2"})
    batch, failed = builder.flush()
    assert batch.column("id").to_pylist() == ["ok", "ok2"]
    [(index, message)] = failed
    assert index == 1 and message.startswith("cannot be a row: ")


def test_explode_gives_one_row_per_item_with_its_own_extra(demo: Registry) -> None:
    spec = TableSpec(layout(demo, "demo.score", "1.0"), explode="/results", provenance=True)
    builder = BatchBuilder(spec)
    records = [
        {"id": "a", "results": [{"value": 1, "x": 1}, {"value": 2}, {"value": 3, "x": 3}]},
        {"id": "b", "results": []},
        {"id": "c"},
        {"id": "d", "results": [{"name": "only"}], "extra": 1},
    ]
    added = [builder.add(r, ("f.json", None, "demo.score", "1.0", "1.0", None)) for r in records]
    assert added == [3, 0, 0, 1]
    batch, _ = builder.flush()
    rows = batch.to_pylist()
    assert [(r["id"], r["_index"]) for r in rows] == [("a", 0), ("a", 1), ("a", 2), ("d", 0)]
    assert rows[0]["results"] == {"value": 1.0, "name": None}
    assert [r["_extra"] and sorted(loads(r["_extra"])) for r in rows] == [
        ["/results/0/x"],
        None,
        ["/results/2/x"],
        ["/extra"],
    ]
    assert batch.schema == spec.schema
    with pytest.raises(evalreg.TableError, match="the table was exploded"):
        list(evalreg.from_arrow(batch, registry=demo))


def test_json_equal_tells_numbers_booleans_and_exact_numbers_apart() -> None:
    assert json_equal({"a": 1, "b": [1.0]}, {"b": [1], "a": 1.0})
    assert not json_equal(True, 1) and not json_equal({"a": 1}, {"a": 1, "b": 2})
    exact = loads(b"1.00000000000000000001")
    assert json_equal(exact, loads(b"1.00000000000000000001")) and not json_equal(exact, 1.0)
