"""`anyOf` / `oneOf` failures explained by the closest branch's own problems.

The fast validator (jsonschema-rs) only says whether a record is valid; whichever found it
invalid, the explanation comes from `validators.explain`, so the same rule applies to both.
"""

from __future__ import annotations

from typing import Any

import pytest

from evalreg import Registry, load_registry
from tests.conftest import RegistryFactory
from tests.engine.test_fastpath import _records_by_family, mutations

GENERIC = "is not valid under any of the given schemas"


def issues(make_registry_dir: RegistryFactory, schema: dict[str, Any], record: Any) -> list[str]:
    root = make_registry_dir({"x.family": {"schemas": {"1": schema}}})
    registry = load_registry([root], builtin=False)
    validator = registry.validator("x.family", "1")
    assert not validator.is_valid(record)
    return [f"{i.pointer or '/'} [{i.keyword}] {i.message}" for i in validator.issues(record)]


def test_a_list_where_every_branch_wants_an_object_says_so(
    make_registry_dir: RegistryFactory,
) -> None:
    schema = {
        "properties": {
            "source": {
                "oneOf": [
                    {"type": "object", "required": ["url"]},
                    {"type": "object", "required": ["repo"]},
                ]
            }
        }
    }
    found = issues(make_registry_dir, schema, {"source": ["a", "b", "c"]})
    assert found == ["/source [oneOf] array of 3 items is not of type 'object'"]


def test_alternatives_of_plain_types_are_named_together(
    make_registry_dir: RegistryFactory,
) -> None:
    schema = {"properties": {"n": {"anyOf": [{"type": "string"}, {"type": ["null", "array"]}]}}}
    found = issues(make_registry_dir, schema, {"n": 5})
    assert found == ["/n [anyOf] 5 is not of type 'string' or 'null' or 'array'"]


def test_the_branch_whose_tag_matches_is_the_closest(make_registry_dir: RegistryFactory) -> None:
    def tagged(tag: str, *required: str) -> dict[str, Any]:
        return {"properties": {"kind": {"const": tag}}, "required": ["kind", *required]}

    schema = {"oneOf": [tagged("score", "value"), tagged("note", "text"), tagged("flag")]}
    found = issues(make_registry_dir, schema, {"kind": "note"})
    assert found == ["/ [required] 'text' is a required property"]


def test_items_of_the_array_branch_beat_the_scalar_branch(
    make_registry_dir: RegistryFactory,
) -> None:
    schema = {
        "properties": {
            "samples": {
                "anyOf": [
                    {"type": "string"},
                    {"type": "array", "items": {"properties": {"p": {"type": "array"}}}},
                ]
            }
        }
    }
    found = issues(make_registry_dir, schema, {"samples": [{"p": None}, {"p": []}, {"p": 1}]})
    assert found == [
        "/samples/0/p [type] None is not of type 'array'",
        "/samples/2/p [type] 1 is not of type 'array'",
    ]


def test_nested_alternatives_are_followed_down(make_registry_dir: RegistryFactory) -> None:
    inner = {"anyOf": [{"type": "integer", "minimum": 0}, {"type": "string", "pattern": "^x"}]}
    schema = {
        "properties": {
            "v": {"oneOf": [{"type": "boolean"}, {"type": "object", "properties": {"w": inner}}]}
        }
    }
    found = issues(make_registry_dir, schema, {"v": {"w": -3}})
    assert found == ["/v/w [minimum] -3 is less than the minimum of 0"]


def test_branches_equally_far_are_each_named(make_registry_dir: RegistryFactory) -> None:
    schema = {"properties": {"mode": {"anyOf": [{"const": "fast"}, {"enum": ["slow", "off"]}]}}}
    (found,) = issues(make_registry_dir, schema, {"mode": "medium"})
    assert found.startswith("/mode [anyOf] 'medium' fits none of the 2 alternatives: ")
    assert "'fast' was expected" in found and "'medium' is not one of ['slow', 'off']" in found
    assert GENERIC not in found


def test_a_value_valid_under_two_branches_of_one_of_says_so(
    make_registry_dir: RegistryFactory,
) -> None:
    schema = {"oneOf": [{"type": "object"}, {"required": ["a"]}]}
    (found,) = issues(make_registry_dir, schema, {"a": 1})
    assert "is valid under each of" in found


@pytest.fixture(scope="module")
def records(registry: Registry) -> dict[str, list[Any]]:
    return _records_by_family(registry)


@pytest.mark.slow
def test_no_example_or_mutation_is_explained_by_the_generic_message(
    registry: Registry, records: dict[str, list[Any]]
) -> None:
    """Every record the fast validator finds invalid gets issues, none of them generic."""
    explained = with_alternatives = 0
    for family, found in records.items():
        validators = [registry.validator(family, v) for v in registry.versions(family)]
        for record in found[:8]:
            for variant in (record, *list(mutations(record))[:60]):
                for validator in validators:
                    try:
                        if validator._fast.is_valid(variant):
                            continue
                    except (ValueError, TypeError, OverflowError):
                        continue
                    issues = validator.issues(variant)
                    assert issues, (family, validator.version, variant)
                    explained += 1
                    for issue in issues:
                        assert GENERIC not in issue.message, (family, validator.version, issue)
                        with_alternatives += "Of/" in issue.schema_path
    assert explained > 1_000 and with_alternatives > 50
