"""A detection remembered by the shape of a record is the one `detect` gives, whatever the file."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from evalreg import Registry
from evalreg.engine.detect import detect, remembered
from tests.examples_index import ALL

RECORDS = [
    (str(example.path), record)
    for example in ALL
    for record in example.records()
    if isinstance(record, dict)
]
NAMES = ["x.json", "x.jsonl", "x.yaml", "benchmark.json", None]


def _changed(record: dict[str, Any], drop: list[int], version: Any) -> dict[str, Any]:
    changed = {k: v for i, (k, v) in enumerate(record.items()) if i not in drop}
    if version is not None:
        for key in ("schema_version", "$schema"):
            if key in changed:
                changed[key] = version
    return changed


@settings(max_examples=150, deadline=None)
@given(
    st.integers(0, len(RECORDS) - 1),
    st.lists(st.integers(0, 12), max_size=3),
    st.sampled_from([None, "0.2.0", "0.2.2", "9.9", 1, None]),
    st.sampled_from(NAMES),
)
def test_remembered_is_what_detect_gives(
    registry: Registry, index: int, drop: list[int], version: Any, name: str | None
) -> None:
    path, record = RECORDS[index]
    record = _changed(record, drop, version)
    first = detect(registry, record, path)
    found = remembered(registry, record)
    if found is not None:
        assert found == first == detect(registry, record, name)


def test_most_records_are_remembered_once_seen(registry: Registry) -> None:
    for path, record in RECORDS:
        detect(registry, record, path)
    assert sum(remembered(registry, record) is not None for _, record in RECORDS) > len(RECORDS) / 3
