"""The fast paths give the answers of the reference ones.

- validation: the compiled `jsonschema-rs` validator of every built-in schema agrees with the
  reference `jsonschema` validator on validity, for every example record and for mutations of
  them, at every version of their family;
- detection: remembered outcomes (per marker values and fit) are those computed afresh, and the
  quick fingerprint check is `mismatches()`;
- the JSONL quick check: records found valid are exactly those `check_item` finds valid.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evalreg import Registry
from evalreg.batch.check import ValidRun, check_item, validate_paths
from evalreg.engine import detect as detect_module
from evalreg.io.readers import read_items
from tests.conftest import RegistryFactory
from tests.examples_index import ALL

TESTS = Path(__file__).parents[1]
EXTRA_RECORDS = [
    TESTS / "eee_records",
    TESTS / "agentv_eras",
    TESTS.parent / "evalreg" / "examples",
]


@pytest.fixture(scope="module")
def records(registry: Registry) -> dict[str, list[Any]]:
    """Every example record, by the family its example folder (or detection) names."""
    return _records_by_family(registry)


def _records_by_family(registry: Registry) -> dict[str, list[Any]]:
    found: dict[str, list[Any]] = {f: [] for f in registry.families()}
    for example in ALL:
        if example.family in found:
            found[example.family] += example.records()
    for root in EXTRA_RECORDS:
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            for item in read_items(str(path)):
                if not item.ok:
                    continue
                detection = registry.detect(item.record, item.path)
                if detection.family is not None:
                    found[detection.family].append(item.record)
    return found


def _paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _paths(child, (*path, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _paths(child, (*path, index))


def _replace(record: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    out = copy.deepcopy(record)
    node = out
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return out


def _drop(record: Any, path: tuple[Any, ...]) -> Any:
    out = copy.deepcopy(record)
    node = out
    for key in path[:-1]:
        node = node[key]
    del node[path[-1]]
    return out


_SWAPS: list[Any] = [None, True, 0, -1, 1.5, "", "x", [], {}, [1, "a"], {"extra": 1}, 2**70]


def mutations(record: Any) -> Iterator[Any]:
    """Yield deterministic variants of `record`: each value dropped or swapped for another type."""
    for count, path in enumerate(_paths(record)):
        if path:
            yield _drop(record, path)
        for swap in _SWAPS[count % 3 :: 3]:
            yield _replace(record, path, swap)
    if isinstance(record, dict):
        yield {**record, "unexpected_field": "value"}


@pytest.mark.slow
def test_fast_and_reference_validators_agree_on_every_example_and_mutation(
    registry: Registry, records: dict[str, list[Any]]
) -> None:
    checked = disagreements = valid = 0
    problems = []
    for family, found in records.items():
        validators = [registry.validator(family, v) for v in registry.versions(family)]
        for record in found:
            for variant in (record, *mutations(record)):
                for validator in validators:
                    reference = bool(validator.reference.is_valid(variant))
                    try:
                        fast = bool(validator._fast.is_valid(variant))
                    except (ValueError, TypeError, OverflowError):
                        continue  # a value jsonschema-rs cannot take: is_valid asks the reference
                    checked += 1
                    valid += reference
                    if fast != reference:
                        disagreements += 1
                        problems.append((family, validator.version, variant))
    assert not problems, f"{disagreements} of {checked} disagree, first: {problems[0]}"
    assert checked > 10_000 and valid > 100  # the mutations do reach both outcomes


def _rs_and_reference(make_registry_dir: RegistryFactory, schemas: dict[str, Any]) -> Registry:
    from evalreg import load_registry

    root = make_registry_dir({"x.family": {"schemas": schemas}})
    return load_registry([root], builtin=False)


@pytest.mark.parametrize(
    ("schema", "instances"),
    [
        pytest.param(
            {
                "$schema": "http://json-schema.org/draft-04/schema#",
                "maximum": 3,
                "exclusiveMaximum": True,
            },
            [2, 3, 4, 2.5],
            id="draft-04 boolean exclusiveMaximum",
        ),
        pytest.param(
            {"$schema": "http://json-schema.org/draft-07/schema#", "type": "integer"},
            [1, 1.0, 1.5, True, "1"],
            id="draft-07 integer accepts 1.0 and refuses true",
        ),
        pytest.param(
            {"prefixItems": [{"type": "string"}], "items": False},
            [["a"], ["a", 1], [1], []],
            id="2020-12 without $schema: prefixItems",
        ),
        pytest.param(
            {"$schema": "http://json-schema.org/draft-07/schema#", "format": "date-time"},
            ["2024-01-01T00:00:00Z", "yesterday", 3],
            id="formats are not asserted by either",
        ),
        pytest.param(
            {
                "$schema": "http://json-schema.org/draft-07/schema#",
                "definitions": {"n": {"type": "number", "minimum": 0}},
                "properties": {
                    "a": {"$ref": "#/definitions/n"},
                    "b": {"$ref": "urn:evalreg:x.family:2#/$defs/s"},
                },
            },
            [{"a": 1, "b": "s"}, {"a": -1}, {"b": 1}, {}],
            id="local and cross-document $ref",
        ),
    ],
)
def test_drafts_formats_and_refs_are_honoured_alike(
    make_registry_dir: RegistryFactory, schema: dict[str, Any], instances: list[Any]
) -> None:
    registry = _rs_and_reference(
        make_registry_dir, {"1": schema, "2": {"$defs": {"s": {"type": "string"}}}}
    )
    validator = registry.validator("x.family", "1")
    for instance in instances:
        assert validator._fast.is_valid(instance) == validator.reference.is_valid(instance), (
            instance
        )


# -- detection ---------------------------------------------------------------------------------


def _fresh_detect(registry: Registry, record: Any, filename: str | None) -> Any:
    registry.__dict__.pop("_detection", None)
    return detect_module.detect(registry, record, filename)


def test_remembered_detections_are_those_computed_afresh(
    registry: Registry, records: dict[str, list[Any]]
) -> None:
    cases = []
    for found in records.values():
        for record in found:
            for variant in [record, *list(mutations(record))[:20]]:
                for filename in (None, "run.json", "gold.jsonl"):
                    cases.append((variant, filename))
    fresh = [_fresh_detect(registry, record, name) for record, name in cases]
    warm = [detect_module.detect(registry, record, name) for record, name in cases]
    warm_again = [detect_module.detect(registry, record, name) for record, name in cases]
    assert warm == fresh
    assert warm_again == fresh
    assert sum(d.ok for d in fresh) > 100


def test_quick_fingerprint_check_is_mismatches(
    registry: Registry, records: dict[str, list[Any]]
) -> None:
    prepared = detect_module._prepare(registry)
    assert any(p is not None for p in prepared.presence.values())
    for found in records.values():
        for record in found:
            for variant in (record, *list(mutations(record))[:40]):
                if not isinstance(variant, dict):
                    continue
                for family in registry.families():
                    expected = not registry.manifest(family).structure.mismatches(variant)
                    assert prepared.fits(registry, family, variant) == expected


# -- the quick check of validate_paths -------------------------------------------------------


def test_quick_check_counts_exactly_the_records_check_item_finds_valid(
    registry: Registry, records: dict[str, list[Any]], tmp_path: Path
) -> None:
    lines = []
    for found in records.values():
        for record in found[:3]:
            lines += [json.dumps(v) for v in [record, *list(mutations(record))[:15]]]
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join(lines) + "\n")
    expected = [check_item(registry, item) for item in read_items(str(path))]
    found = list(validate_paths(registry, [str(path)]))
    assert [c for c in found if not isinstance(c, ValidRun)] == [
        c for c in expected if c.status != "valid" or c.issues
    ]
    valid = sum(c.count for c in found if isinstance(c, ValidRun))
    assert valid == sum(1 for c in expected if c.status == "valid" and not c.issues) > 10


@pytest.mark.parametrize("block_bytes", [1, 7, 64, 1 << 20])
@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"{}",
        b"{}\n",
        b"\n\n{}\n",
        b'{"a": 1}\r\n{"b": 2}\n',
        b'{"n": 123456789012345678901234}\n{"n": 1}\n[9223372036854775808]\n{"s": "0"}',
        b'{"n": 1}\n{"cut": 12345678901234567890',
    ],
    ids=["empty", "unended", "one", "blank", "crlf", "wide", "cut"],
)
def test_blocks_are_the_lines_of_the_stream(
    monkeypatch: pytest.MonkeyPatch, block_bytes: int, data: bytes
) -> None:
    import io

    from evalreg.io import readers

    monkeypatch.setattr(readers, "BLOCK_BYTES", block_bytes)
    lines = []
    for block in readers.read_blocks(io.BytesIO(data)):
        for index, line in enumerate(block.lines):
            ended = block.ended or index < len(block.lines) - 1
            lines.append(line + b"\n" if ended else line)
    assert lines == list(io.BytesIO(data))


def test_validating_lines_keeps_wide_integers_exact(registry: Registry, tmp_path: Path) -> None:
    # Parsed as floats, two integers this wide would be one value twice.
    schema = {"type": "object", "properties": {"n": {"uniqueItems": True}}}
    factory_root = tmp_path / "reg"
    (factory_root / "registry").mkdir(parents=True)
    (factory_root / "registry" / "acme.big.yaml").write_text(
        "name: acme.big\ntitle: Big\ndescription: Big numbers.\nkind: jsonl\n"
        "markers:\n  - pointer: /v\n"
    )
    (factory_root / "schemas" / "acme.big").mkdir(parents=True)
    (factory_root / "schemas" / "acme.big" / "1.0.schema.json").write_text(json.dumps(schema))
    from evalreg import load_registry

    acme = load_registry([factory_root], builtin=False, verify=False)
    path = tmp_path / "big.jsonl"
    path.write_text(f'{{"v": "1.0", "n": [{2**70}, {2**70 + 1}]}}\n{{"v": "1.0", "n": [1, 1]}}\n')
    found = list(validate_paths(acme, [str(path)]))
    assert isinstance(found[0], ValidRun) and found[0].count == 1
    assert [c.line for c in found[1:] if not isinstance(c, ValidRun)] == [2]


def test_whole_file_reads_and_suffix_globs_match_the_general_ones(tmp_path: Path) -> None:
    from evalreg.batch.walk import _Globs
    from evalreg.io.readers import read_whole

    path = tmp_path / "a.json"
    for data in (b"", b"{}", b"x" * 3_000_000):
        path.write_bytes(data)
        assert read_whole(str(path)) == data
    with pytest.raises(OSError):
        read_whole(str(tmp_path))
    names = ["a.json", "b/c.JSON", "d.jsonl.gz", "e.json.bak", "f/.json", "g.yml"]
    for patterns in (["*.json", "*.jsonl.gz"], ["*.yml"]):
        fast = _Globs(patterns)
        assert fast._endings is not None
        general = _Globs([*patterns, "[!-]"])  # a glob character: the regular expression
        assert general._endings is None
        assert [fast(n) for n in names] == [general(n) and n != "x" for n in names]
