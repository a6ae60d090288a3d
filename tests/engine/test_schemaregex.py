"""The reference validator's pattern keywords on RE2: the verdicts and messages of jsonschema."""

from __future__ import annotations

import time
from typing import Any

import pytest
from jsonschema.validators import Draft7Validator, Draft201909Validator, Draft202012Validator

from evalreg.engine.schemaregex import linear
from evalreg.regex import PatternRefused

CLASSES = [Draft7Validator, Draft201909Validator, Draft202012Validator]
OBJECT = {
    "type": "object",
    "properties": {"name": {"type": "string", "pattern": "^[a-z]+$"}},
    "patternProperties": {"^x-": {"type": "integer"}, "^y[0-9]+$": {"type": "string"}},
}
CASES: list[tuple[dict[str, Any], Any]] = [
    ({"pattern": "^a+b$"}, "aab"),
    ({"pattern": "^a+b$"}, "aac"),
    ({"pattern": "b"}, "abc"),
    ({"pattern": "^a"}, 5),
    (OBJECT, {"name": "abc", "x-1": 1, "y1": "s"}),
    (OBJECT, {"name": "ABC", "x-1": "one", "y1": 2}),
    ({**OBJECT, "additionalProperties": False}, {"name": "a", "z": 1, "zz": 2}),
    ({**OBJECT, "additionalProperties": False}, {"name": "a", "x-2": 2}),
    ({"properties": {"a": {}}, "additionalProperties": False}, {"a": 1, "b": 2, "c": 3}),
    ({"properties": {"a": {}}, "additionalProperties": {"type": "string"}}, {"a": 1, "b": 2}),
    ({"additionalProperties": False, "patternProperties": {"^a": {}}}, {"b": 1}),
    (
        {"allOf": [{"patternProperties": {"^x-": {}}}], "unevaluatedProperties": False},
        {"x-a": 1, "b": 2, "c": 3},
    ),
    (
        {
            "properties": {"kind": {"const": "k"}},
            "if": {"properties": {"kind": {"const": "k"}}},
            "then": {"patternProperties": {"^k-": {"type": "integer"}}},
            "unevaluatedProperties": {"type": "boolean"},
        },
        {"kind": "k", "k-1": 1, "other": "no", "flag": True},
    ),
    (
        {
            "$defs": {"base": {"patternProperties": {"^id$": {"type": "string"}}}},
            "$ref": "#/$defs/base",
            "unevaluatedProperties": False,
        },
        {"id": "a", "extra": 1},
    ),
    (
        {
            "anyOf": [{"required": ["a"]}, {"patternProperties": {"^b": {}}}],
            "dependentSchemas": {"a": {"properties": {"c": {}}}},
            "unevaluatedProperties": False,
        },
        {"a": 1, "b1": 2, "c": 3, "d": 4},
    ),
]


def _errors(cls: Any, schema: dict[str, Any], instance: Any) -> list[tuple[Any, ...]]:
    found = cls(schema).iter_errors(instance)
    return sorted(
        (list(e.absolute_path), list(e.absolute_schema_path), e.validator, e.message) for e in found
    )


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
@pytest.mark.parametrize(("schema", "instance"), CASES)
def test_the_errors_are_jsonschemas_own(cls: Any, schema: dict[str, Any], instance: Any) -> None:
    if "unevaluatedProperties" in schema and cls is Draft7Validator:
        pytest.skip("draft 7 has no unevaluatedProperties")
    assert _errors(linear(cls), schema, instance) == _errors(cls, schema, instance)


def test_patterns_that_backtrack_in_python_are_matched_in_linear_time() -> None:
    schema = {
        "properties": {"a": {"pattern": "^(a+)+$"}},
        "patternProperties": {"^(b|bb)+$": {"type": "integer"}},
        "additionalProperties": False,
    }
    instance = {"a": "a" * 5000 + "!", "b" * 5000 + "!": 1}
    began = time.process_time()
    errors = _errors(linear(Draft202012Validator), schema, instance)
    assert time.process_time() - began < 1
    assert [e[2] for e in errors] == ["additionalProperties", "pattern"]


def test_a_pattern_re2_cannot_compile_is_an_error_not_a_guess() -> None:
    validator = linear(Draft202012Validator)({"pattern": "(?=a)"})
    with pytest.raises(PatternRefused, match="lookahead"):
        validator.is_valid("a")


def test_the_class_is_made_once_per_class() -> None:
    assert linear(Draft7Validator) is linear(Draft7Validator)
    assert linear(Draft7Validator) is not linear(Draft202012Validator)
