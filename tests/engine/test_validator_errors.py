"""Invalid records explained from jsonschema-rs's errors give the reference validator's issues.

`Validator.issues` words the errors of simple keywords itself (`plainerrors`) and asks the
reference `jsonschema` validator for everything else; either way the issues are those the
reference path gives: the same pointers, messages, keywords, schema paths and order.
"""

from __future__ import annotations

import copy
import functools
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import evalreg
from evalreg import Registry
from evalreg.engine import plainerrors
from evalreg.engine.validators import Issue, Validator
from evalreg.publish.check.generate import record_strategy
from tests.conftest import builtin_versions, examples
from tests.examples_index import ALL


def reference_issues(validator: Validator, record: Any) -> list[Issue]:
    """Return the issues of `record` as the reference validator alone gives them."""
    if validator.reference.is_valid(record):
        return []
    return list(validator.iter_issues(record))


# -- every built-in version: mutated records -------------------------------------------------


@functools.cache
def strategy(family: str, version: str) -> Any:
    return record_strategy(evalreg.default_registry(), family, version)


def example_records(registry: Registry, family: str, version: str) -> list[Any]:
    """Return the example records of a family that are valid at `version`."""
    validator = registry.validator(family, version)
    found = [r for e in ALL if e.family == family and e.valid for r in e.records()]
    return [record for record in found if not reference_issues(validator, record)]


def places(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Return the path of every value in `value`, itself first."""
    found = [path]
    if isinstance(value, dict):
        for key, child in value.items():
            found += places(child, (*path, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found += places(child, (*path, index))
    return found


def _changed(value: Any, kind: str) -> Any:
    """Return `value` broken one way: another type, out of range, unlisted, empty, extra."""
    if kind == "number":
        return -(10**9) if isinstance(value, (int, float)) and value >= 0 else 10**9
    if kind == "unlisted":
        return "not one of the listed values"
    if kind == "empty":
        return "" if isinstance(value, str) else []
    if kind == "extra" and isinstance(value, dict):
        return {**value, "unexpected_key": 1}
    return {"null": None, "bool": True, "string": "x", "float": 1.5, "list": [1], "dict": {}}.get(
        kind
    )


KINDS = ["drop", "number", "unlisted", "empty", "extra", "null", "bool", "string", "float", "list"]


def mutate(record: Any, path: tuple[Any, ...], kind: str) -> Any:
    """Return a copy of `record` with the value at `path` broken (`drop`: removed)."""
    out = copy.deepcopy(record)
    if not path:
        return _changed(out, kind)
    parent = out
    for key in path[:-1]:
        parent = parent[key]
    if kind == "drop":
        del parent[path[-1]]
    else:
        parent[path[-1]] = _changed(parent[path[-1]], kind)
    return out


SLOW = {"agentv.eval"}
"""Families whose schemas take Hypothesis long to draw from: every version in the slow run."""


@pytest.mark.parametrize("count", examples(full=60, quick=8))
@pytest.mark.parametrize(("family", "version"), builtin_versions(slow_families=SLOW))
def test_mutated_records_get_the_reference_issues(
    registry: Registry, family: str, version: str, count: int
) -> None:
    validator = registry.validator(family, version)
    known = example_records(registry, family, version)
    drawn = strategy(family, version)
    records = st.one_of(st.sampled_from(known), drawn) if known else drawn

    @settings(
        max_examples=count,
        deadline=None,
        phases=[Phase.explicit, Phase.generate],  # a failure is shown as drawn: shrinking is slow
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        database=None,
    )
    @given(data=st.data())
    def check(data: st.DataObject) -> None:
        record = data.draw(records)
        for _ in range(data.draw(st.integers(1, 3))):
            path = data.draw(st.sampled_from(places(record)))
            record = mutate(record, path, data.draw(st.sampled_from(KINDS)))
        assert validator.issues(record) == reference_issues(validator, record)

    check()


# -- each keyword worded, by hand --------------------------------------------------------------

DRAFT_07 = "http://json-schema.org/draft-07/schema#"
SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["name", "score", "tags"],
    "additionalProperties": False,
    "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 5, "pattern": "^[a-z]+$"},
        "long": {"type": "string", "minLength": 3},
        "empty": {"maxLength": 0, "maxItems": 0},
        "score": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
        "open": {"exclusiveMinimum": 0, "exclusiveMaximum": 10},
        "split": {"enum": ["train", "test"], "type": "string"},
        "kind": {"const": "eval"},
        "tags": {"type": "array", "minItems": 1, "maxItems": 2, "items": {"$ref": "#/$defs/tag"}},
        "pair": {"prefixItems": [{"type": "integer"}, {"type": "boolean"}], "minItems": 3},
        "labels": {"additionalProperties": {"type": "string"}},
        "choice": {"anyOf": [{"type": "string"}, {"type": "integer", "minimum": 5}]},
    },
    "$defs": {"tag": {"type": "object", "required": ["id", "at"], "properties": {}}},
}
VALID = {"name": "abc", "score": 0.5, "tags": [{"id": 1, "at": 2}]}
DROP = object()
LONG = "x" * 70


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Registry:
    root = tmp_path_factory.mktemp("reg")
    folder = root / "schemas" / "demo.plain"
    folder.mkdir(parents=True)
    (root / "registry").mkdir()
    (root / "registry" / "demo.plain.yaml").write_text("name: demo.plain\ntitle: t\nkind: json\n")
    (folder / "1.schema.json").write_text(json.dumps(SCHEMA))
    legacy = {**copy.deepcopy(SCHEMA), "$schema": DRAFT_07, "definitions": SCHEMA["$defs"]}
    del legacy["$defs"], legacy["properties"]["pair"], legacy["properties"]["choice"]
    legacy["properties"]["tags"]["items"] = {"$ref": "#/definitions/tag"}
    legacy["properties"]["pair"] = {"items": [{"type": "integer"}, {"type": "boolean"}]}
    (folder / "2.schema.json").write_text(json.dumps(legacy))
    return evalreg.load_registry([root], builtin=False)


def plain(demo: Registry, record: Any, version: str = "1") -> list[str]:
    """Return the issues the fast path gives (checked against the reference), as printed."""
    validator = demo.validator("demo.plain", version)
    found = validator._plain_issues(record)
    assert found is not None, "the reference was asked"
    assert found == reference_issues(validator, record)
    return [f"{issue} ({issue.keyword} at {issue.schema_path})" for issue in found]


CASES = [
    pytest.param(
        {"name": 3},
        "/name: 3 is not of type 'string' (type at /properties/name/type)",
        id="type",
    ),
    pytest.param(
        {"score": "high"},
        "/score: 'high' is not of type 'number', 'null' (type at /properties/score/type)",
        id="type list",
    ),
    pytest.param(
        {"name": DROP}, "/: 'name' is a required property (required at /required)", id="required"
    ),
    pytest.param(
        {"split": "dev"},
        "/split: 'dev' is not one of ['train', 'test'] (enum at /properties/split/enum)",
        id="enum",
    ),
    pytest.param(
        {"kind": "x"}, "/kind: 'eval' was expected (const at /properties/kind/const)", id="const"
    ),
    pytest.param(
        {"score": -1},
        "/score: -1 is less than the minimum of 0 (minimum at /properties/score/minimum)",
        id="minimum",
    ),
    pytest.param(
        {"score": 2},
        "/score: 2 is greater than the maximum of 1 (maximum at /properties/score/maximum)",
        id="maximum",
    ),
    pytest.param(
        {"open": 0},
        "/open: 0 is less than or equal to the minimum of 0"
        " (exclusiveMinimum at /properties/open/exclusiveMinimum)",
        id="exclusiveMinimum",
    ),
    pytest.param(
        {"open": 10.0},
        "/open: 10.0 is greater than or equal to the maximum of 10"
        " (exclusiveMaximum at /properties/open/exclusiveMaximum)",
        id="exclusiveMaximum",
    ),
    pytest.param(
        {"name": ""},
        "/name: '' should be non-empty (minLength at /properties/name/minLength)",
        id="minLength 1",
    ),
    pytest.param(
        {"long": "ab"},
        "/long: 'ab' is too short (minLength at /properties/long/minLength)",
        id="minLength",
    ),
    pytest.param(
        {"name": "abcdef"},
        "/name: 'abcdef' is too long (maxLength at /properties/name/maxLength)",
        id="maxLength",
    ),
    pytest.param(
        {"empty": "a"},
        "/empty: 'a' is expected to be empty (maxLength at /properties/empty/maxLength)",
        id="maxLength 0",
    ),
    pytest.param(
        {"tags": []},
        "/tags: [] should be non-empty (minItems at /properties/tags/minItems)",
        id="minItems 1",
    ),
    pytest.param(
        {"tags": [{"id": 1, "at": 2}] * 3},
        "/tags: [{'id': 1, 'at': 2}, {'id': 1, 'at': 2}, {'id': 1, 'at': 2}] is too long"
        " (maxItems at /properties/tags/maxItems)",
        id="maxItems",
    ),
    pytest.param(
        {"empty": [1]},
        "/empty: [1] is expected to be empty (maxItems at /properties/empty/maxItems)",
        id="maxItems 0",
    ),
    pytest.param(
        {"name": "AB"},
        "/name: 'AB' does not match '^[a-z]+$' (pattern at /properties/name/pattern)",
        id="pattern",
    ),
    pytest.param(
        {"zeta": 1, "alpha": 2},
        "/: Additional properties are not allowed ('alpha', 'zeta' were unexpected)"
        " (additionalProperties at /additionalProperties)",
        id="additionalProperties",
    ),
    pytest.param(
        {"tags": [{"id": 1}]},
        "/tags/0: 'at' is a required property (required at /properties/tags/items/required)",
        id="through $ref",
    ),
    pytest.param(
        {"labels": {"a": 1}},
        "/labels/a: 1 is not of type 'string'"
        " (type at /properties/labels/additionalProperties/type)",
        id="additionalProperties schema",
    ),
    pytest.param(
        # jsonschema-rs names the key "0" as the number 0: the record holds it as text
        {"labels": {"0": 1, "a": "b"}},
        "/labels/0: 1 is not of type 'string'"
        " (type at /properties/labels/additionalProperties/type)",
        id="a key of digits",
    ),
    pytest.param(
        {"labels": {"+01": 1, "-1": 2, "1.0": "c"}},
        "/labels/+01: 1 is not of type 'string'"
        " (type at /properties/labels/additionalProperties/type)",
        id="a key read as a number",
    ),
    pytest.param(
        {"name": LONG},
        f"/name: '{LONG[:56]}... is too long (maxLength at /properties/name/maxLength)",
        id="long value shortened",
    ),
]


@pytest.mark.parametrize(("change", "expected"), CASES)
def test_each_plain_keyword_is_worded_as_the_reference_words_it(
    demo: Registry, change: dict[str, Any], expected: str
) -> None:
    record = {key: value for key, value in {**VALID, **change}.items() if value is not DROP}
    shown = plain(demo, record)
    assert expected in shown
    assert plain(demo, record, "2") == shown  # draft-07: the same keywords, the same words


def test_errors_at_one_place_follow_the_schema_and_the_required_list(demo: Registry) -> None:
    shown = plain(demo, {"split": 3, "tags": [{}, {"at": 1}], "x": 1})
    assert shown == [
        "/: 'name' is a required property (required at /required)",
        "/: 'score' is a required property (required at /required)",
        "/: Additional properties are not allowed ('x' was unexpected)"
        " (additionalProperties at /additionalProperties)",
        # `enum` comes before `type` in the schema of `split`, as the reference checks them
        "/split: 3 is not one of ['train', 'test'] (enum at /properties/split/enum)",
        "/split: 3 is not of type 'string' (type at /properties/split/type)",
        "/tags/0: 'id' is a required property (required at /properties/tags/items/required)",
        "/tags/0: 'at' is a required property (required at /properties/tags/items/required)",
        "/tags/1: 'id' is a required property (required at /properties/tags/items/required)",
    ]


def test_draft_07_items_lists_and_prefix_items(demo: Registry) -> None:
    assert plain(demo, {**VALID, "pair": [1, 2, 3]}) == [
        "/pair/1: 2 is not of type 'boolean' (type at /properties/pair/prefixItems/1/type)"
    ]
    assert plain(demo, {**VALID, "pair": [1, 2]}, "2") == [
        "/pair/1: 2 is not of type 'boolean' (type at /properties/pair/items/1/type)"
    ]


@pytest.mark.parametrize(
    "record",
    [
        pytest.param({**VALID, "choice": 3}, id="anyOf"),
        pytest.param({**VALID, "score": float("nan"), "name": 1}, id="NaN"),
        # jsonschema-rs takes a tuple for an array, the reference does not
        pytest.param({**VALID, "name": 1, "tags": ({"id": 1, "at": 2},)}, id="tuple"),
        # jsonschema-rs leaves the key "" out of the place of an error under it
        pytest.param({**VALID, "labels": {"": 1}}, id="an empty key"),
        pytest.param({**VALID, "name": 1, "labels": {"": "a"}}, id="an empty key elsewhere"),
        # jsonschema-rs names both "1" and "01" as the number 1
        pytest.param({**VALID, "labels": {"1": 1, "01": 2}}, id="two keys read as one number"),
    ],
)
def test_what_it_cannot_vouch_for_the_reference_explains(demo: Registry, record: Any) -> None:
    validator = demo.validator("demo.plain", "1")
    assert validator._plain_issues(record) is None
    assert validator.issues(record) == reference_issues(validator, record)


def test_a_record_of_more_values_than_the_limit_is_left_to_the_reference(demo: Registry) -> None:
    # jsonschema-rs's errors copy the values they concern, and Rust cannot report memory that
    # runs out: its errors are not even asked for about so large a record.
    def never(record: Any) -> list[Any]:
        raise AssertionError("jsonschema-rs was asked for the errors of a large record")

    validator = demo.validator("demo.plain", "1")
    large = {**VALID, "name": 1, "extra": list(range(plainerrors.MAX_VALUES))}
    assert plainerrors.reword(SCHEMA, large, never) is None
    assert validator._plain_issues(large) is None
    assert validator.issues(large) == reference_issues(validator, large)
    small = {**VALID, "name": 1, "extra": list(range(plainerrors.MAX_VALUES // 2))}
    assert validator._plain_issues(small) == reference_issues(validator, small)


def test_a_type_error_is_explained_without_importing_jsonschema(
    registry: Registry, tmp_path: Path
) -> None:
    [example] = [e for e in ALL if e.family == "eee.aggregate" and e.valid][:1]
    record = example.records()[0]
    record["evaluation_results"][0]["score_details"]["score"] = "27.4%"
    path = tmp_path / "run.json"
    path.write_text(json.dumps(record))
    [issue] = reference_issues(
        registry.validator("eee.aggregate", record["schema_version"]), record
    )
    script = textwrap.dedent(
        f"""
        import sys
        from evalreg.cli import main
        sys.argv = ["evalreg", "validate", "--jobs", "1", {str(path)!r}]
        try:
            main()
        finally:
            print("imported:", sorted(m for m in ("jsonschema", "referencing") if m in sys.modules))
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert f"{path}: {issue}" in lines
    assert lines[-1] == "imported: []"
