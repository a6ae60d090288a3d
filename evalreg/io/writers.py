"""Atomic file writes: a crash leaves every file either entirely old or entirely new."""

from __future__ import annotations

import contextlib
import errno
import filecmp
import gzip
import os
import re
import shutil
from collections.abc import Callable, Iterable, Iterator
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


TEMPORARY = re.compile(r"\.(?P<name>.+)\.evalreg-(?P<pid>\d+)-[0-9a-f]+\.(?:tmp|part)")
"""The names of the files being written, before they take their place: `.NAME.evalreg-PID-X.tmp`
(and `.part` for a piece of a file), PID being the process that writes them."""


def temporary_name(folder: str, name: str, tag: str, suffix: str = "tmp") -> str:
    """Return the path of a temporary file beside `name` in `folder`, owned by this process."""
    return os.path.join(folder, f".{name}.evalreg-{os.getpid()}-{tag}.{suffix}")


def _create_temporary(folder: str, name: str) -> tuple[int, str]:
    """Create an empty temporary file in `folder` beside `name`, with the mode a new file gets."""
    for _ in range(100):
        temp = temporary_name(folder, name, os.urandom(6).hex())
        try:
            # 0o666 less the umask, as for any new file (mkstemp would give 0o600)
            return os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _BINARY, 0o666), temp
        except FileExistsError:
            continue
    raise FileExistsError(f"cannot create a temporary file beside {os.path.join(folder, name)}")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # it exists, owned by someone else
    return True


def leftovers(folder: str) -> list[tuple[str, int]]:
    """Return the temporary files in `folder` of processes no longer running, with their pids.

    A process killed while writing (`kill -9`, a power loss) leaves its temporary file behind;
    the file it was to replace is intact, so the temporary file is of no use.
    """
    found: list[tuple[str, int]] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return found
    for entry in entries:
        match = TEMPORARY.fullmatch(entry.name) if entry.name.startswith(".") else None
        if match is None:
            continue
        pid = int(match["pid"])
        if pid != os.getpid() and not _alive(pid):
            found.append((entry.name if folder == os.curdir else entry.path, pid))
    return sorted(found)


class BackupError(OSError):
    """The backup of a file about to be replaced could not be made (`filename`: the backup)."""


def _same_bytes(a: str, b: str) -> bool:
    try:
        if os.path.samefile(a, b):
            return True
        return filecmp.cmp(a, b, shallow=False)
    except OSError:
        return False


def _keep_backup(target: str, backup: str, overwrite: bool) -> bool:
    """Give the file `target` a second name `backup` (a copy where links are not possible).

    Returns whether a backup was made: an existing `backup` holding the same bytes (left by a
    run that stopped between this step and the replacement) is kept as it is. An existing
    `backup` that differs is never replaced unless `overwrite`.

    Raises:
        BackupError: the backup exists and differs (errno EEXIST), or cannot be made.
    """
    head, name = os.path.split(backup)
    try:
        if not overwrite:
            try:
                os.link(target, backup)  # never replaces an existing name
                return True
            except FileExistsError:
                if _same_bytes(target, backup):
                    return False
                raise
            except OSError as err:
                if err.errno not in _NO_LINKS:
                    raise
        staged = temporary_name(head or os.curdir, name, os.urandom(6).hex())
        try:
            try:
                os.link(target, staged)
            except OSError as err:
                if err.errno not in _NO_LINKS:
                    raise
                shutil.copy2(target, staged)
                with open(staged, "rb+") as stream:
                    os.fsync(stream.fileno())
            if not overwrite and os.path.lexists(backup):
                raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), backup)
            os.replace(staged, backup)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(staged)
            raise
        return True
    except OSError as err:
        reason = "exists and differs" if err.errno == errno.EEXIST else err.strerror or str(err)
        raise BackupError(err.errno or 0, reason, backup) from err


_NO_LINKS = {errno.EPERM, errno.EMLINK, errno.EXDEV, errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOSYS}
"""What `link` fails with on file systems without hard links: a copy is made instead."""


@contextlib.contextmanager
def atomic_writer(
    path: str | os.PathLike[str],
    *,
    backup: str | None = None,
    compress: bool | None = None,
    folders: set[Path] | None = None,
    sync: bool = True,
    overwrite_backup: bool = False,
    check: Callable[[], None] | None = None,
) -> Iterator[IO[bytes]]:
    """Open a temporary file beside `path`; on success, fsync it and rename it over `path`.

    If the block raises, the temporary file is removed and `path` is untouched. With `backup`,
    the previous file keeps a second name, `path + backup` (a hard link, else a complete copy),
    made only once the new file is complete, and removed if the replacement fails; an existing
    backup that differs is never replaced unless `overwrite_backup` (`BackupError`). `check`, if
    given, is called just before the backup and the replacement, and may raise to abandon both.
    A symbolic link is kept: the file it points to is replaced. With `compress` (default: the
    name ends in `.gz`), what is written is gzip-compressed (with a fixed timestamp, for
    reproducible output).
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
    if os.path.islink(target):
        target = os.path.realpath(target)
    head, name = os.path.split(target)
    parent = Path(head or os.curdir)
    if folders is None or parent not in folders:  # else written to already: it exists
        parent.mkdir(parents=True, exist_ok=True)
    if compress is None:
        compress = name.lower().endswith(".gz")
    fd, temp = _create_temporary(str(parent), name)
    kept: str | None = None
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
        if check is not None:
            check()
        if os.path.exists(target):
            shutil.copymode(target, temp)
            if backup and _keep_backup(target, target + backup, overwrite_backup):
                kept = target + backup
        os.replace(temp, target)
        kept = None
        if folders is not None:
            folders.add(parent)
        elif sync:
            _fsync_directory(parent)
    except BaseException:
        try:
            os.unlink(temp)
        except FileNotFoundError:
            kept = None  # renamed already (a signal came right after): the backup must stay
        if kept is not None:
            with contextlib.suppress(OSError):
                os.unlink(kept)
        raise


def write_atomic(path: str | os.PathLike[str], data: bytes, *, backup: str | None = None) -> None:
    """Replace `path` with `data` atomically."""
    with atomic_writer(path, backup=backup) as stream:
        stream.write(data)
