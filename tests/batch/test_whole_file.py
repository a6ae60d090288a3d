"""A JSON file read whole (`_QuickCheck.whole`) is checked as `_QuickCheck.file` checks it."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalreg import Registry
from evalreg.batch.check import _QuickCheck
from evalreg.engine.selection import ALL_RULES, NO_RULES, Selection
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
    whole, file = _QuickCheck(registry, None, None, rules), _QuickCheck(registry, None, None, rules)
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
