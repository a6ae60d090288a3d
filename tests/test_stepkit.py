"""Tests for the step toolkit: exact, independent copies; labels; text values; renames; carrying."""

from __future__ import annotations

import copy
import datetime
import enum
import json
import math
from collections import OrderedDict
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import evalreg
from evalreg import StepContext, stepkit
from evalreg.errors import DataLossError
from evalreg.io import pointer
from evalreg.stepkit import (
    as_text,
    carry,
    clone,
    insert_after,
    relabel,
    rename_key,
    rename_key_each,
    unchanged,
)
from tests.families.test_eee_migrations import containers  # the step tests' own "shares nothing"

BIG = 2**65 + 1  # wider than 64 bits

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=2**64, max_value=2**200)
    | st.floats(allow_nan=False)
    | st.text()
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=30,
)


def same(a: Any, b: Any) -> bool:
    """Return whether `a` and `b` are equal with the same types throughout (NaN equals NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


# -- clone ---------------------------------------------------------------------------------


@given(json_values)
def test_clone_is_exact_and_shares_no_container(value: Any) -> None:
    before = copy.deepcopy(value)
    copied = clone(value)
    assert same(copied, value)
    assert not containers(copied) & containers(value)
    assert same(value, before)


def test_clone_keeps_big_integers_non_finite_floats_and_key_order() -> None:
    value = {"z": BIG, "a": [-BIG, math.inf, -math.inf, -0.0], "m": {"n": math.nan}}
    copied = clone(value)
    assert same(copied, value)
    assert list(copied) == ["z", "a", "m"]
    assert copied["a"] is not value["a"] and copied["m"] is not value["m"]


class Level(enum.IntEnum):
    LOW = 1


class Name(str):
    pass


def test_clone_copies_values_json_has_not_with_their_types() -> None:
    inner = OrderedDict(a=[1])
    value = {
        "tuple": (1, [2]),
        "when": datetime.date(2025, 11, 22),
        "ordered": inner,
        "name": Name("x"),
        "level": Level.LOW,
        "keys": {1: "one", None: "none"},
        "set": {1, 2},
    }
    copied = clone(value)
    assert same(copied, value)
    assert copied["ordered"] is not inner and copied["ordered"]["a"] is not inner["a"]
    assert copied["tuple"][1] is not value["tuple"][1]


def test_clone_of_a_subclassed_mapping_is_a_deep_copy_of_the_same_type() -> None:
    value = OrderedDict(b={"c": [1]})
    copied = clone(value)
    assert type(copied) is OrderedDict and copied == value
    assert copied["b"] is not value["b"]


# -- unchanged and relabel -----------------------------------------------------------------


def test_unchanged_returns_a_copy_and_leaves_the_input_alone() -> None:
    record = {"schema_version": "0.2.1", "results": [{"score": 1}]}
    out = unchanged(record, StepContext())
    assert out == record and out is not record
    assert record == {"schema_version": "0.2.1", "results": [{"score": 1}]}


def test_relabel_sets_the_label_in_place_of_a_copy() -> None:
    record = {"schema_version": "0.2.1", "results": [{"score": BIG}]}
    step = relabel("/schema_version", "0.2.2")
    out = step(record, StepContext())
    assert out == {"schema_version": "0.2.2", "results": [{"score": BIG}]}
    assert list(out) == ["schema_version", "results"]
    assert record == {"schema_version": "0.2.1", "results": [{"score": BIG}]}


@pytest.mark.parametrize("pointer", ["/schema_version", "/meta/schema_version"])
def test_relabel_of_a_record_it_owns_sets_the_label_in_place(pointer: str) -> None:
    record = {"schema_version": "0.2.1", "meta": {"schema_version": "1"}, "n": 1}
    out = relabel(pointer, "0.2.2")(record, StepContext(owned=True))
    assert out is record and list(out) == ["schema_version", "meta", "n"]
    key = pointer.rsplit("/", 1)[1]
    assert (out if pointer.count("/") == 1 else out["meta"])[key] == "0.2.2"


def test_relabel_adds_a_missing_label_last() -> None:
    out = relabel("/schema_version", "0.3.0")({"a": 1}, StepContext())
    assert list(out.items()) == [("a", 1), ("schema_version", "0.3.0")]


def test_relabel_follows_a_pointer_into_objects_and_skips_a_missing_one() -> None:
    step = relabel("/meta/~1version", "2")
    record = {"meta": {"/version": "1"}}
    assert step(record, StepContext()) == {"meta": {"/version": "2"}}
    assert record == {"meta": {"/version": "1"}}
    assert step({"meta": ["1"]}, StepContext()) == {"meta": ["1"]}
    assert step({}, StepContext()) == {}


@pytest.mark.parametrize("bad", ["", "schema_version"])
def test_relabel_refuses_a_pointer_to_no_place_inside(bad: str) -> None:
    with pytest.raises(ValueError, match="pointer"):
        relabel(bad, "1")


# -- as_text -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("as it is", "as it is"),
        ("5", "5"),
        (5, "5"),
        (2.5, "2.5"),
        (True, "true"),
        (None, "null"),
        ({"a": [1, "é"]}, '{"a":[1,"é"]}'),
        ([], "[]"),
        (BIG, str(BIG)),
    ],
    ids=repr,
)
def test_as_text(value: Any, text: str) -> None:
    assert as_text(value) == text


@given(json_values)
def test_as_text_reads_back_with_json_loads(value: Any) -> None:
    text = as_text(value)
    if isinstance(value, str):
        assert text == value
    else:
        assert same(json.loads(text), value)


# -- insert_after --------------------------------------------------------------------------


def test_insert_after_places_the_key_after_another_or_last() -> None:
    mapping = {"a": 1, "b": 2, "c": 3}
    assert list(insert_after(mapping, "a", "x", 0).items()) == [
        ("a", 1),
        ("x", 0),
        ("b", 2),
        ("c", 3),
    ]
    assert list(insert_after(mapping, "nowhere", "x", 0)) == ["a", "b", "c", "x"]
    assert mapping == {"a": 1, "b": 2, "c": 3}


def test_insert_after_moves_an_existing_key() -> None:
    out = insert_after({"x": 9, "a": 1, "b": 2}, "a", "x", 0)
    assert list(out.items()) == [("a", 1), ("x", 0), ("b", 2)]


# -- rename_key ----------------------------------------------------------------------------


def test_rename_key_keeps_the_place_and_copies_every_value() -> None:
    case = {"id": "c1", "outcome": {"text": "ok"}, "note": ["n"]}
    out = rename_key(case, "outcome", "expected_outcome")
    assert list(out.items()) == [
        ("id", "c1"),
        ("expected_outcome", {"text": "ok"}),
        ("note", ["n"]),
    ]
    assert not containers(out) & containers(case)
    assert "outcome" in case


def test_rename_key_copies_what_is_no_object() -> None:
    value = [{"outcome": 1}]
    out = rename_key(value, "outcome", "expected_outcome")
    assert out == value and out is not value and out[0] is not value[0]


def test_rename_key_nested_follows_lists_under_the_renamed_key() -> None:
    checks = [
        {"type": "composite", "assert": [{"type": "contains", "assert": "not a list"}, 3]},
        {"type": "contains", "value": {"assert": [1]}},
        "text",
    ]
    out = rename_key_each(checks, "assert", "assertions", nested=True)
    assert out == [
        {"type": "composite", "assertions": [{"type": "contains", "assertions": "not a list"}, 3]},
        {"type": "contains", "value": {"assert": [1]}},
        "text",
    ]
    assert not containers(out) & containers(checks)
    test = {"id": "t", "assert": checks}
    assert rename_key(test, "assert", "assertions", nested=True) == {"id": "t", "assertions": out}
    assert rename_key(test, "assert", "assertions")["assertions"] == checks


def test_rename_key_each_copies_what_is_no_list() -> None:
    value = {"assert": [1]}
    out = rename_key_each(value, "assert", "assertions", nested=True)
    assert out == value and out is not value


# -- carry ---------------------------------------------------------------------------------


def test_carry_puts_the_value_and_reports_the_move() -> None:
    ctx = StepContext()
    details = {"kept": "1"}
    assert carry(details, "seed", "42", ctx, source="/seed", target="/details/seed", clash="x")
    assert details == {"kept": "1", "seed": "42"}
    assert [(n.kind, n.source, n.pointer) for n in ctx.notes] == [
        ("moved", "/seed", "/details/seed")
    ]


def test_carry_the_same_value_again_is_no_clash() -> None:
    ctx = StepContext()
    details = {"seed": "42"}
    assert carry(details, "seed", "42", ctx, source="/seed", target="/details/seed", clash="x")
    assert details == {"seed": "42"}
    assert [(n.kind, n.pointer, n.detail) for n in ctx.notes] == [
        ("dropped", "/seed", "/details/seed holds the same value")
    ]


def test_carry_never_overwrites_another_value() -> None:
    details = {"seed": "7"}
    with pytest.raises(DataLossError) as caught:
        carry(details, "seed", "42", StepContext(), source="/seed", target="/d", clash="taken")
    assert caught.value.pointer == "/seed"
    ctx = StepContext(allow_loss=True)
    assert not carry(details, "seed", "42", ctx, source="/seed", target="/d", clash="taken")
    assert details == {"seed": "7"}
    assert [(n.kind, n.pointer, n.detail) for n in ctx.notes] == [("lost", "/seed", "taken")]
    carry(details, "seed", "42", ctx, source="/seed", target="/d/seed")
    assert ctx.notes[-1].detail == "/d/seed already holds another value"


# -- the public names ----------------------------------------------------------------------


def test_the_toolkit_is_public_from_evalreg() -> None:
    assert stepkit.to_pointer is pointer.to_pointer
    for name in stepkit.__all__:
        assert getattr(evalreg, name) is getattr(stepkit, name)
        assert name in evalreg.__all__
