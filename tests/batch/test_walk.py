from __future__ import annotations

from pathlib import Path

from evalreg.batch.walk import iter_files


def _write(path: Path, data: bytes | str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return str(path)


def test_directories_are_walked_in_order_with_globs(tmp_path: Path) -> None:
    _write(tmp_path / "b.json", "{}")
    _write(tmp_path / "a" / "x.jsonl", "{}")
    _write(tmp_path / "a" / "notes.txt", "hi")
    _write(tmp_path / ".git" / "c.json", "{}")
    _write(tmp_path / "a" / "skip.json", "{}")
    (tmp_path / "dir.json").mkdir()  # real datastores have folders named like files
    _write(tmp_path / "dir.json" / "inner.json", "{}")
    found = [Path(p).relative_to(tmp_path).as_posix() for p in iter_files([tmp_path])]
    assert found == ["b.json", "a/skip.json", "a/x.jsonl", "dir.json/inner.json"]
    found = [
        Path(p).relative_to(tmp_path).as_posix()
        for p in iter_files([tmp_path], include=["*.json"], exclude=["skip.*", "dir.json/*"])
    ]
    assert found == ["b.json"]
