"""What a result says of its record on every way a migration ends: versions, steps, failure.

The engine makes the fields of a failed result only where a record fails, and skips detection
for a record of a shape seen before: each way out must still say what was known.
"""

from __future__ import annotations

from typing import Any

import pytest

import evalreg
from evalreg.engine.migrate import MigrationResult, migrate_record
from tests.conftest import RegistryFactory
from tests.engine.test_failure_cause import _step, demo_registry


@pytest.fixture
def demo(make_registry_dir: RegistryFactory) -> evalreg.Registry:
    """1 -> 2 raises for `name` "raise", returns a list for "list", else adds a score (a text
    for "text", which 2 does not allow); 2 -> 3 copies the record."""
    body = (
        'name = record["name"]\n'
        '            if name == "raise": raise ValueError("no")\n'
        '            if name == "list": return []\n'
        '            ctx.added("/score", 1)\n'
        '            return {**record, "score": "1" if name == "text" else 1}'
    )
    steps = {**_step("1", "2", body), **_step("2", "3", "return dict(record)")}
    return demo_registry(make_registry_dir, steps)


def _fields(result: MigrationResult) -> tuple[Any, ...]:
    r = result
    return (r.status, r.family, r.source, r.target, r.steps, r.failed_step, bool(r.issues))


@pytest.mark.parametrize("validate", ["final", "each"])
def test_each_way_out_says_what_was_known(demo: evalreg.Registry, validate: str) -> None:
    def run(record: Any, to: str = "3", **options: Any) -> MigrationResult:
        return migrate_record(demo, record, to, validate=validate, **options)

    one = {"schema_version": "1", "name": "x"}
    assert _fields(run(one)) == ("migrated", "demo.score", "1", "3", ("1 -> 2", "2 -> 3"), None, 0)
    assert _fields(run(one)) == _fields(run(dict(one)))  # the shape remembered: the same
    assert run(one).notes == run(one).notes != ()
    assert _fields(run({"schema_version": "3", "name": "x"})) == (
        ("current", "demo.score", "3", "3", (), None, 0)
    )
    bad_current = run({"schema_version": "3", "name": 5})
    assert _fields(bad_current) == ("failed", "demo.score", "3", "3", (), None, 1)
    assert (bad_current.error or "").startswith("already at 3 but not valid: ")
    raised = run({"schema_version": "1", "name": "raise"})
    assert _fields(raised) == ("failed", "demo.score", "1", "3", (), "1 -> 2", 0)
    assert raised.error == "ValueError: no"
    listed = run({"schema_version": "1", "name": "list"})
    assert _fields(listed) == ("failed", "demo.score", "1", "3", (), "1 -> 2", 0)
    assert listed.error == "the step did not return an object"
    text = run({"schema_version": "1", "name": "text"})
    assert text.status == "failed" and text.failed_step == "1 -> 2" and text.issues
    assert (text.family, text.source, text.target) == ("demo.score", "1", "3")
    assert text.steps == (("1 -> 2",) if validate == "each" else ("1 -> 2", "2 -> 3"))
    unknown = run({"schema_version": "9", "name": "x"})
    assert (unknown.status, unknown.family, unknown.source) == ("failed", "demo.score", None)
    no_route = run({"schema_version": "3", "name": "x"}, to="1")
    assert _fields(no_route)[:4] == ("failed", "demo.score", "3", None)
    undetected = run([1])
    assert (undetected.status, undetected.family) == ("failed", None)
    assert (undetected.error or "").startswith("cannot detect the record: ")


def test_a_family_given_reads_the_version_from_the_record(demo: evalreg.Registry) -> None:
    result = migrate_record(demo, {"schema_version": "2", "name": "x"}, "3", family="demo.score")
    assert _fields(result) == ("migrated", "demo.score", "2", "3", ("2 -> 3",), None, 0)
    unknown = migrate_record(demo, {"schema_version": "7"}, "3", family="demo.score")
    assert (unknown.status, unknown.family, unknown.source) == ("failed", "demo.score", None)
    unlabelled = migrate_record(demo, {"name": "x"}, "3", family="demo.score")
    assert unlabelled.error == "cannot tell which version of demo.score this is"
