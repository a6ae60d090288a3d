"""The two ways of checking a record agree by construction: one `decide`, one outcome."""

from __future__ import annotations

from typing import Any

import pytest

from evalreg import Registry
from evalreg.batch.quick import QuickCheck
from evalreg.batch.records import RecordCheck, check_item, decide
from evalreg.batch.rules import RuleRun
from evalreg.engine.selection import ALL_RULES
from evalreg.io.readers import Item
from tests.examples_index import ALL


@pytest.mark.parametrize("forced", [False, True], ids=["detected", "forced"])
def test_the_quick_check_gives_check_item_or_says_valid_with_nothing_to_say(
    registry: Registry, forced: bool
) -> None:
    quick_ones = 0
    for example in ALL:
        family = version = None
        if forced:
            family = example.family
            version = decide(registry, example.records()[0], str(example.path), None, None)[
                0
            ].version
            if version is None:
                continue
        quick = QuickCheck(registry, family, version, ALL_RULES)
        rules = RuleRun(registry, ALL_RULES)
        for line, record in enumerate(example.records(), 1):
            path = str(example.path)
            found: Any = quick.quick(record, path, line)
            full = check_item(
                registry,
                Item(path, line, record=record),
                family=family,
                version=version,
                rules=rules,
            )
            if isinstance(found, RecordCheck):
                assert found == full, example.id
            else:  # valid with nothing to say: so says the full check
                quick_ones += 1
                assert (full.status, full.issues) == ("valid", ()), example.id
                assert (found.family, found.version) == (full.family, full.version)
    assert quick_ones > 10


def test_decide_holds_a_forced_family_to_the_detection(registry: Registry) -> None:
    example = next(e for e in ALL if e.family == "eee.aggregate" and e.valid)
    record = example.records()[0]
    detection, decided = decide(registry, record, "x.json", None, None)
    assert decided and detection.family == "eee.aggregate"
    assert decide(registry, record, "x.json", "eee.aggregate", None)[1]
    assert not decide(registry, record, "x.json", "eee.instance", None)[1]
    forced, decided = decide(registry, record, "x.json", "eee.instance", "0.2.0")
    assert decided and (forced.family, forced.version) == ("eee.instance", "0.2.0")
