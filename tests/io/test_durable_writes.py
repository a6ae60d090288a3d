"""Atomic writes through unnamed files, and outputs flushed without a system-wide sync.

A new file is written unnamed (`O_TMPFILE`, where the system has it) and linked into place once
complete; a replacement goes through a temporary name. Files written with `sync=False` are
flushed at the end with the file systems that hold them (Linux's `syncfs`) or, where there is
no such call, each on its own in the background: `migrate --out` ends with its outputs on disk
without calling the system-wide `sync`.
"""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import evalreg
from evalreg.batch.migrate import migrate_paths
from evalreg.batch.migrate_file import FileMigration, MigrateOptions
from evalreg.io import writers

EXAMPLES = Path(evalreg.__file__).parent / "examples" / "eee"

unnamed = pytest.mark.skipif(not writers._unnamed[0], reason="no O_TMPFILE and /proc here")


def _no_sync() -> None:
    raise AssertionError("os.sync() called")


@pytest.fixture
def flushed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Record the inodes of the files flushed one by one, as where there is no `syncfs`."""
    inodes: list[int] = []
    real = writers._datasync

    def datasync(fd: int) -> None:
        inodes.append(os.fstat(fd).st_ino)
        real(fd)

    monkeypatch.setattr(writers, "_syncfs", [None])
    monkeypatch.setattr(writers, "_datasync", datasync)
    monkeypatch.setattr(os, "sync", _no_sync)
    return inodes


@pytest.fixture
def file_systems(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Record the devices of the file systems flushed whole (`syncfs`); refuse per-file ones."""
    devices: list[int] = []

    def per_file(fd: int) -> None:
        raise AssertionError("a file flushed on its own")

    monkeypatch.setattr(writers, "_syncfs", [lambda fd: devices.append(os.fstat(fd).st_dev)])
    monkeypatch.setattr(writers, "_datasync", per_file)
    monkeypatch.setattr(os, "sync", _no_sync)
    return devices


@unnamed
def test_a_new_file_has_no_name_until_it_is_complete(tmp_path: Path) -> None:
    umask = os.umask(0o022)
    try:
        with writers.atomic_writer(tmp_path / "a.json") as stream:
            stream.write(b"{}")
            assert os.listdir(tmp_path) == []
    finally:
        os.umask(umask)
    assert (tmp_path / "a.json").read_bytes() == b"{}"
    assert ((tmp_path / "a.json").stat().st_mode & 0o777) == 0o644


@unnamed
def test_a_replaced_file_stays_whole_until_the_new_one_is_complete(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_bytes(b"old")
    os.chmod(path, 0o600)
    with writers.atomic_writer(path, backup=".bak") as stream:
        stream.write(b"new")
        assert os.listdir(tmp_path) == ["a.json"] and path.read_bytes() == b"old"
    assert path.read_bytes() == b"new" and (path.stat().st_mode & 0o777) == 0o600
    assert sorted(os.listdir(tmp_path)) == ["a.json", "a.json.bak"]


@unnamed
def test_a_process_killed_while_writing_leaves_nothing_behind(tmp_path: Path) -> None:
    script = (
        "import os, signal, sys\n"
        "from evalreg.io.writers import atomic_writer\n"
        "with atomic_writer(sys.argv[1]) as stream:\n"
        "    stream.write(b'x' * 100_000)\n"
        "    stream.flush()\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path / "a.json")], check=False)
    assert done.returncode == -signal.SIGKILL
    assert os.listdir(tmp_path) == []


def test_unsynced_files_are_flushed_one_by_one_and_waited_for(
    tmp_path: Path, flushed: list[int]
) -> None:
    folders: set[Path] = set()
    paths = [tmp_path / f"sub{i % 3}" / f"f{i}.json" for i in range(40)]
    for path in paths:
        with writers.atomic_writer(path, folders=folders, sync=False) as stream:
            stream.write(path.name.encode())
    writers.sync_written(folders, files_synced=False)
    assert sorted(flushed) == sorted(p.stat().st_ino for p in paths)
    assert folders == {tmp_path / f"sub{i}" for i in range(3)}


def test_a_flush_that_fails_fails_the_wait(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(fd: int) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(writers, "_syncfs", [None])
    monkeypatch.setattr(writers, "_datasync", broken)
    folders: set[Path] = set()
    with writers.atomic_writer(tmp_path / "a.json", folders=folders, sync=False) as stream:
        stream.write(b"{}")
    with pytest.raises(OSError, match="Input/output error"):
        writers.sync_written(folders, files_synced=False)
    writers.sync_written(folders, files_synced=False)  # reported once


def test_migrate_out_flushes_each_output_without_a_system_sync(
    tmp_path: Path, flushed: list[int]
) -> None:
    out = tmp_path / "out"
    options = MigrateOptions(to="latest", out=str(out))
    outcomes = [
        event
        for event in migrate_paths(evalreg.default_registry(), [str(EXAMPLES)], options)
        if isinstance(event, FileMigration)
    ]
    written = [Path(str(o.output)) for o in outcomes if o.status == "written"]
    assert written and all(path.is_file() for path in written)
    assert sorted(flushed) == sorted(path.stat().st_ino for path in written)


def test_migrate_out_flushes_the_file_system_of_its_outputs_once(
    tmp_path: Path, file_systems: list[int]
) -> None:
    out = tmp_path / "out"
    options = MigrateOptions(to="latest", out=str(out))
    events = list(migrate_paths(evalreg.default_registry(), [str(EXAMPLES)], options))
    assert any(isinstance(e, FileMigration) and e.status == "written" for e in events)
    assert file_systems == [out.stat().st_dev]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="syncfs is Linux's")
def test_syncfs_is_found_and_flushes_an_open_folder(tmp_path: Path) -> None:
    syncfs = writers._load_syncfs()
    assert syncfs is not None
    fd = os.open(tmp_path, os.O_RDONLY)
    try:
        syncfs(fd)
    finally:
        os.close(fd)
    with pytest.raises(OSError):
        syncfs(fd)  # closed: EBADF
