"""Tests for evalreg.diff: change kinds, their compatibility, $ref handling and rendering."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
import referencing.jsonschema
from referencing import Registry

from evalreg.diff import BACKWARD, FORWARD, Change, SchemaDiff, changelog_markdown, diff_schemas

SCHEMAS = Path(__file__).resolve().parents[2] / "schemas"
BOTH = frozenset({BACKWARD, FORWARD})
NONE: frozenset[str] = frozenset()
ONLY_B = frozenset({BACKWARD})
ONLY_F = frozenset({FORWARD})


def obj(properties: dict[str, Any], required: list[str] | None = None, **extra: Any) -> Any:
    schema: dict[str, Any] = {"type": "object", "properties": properties, **extra}
    if required is not None:
        schema["required"] = required
    return schema


def only(diff: SchemaDiff, kind: str | None = None) -> Change:
    """Return the single change of ``diff`` (of ``kind`` when given)."""
    found = [c for c in diff.changes if kind is None or c.kind == kind]
    assert len(found) == 1, [f"{c.path} {c.kind}" for c in diff.changes]
    return found[0]


def found(diff: SchemaDiff) -> set[tuple[str, str]]:
    return {(c.path, c.kind) for c in diff.changes}


def load(family: str, version: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(
        (SCHEMAS / family / f"{version}.schema.json").read_text(encoding="utf-8")
    )
    return document


def family_registry(family: str, *versions: str) -> Registry[Any]:
    """Build a referencing registry the way evalreg does: `urn:evalreg:<family>:<version>`."""
    registry: Registry[Any] = Registry()
    for version in versions:
        document = load(family, version)
        uri = document.get("$id", f"urn:evalreg:{family}:{version}")
        resource = referencing.jsonschema.specification_with(
            document.get("$schema", ""), default=referencing.jsonschema.DRAFT7
        ).create_resource(document)
        registry = registry.with_resource(uri, resource)
    return registry


# -- properties and required


def test_identical_schemas_are_fully_compatible() -> None:
    schema = obj({"a": {"type": "string"}}, ["a"])
    diff = diff_schemas(schema, copy.deepcopy(schema))
    assert diff.changes == ()
    assert diff.compatibility == "FULL"


def test_adding_a_required_property_breaks_backward() -> None:
    diff = diff_schemas(obj({}), obj({"a": {"type": "string"}}, ["a"]))
    change = only(diff)
    assert (change.path, change.kind, change.breaks) == ("/a", "property-added", ONLY_B)
    assert change.after == {"required": True, "schema": {"type": "string"}}
    assert diff.compatibility == "FORWARD"


def test_adding_a_required_property_to_a_closed_object_breaks_both() -> None:
    old = obj({}, additionalProperties=False)
    new = obj({"a": {"type": "string"}}, ["a"], additionalProperties=False)
    assert only(diff_schemas(old, new)).breaks == BOTH


@pytest.mark.parametrize(
    ("policy", "breaks", "reason_part"),
    [("lenient", NONE, "lenient policy"), ("strict", ONLY_B, "strict policy")],
)
def test_optional_property_added_to_open_object_depends_on_policy(
    policy: str, breaks: frozenset[str], reason_part: str
) -> None:
    diff = diff_schemas(obj({}), obj({"a": {"type": "string"}}), policy=policy)
    change = only(diff)
    assert change.kind == "property-added"
    assert change.breaks == breaks
    assert reason_part in change.reason
    assert diff.policy == policy


@pytest.mark.parametrize(
    ("policy", "breaks", "reason_part"),
    [("lenient", NONE, "lenient policy"), ("strict", ONLY_F, "strict policy")],
)
def test_optional_property_removed_from_open_object_depends_on_policy(
    policy: str, breaks: frozenset[str], reason_part: str
) -> None:
    diff = diff_schemas(obj({"a": {"type": "string"}}), obj({}), policy=policy)
    change = only(diff)
    assert change.kind == "property-removed"
    assert change.before == {"required": False, "schema": {"type": "string"}}
    assert change.breaks == breaks
    assert reason_part in change.reason


@pytest.mark.parametrize("policy", ["lenient", "strict"])
def test_optional_property_and_closed_object_break_whatever_the_policy(policy: str) -> None:
    closed = obj({}, additionalProperties=False)
    with_a = obj({"a": {"type": "string"}}, additionalProperties=False)
    added = only(diff_schemas(closed, with_a, policy=policy))
    assert (added.kind, added.breaks) == ("property-added", ONLY_F)
    assert "forbids undeclared properties" in added.reason
    removed = only(diff_schemas(with_a, closed, policy=policy))
    assert (removed.kind, removed.breaks) == ("property-removed", ONLY_B)


def test_optional_property_unconstrained_is_compatible_even_when_strict() -> None:
    change = only(diff_schemas(obj({}), obj({"a": {}}), policy="strict"))
    assert change.breaks == NONE


@pytest.mark.parametrize(
    ("policy", "declared", "breaks"),
    [
        ("lenient", {"type": "string"}, NONE),
        ("strict", {"type": "string"}, NONE),
        ("lenient", {"type": "integer"}, ONLY_F),
        ("strict", {"type": "integer"}, BOTH),
        ("lenient", {"type": "string", "maxLength": 3}, NONE),
        ("strict", {"type": "string", "maxLength": 3}, ONLY_B),
    ],
)
def test_property_added_where_additional_properties_is_a_schema(
    policy: str, declared: dict[str, Any], breaks: frozenset[str]
) -> None:
    old = obj({}, additionalProperties={"type": "string"})
    new = obj({"a": declared}, additionalProperties={"type": "string"})
    change = only(diff_schemas(old, new, policy=policy))
    assert change.breaks == breaks
    assert "additionalProperties" in change.reason


def test_removing_a_required_property_breaks_forward() -> None:
    change = only(diff_schemas(obj({"a": {"type": "string"}}, ["a"]), obj({})))
    assert change.kind == "property-removed"
    assert change.breaks == ONLY_F
    assert "was required" in change.reason


def test_required_changes_on_a_kept_property() -> None:
    optional = obj({"a": {"type": "string"}})
    required = obj({"a": {"type": "string"}}, ["a"])
    added = only(diff_schemas(optional, required))
    assert (added.path, added.kind, added.breaks) == ("/a", "required-added", ONLY_B)
    removed = only(diff_schemas(required, optional))
    assert (removed.kind, removed.breaks) == ("required-removed", ONLY_F)
    assert diff_schemas(required, optional).compatibility == "BACKWARD"


def test_pointer_escapes_property_names() -> None:
    change = only(diff_schemas(obj({}), obj({"a/b~c": {}}, ["a/b~c"])))
    assert change.path == "/a~1b~0c"


# -- types, values


@pytest.mark.parametrize(
    ("before", "after", "kind", "breaks"),
    [
        ("number", ["number", "null"], "type-widened", ONLY_F),
        (["string", "null"], "string", "type-narrowed", ONLY_B),
        ("integer", "number", "type-widened", ONLY_F),
        ("number", "integer", "type-narrowed", ONLY_B),
        ("string", "array", "type-changed", BOTH),
        ("string", ["string", "array"], "type-widened", ONLY_F),
    ],
)
def test_type_changes(before: Any, after: Any, kind: str, breaks: frozenset[str]) -> None:
    diff = diff_schemas(obj({"x": {"type": before}}), obj({"x": {"type": after}}))
    change = only(diff)
    assert (change.path, change.kind, change.breaks) == ("/x", kind, breaks)


def test_type_change_to_a_disjoint_type_does_not_report_the_new_members() -> None:
    old = obj({"engine": {"type": "string", "maxLength": 10}})
    new = obj({"engine": obj({"name": {"type": "string"}})})
    assert found(diff_schemas(old, new)) == {("/engine", "type-changed")}


def test_untyped_enum_gaining_a_matching_type_is_no_change() -> None:
    old = obj({"x": {"enum": ["a", "b"]}})
    new = obj({"x": {"type": "string", "enum": ["a", "b"]}})
    assert diff_schemas(old, new).changes == ()


def test_enum_values_added_and_removed() -> None:
    old = obj({"x": {"enum": ["a", "b"]}})
    added = only(diff_schemas(old, obj({"x": {"enum": ["a", "b", "c"]}})))
    assert (added.kind, added.breaks, added.summary) == ("enum-added", ONLY_F, 'enum + "c"')
    removed = only(diff_schemas(old, obj({"x": {"enum": ["a"]}})))
    assert (removed.kind, removed.breaks) == ("enum-removed", ONLY_B)
    both = diff_schemas(old, obj({"x": {"enum": ["a", "c"]}}))
    assert found(both) == {("/x", "enum-added"), ("/x", "enum-removed")}
    assert both.compatibility == "NONE"


def test_enum_compares_json_values_not_python_ones() -> None:
    same = diff_schemas(obj({"x": {"enum": [1, 2]}}), obj({"x": {"enum": [2.0, 1]}}))
    assert same.changes == ()
    swapped = diff_schemas(obj({"x": {"enum": [1]}}), obj({"x": {"enum": [True]}}))
    assert {c.kind for c in swapped.changes} == {"enum-added", "enum-removed"}


def test_const_changes() -> None:
    change = only(diff_schemas(obj({"k": {"const": "url"}}), obj({"k": {"const": "uri"}})))
    assert (change.kind, change.breaks) == ("const-changed", BOTH)
    widened = only(diff_schemas(obj({"k": {"const": "a"}}), obj({"k": {"enum": ["a", "b"]}})))
    assert (widened.kind, widened.breaks) == ("const-changed", ONLY_F)


def test_introducing_an_enum_tightens() -> None:
    change = only(diff_schemas(obj({"x": {"type": "string"}}), obj({"x": {"enum": ["a"]}})))
    assert (change.kind, change.breaks) == ("constraint-tightened", ONLY_B)
    assert change.after == {"enum": ["a"]}


# -- additionalProperties


@pytest.mark.parametrize(
    ("before", "after", "kind", "breaks"),
    [
        (None, False, "additional-properties-tightened", ONLY_B),
        (True, {"type": "string"}, "additional-properties-tightened", ONLY_B),
        ({"type": "string"}, False, "additional-properties-tightened", ONLY_B),
        (False, True, "additional-properties-loosened", ONLY_F),
        ({"type": "string"}, None, "additional-properties-loosened", ONLY_F),
        (False, {"type": "string"}, "additional-properties-loosened", ONLY_F),
    ],
)
def test_additional_properties(before: Any, after: Any, kind: str, breaks: frozenset[str]) -> None:
    old = (
        {"type": "object"} if before is None else {"type": "object", "additionalProperties": before}
    )
    new = {"type": "object"} if after is None else {"type": "object", "additionalProperties": after}
    change = only(diff_schemas({"properties": {"m": old}}, {"properties": {"m": new}}))
    assert (change.path, change.kind, change.breaks) == ("/m", kind, breaks)


def test_additional_properties_schemas_are_compared_member_wise() -> None:
    old = obj({"m": {"type": "object", "additionalProperties": {"type": "string"}}})
    new = obj({"m": {"type": "object", "additionalProperties": {"type": ["string", "null"]}}})
    change = only(diff_schemas(old, new))
    assert (change.path, change.kind, change.breaks) == ("/m/*", "type-widened", ONLY_F)


# -- arrays and scalar constraints


def test_array_items_are_reported_with_a_star() -> None:
    old = obj({"rows": {"type": "array", "items": obj({"a": {"type": "string"}})}})
    new = obj({"rows": {"type": "array", "items": obj({"a": {"type": "integer"}})}})
    assert only(diff_schemas(old, new)).path == "/rows/*/a"


def test_tuple_items_are_reported_by_position() -> None:
    old = {"type": "array", "items": [{"type": "string"}, {"type": "number"}]}
    new = {"type": "array", "items": [{"type": "string"}, {"type": "integer"}]}
    old["$schema"] = new["$schema"] = "http://json-schema.org/draft-07/schema#"
    assert found(diff_schemas(old, new)) == {("/1", "type-narrowed")}


@pytest.mark.parametrize(
    ("before", "after", "kind"),
    [
        ({"maxLength": 10}, {"maxLength": 5}, "constraint-tightened"),
        ({"maxLength": 5}, {}, "constraint-loosened"),
        ({}, {"minLength": 1}, "constraint-tightened"),
        ({"minimum": 0}, {"minimum": 1}, "constraint-tightened"),
        ({"minimum": 0}, {"exclusiveMinimum": 0}, "constraint-tightened"),
        ({"exclusiveMaximum": 10}, {"maximum": 10}, "constraint-loosened"),
        ({"maximum": 1}, {}, "constraint-loosened"),
        ({"multipleOf": 2}, {"multipleOf": 4}, "constraint-tightened"),
        ({"multipleOf": 0.5}, {"multipleOf": 0.25}, "constraint-loosened"),
        ({}, {"pattern": "^a"}, "constraint-tightened"),
        ({"minItems": 1}, {"minItems": 0}, "constraint-loosened"),
        ({}, {"maxItems": 3}, "constraint-tightened"),
        ({}, {"uniqueItems": True}, "constraint-tightened"),
    ],
)
def test_constraints(before: dict[str, Any], after: dict[str, Any], kind: str) -> None:
    change = only(diff_schemas(obj({"x": before}), obj({"x": after})))
    assert change.kind == kind
    assert change.breaks == (ONLY_B if kind == "constraint-tightened" else ONLY_F)
    assert (change.before, change.after) == (before, after)


@pytest.mark.parametrize(
    ("before", "after"),
    [({"pattern": "^a"}, {"pattern": "^b"}), ({"multipleOf": 2}, {"multipleOf": 3})],
)
def test_constraints_that_cannot_be_ordered_are_undecided(
    before: dict[str, Any], after: dict[str, Any]
) -> None:
    change = only(diff_schemas(obj({"x": before}), obj({"x": after})))
    assert (change.kind, change.undecided, change.breaks) == ("constraint-changed", True, BOTH)


def test_constraints_of_types_the_other_side_lacks_are_not_compared() -> None:
    old = obj({"x": {"type": "string", "maxLength": 3}})
    new = obj({"x": {"type": ["string", "integer"], "maxLength": 3, "maximum": 9}})
    assert found(diff_schemas(old, new)) == {("/x", "type-widened")}


# -- combinators


SOURCE_URL = obj(
    {"source_type": {"const": "url"}, "url": {"type": "array"}}, ["source_type", "url"]
)
SOURCE_HF = obj({"source_type": {"const": "hf"}, "repo": {"type": "string"}}, ["source_type"])
SOURCE_OTHER = obj({"source_type": {"const": "other"}}, ["source_type"])


def test_oneof_branches_are_paired_by_discriminator() -> None:
    changed_hf = copy.deepcopy(SOURCE_HF)
    changed_hf["properties"]["repo"]["maxLength"] = 50
    old = obj({"src": {"oneOf": [SOURCE_URL, SOURCE_HF]}})
    new = obj({"src": {"oneOf": [changed_hf, SOURCE_URL]}})
    change = only(diff_schemas(old, new))
    assert (change.path, change.kind) == ("/src/repo", "constraint-tightened")


def test_disjoint_oneof_branch_added_breaks_forward_and_removed_breaks_backward() -> None:
    two = obj({"src": {"oneOf": [SOURCE_URL, SOURCE_HF]}})
    three = obj({"src": {"oneOf": [SOURCE_URL, SOURCE_HF, SOURCE_OTHER]}})
    added = only(diff_schemas(two, three))
    assert (added.kind, added.breaks, added.undecided) == ("branches-changed", ONLY_F, False)
    assert added.summary == "oneOf: 1 branch added"
    removed = only(diff_schemas(three, two))
    assert (removed.kind, removed.breaks) == ("branches-changed", ONLY_B)


def test_overlapping_oneof_branch_added_is_undecided() -> None:
    old = obj({"x": {"oneOf": [{"type": "string"}, {"type": "integer"}]}})
    new = obj({"x": {"oneOf": [{"type": "string"}, {"type": "integer"}, {"minLength": 2}]}})
    change = only(diff_schemas(old, new))
    assert (change.kind, change.undecided, change.breaks) == ("branches-changed", True, BOTH)


def test_anyof_branch_added_to_a_plain_schema_widens() -> None:
    # 0.2.3 turned min_score from a number into number | "Infinity"/"-Infinity" | null.
    old = obj({"min": {"type": "number", "description": "lowest"}})
    new = obj(
        {
            "min": {
                "description": "lowest",
                "oneOf": [
                    {"type": "number"},
                    {"type": "string", "enum": ["Infinity", "-Infinity"]},
                    {"type": "null"},
                ],
            }
        }
    )
    change = only(diff_schemas(old, new))
    assert (change.path, change.kind, change.breaks) == ("/min", "branches-changed", ONLY_F)
    assert change.summary == "oneOf: 2 branches added"
    narrowed = only(diff_schemas(new, old))
    assert narrowed.breaks == ONLY_B


STRINGS = {"type": "array", "items": {"type": "string"}}


def test_union_against_a_type_list_pairs_the_branch_that_shares_a_type() -> None:
    # tool_call_id in EEE instance 0.2.0 -> 0.2.1: a string or strings, then strings or null.
    old = obj({"ids": {"oneOf": [{"type": "string"}, STRINGS]}})
    new = obj({"ids": {"type": ["array", "null"], "items": {"type": "string"}}})
    change = only(diff_schemas(old, new))
    assert (change.path, change.kind, change.breaks) == ("/ids", "type-changed", BOTH)
    assert (change.before, change.after) == (["array", "string"], ["array", "null"])
    assert not change.undecided
    back = only(diff_schemas(new, old))
    assert (back.kind, back.before, back.after) == (
        "type-changed",
        ["array", "null"],
        ["array", "string"],
    )


def test_branches_paired_by_a_shared_type_compare_what_they_share() -> None:
    old = obj({"ids": {"oneOf": [{"type": "string"}, STRINGS]}})
    new = obj({"ids": {"type": ["array", "null"], "items": {"type": "integer"}, "maxItems": 3}})
    assert {(c.path, c.kind, c.breaks) for c in diff_schemas(old, new).changes} == {
        ("/ids", "type-changed", BOTH),
        ("/ids/*", "type-changed", BOTH),
        ("/ids", "constraint-tightened", ONLY_B),
    }


def test_two_combinators_are_paired_by_shared_types() -> None:
    old = obj({"v": {"oneOf": [{"type": "string"}, obj({"a": {"type": "string"}})]}})
    new = obj(
        {
            "v": {
                "anyOf": [
                    {"type": "integer"},
                    {**obj({"a": {"type": ["string", "null"]}}), "type": ["object", "null"]},
                ]
            }
        }
    )
    diff = diff_schemas(old, new)
    assert {(c.path, c.kind, c.breaks) for c in diff.changes} == {
        ("/v", "type-changed", BOTH),
        ("/v/a", "type-widened", ONLY_F),
    }
    assert only(diff, "type-changed").after == ["integer", "null", "object"]
    assert not diff.undecided


def test_a_branch_compared_on_shared_types_keeps_only_their_enum_values() -> None:
    old = obj({"x": {"oneOf": [{"enum": ["a", "b"]}, {"type": "integer"}]}})
    new = obj({"x": {"type": ["string", "null"], "enum": ["a", "b", None]}})
    change = only(diff_schemas(old, new))
    assert (change.kind, change.before, change.after) == (
        "type-changed",
        ["integer", "string"],
        ["null", "string"],
    )


@pytest.mark.parametrize(
    "new",
    [
        pytest.param({"type": ["string", "integer", "null"]}, id="one-branch-shares-two"),
        pytest.param({"oneOf": [{"type": "string"}, {"minLength": 1}]}, id="an-untyped-branch"),
    ],
)
def test_branches_are_not_paired_by_type_when_that_is_ambiguous(new: dict[str, Any]) -> None:
    old = obj({"x": {"oneOf": [{"type": "string"}, {"type": "integer"}, {"type": "boolean"}]}})
    diff = diff_schemas(old, obj({"x": new}))
    assert "type-changed" not in {c.kind for c in diff.changes}
    change = only(diff, "branches-changed")
    assert (change.undecided, change.breaks) == (True, BOTH)


def test_allof_conditions_added_and_removed() -> None:
    plain = obj({"a": {}})
    extra = {**obj({"a": {}}), "allOf": [{"required": ["a"]}]}
    assert only(diff_schemas(plain, extra)).breaks == ONLY_B
    assert only(diff_schemas(extra, plain)).breaks == ONLY_F


def test_if_then_else_added_and_branch_tightened() -> None:
    base = obj({"kind": {"type": "string"}, "levels": {"type": "array"}})
    conditional = {
        **base,
        "if": {"properties": {"kind": {"const": "levels"}}},
        "then": {"required": ["levels"]},
    }
    added = only(diff_schemas(base, conditional))
    assert (added.kind, added.breaks) == ("branches-changed", ONLY_B)
    tighter = {**conditional, "then": {"required": ["levels", "kind"]}}
    change = only(diff_schemas(conditional, tighter))
    assert (change.path, change.kind, change.breaks) == ("/kind", "required-added", ONLY_B)


def test_changed_if_condition_is_undecided() -> None:
    old = {"if": {"properties": {"k": {"const": "a"}}}, "then": {"required": ["x"]}}
    new = {
        "if": {"properties": {"k": {"const": "a"}}, "required": ["k"]},
        "then": {"required": ["x"]},
    }
    change = only(diff_schemas(old, new))
    assert (change.kind, change.undecided) == ("branches-changed", True)
    assert change.summary == "if changed"


def test_not_swaps_the_directions() -> None:
    old = obj({"x": {"not": {"type": "string"}}})
    new = obj({"x": {"not": {"type": ["string", "null"]}}})
    change = only(diff_schemas(old, new))
    assert (change.kind, change.breaks) == ("branches-changed", ONLY_B)


def test_unpairable_rewrite_into_a_ref_is_undecided() -> None:
    old = obj(
        {
            "src": {
                "oneOf": [
                    obj({"a": {"type": "string"}}, ["a"]),
                    obj({"b": {"type": "string"}}, ["b"]),
                ]
            }
        }
    )
    new = {
        **obj({"src": {"$ref": "#/$defs/either"}}),
        "$defs": {"either": {"anyOf": [obj({"a": {}}), obj({"b": {}}), obj({"c": {}})]}},
    }
    diff = diff_schemas(old, new)
    change = only(diff)
    assert (change.path, change.kind, change.undecided) == ("/src", "branches-changed", True)
    assert change.breaks == BOTH
    assert diff.undecided == (change,)
    assert diff.compatibility == "NONE"
    assert "undecided" in diff.to_text()


# -- renamed properties


def turns(tool_call_id: Any) -> dict[str, Any]:
    """Return a list of conversation turns, the shape EEE instance records had renamed."""
    turn = obj(
        {
            "turn_idx": {"type": "integer"},
            "role": {"type": "string"},
            "content": {"type": ["string", "null"]},
            "tool_call_id": tool_call_id,
        },
        ["turn_idx", "role"],
    )
    return {"type": ["array", "null"], "items": turn}


def test_a_renamed_property_is_paired_and_compared_under_its_new_name() -> None:
    old = obj({"interactions": turns({"oneOf": [{"type": "string"}, STRINGS]})})
    new = obj({"messages": turns({"type": ["array", "null"], "items": {"type": "string"}})})
    diff = diff_schemas(old, new)
    assert {(c.path, c.kind, c.breaks) for c in diff.changes} == {
        ("/interactions", "property-removed", NONE),
        ("/messages", "property-added", NONE),
        ("/messages", "property-renamed", NONE),
        ("/messages/*/tool_call_id", "type-changed", BOTH),
    }
    renamed = only(diff, "property-renamed")
    assert (renamed.before, renamed.after, renamed.undecided) == (
        "/interactions",
        "/messages",
        False,
    )
    assert renamed.reason == "probable rename: interactions -> messages, compared below"
    assert renamed.summary == "probably renamed from /interactions"
    assert "property-renamed\n  /messages  probably renamed from /interactions" in diff.to_text()


def test_a_rename_still_breaks_as_a_removal_and_an_addition() -> None:
    shape = turns({"type": "string"})
    old = obj({"interactions": shape}, ["interactions"], additionalProperties=False)
    new = obj({"messages": shape}, ["messages"], additionalProperties=False)
    diff = diff_schemas(old, new)
    assert {(c.path, c.kind, c.breaks) for c in diff.changes} == {
        ("/interactions", "property-removed", BOTH),
        ("/messages", "property-added", BOTH),
        ("/messages", "property-renamed", NONE),
    }
    assert diff.compatibility == "NONE"


PERSON = obj({"name": {"type": "string"}, "email": {"type": "string"}, "url": {}}, ["name"])
PLACE = obj({"lat": {"type": "number"}, "lon": {"type": "number"}, "alt": {}}, ["lat", "lon"])


@pytest.mark.parametrize(
    ("old_props", "new_props"),
    [
        pytest.param(
            {"author": PERSON, "created": {"type": "string"}},
            {"location": PLACE, "updated": {"type": "string"}},
            id="unrelated-properties-swapped",
        ),
        pytest.param({"a": {"type": "string"}}, {"b": {"type": "string"}}, id="leaves"),
        pytest.param(
            {"author": PERSON},
            {"authors": {"type": "array", "items": PERSON}},
            id="other-types",
        ),
        pytest.param({"author": PERSON}, {"owner": PERSON, "editor": PERSON}, id="two-candidates"),
        pytest.param(
            {"author": PERSON, "editor": PERSON}, {"owner": PERSON}, id="two-old-candidates"
        ),
        pytest.param(
            {"p": obj({"a": {}, "b": {}, "c": {}, "d": {}, "e": {}})},
            {"q": obj({"a": {}, "b": {}, "c": {}, "d": {}, "f": {}})},
            id="four-of-six-members-shared",
        ),
        pytest.param(
            {"p": obj({"a": {}, "b": {}, "c": {}})},
            {"q": obj({"a": {}, "b": {}, "c": {}}, ["a", "b", "c"])},
            id="required-flags-differ",
        ),
    ],
)
def test_properties_that_are_not_clearly_one_renamed_are_not_paired(
    old_props: dict[str, Any], new_props: dict[str, Any]
) -> None:
    diff = diff_schemas(obj(old_props), obj(new_props))
    assert {c.kind for c in diff.changes} == {"property-removed", "property-added"}


def test_a_rename_with_a_small_change_inside_is_paired() -> None:
    members = {name: {"type": "string"} for name in "abcdefghij"}
    renamed_member = {**members, "k": members["j"]}
    del renamed_member["j"]
    diff = diff_schemas(obj({"p": obj(members)}), obj({"q": obj(renamed_member)}))
    assert found(diff) == {
        ("/p", "property-removed"),
        ("/q", "property-added"),
        ("/q", "property-renamed"),
        ("/q/j", "property-removed"),
        ("/q/k", "property-added"),
    }


def test_renamed_recursive_properties_terminate() -> None:
    node = obj(
        {
            "label": {"type": "string"},
            "kind": {"type": "string"},
            "children": {"type": "array", "items": {"$ref": "#/$defs/node"}},
        }
    )
    old = {**obj({"tree": {"$ref": "#/$defs/node"}}), "$defs": {"node": node}}
    new = {**obj({"root": {"$ref": "#/$defs/node"}}), "$defs": {"node": node}}
    assert found(diff_schemas(old, new)) == {
        ("/tree", "property-removed"),
        ("/root", "property-added"),
        ("/root", "property-renamed"),
    }


# -- annotations


def test_descriptions_and_unknown_keywords_are_informational() -> None:
    old = {"title": "A", "version": "1", **obj({"x": {"description": "old"}})}
    new = {"title": "B", "version": "2", **obj({"x": {"description": "new"}})}
    diff = diff_schemas(old, new)
    assert found(diff) == {
        ("", "description-changed"),
        ("", "annotation-changed"),
        ("/x", "description-changed"),
    }
    assert diff.breaking == ()
    assert diff.compatibility == "FULL"


# -- $ref resolution and recursion


def test_local_refs_are_resolved_and_reported_at_the_instance_path() -> None:
    def schema(engine: Any) -> dict[str, Any]:
        return {
            "$schema": "http://json-schema.org/draft-07/schema#",
            **obj({"model": {"$ref": "#/$defs/model"}}),
            "$defs": {"model": obj({"engine": engine})},
        }

    diff = diff_schemas(schema({"type": "string"}), schema(obj({"name": {"type": "string"}})))
    change = only(diff)
    assert (change.path, change.kind) == ("/model/engine", "type-changed")


def test_inline_and_referenced_copies_of_a_schema_are_equal() -> None:
    inline = obj({"m": obj({"a": {"type": "string"}})})
    referenced = {
        **obj({"m": {"$ref": "#/$defs/m"}}),
        "$defs": {"m": obj({"a": {"type": "string"}})},
    }
    assert diff_schemas(inline, referenced).changes == ()


def test_refs_to_other_schemas_resolve_through_the_registry() -> None:
    def common(kind: str) -> dict[str, Any]:
        return {"$id": f"urn:example:common:{kind}", "$defs": {"id": {"type": kind}}}

    registry: Registry[Any] = Registry().with_resources(
        (spec["$id"], referencing.jsonschema.DRAFT202012.create_resource(spec))
        for spec in (common("string"), common("integer"))
    )
    old = obj({"id": {"$ref": "urn:example:common:string#/$defs/id"}})
    new = obj({"id": {"$ref": "urn:example:common:integer#/$defs/id"}})
    change = only(diff_schemas(old, new, registry=registry))
    assert (change.path, change.kind) == ("/id", "type-changed")


def test_old_and_new_with_the_same_id_resolve_in_their_own_document() -> None:
    def schema(kind: str) -> dict[str, Any]:
        return {
            "$id": "https://example.org/one.json",
            **obj({"a": {"$ref": "#/$defs/a"}}),
            "$defs": {"a": {"type": kind}},
        }

    assert only(diff_schemas(schema("string"), schema("null"))).kind == "type-changed"


def test_unresolvable_ref_raises_and_nothing_is_fetched() -> None:
    schema = obj({"a": {"$ref": "https://example.org/elsewhere.json"}})
    with pytest.raises(ValueError, match="cannot resolve"):
        diff_schemas(schema, obj({"a": {}}))


def test_draft7_ignores_keywords_beside_ref_and_2020_12_applies_them() -> None:
    def schema(dialect: str, sibling: dict[str, Any]) -> dict[str, Any]:
        return {
            "$schema": dialect,
            **obj({"a": {"$ref": "#/$defs/s", **sibling}}),
            "$defs": {"s": {"type": "string"}},
        }

    draft7 = "http://json-schema.org/draft-07/schema#"
    assert diff_schemas(schema(draft7, {}), schema(draft7, {"maxLength": 2})).changes == ()
    modern = "https://json-schema.org/draft/2020-12/schema"
    change = only(diff_schemas(schema(modern, {}), schema(modern, {"maxLength": 2})))
    assert (change.path, change.kind, change.breaks) == ("/a", "constraint-tightened", ONLY_B)
    overlapping = schema(modern, {"type": "string", "maxLength": 2})
    change = only(diff_schemas(schema(modern, {}), overlapping))
    assert (change.kind, change.breaks) == ("branches-changed", ONLY_B)
    contradicting = schema(modern, {"type": "integer"})
    change = only(diff_schemas(schema(modern, {}), contradicting))
    assert (change.kind, change.after) == ("type-narrowed", [])


def test_recursive_schemas_terminate() -> None:
    def tree(label: dict[str, Any]) -> dict[str, Any]:
        return {
            "$ref": "#/$defs/node",
            "$defs": {
                "node": obj(
                    {
                        "label": label,
                        "children": {"type": "array", "items": {"$ref": "#/$defs/node"}},
                        "parent": {"$ref": "#"},
                    }
                )
            },
        }

    diff = diff_schemas(tree({"type": "string"}), tree({"type": ["string", "null"]}))
    assert found(diff) == {("/label", "type-widened")}
    assert diff_schemas(tree({}), tree({})).changes == ()


def test_recursion_with_a_single_side_referring_to_itself() -> None:
    recursive = {"$defs": {"n": obj({"next": {"$ref": "#/$defs/n"}})}, "$ref": "#/$defs/n"}
    flat = obj({"next": obj({"next": {}})})
    diff = diff_schemas(flat, recursive)
    assert ("/next/next", "type-narrowed") in found(diff)


def test_false_schema() -> None:
    change = only(diff_schemas(obj({"x": False}), obj({"x": {"type": "string"}})))
    assert (change.kind, change.breaks, change.before) == ("type-widened", ONLY_F, False)
    assert change.summary == "type nothing -> string"


def test_inputs_are_not_mutated() -> None:
    old = {**obj({"a": {"$ref": "#/$defs/a", "description": "x"}}), "$defs": {"a": {}}}
    new = obj({"a": {"oneOf": [{"type": "string"}, {"type": "null"}]}}, ["a"])
    old_copy, new_copy = copy.deepcopy(old), copy.deepcopy(new)
    diff_schemas(old, new)
    assert (old, new) == (old_copy, new_copy)


def test_invalid_policy_is_refused() -> None:
    with pytest.raises(ValueError, match="lenient, strict"):
        diff_schemas({}, {}, policy="loose")


# -- compatibility and rendering


@pytest.mark.parametrize(
    ("breaks", "expected"),
    [([], "FULL"), ([FORWARD], "BACKWARD"), ([BACKWARD], "FORWARD"), ([BACKWARD, FORWARD], "NONE")],
)
def test_compatibility_names_the_direction_that_holds(breaks: list[str], expected: str) -> None:
    changes = tuple(Change("/a", "unknown", None, None, frozenset({b}), "r") for b in breaks)
    assert SchemaDiff("a", "b", changes, "lenient").compatibility == expected


def sample_diff() -> SchemaDiff:
    old = obj({"a": {"type": "string"}, "b": {"type": "string"}}, additionalProperties=False)
    new = obj(
        {"a": {"type": ["string", "null"], "description": "A"}, "c": {"type": "integer"}},
        ["c"],
        additionalProperties=False,
    )
    return diff_schemas(old, new, old_label="1.0", new_label="2.0")


def test_text_rendering_groups_by_kind_and_ends_with_a_summary() -> None:
    text = sample_diff().to_text()
    lines = text.splitlines()
    assert lines[0] == "Schema diff 1.0 -> 2.0 (policy: lenient)"
    assert "  /c  added (required)  breaks BACKWARD, FORWARD" in lines
    assert "  /b  removed (was optional)  breaks BACKWARD" in lines
    assert "  /a  type string -> null|string  breaks FORWARD" in lines
    assert "  /a  description added  compatible" in lines
    kinds = [line for line in lines if line and not line.startswith(" ")][1:-1]
    assert kinds == [
        "property-added",
        "property-removed",
        "type-widened",
        "description-changed",
    ]
    assert lines[-1] == "Compatibility: NONE (4 changes, 3 breaking, 0 undecided)"


def test_text_rendering_without_changes() -> None:
    text = diff_schemas({}, {}).to_text()
    assert "No changes." in text
    assert text.rstrip().endswith("Compatibility: FULL (0 changes, 0 breaking, 0 undecided)")


def test_markdown_rendering_lists_breaking_changes_first() -> None:
    markdown = sample_diff().to_markdown()
    assert markdown.startswith("## 1.0 → 2.0\n")
    assert "**Compatibility: NONE**" in markdown
    rows = [line for line in markdown.splitlines() if line.startswith("| `")]
    cells = [[cell.strip() for cell in re.split(r"(?<!\\)\|", row)[1:4]] for row in rows]
    assert cells == [
        ["`/a`", "type-widened: type string -> null\\|string", "breaks FORWARD"],
        ["`/b`", "property-removed: removed (was optional)", "breaks BACKWARD"],
        ["`/c`", "property-added: added (required)", "breaks BACKWARD, FORWARD"],
        ["`/a`", "description-changed: description added", "compatible"],
    ]


def test_json_rendering_is_json_able() -> None:
    data = sample_diff().to_json()
    assert json.loads(json.dumps(data)) == data
    assert data["compatibility"] == "NONE"
    assert (data["old"], data["new"], data["policy"]) == ("1.0", "2.0", "lenient")
    first = next(change for change in data["changes"] if change["path"] == "/c")
    assert first["kind"] == "property-added"
    assert first["breaks"] == [BACKWARD, FORWARD]
    assert first["undecided"] is False
    assert first["after"] == {"required": True, "schema": {"type": "integer"}}


def test_changelog_is_newest_first_with_breaking_changes_first() -> None:
    v1 = obj({"a": {"type": "string"}})
    v2 = obj({"a": {"type": "string", "description": "the a"}})
    v3 = obj({"a": {"type": "string"}, "b": {}}, ["b"])
    first = diff_schemas(v1, v2, old_label="1", new_label="2")
    second = diff_schemas(v2, v3, old_label="2", new_label="3")
    markdown = changelog_markdown("demo", [first, second])
    assert markdown.startswith("# demo schema changelog\n")
    assert markdown.index("## 3") < markdown.index("## 2")
    section = markdown[markdown.index("## 3") : markdown.index("## 2")]
    assert section.index("### Breaking changes") < section.index("### Compatible changes")
    assert "- `/b`: property-added, added (required) (breaks BACKWARD)" in section
    assert "Compared with 1: **FULL**" in markdown
    with pytest.raises(ValueError, match="chain"):
        changelog_markdown("demo", [second, first])


# -- the EEE aggregate schema


def test_seed_schema_against_itself_is_unchanged() -> None:
    schema = load("eee.aggregate", "0.2.0")
    assert diff_schemas(schema, copy.deepcopy(schema)).changes == ()


def test_seed_schema_with_modifications() -> None:
    old = load("eee.aggregate", "0.2.0")
    new = copy.deepcopy(old)
    new["properties"]["eval_library"] = {"type": "object"}
    new["required"].append("eval_library")
    new["$defs"]["model_info"]["properties"]["inference_engine"] = {"type": "string"}
    new["$defs"]["source_data_hf"]["properties"]["sample_ids"]["items"]["type"] = "string"
    diff = diff_schemas(old, new, old_label="0.2.0", new_label="edited")
    assert {(c.path, c.kind, c.breaks) for c in diff.changes} == {
        ("/eval_library", "property-added", BOTH),
        ("/model_info/inference_engine", "type-changed", BOTH),
        # model_info is also used by each judge of an LLM-scored metric.
        (
            "/evaluation_results/*/metric_config/llm_scoring/judges/*/model_info/inference_engine",
            "type-changed",
            BOTH,
        ),
        ("/evaluation_results/*/source_data/sample_ids/*", "type-narrowed", ONLY_B),
        ("/model_info/inference_engine", "description-changed", NONE),
        (
            "/evaluation_results/*/metric_config/llm_scoring/judges/*/model_info/inference_engine",
            "description-changed",
            NONE,
        ),
    }
    assert diff.compatibility == "NONE"


def test_eee_aggregate_0_1_0_to_0_2_0() -> None:
    registry = family_registry("eee.aggregate", "0.1.0", "0.2.0")
    old, new = load("eee.aggregate", "0.1.0"), load("eee.aggregate", "0.2.0")
    diff = diff_schemas(old, new, registry=registry, old_label="0.1.0", new_label="0.2.0")
    changes = {(c.path, c.kind): c for c in diff.changes}

    moved_out = changes[("/source_data", "property-removed")]
    assert moved_out.before["required"] is True
    # 0.2.0 forbids undeclared top-level members, and 0.1.0 required the field.
    assert moved_out.breaks == BOTH
    moved_in = changes[("/evaluation_results/*/source_data", "property-added")]
    assert moved_in.after["required"] is True
    assert moved_in.breaks == ONLY_B

    engine = changes[("/model_info/inference_engine", "type-changed")]
    assert (engine.before, engine.after, engine.breaks) == (["string"], ["object"], BOTH)

    # New optional members: the top level is closed in 0.1.0, the results are open.
    for path in ("/evaluation_timestamp", "/detailed_evaluation_results"):
        assert changes[(path, "property-added")].breaks == ONLY_F
    for path in (
        "/evaluation_results/*/score_details/uncertainty",
        "/evaluation_results/*/metric_config/llm_scoring",
    ):
        lenient = changes[(path, "property-added")]
        assert lenient.after["required"] is False
        assert lenient.breaks == NONE
        assert "lenient" in lenient.reason
    assert diff.compatibility == "NONE"
    assert not diff.undecided

    strict = diff_schemas(old, new, registry=registry, policy="strict")
    strict_changes = {(c.path, c.kind): c for c in strict.changes}
    uncertainty = ("/evaluation_results/*/score_details/uncertainty", "property-added")
    assert strict_changes[uncertainty].breaks == ONLY_B
