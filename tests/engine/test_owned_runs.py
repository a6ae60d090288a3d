"""Steps run on a record the run owns change it in place, with the same results as copying.

The engine hands the chain a record of its own (`StepContext.owned`): a copy of the caller's, or
the caller's itself where it is handed over (`copy_input=False` with `reread`). Every built-in
step, and every route to the latest version, must give the same record (key order too) and the
same notes whether it changes its input in place or leaves it as it is; and a record that fails
in place still names its cause, from the record as it was.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import evalreg
from evalreg import StepContext
from evalreg.batch.migrate_file import MigrateOptions, RecordMigration, migrate_file
from evalreg.engine.migrate import MigrationResult, _set_marker, migrate_record
from evalreg.errors import EvalregError
from evalreg.io.codec import clone, dumps
from tests.conftest import RegistryFactory
from tests.engine.test_failure_cause import demo_registry
from tests.engine.test_step_notes import (
    EXAMPLE_RECORDS,
    PARAMS,
    QUICK_EXAMPLES,
    REGISTRY,
    SLOW,
    _moves,
    _sources,
    for_generated_records,
)


def _text(value: Any) -> str:
    return json.dumps(value, default=str)  # key order kept: a difference in order shows


def _step_both_ways(move: Any, record: Any) -> None:
    """Run one step on `record` owned and not; assert the same output and notes."""
    declared = {p.name: p for p in move.module.params}
    params = {p.name: p.default for p in move.module.params}
    params |= {k: v for k, v in PARAMS.items() if k in declared}
    outcomes = []
    for owned in (False, True):
        ctx = StepContext(params, allow_loss=True, step=move.name, declared=declared, owned=owned)
        given = clone(record) if owned else record
        try:
            out = move.function(given, ctx)
        except EvalregError as err:
            outcomes.append(("refused", str(err)))
            continue
        out = _set_marker(REGISTRY, move.module.family, out, record, move.target)
        outcomes.append((_text(out), _text([n.as_json() for n in ctx.notes])))
    assert outcomes[0] == outcomes[1], move.name


def _route_three_ways(record: Any) -> None:
    """Migrate `record` to the latest version copying, unowned and in place: the same result."""
    kept = _text(record)
    results: list[MigrationResult] = [
        migrate_record(REGISTRY, record, "latest", params=PARAMS, allow_loss=True),
        migrate_record(
            REGISTRY, record, "latest", params=PARAMS, allow_loss=True, copy_input=False
        ),
        migrate_record(
            REGISTRY,
            clone(record),
            "latest",
            params=PARAMS,
            allow_loss=True,
            copy_input=False,
            reread=lambda: clone(record),
        ),
    ]
    assert _text(record) == kept  # the caller's record, as it was
    seen = {
        (
            r.status,
            _text(r.record),
            r.steps,
            _text([n.as_json() for n in r.notes]),
            r.error,
            r.failed_step,
        )
        for r in results
    }
    assert len(seen) == 1, seen


@pytest.mark.parametrize(
    "source", [s for s in _sources() if s[0] not in SLOW], ids=lambda s: f"{s[0]} {s[1]}"
)
def test_generated_records_give_the_same_in_place(source: tuple[str, str]) -> None:
    moves = [m for m in _moves() if (m.module.family, m.source) == source]

    def check(record: Any) -> None:
        for move in moves:
            _step_both_ways(move, record)
        _route_three_ways(record)

    for_generated_records(source, QUICK_EXAMPLES, check)


def test_example_records_give_the_same_in_place() -> None:
    moves = _moves()
    for (family, version), records in EXAMPLE_RECORDS.items():
        for _, record in records:
            for move in moves:
                if (move.module.family, move.source) == (family, version):
                    _step_both_ways(move, record)
            _route_three_ways(record)


# -- a record changed in place that fails names its cause from the record as it was ------------


IN_PLACE_STEP = '''
"""Put a number where 2 wants a text, in the record itself where the run owns it."""
from evalreg.stepkit import writable

FROM = "1"
TO = "2"

def upgrade(record, ctx):
    out = writable(record, ctx)
    out["unit"] = 5
    ctx.added("/unit", 5)
    return out
'''


@pytest.fixture
def demo(make_registry_dir: RegistryFactory) -> evalreg.Registry:
    steps = {
        "1_to_2.py": IN_PLACE_STEP,
        "2_to_3.py": 'FROM = "2"\nTO = "3"\n\ndef upgrade(record, ctx):\n    return record\n',
    }
    return demo_registry(make_registry_dir, steps)


def test_a_record_failed_in_place_names_its_cause_and_stays_as_it_was(
    demo: evalreg.Registry, tmp_path: Path
) -> None:
    lines = [{"schema_version": "1", "name": "a"}, {"schema_version": "1", "name": "b"}]
    source = tmp_path / "scores.jsonl"
    source.write_bytes(b"".join(dumps(line) + b"\n" for line in lines))
    copied = demo.migrate(lines[0], "3")
    assert copied.failed_step == "1 -> 2"
    assert (copied.error or "").startswith("not valid at 2 after this step: /unit: 5 is not of")

    events = list(migrate_file(demo, str(source), str(tmp_path / "out.jsonl"), MigrateOptions("3")))
    records = [e for e in events if isinstance(e, RecordMigration)]
    assert [r.result.error if r.result else None for r in records] == [copied.error] * 2
    assert [r.result.record if r.result else None for r in records] == lines
    assert not (tmp_path / "out.jsonl").exists()  # a file with a failed record is not written

    record = clone(lines[0])
    in_place = migrate_record(demo, record, "3", copy_input=False, reread=lambda: clone(lines[0]))
    assert in_place.error == copied.error and in_place.record == lines[0]
    assert record != lines[0]  # handed over: the chain changed it
