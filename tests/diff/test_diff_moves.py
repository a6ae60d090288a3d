"""`diff` pairs renamed and moved properties, and branches by the keys that tell them apart."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from evalreg import load_registry
from evalreg.diff import diff_schemas

CONTAINERS = ("", "/a", "/b", "/a/c")


def _leaf(uid: int) -> dict[str, Any]:
    """A property schema no other property shares (unless it is the same property)."""
    if uid % 3 == 0:
        return {"type": "object", "properties": {f"k{uid}": {"type": "integer"}}}
    if uid % 3 == 1:
        return {"type": "string", "maxLength": uid, "description": f"property {uid}"}
    return {"type": "array", "items": {"type": "number", "minimum": uid}}


def _base() -> dict[str, Any]:
    def obj(props: dict[str, Any]) -> dict[str, Any]:
        return {"type": "object", "properties": props, "additionalProperties": False}

    return obj({"a": obj({"c": obj({})}), "b": obj({})})


def _node(schema: dict[str, Any], container: str) -> dict[str, Any]:
    node = schema
    for name in filter(None, container.split("/")):
        node = node["properties"][name]
    props: dict[str, Any] = node["properties"]
    return props


_op = st.tuples(
    st.sampled_from(
        ["rename", "move", "move-same-name", "remove", "add", "plain-remove", "plain-add"]
    ),
    st.sampled_from(CONTAINERS),
    st.sampled_from(CONTAINERS),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_op, min_size=1, max_size=8))
def test_renames_and_moves_are_paired_and_nothing_else(ops: list[tuple[str, str, str]]) -> None:
    old = _base()
    new = _base()
    expected: set[tuple[str, str]] = set()
    uid = 10
    for index, (op, source, target) in enumerate(ops):
        uid += 1
        name = f"p{index}"
        if op in ("rename", "move", "move-same-name"):
            _node(old, source)[name] = _leaf(uid)
            moved = copy.deepcopy(_leaf(uid))
            moved["description"] = "edited"  # annotations do not count
            where = source if op == "rename" else target
            new_name = name if op == "move-same-name" else f"q{index}"
            if where == source and new_name == name:
                new_name = f"q{index}"
            _node(new, where)[new_name] = moved
            expected.add((f"{source}/{name}", f"{where}/{new_name}"))
        elif op == "remove":
            _node(old, source)[name] = _leaf(uid)
        elif op == "add":
            _node(new, target)[name] = _leaf(uid)
        elif op == "plain-remove":  # a bare string: never paired with another name
            _node(old, source)[f"s{index}"] = {"type": "string"}
        else:
            _node(new, target)[f"t{index}"] = {"type": "string"}
    diff = diff_schemas(old, new)
    found = {
        (c.before, c.after)
        for c in diff.changes
        if c.kind in ("property-renamed", "property-moved")
    }
    assert found == expected
    for change in diff.changes:
        if change.kind == "property-moved":
            assert change.before.rpartition("/")[0] != change.after.rpartition("/")[0]
            assert change.summary == f"moved from {change.before}"


def test_a_rename_is_reported_with_both_pointers_in_every_format() -> None:
    old = {"type": "object", "properties": {"items": {"type": "array", "minItems": 1}}}
    new = {"type": "object", "properties": {"entries": {"type": "array", "minItems": 1}}}
    diff = diff_schemas(old, new)
    [renamed] = [c for c in diff.changes if c.kind == "property-renamed"]
    assert (renamed.before, renamed.after) == ("/items", "/entries")
    assert "/entries  renamed from /items" in diff.to_text()
    assert renamed.to_json()["summary"] == "renamed from /items"


def test_agentv_eras_are_paired_by_the_keys_that_tell_them_apart() -> None:
    diff = load_registry().diff("agentv.eval", "2", "4")
    text = diff.to_text()
    assert "compare them by hand" not in text
    assert not diff.undecided
    kinds = {(c.path, c.kind) for c in diff.changes}
    assert ("/evalcases", "property-removed") in kinds
    assert ("/eval_cases", "property-added") in kinds
    assert "anyOf: 3 branches added" in text


def test_a_small_object_renamed_with_an_equal_schema_is_a_rename() -> None:
    def obj(props: dict[str, Any]) -> dict[str, Any]:
        return {"type": "object", "properties": props}

    diff = diff_schemas(
        obj({"author": obj({"name": {}, "email": {}})}),
        obj({"owner": obj({"name": {}, "email": {}})}),
    )
    assert {(c.kind, c.before, c.after) for c in diff.changes if c.kind == "property-renamed"} == {
        ("property-renamed", "/author", "/owner")
    }
