"""Auditing a migration step by step: the notes of each step against its input and output."""

from __future__ import annotations

import json
from pathlib import Path

import evalreg
from evalreg.engine.audits import audit_migration
from tests.engine.test_migrate import _write_acme

EXAMPLES = Path(__file__).resolve().parents[2] / "evalreg" / "examples"


def test_a_built_in_migration_reports_every_change(registry: evalreg.Registry) -> None:
    path = next((EXAMPLES / "eee").rglob("*.json"))
    record = json.loads(path.read_text())
    audited = audit_migration(registry, record, "latest")
    assert audited.result.status == "migrated"
    assert [s.step for s in audited.steps] == list(audited.result.steps)
    assert audited.ok and audited.problems() == []
    assert sum(len(s.notes) for s in audited.steps) == len(audited.result.notes)


def test_a_step_that_says_nothing_of_its_changes_is_caught(tmp_path: Path) -> None:
    acme = evalreg.load_registry([_write_acme(tmp_path)], builtin=False)
    audited = audit_migration(acme, {"version": "1.0", "score": 0.5}, "latest")
    assert not audited.ok
    assert audited.problems() == [
        "1.0 -> 2.0: unreported + /result/score = 0.5",
        '1.0 -> 2.0: unreported + /library = "unknown"',
        "1.0 -> 2.0: unreported - /score = 0.5",
    ]


def test_a_failed_or_current_record_has_no_steps(registry: evalreg.Registry) -> None:
    assert audit_migration(registry, {"nothing": 1}, "latest").steps == ()
