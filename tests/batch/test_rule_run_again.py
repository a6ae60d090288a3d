"""A record of the file, family and version of the one before runs the rules it would anyway."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from evalreg import Registry
from evalreg.batch.rules import RuleRun
from evalreg.engine.selection import ALL_RULES
from tests.examples_index import ALL

RECORDS = [
    (example.family, record)
    for example in ALL
    if example.family.startswith("eee.")
    for record in example.records()
]
PATHS = ["data/c/d/m/5b0c2e7a-91d4-4f3e-a6b8-2d7c9e1f0a34_samples.jsonl", "elsewhere/a.jsonl"]


def _run(registry: Registry, order: list[tuple[int, int]], again: bool) -> Any:
    rules = RuleRun(registry, ALL_RULES)
    found = []
    for line, (path_index, record_index) in enumerate(order, 1):
        family, record = RECORDS[record_index]
        detection = registry.detect(record)
        if detection.version is None or detection.family != family:
            continue
        if not again:
            rules._same = None
        path = PATHS[path_index]
        found.append(rules.issues(record, path, line, family, detection.version))
        if line % 5 == 0:
            rules.close(path)
    for path in PATHS:
        rules.close(path)
    return found, rules.summaries


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 1), st.integers(0, len(RECORDS) - 1)), max_size=30))
def test_the_rules_of_the_next_record_are_those_of_a_first_one(
    registry: Registry, order: list[tuple[int, int]]
) -> None:
    assert _run(registry, order, again=True) == _run(registry, order, again=False)
