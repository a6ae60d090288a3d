"""Atomic file writes: a crash leaves every file either entirely old or entirely new."""

from __future__ import annotations

import contextlib
import gzip
import os
import shutil
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO

_BINARY = getattr(os, "O_BINARY", 0)
WRITE_BUFFER = 1 << 16
"""The write buffer of a file being written: a JSONL file written a line at a time costs less
than half of what it does with the default buffer (a few KB), for fewer system calls."""


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


def sync_written(folders: Iterable[str | os.PathLike[str]], *, files_synced: bool) -> None:
    """Make the files written in `folders` last: their bytes (unless synced) and their names.

    Files written with `sync=False` are flushed here all at once (`os.sync`), which costs far
    less than one fsync per file; otherwise only the folders need flushing.
    """
    folders = set(folders)
    if not folders:
        return
    if not files_synced and hasattr(os, "sync"):
        os.sync()  # every file's bytes and every folder's names, in one call
        return
    sync_folders(folders)


def _create_temporary(folder: str, name: str) -> tuple[int, str]:
    """Create an empty temporary file in `folder` beside `name`, with the mode a new file gets."""
    for _ in range(100):
        temp = os.path.join(folder, f".{name}.{os.urandom(6).hex()}.tmp")
        try:
            # 0o666 less the umask, as for any new file (mkstemp would give 0o600)
            return os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _BINARY, 0o666), temp
        except FileExistsError:
            continue
    raise FileExistsError(f"cannot create a temporary file beside {os.path.join(folder, name)}")


@contextlib.contextmanager
def atomic_writer(
    path: str | os.PathLike[str],
    *,
    backup: str | None = None,
    compress: bool | None = None,
    folders: set[Path] | None = None,
    sync: bool = True,
) -> Iterator[IO[bytes]]:
    """Open a temporary file beside `path`; on success, fsync it and rename it over `path`.

    If the block raises, the temporary file is removed and `path` is untouched. With `backup`,
    the previous file is first copied to `path + backup`. With `compress` (default: the name ends
    in `.gz`), what is written is gzip-compressed (with a fixed timestamp, for reproducible output).
    The folder is flushed too, so that the new name lasts; with `folders`, it is added there
    instead, for the caller to flush many writes' folders at once (`sync_written`). A new file
    gets the usual mode (0o666 less the umask); a replaced file keeps its mode.

    With `sync=False` the file is not fsynced before the rename: the rename is still atomic (a
    reader sees the old file or the new one), but after a power loss the new name may hold an
    incomplete file. Use it only where an original survives elsewhere (writing into another
    folder), and call `sync_written(folders, files_synced=False)` once at the end.
    """
    # Plain strings rather than Paths: a run writes thousands of files, and this is per file.
    target = os.fspath(path)
    head, name = os.path.split(target)
    parent = Path(head or os.curdir)
    if folders is None or parent not in folders:  # else written to already: it exists
        parent.mkdir(parents=True, exist_ok=True)
    if compress is None:
        compress = name.lower().endswith(".gz")
    fd, temp = _create_temporary(str(parent), name)
    try:
        with os.fdopen(fd, "wb", buffering=WRITE_BUFFER) as raw:
            if compress:
                with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as zipped:
                    yield zipped  # type: ignore[misc]
            else:
                yield raw
            raw.flush()
            if sync:
                os.fsync(raw.fileno())
        if os.path.exists(target):
            shutil.copymode(target, temp)
            if backup:
                shutil.copy2(target, target + backup)
        os.replace(temp, target)
        if folders is not None:
            folders.add(parent)
        elif sync:
            _fsync_directory(parent)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        raise


def write_atomic(path: str | os.PathLike[str], data: bytes, *, backup: str | None = None) -> None:
    """Replace `path` with `data` atomically."""
    with atomic_writer(path, backup=backup) as stream:
        stream.write(data)
