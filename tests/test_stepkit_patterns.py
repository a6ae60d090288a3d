"""The pointer-pattern tools generated steps are written with, and version bumps for sync."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from evalreg import StepContext
from evalreg.errors import DataLossError, UnfinishedStepError
from evalreg.registry.versions import VERSION_IN_TEXT, bump
from evalreg.stepkit import (
    convert_types,
    drop_member,
    move_value,
    rename_member,
    require_valid,
    schema_at,
    set_missing,
    update_at,
    values_at,
)

RECORD: dict[str, Any] = {
    "a": [{"x": 1, "y": "k"}, {"x": 2}],
    "m": {"p": 1, "q": True},
    "keep": {"big": [1, 2, 3]},
}


def test_values_at_reaches_items_and_members() -> None:
    assert list(values_at(RECORD, "/a/*/x")) == [("/a/0/x", 1), ("/a/1/x", 2)]
    assert list(values_at(RECORD, "/m/*")) == [("/m/p", 1), ("/m/q", True)]
    assert list(values_at(RECORD, "/nothing/*")) == []


def test_update_at_copies_only_the_way_to_a_change() -> None:
    before = copy.deepcopy(RECORD)
    out = update_at(RECORD, "/a/*/x", lambda _, v: v + 1)
    assert before == RECORD
    assert [item["x"] for item in out["a"]] == [2, 3]
    assert out["keep"] is RECORD["keep"]
    assert update_at(RECORD, "/a/*/nothing", lambda _, v: v) is RECORD


def test_rename_move_drop_and_their_notes() -> None:
    ctx = StepContext()
    out = rename_member(RECORD, "/a/*", "x", "z", ctx)
    assert out["a"] == [{"z": 1, "y": "k"}, {"z": 2}]
    assert [str(n) for n in ctx.notes] == ["renamed /a/0/x -> /a/0/z", "renamed /a/1/x -> /a/1/z"]
    ctx = StepContext()
    moved = move_value({"a": [{"x": 1}]}, "/a/*/x", "/a/*/deep/x", ctx)
    assert moved == {"a": [{"deep": {"x": 1}}]}
    with pytest.raises(ValueError, match="shapes differ"):
        move_value(RECORD, "/a/*/x", "/x", ctx)
    with pytest.raises(DataLossError, match="/m/p"):
        drop_member(RECORD, "/m", "p", StepContext(), "gone")
    lossy = StepContext(allow_loss=True)
    assert drop_member(RECORD, "/m", "p", lossy, "gone")["m"] == {"q": True}
    clash = StepContext(allow_loss=True)
    assert rename_member({"x": 1, "z": 2}, "", "x", "z", clash) == {"z": 2}
    assert "already holds another value" in str(clash.notes[0])
    same = StepContext()  # the same value under both names: nothing is lost, the old is dropped
    assert rename_member({"x": 1, "z": 1}, "", "x", "z", same) == {"z": 1}
    assert [note.kind for note in same.notes] == ["dropped"]


def test_what_set_missing_and_convert_types_put_is_reported() -> None:
    ctx = StepContext()
    set_missing(RECORD, "/a/*", "y", "d", ctx=ctx)
    assert [(n.kind, n.pointer, n.origin) for n in ctx.notes] == [("added", "/a/1/y", "default")]
    given = StepContext({"name": "n1"}, given=frozenset({"name"}))
    set_missing(RECORD, "/a/*", "y", "n1", needs="name", ctx=given)
    assert [(n.pointer, n.origin) for n in given.notes] == [("/a/1/y", "parameter")]
    converted = StepContext()
    convert_types(RECORD, "/m/*", ("string",), "TODO 1", ctx=converted)
    assert [(n.pointer, n.from_type, n.to_type) for n in converted.notes] == [
        ("/m/p", "integer", "string"),
        ("/m/q", "boolean", "string"),
    ]


def test_set_missing_and_conversions() -> None:
    assert set_missing(RECORD, "/a/*", "y", "d")["a"] == [{"x": 1, "y": "k"}, {"x": 2, "y": "d"}]
    with pytest.raises(ValueError, match="--set name=VALUE"):
        set_missing(RECORD, "/a/*", "y", None, needs="name")
    out = convert_types(RECORD, "/m/*", ("string",), "TODO 1")
    assert out["m"] == {"p": "1", "q": "true"}
    assert convert_types({"s": "a"}, "/s", ("array",), "TODO 1") == {"s": ["a"]}
    assert convert_types({"b": True}, "/b", ("number",), "TODO 1") == {"b": 1.0}
    with pytest.raises(UnfinishedStepError, match="TODO 2"):
        convert_types({"n": None}, "/n", ("integer",), "TODO 2")


def test_require_valid_refuses_naming_the_todo_and_the_place() -> None:
    require_valid(RECORD, "/a/*/x", {"type": "integer"}, "TODO 1")
    with pytest.raises(UnfinishedStepError, match=r"/a/1/x: TODO 3"):
        require_valid(RECORD, "/a/*/x", {"maximum": 1}, "TODO 3")
    with pytest.raises(UnfinishedStepError):
        require_valid(RECORD, "/m", None, "TODO 4")  # any value there is refused


def test_schema_at_follows_properties_items_and_refs() -> None:
    schema = {
        "definitions": {"item": {"type": "object", "properties": {"x": {"type": "integer"}}}},
        "properties": {"a": {"type": "array", "items": {"$ref": "#/definitions/item"}}},
    }
    found = schema_at(schema, "/a/*/x")
    assert found is not None and found["type"] == "integer" and "definitions" in found
    cases = {"anyOf": [{"required": ["t"]}, {"required": ["u"]}]}
    found = schema_at({**cases, "properties": {"a": {"type": "string"}}}, "/a")
    assert found == {"type": "string"}  # the branches only require names: /a is the base's
    said = {"anyOf": [{"properties": {"a": {"maxLength": 1}}}], "properties": {"a": {}}}
    assert schema_at(said, "/a") is None  # a branch constrains /a too
    assert (
        schema_at({"allOf": [{"$ref": "https://elsewhere"}], "properties": {"a": {}}}, "/a") is None
    )


@pytest.mark.parametrize(
    ("version", "level", "expected"),
    [
        ("0.3.0", "patch", "0.3.1"),
        ("0.3.0", "minor", "0.4.0"),
        ("0.3.0", "major", "1.0.0"),
        ("4", "minor", "4.1"),
        ("4", "patch", "4.0.1"),
        ("2.1", "major", "3"),
        ("3.1", "minor", "3.2"),
    ],
)
def test_bump(version: str, level: str, expected: str) -> None:
    assert bump(version, level) == expected


def test_a_version_in_a_text() -> None:
    found = [VERSION_IN_TEXT.search(t) for t in ("0.2.1", "instance_level_eval_0.2.3", "v2")]
    assert [m.group(0) if m else None for m in found] == ["0.2.1", "0.2.3", None]
