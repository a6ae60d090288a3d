"""Every change every built-in step makes is reported: notes against a structural diff.

Each step move of each built-in family (upgrades and downgrades) runs on records generated
from the schema of its source version (as `evalreg check` generates them) and on the example
files of the tests. The audit (`evalreg.engine.changes.audit`) traces every value of the step's
output back to its input through the notes, and every value of the input forward: a value
added, changed, moved, renamed or left out without a note, or a note that points at nothing,
fails the test with the record and the change.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings

from evalreg import Registry, StepContext, load_registry
from evalreg.engine.changes import audit
from evalreg.engine.migrate import _set_marker
from evalreg.engine.steps import Step, step_set
from evalreg.errors import EvalregError
from evalreg.io.readers import read_items

TESTS = Path(__file__).resolve().parents[1]
EXAMPLES = 25
"""Records generated per version a step starts from (a failure is shrunk to the smallest), in the
full run (`-m slow`); the default run draws `QUICK_EXAMPLES`."""
QUICK_EXAMPLES = 4
SLOW = {"agentv.eval"}
"""Families whose schemas take Hypothesis long to draw from."""
PARAMS = {"skill_name": "csv-cleaner", "total_tokens": "1234"}
"""Parameters some steps cannot run without (the others take their defaults)."""

REGISTRY = load_registry()


def _moves() -> list[Step]:
    return [move for family in REGISTRY.families() for move in step_set(REGISTRY, family).moves()]


def _id(move: Step) -> str:
    return f"{move.module.family} {move.name}"


def _marker(family: str) -> list[str]:
    """Return the pointer of the marker the engine writes after each step (not the step)."""
    markers = REGISTRY.manifest(family).markers
    return [m.pointer for m in markers if m.template is not None]


def _run(registry: Registry, move: Step, record: Any) -> list[str] | None:
    """Run one step move on `record`; return the audit's problems (None: the step refused)."""
    family = move.module.family
    declared = {p.name: p for p in move.module.params}
    params = {p.name: p.default for p in move.module.params}
    params |= {k: v for k, v in PARAMS.items() if k in declared}
    ctx = StepContext(params, allow_loss=True, step=move.name, declared=declared)
    before = json.dumps(record, sort_keys=True, default=str)
    try:
        out = move.function(record, ctx)
    except EvalregError:
        return None
    assert json.dumps(record, sort_keys=True, default=str) == before, "the step changed its input"
    out = _set_marker(registry, family, out, record, move.target)
    return audit(record, out, ctx.notes, _marker(family)).lines()


def _sources() -> list[tuple[str, str]]:
    """Return each family and version some step move starts from."""
    return sorted({(move.module.family, move.source) for move in _moves()})


def _quick_sources() -> list[Any]:
    """Return the sources of families not in `SLOW`, those between a family's first and latest
    version marked `slow`."""
    found = []
    for family, version in _sources():
        versions = REGISTRY.versions(family)
        if family not in SLOW:
            marks = [] if version in (versions[0], versions[-1]) else [pytest.mark.slow]
            found.append(pytest.param((family, version), id=f"{family} {version}", marks=marks))
    return found


@pytest.mark.parametrize("source", _quick_sources())
def test_generated_records(source: tuple[str, str]) -> None:
    """Each move from a version runs on the same records generated at that version (a few; by
    default from each family's first and latest version, the others in the slow run)."""
    _check_generated(source, QUICK_EXAMPLES)


@pytest.mark.slow
@pytest.mark.parametrize("source", _sources(), ids=lambda s: f"{s[0]} {s[1]}")
def test_generated_records_in_full(source: tuple[str, str]) -> None:
    """As `test_generated_records`, on `EXAMPLES` records a version."""
    _check_generated(source, EXAMPLES)


def _check_generated(source: tuple[str, str], examples: int) -> None:
    moves = [m for m in _moves() if (m.module.family, m.source) == source]

    def check(record: Any) -> None:
        for move in moves:
            problems = _run(REGISTRY, move, record)
            assert not problems, (move.name, problems, json.dumps(record, default=str)[:2000])

    for_generated_records(source, examples, check)


def for_generated_records(
    source: tuple[str, str], examples: int, check: Callable[[Any], None]
) -> None:
    """Run `check` on `examples` records generated from the schema of `source` (family,
    version) that are valid there, the family's version marker set where the schema has one."""
    from evalreg.publish.check.generate import record_strategy

    family, version = source
    validator = REGISTRY.validator(family, version)

    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
        phases=(Phase.explicit, Phase.generate, Phase.shrink),
    )
    @given(record_strategy(REGISTRY, family, version))
    def run(generated: Any) -> None:
        record = _set_marker(REGISTRY, family, generated, generated, version)
        if not validator.is_valid(record):
            record = generated
        if validator.is_valid(record):
            check(record)

    run()


def _example_files() -> Iterator[Path]:
    for folder in ("examples", "agentv_eras", "eee_records", "step_records"):
        for path in sorted((TESTS / folder).rglob("*")):
            if path.suffix in (".json", ".jsonl", ".yaml", ".yml") and ".expect." not in path.name:
                yield path


def _examples() -> dict[tuple[str, str], list[tuple[str, Any]]]:
    """Return the example records by family and version (each with where it comes from), and
    the same records migrated to each later version they reach, for the downgrades."""
    from tests.families.test_skill_creator import FEB17, FEB24

    records = [
        (path, f"{path.relative_to(TESTS)}:{item.line or 1}", item.record)
        for path in _example_files()
        for item in read_items(str(path))
        if item.ok
    ]
    records += [
        (Path(name), f"test_skill_creator {name}", record)
        for files in (FEB17, FEB24)
        for name, record in files.items()
    ]
    found: dict[tuple[str, str], list[tuple[str, Any]]] = {}
    for path, where, record in records:
        detection = REGISTRY.detect(record, filename=path.name)
        family, version = detection.family, detection.version
        if not detection.ok or family is None or version is None:
            continue
        found.setdefault((family, version), []).append((where, record))
        versions = REGISTRY.versions(family)
        for later in versions[versions.index(version) + 1 :]:
            result = REGISTRY.migrate(record, later, family=family, params=PARAMS, allow_loss=True)
            if result.ok:
                found.setdefault((family, later), []).append((f"{where} at {later}", result.record))
    return found


EXAMPLE_RECORDS = _examples()


@pytest.mark.parametrize("move", _moves(), ids=_id)
def test_example_records(move: Step) -> None:
    for where, record in EXAMPLE_RECORDS.get((move.module.family, move.source), []):
        problems = _run(REGISTRY, move, record)
        assert not problems, (where, problems)


def test_every_move_is_audited_on_some_record_it_takes() -> None:
    """A move every record refuses would pass the two tests above without being looked at."""
    unexercised = []
    for move in _moves():
        records = EXAMPLE_RECORDS.get((move.module.family, move.source), [])
        if not any(_run(REGISTRY, move, record) is not None for _, record in records):
            unexercised.append(_id(move))
    assert unexercised == []
