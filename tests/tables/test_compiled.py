"""The compiled row converter does what the closures of `rows` do: same rows, `_extra`, errors."""

from __future__ import annotations

import copy
import functools
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import evalreg
from evalreg import Registry
from evalreg.publish.check.generate import record_strategy
from evalreg.tables.compiled import MAX_DEPTH, compile_struct
from evalreg.tables.mapping import Column, layout
from evalreg.tables.rows import _struct_converter
from tests.conftest import builtin_versions

ODD_VALUES: list[Any] = [
    None,
    "text",
    3,
    -(2**70),
    2**63,
    1.5,
    2.0,
    True,
    [],
    [None, 1],
    {},
    {"k": 1},
]


def outcome(convert: Any, record: Any) -> tuple[Any, ...]:
    """Return what a converter makes of a record: the row, whether it is the record itself,
    and `_extra` in order; or the error."""
    extras: dict[str, Any] = {}
    try:
        row = convert(record, "", extras)
    except Exception as err:  # the same error is expected of both
        return ("error", type(err).__name__, str(err), list(extras.items()))
    return ("row", row, row is record, list(extras.items()))


def check_same(column: Column, record: Any) -> None:
    compiled, closures = compile_struct(column), _struct_converter(column)
    kept = copy.deepcopy(record)
    assert outcome(compiled, record) == outcome(closures, kept)
    assert record == kept  # neither changes the record


def places(value: Any) -> list[tuple[Any, Any]]:
    """Return every (container, key) of a JSON value."""
    found: list[tuple[Any, Any]] = []
    if isinstance(value, dict):
        for key, item in value.items():
            found.append((value, key))
            found += places(item)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found.append((value, index))
            found += places(item)
    return found


def mutated(record: Any, rng: random.Random) -> Any:
    """Return a copy of `record` with a few values nulled, retyped or added."""
    record = copy.deepcopy(record)
    for _ in range(rng.randint(1, 4)):
        spots = places(record)
        if not spots:
            break
        parent, key = rng.choice(spots)
        if isinstance(parent, dict) and rng.random() < 0.25:
            parent[f"undeclared{rng.randint(0, 9)}"] = rng.choice(ODD_VALUES)
        else:
            parent[key] = copy.deepcopy(rng.choice(ODD_VALUES))
    return record


@functools.cache
def strategy(family: str, version: str) -> Any:
    return record_strategy(evalreg.default_registry(), family, version)


@pytest.mark.parametrize(
    ("family", "version"),
    builtin_versions(slow_families={"agentv.eval"}),
)
def test_generated_and_mangled_records_convert_as_with_the_closures(
    registry: Registry, family: str, version: str
) -> None:
    root = layout(registry, family, version).root

    @settings(
        max_examples=3 if family == "agentv.eval" else 6,
        deadline=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        database=None,
        derandomize=True,  # the same records every run: no flaky draws from deep schemas
    )
    @given(record=strategy(family, version), rng=st.randoms(use_true_random=False))
    def check(record: Any, rng: random.Random) -> None:
        check_same(root, record)
        for _ in range(3):
            check_same(root, mutated(record, rng))

    check()


def nested(depth: int, leaf: dict[str, Any]) -> dict[str, Any]:
    """Return a schema of arrays of objects nested `depth` deep around `leaf`."""
    schema = leaf
    for level in range(depth):
        schema = {
            "type": "object",
            "properties": {
                "n": {"type": "integer"},
                f"in{level}": {"type": "array", "items": schema},
            },
        }
    return schema


def nested_record(depth: int, leaf: Any, width: int = 2) -> Any:
    """Return a record of `nested(depth, ...)`, each array holding `width` copies of the level
    below."""
    record = leaf
    for level in range(depth):
        record = {"n": level, f"in{level}": [record] * width}
    return record


ODD_NAMES = ["it's", 'say "hi"', "back\\slash", "{brace}", "a/b~c", "ünï", "", "new\nline"]


@pytest.fixture
def odd(make_registry_dir: Any) -> Registry:
    leaf = {
        "type": "object",
        "properties": {
            **{name: {"type": ["integer", "null"]} for name in ODD_NAMES},
            "free": {"type": "object"},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "loose": {"properties": {"x": {"type": "number"}}},
        },
    }
    deep = nested(MAX_DEPTH + 3, leaf)
    flat = {"type": "object", "properties": {"items": {"type": "array", "items": leaf}}}
    held = {"type": "object", "required": ["a"], "properties": {"a": {"type": ["string", "null"]}}}
    root = make_registry_dir(
        {
            "odd.deep": {"schemas": {"1.0": deep}},
            "odd.flat": {"schemas": {"1.0": flat}},
            "odd.held": {"schemas": {"1.0": held}},
        }
    )
    return evalreg.load_registry([root], builtin=False)


@pytest.mark.parametrize("width", [1, pytest.param(2, marks=pytest.mark.slow)])
def test_odd_names_and_nesting_beyond_the_compiled_depth_convert_as_with_the_closures(
    odd: Registry, width: int
) -> None:
    """`width`: the items of each array, nested `MAX_DEPTH + 3` deep (2: 32,768 leaves)."""
    root = layout(odd, "odd.deep", "1.0").root
    leaf = {
        **{name: i for i, name in enumerate(ODD_NAMES)},
        "free": {"a": [1]},
        "labels": {"k": "v"},
        "loose": 7,
    }
    depth = MAX_DEPTH + 3
    check_same(root, nested_record(depth, leaf, width))
    check_same(root, nested_record(depth, {**leaf, ODD_NAMES[0]: None, "extra": 1}, width))
    check_same(root, nested_record(depth, {**leaf, ODD_NAMES[1]: 2**64}, width))
    check_same(root, nested_record(depth, {**leaf, ODD_NAMES[2]: "no"}, width))
    check_same(root, nested_record(depth, {**leaf, "labels": {"k": 1}}, width))
    rng = random.Random(7)
    for _ in range(50):
        check_same(root, mutated(nested_record(4, leaf), rng))
    extras: dict[str, Any] = {}
    flat = layout(odd, "odd.flat", "1.0").root
    plain = {**leaf, "loose": {"x": 1.5}}
    record = {"items": [{**plain, "a/b~c": None}, {**plain, "it's": None, "x": 1}]}
    compile_struct(flat)(record, "", extras)
    assert list(extras) == ["/items/0/a~1b~0c", "/items/1/it's", "/items/1/x"]
    held = layout(odd, "odd.held", "1.0").root  # a null that needs no _extra: required
    for record in ({"a": None}, {"a": "x"}, {"a": None, "b": 1}, {}, {"a": 1}):
        check_same(held, record)
    assert outcome(compile_struct(held), {"a": None})[1:] == ({"a": None}, True, [])
