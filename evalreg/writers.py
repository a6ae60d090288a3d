"""Atomic file writes: a crash leaves every file either entirely old or entirely new."""

from __future__ import annotations

import contextlib
import gzip
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO


def _fsync_directory(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return  # not every platform can open a directory; the rename itself is still atomic
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def sync_folders(folders: Iterable[str | os.PathLike[str]]) -> None:
    """Flush folders to disk, so that the names of the files written in them last."""
    for folder in sorted({Path(f) for f in folders}):
        _fsync_directory(folder)


@contextlib.contextmanager
def atomic_writer(
    path: str | os.PathLike[str],
    *,
    backup: str | None = None,
    compress: bool | None = None,
    folders: set[Path] | None = None,
) -> Iterator[IO[bytes]]:
    """Open a temporary file beside `path`; on success, fsync it and rename it over `path`.

    If the block raises, the temporary file is removed and `path` is untouched. With `backup`,
    the previous file is first copied to `path + backup`. With `compress` (default: the name ends
    in `.gz`), what is written is gzip-compressed (with a fixed timestamp, for reproducible output).
    The folder is flushed too, so that the new name lasts; with `folders`, it is added there
    instead, for the caller to flush many writes' folders at once (`sync_folders`). Either way
    the file's bytes are on disk before it takes the name.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    if compress is None:
        compress = target.name.lower().endswith(".gz")
    fd, temp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    temp = Path(temp_name)
    try:
        with os.fdopen(fd, "wb") as raw:
            if compress:
                with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as zipped:
                    yield zipped  # type: ignore[misc]
            else:
                yield raw
            raw.flush()
            os.fsync(raw.fileno())
        if target.exists():
            shutil.copymode(target, temp)
            if backup:
                shutil.copy2(target, str(target) + backup)
        os.replace(temp, target)
        if folders is None:
            _fsync_directory(target.parent)
        else:
            folders.add(target.parent)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def write_atomic(path: str | os.PathLike[str], data: bytes, *, backup: str | None = None) -> None:
    """Replace `path` with `data` atomically."""
    with atomic_writer(path, backup=backup) as stream:
        stream.write(data)
