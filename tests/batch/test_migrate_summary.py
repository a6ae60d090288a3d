"""The summary of a migrate run, computed once in the library, and what the command prints of it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evalreg import Registry
from evalreg.batch import parallel
from evalreg.batch.migrate import migrate_run
from evalreg.batch.migrate_file import FileMigration, Leftover, MigrateOptions, RecordMigration
from evalreg.batch.migrate_summary import (
    MAX_DISTINCT_NOTES,
    MigrationRun,
    MigrationSummary,
    NoteCounts,
    NoteGroups,
)
from evalreg.cli import main
from evalreg.engine.migrate import MigrationResult
from evalreg.engine.notes import Note

DEMO = Path(__file__).parents[2] / "evalreg" / "examples" / "eee" / "data"
AGGREGATE = next(DEMO.rglob("*-????-????-????-????????????.json"))
"""A bundled 0.2.0 aggregate record."""


def _aggregates(folder: Path, count: int, *, broken: int = 0) -> Path:
    """Write `count` 0.2.0 aggregates (numbers that 0.2.1 makes text), `broken` of them not
    valid JSON."""
    record = json.loads(AGGREGATE.read_text())
    for index in range(count):
        record["model_info"]["additional_details"] = {"params_billions": index + 0.5}
        path = folder / f"m{index}" / "run.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(record) if index >= broken else "{ not json")
    return folder


def _counted_by_hand(outcomes: list[Any]) -> dict[str, Any]:
    """Count the outcomes of a run without `MigrationSummary`."""
    files = {"written": 0, "unchanged": 0, "failed": 0, "planned": 0}
    records = {"migrated": 0, "current": 0, "failed": 0}
    kinds: dict[str, int] = {}
    pending: dict[str, int] = {}
    for outcome in outcomes:
        if isinstance(outcome, RecordMigration) and outcome.status == "migrated":
            assert outcome.result is not None
            for note in outcome.result.notes:
                pending[note.kind] = pending.get(note.kind, 0) + outcome.count
        elif isinstance(outcome, FileMigration):
            files[outcome.status] += 1
            for status in records:
                records[status] += getattr(outcome, status)
            if outcome.status in ("written", "planned"):
                for kind, count in pending.items():
                    kinds[kind] = kinds.get(kind, 0) + count
            pending = {}
    return {"files": files, "records": records, "kinds": kinds}


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_summary_counts_every_outcome_as_it_passes(
    registry: Registry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int
) -> None:
    monkeypatch.setattr(parallel, "POOL_MIN_BYTES", 0)
    folder = _aggregates(tmp_path / "in", 5, broken=2)
    options = MigrateOptions(to="latest", out=str(tmp_path / "out"))
    run = migrate_run(registry, [str(folder)], options, jobs=jobs)
    assert isinstance(run, MigrationRun)
    outcomes = list(run)
    by_hand = _counted_by_hand(outcomes)
    summary = run.summary
    assert summary.files == by_hand["files"]
    assert summary.files["written"] == 3 and summary.files["failed"] == 2
    assert summary.records == by_hand["records"]
    assert summary.file_count == 5
    assert not summary.ok  # two files could not be read
    assert {k: v for k, v in summary.notes.kinds.items() if v} == by_hand["kinds"]
    assert summary.notes.kinds["converted"] == 3
    assert not summary.groups.groups  # not asked for
    assert summary.as_dict()["files"] == by_hand["files"]


def test_grouped_notes_give_the_summary_of_a_run_of_every_note(
    registry: Registry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(parallel, "POOL_MIN_BYTES", 0)
    folder = _aggregates(tmp_path / "in", 6)
    each = migrate_run(registry, [str(folder)], MigrateOptions(to="latest", dry_run=True), jobs=2)
    list(each)
    grouped = migrate_run(
        registry, [str(folder)], MigrateOptions(to="latest", dry_run=True), jobs=2, notes="grouped"
    )
    list(grouped)
    assert grouped.summary.as_dict() == each.summary.as_dict()
    assert grouped.summary.ok and grouped.summary.files["planned"] == 6
    rows = list(grouped.summary.groups.rows())
    converted = [row for row in rows if row.text.startswith("converted ")]
    assert len(converted) == 1  # six values, one distinct note
    assert (converted[0].records, converted[0].files) == (6, 6)
    assert converted[0].path.endswith("run.json") and converted[0].line is None


def test_the_command_prints_the_summary_the_library_computed(
    registry: Registry, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _aggregates(tmp_path / "in", 3, broken=1)
    run = migrate_run(registry, [str(folder)], MigrateOptions(to="latest", dry_run=True))
    list(run)
    with pytest.raises(SystemExit) as info:
        main(["migrate", str(folder), "--to", "latest", "--dry-run", "--format", "json"])
    assert info.value.code == 1
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert rows[-1] == {"summary": run.summary.as_dict()}
    files = [row for row in rows if "file" in row and row.get("status") == "planned"]
    assert all(row["notes"]["converted"] == 1 for row in files) and len(files) == 2


def _note(kind: Any, pointer: str, placeholder: bool = False) -> Note:
    return Note(kind, pointer, origin="placeholder" if placeholder else None)


def test_note_counts_count_kinds_and_placeholders_per_record() -> None:
    counts = NoteCounts()
    notes = (_note("added", "/a", True), _note("added", "/b", True), _note("converted", "/c"))
    counts.add(notes, records=3)
    counts.add((_note("dropped", "/d"),))
    assert counts.counted() == [("added", 6), ("converted", 3), ("dropped", 1)]
    assert (counts.placeholders, counts.records_with_placeholders) == (6, 3)
    assert next(iter(counts.as_json())) == "added" and counts.as_json()["renamed"] == 0
    other = NoteCounts()
    other.merge(counts)
    other.merge(counts)
    assert other.counted() == [("added", 12), ("converted", 6), ("dropped", 2)]
    assert (other.placeholders, other.records_with_placeholders) == (12, 6)


def test_note_groups_keep_the_first_place_and_stop_at_the_most_distinct_notes() -> None:
    groups = NoteGroups()
    note = _note("dropped", "/x")
    groups.add("a.jsonl", 4, (note, note), records=2)  # one note given twice counts once
    groups.add("a.jsonl", 9, (note,))
    groups.add("b.jsonl", 1, (note,))
    (row,) = groups.rows()
    assert (row.path, row.line, row.records, row.files) == ("a.jsonl", 4, 4, 2)
    many = NoteGroups()
    for index in range(MAX_DISTINCT_NOTES + 5):
        many.add("c.json", None, (_note("dropped", f"/k{index}"),))
    assert len(list(many.rows())) == MAX_DISTINCT_NOTES and many.others == 5
    groups.merge(many)
    assert groups.others == 5 + 1  # 999 of the 1,000 fit beside the one it had
    assert len(list(groups.rows())) == MAX_DISTINCT_NOTES


def test_the_notes_of_a_file_left_as_it_was_are_not_counted() -> None:
    summary = MigrationSummary(group_notes=True)
    notes = (_note("dropped", "/x"),)
    migrated = MigrationResult("migrated", None, "f", "1", "2", ("s",), notes)
    failed = MigrationResult("failed", None, "f", "1", "2", error="no")
    summary.add(RecordMigration("a.jsonl", 1, migrated, count=2))
    summary.add(RecordMigration("a.jsonl", 3, failed))
    summary.add(FileMigration("a.jsonl", "out/a.jsonl", "failed", 2, 0, 1, "left as it was"))
    assert summary.file_notes.counted() == [("dropped", 2)]  # the file's, for its line
    assert summary.notes.counted() == [] and not list(summary.groups.rows())
    summary.add(RecordMigration("b.jsonl", 1, migrated))
    summary.add(Leftover("out/.tmp", 1, 10))
    summary.add(FileMigration("b.jsonl", "out/b.jsonl", "written", 1))
    assert summary.notes.counted() == [("dropped", 1)]
    assert [(r.path, r.records) for r in summary.groups.rows()] == [("b.jsonl", 1)]
    assert summary.records == {"migrated": 3, "current": 0, "failed": 1}
    assert summary.files == {"written": 1, "unchanged": 0, "failed": 1, "planned": 0}
    assert not summary.ok


def test_note_groups_count_in_the_same_pass_as_note_counts_would() -> None:
    converted = Note("converted", "/m/3/id", "", "s", None, ["a"], "a", None, "string", "array")
    again = Note("converted", "/m/5/id", "", "s", None, ["b"], "b", None, "string", "array")
    records = [
        (_note("added", "/a", True), converted, again),  # two notes of one text: grouped once
        (_note("added", "/a", True), _note("added", "/b", True)),
        (_note("renamed", "/n"),),
        (),
    ]
    counts, groups, alone = NoteCounts(), NoteGroups(), NoteGroups()
    by_hand = NoteCounts()
    for line, notes in enumerate(records, 1):
        groups.add("a.jsonl", line, notes, 2, counts)
        alone.add("a.jsonl", line, notes, 2)
        by_hand.add(notes, 2)
    expected = [("added", 6), ("renamed", 2), ("converted", 4)]
    assert counts.counted() == by_hand.counted() == expected
    assert (counts.placeholders, counts.records_with_placeholders) == (6, 4)
    assert list(groups.rows()) == list(alone.rows())
    texts = {row.text: row.records for row in groups.rows()}
    assert texts["converted /m/*/id: string -> array"] == 2
    assert len(texts) == 4 and alone.others == groups.others == 0
