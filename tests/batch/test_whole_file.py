"""A JSON file read whole (`QuickCheck.whole`) is checked as `QuickCheck.file` checks it, and
records judged in the loops over files and lines as `QuickCheck.quick` judges them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from evalreg import Registry
from evalreg.batch import quick
from evalreg.batch.quick import QuickCheck
from evalreg.batch.rules import RuleRun
from evalreg.engine.selection import ALL_RULES, NO_RULES, Selection
from evalreg.engine.validators import Issue
from tests.examples_index import ALL

DOCUMENTS = {
    "canonical.json": b'{"a": 1}',
    "spaced.json": b'{ "a" : 1 }\n\n',
    "twice.json": b'{"a": 1, "a": 2}',
    "exact.json": b'{"score": 1.50000000000000000001}',
    "broken.json": b'{"a": ',
    "empty.json": b"",
    "list.json": b"[1, 2]",
    "text.json": b'"just text"',
    "latin.json": b'{"a": "\xe9"}',
    "upper.JSON": b'{"a": 1}',
    "lines.jsonl": b'{"a": 1}\n{"a": 2}\n',
}


def _paths(tmp_path: Path) -> list[str]:
    found = []
    for name, data in DOCUMENTS.items():
        (tmp_path / name).write_bytes(data)
        found.append(str(tmp_path / name))
    found += [str(example.path) for example in ALL]
    found += [str(tmp_path / "missing.json"), str(tmp_path)]  # none there; a folder
    return found


@pytest.mark.parametrize("rules", [ALL_RULES, NO_RULES], ids=["rules", "no-rules"])
def test_whole_gives_what_file_gives(registry: Registry, tmp_path: Path, rules: Selection) -> None:
    whole, file = QuickCheck(registry, None, None, rules), QuickCheck(registry, None, None, rules)
    taken = 0
    for path in _paths(tmp_path):
        found = whole.whole(path)
        expected = list(file.file(path))
        if found is None:
            assert list(whole.file(path)) == expected, path
        else:
            taken += 1
            assert [found] == expected, path
    assert taken > 10
    assert whole.summaries == file.summaries


@pytest.mark.parametrize("rules", [ALL_RULES, NO_RULES], ids=["rules", "no-rules"])
def test_a_whole_file_of_the_version_before_is_judged_as_quick_judges_it(
    registry: Registry, tmp_path: Path, rules: Selection, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The loop over many files (`paths`) gives, file by file, what `whole` (or `file`, where
    `whole` cannot say) gives with every record through `quick`, though a record of the shape
    and version of the one before skips `quick`'s steps."""
    paths = _paths(tmp_path)
    paths += paths  # each file again: the second time, its shape and version are known
    surely = quick._surely
    monkeypatch.setattr(quick, "_surely", lambda v, r: False)  # every record through `quick`
    expected: list[object] = []
    one_by_one = QuickCheck(registry, None, None, rules)
    for path in paths:
        found = one_by_one.whole(path)
        expected += list(one_by_one.file(path)) if found is None else [found]
    sure = []
    monkeypatch.setattr(quick, "_surely", lambda v, r: sure.append(r) or surely(v, r))
    looped = QuickCheck(registry, None, None, rules)
    assert list(looped.paths(paths)) == expected
    assert looped.summaries == one_by_one.summaries
    assert len(sure) > 10  # the steps of `quick` were skipped


def _lines(tmp_path: Path) -> Path:
    """A JSONL file of instance records: valid ones, invalid ones, other versions between."""
    example = next(e for e in ALL if e.family == "eee.instance" and e.path.suffix == ".jsonl")
    records = [line for line in example.path.read_bytes().splitlines() if line.strip()]
    first = orjson.loads(records[0])
    other = dict(first, schema_version="0.1.0") if first["schema_version"] != "0.1.0" else first
    lines = []
    for index in range(40):
        record = dict(first, sample_id=f"s{index}")
        if index % 7 == 3:
            record["sample_id"] = 7  # invalid: a number
        if index % 11 == 5:
            record = dict(other, sample_id=f"o{index}")
        lines.append(orjson.dumps(record))
    lines.insert(20, b'{"broken": ')
    lines.insert(30, b'{"score": 1.50000000000000000001}')
    path = tmp_path / "lines.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


@pytest.mark.parametrize("rules", [ALL_RULES, NO_RULES], ids=["rules", "no-rules"])
def test_lines_in_place_give_what_quick_gives(
    registry: Registry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rules: Selection
) -> None:
    """A line of the shape and version of the line before is judged in place, as `quick` would
    (its rules run: the file's name and folders break the layout rule)."""
    path = str(_lines(tmp_path))
    judged = []
    judge = QuickCheck.quick
    monkeypatch.setattr(QuickCheck, "quick", lambda *a: judged.append(a) or judge(*a))
    fast_check = QuickCheck(registry, None, None, rules)
    fast = list(fast_check.file(path))
    in_place = 41 - len(judged)  # of the 41 lines that parse, those not given to `quick`
    assert in_place > 25
    monkeypatch.setattr(QuickCheck, "_known", lambda self, validator: None)
    slow_check = QuickCheck(registry, None, None, rules)
    slow = list(slow_check.file(path))
    assert len(judged) == 41 - in_place + 41  # every line through `quick` this time
    assert fast == slow
    assert fast_check.summaries == slow_check.summaries
    assert sum(getattr(c, "count", 0) for c in fast) > 20
    assert any(getattr(c, "status", "") == "invalid" for c in fast)


def test_lines_in_place_report_what_a_rule_finds_on_any_line(
    registry: Registry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rule's finding on a line judged in place (a warning, or an error) is the record's
    outcome as `quick` would make it, and breaks the run of valid lines there."""
    path = str(_lines(tmp_path))
    issues = RuleRun.issues

    def every_fifth(run: RuleRun, record: Any, *where: Any) -> list[Issue]:
        found = issues(run, record, *where)
        line = where[1]
        if line is not None and line % 5 == 0:
            severity = "warning" if line % 10 else "error"
            found.append(
                Issue("/sample_id", "a fifth line", "rule", rule="t.fifth", severity=severity)
            )
        return found

    monkeypatch.setattr(RuleRun, "issues", every_fifth)
    fast = list(QuickCheck(registry, None, None, ALL_RULES).file(path))
    monkeypatch.setattr(QuickCheck, "_known", lambda self, validator: None)
    slow = list(QuickCheck(registry, None, None, ALL_RULES).file(path))
    assert fast == slow
    found = [c for c in fast if getattr(c, "issues", ()) and c.issues[-1].rule == "t.fifth"]
    assert {c.status for c in found} == {"valid", "invalid"}
    assert len(found) > 5
