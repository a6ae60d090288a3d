from __future__ import annotations

import gzip
import os
import shutil
from pathlib import Path

import pytest

import evalreg
import evalreg.batch.migrate_file
import evalreg.io.writers
from evalreg.batch.migrate import migrate_paths
from evalreg.batch.migrate_file import FileMigration, MigrateOptions
from evalreg.io.writers import atomic_writer, write_atomic
from tests.conftest import EXAMPLES


def test_write_replaces_and_keeps_the_mode(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_text("old")
    os.chmod(path, 0o640)
    write_atomic(path, b"new", backup=".orig")
    assert path.read_bytes() == b"new"
    assert (tmp_path / "a.json.orig").read_bytes() == b"old"
    assert (path.stat().st_mode & 0o777) == 0o640


def test_a_failure_mid_write_leaves_the_original_and_no_temporary_file(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text("original\n")
    with pytest.raises(RuntimeError), atomic_writer(path) as stream:
        stream.write(b"half of the new con")
        raise RuntimeError("crash")
    assert path.read_text() == "original\n"
    assert os.listdir(tmp_path) == ["a.jsonl"]


def test_gzip_output_is_reproducible(tmp_path: Path) -> None:
    for name in ("a.jsonl.gz", "b.jsonl.gz"):
        write_atomic(tmp_path / name, b'{"a":1}\n')
    assert (tmp_path / "a.jsonl.gz").read_bytes() == (tmp_path / "b.jsonl.gz").read_bytes()
    assert gzip.decompress((tmp_path / "a.jsonl.gz").read_bytes()) == b'{"a":1}\n'


def test_a_crash_in_the_middle_of_migrating_a_jsonl_file_leaves_it_intact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = next((EXAMPLES / "eee.instance" / "valid").glob("*.jsonl"))
    path = tmp_path / "samples.jsonl"
    shutil.copy(source, path)
    original = path.read_bytes()
    calls = {"n": 0}
    real_dumps = evalreg.batch.migrate_file.dumps

    def failing_dumps(value: object, **kwargs: bool) -> bytes:
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError(28, "No space left on device")
        return real_dumps(value, **kwargs)

    monkeypatch.setattr(evalreg.batch.migrate_file, "dumps", failing_dumps)
    options = MigrateOptions(to="latest", in_place=True)
    *_, outcome = migrate_paths(evalreg.default_registry(), [str(path)], options)
    assert outcome == FileMigration(
        str(path),
        str(path),
        "failed",
        message=f"left as it was: cannot write {path}: No space left on device",
    )
    assert path.read_bytes() == original
    assert os.listdir(tmp_path) == ["samples.jsonl"]


def test_a_new_file_gets_the_usual_mode_not_that_of_a_temporary_file(tmp_path: Path) -> None:
    umask = os.umask(0o022)
    try:
        write_atomic(tmp_path / "new.json", b"{}")
        with atomic_writer(tmp_path / "unsynced.json", sync=False) as stream:
            stream.write(b"{}")
    finally:
        os.umask(umask)
    for name in ("new.json", "unsynced.json"):
        assert ((tmp_path / name).stat().st_mode & 0o777) == 0o644


def test_an_unsynced_write_is_still_atomic_and_collects_its_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fsynced: list[int] = []
    monkeypatch.setattr(os, "fsync", fsynced.append)
    folders: set[Path] = set()
    path = tmp_path / "sub" / "a.json"
    with atomic_writer(path, folders=folders, sync=False) as stream:
        stream.write(b"new")
    assert path.read_bytes() == b"new"
    assert fsynced == [] and folders == {path.parent}
    assert os.listdir(path.parent) == ["a.json"]


def test_a_check_that_fails_abandons_the_write_and_the_backup(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_bytes(b"old")

    def changed() -> None:
        raise RuntimeError("changed")

    with pytest.raises(RuntimeError), atomic_writer(path, backup=".bak", check=changed) as out:
        out.write(b"new")
    assert path.read_bytes() == b"old" and os.listdir(tmp_path) == ["a.json"]


def test_writing_through_a_symbolic_link_replaces_its_target(tmp_path: Path) -> None:
    target = tmp_path / "real.json"
    target.write_bytes(b"old")
    link = tmp_path / "link.json"
    link.symlink_to("real.json")
    write_atomic(link, b"new", backup=".bak")
    assert link.is_symlink() and target.read_bytes() == b"new"
    assert (tmp_path / "real.json.bak").read_bytes() == b"old"


def test_an_existing_backup_is_replaced_only_when_asked(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_bytes(b"old")
    (tmp_path / "a.json.bak").write_bytes(b"older")
    with atomic_writer(path, backup=".bak", overwrite_backup=True) as out:
        out.write(b"new")
    assert (tmp_path / "a.json.bak").read_bytes() == b"old"
    assert sorted(os.listdir(tmp_path)) == ["a.json", "a.json.bak"]


def test_a_signal_right_after_the_replacement_keeps_the_backup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = os.replace

    def replace_then_interrupted(source: str, target: str) -> None:
        real(source, target)
        raise KeyboardInterrupt

    path = tmp_path / "a.json"
    path.write_bytes(b"old")
    monkeypatch.setattr(evalreg.io.writers.os, "replace", replace_then_interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(path, b"new", backup=".bak")
    assert path.read_bytes() == b"new" and (tmp_path / "a.json.bak").read_bytes() == b"old"
    assert sorted(os.listdir(tmp_path)) == ["a.json", "a.json.bak"]
