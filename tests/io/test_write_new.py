"""`write_new`: one write, atomically, the short way where the file is new."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

from evalreg.io import writers
from evalreg.io.writers import leftovers, write_new


def test_a_new_file_takes_its_name_whole_and_its_folder_is_collected(tmp_path: Path) -> None:
    folders: set[Path] = set()
    target = tmp_path / "a" / "b" / "new.json"
    write_new(str(target), b'{"a": 1}\n', folders=folders, sync=False)
    assert target.read_bytes() == b'{"a": 1}\n'
    assert folders == {target.parent}
    assert sorted(os.listdir(target.parent)) == ["new.json"]
    assert oct(target.stat().st_mode & 0o777) == oct(0o666 & ~_umask())
    writers.sync_written(folders, files_synced=False)


def test_a_file_there_already_is_replaced_and_a_link_kept(tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    real.write_bytes(b"old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    write_new(str(link), b"new")
    assert link.is_symlink() and real.read_bytes() == b"new"
    write_new(str(real), b"newer")
    assert real.read_bytes() == b"newer"
    assert list(leftovers(str(tmp_path))) == []


def test_without_unnamed_files_or_for_a_compressed_name_the_general_way(tmp_path: Path) -> None:
    write_new(str(tmp_path / "x.json.gz"), b"zipped")
    assert gzip.decompress((tmp_path / "x.json.gz").read_bytes()) == b"zipped"
    saved = writers._unnamed[0]
    writers._unnamed[0] = False
    try:
        write_new(str(tmp_path / "named.json"), b"named")
    finally:
        writers._unnamed[0] = saved
    assert (tmp_path / "named.json").read_bytes() == b"named"
    assert sorted(os.listdir(tmp_path)) == ["named.json", "x.json.gz"]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
