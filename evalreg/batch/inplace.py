"""Rewriting a file in place safely: one process at a time, and never over a file that changed.

A file being migrated in place is locked (an advisory `flock` on the file itself) from before it
is read until its replacement has taken its name, so two runs over the same files take turns. Its
identity (device, inode, size, modification and change times) is taken under the lock; if it is
different just before the replacement (another program appended to the file, or replaced it), the
replacement is abandoned and the file reported as changed.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator

from evalreg.io.streams import InputError, open_regular_fd

try:
    import fcntl
except ImportError:  # pragma: no cover - not on Windows: files are not locked there
    fcntl = None  # type: ignore[assignment]

LOCK_WAIT = 2.0
"""Seconds to wait for a file another process is migrating before reporting it busy."""
_POLL = 0.05


class FileBusy(Exception):
    """Another process holds the lock of a file to migrate in place."""


class FileChanged(Exception):
    """A file changed between being read and being replaced."""


Identity = tuple[int, int, int, int, int]


def _identity(stat: os.stat_result) -> Identity:
    return (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)


class Guard:
    """The lock of a file being migrated in place, and its identity when it was locked."""

    def __init__(self, path: str, fd: int, identity: Identity) -> None:
        self.path = path
        self.fd = fd
        self.identity = identity
        self.size: int | None = None
        """If set, the size the file must still have (the bytes that were read)."""

    def check(self) -> None:
        """Raise `FileChanged` if the file is not the one locked and read, as it was then.

        Raises:
            FileChanged: the file was appended to, rewritten or replaced since.
        """
        try:
            now = _identity(os.stat(self.path))
        except OSError as err:
            raise FileChanged(f"changed while being migrated ({err.strerror or err})") from err
        size = self.identity[2] if self.size is None else self.size
        if now[:2] != self.identity[:2]:
            raise FileChanged("replaced by another program while being migrated")
        if now != self.identity or now[2] != size:
            raise FileChanged(
                f"changed while being migrated ({size:,} bytes read, {now[2]:,} bytes now)"
            )

    def release(self) -> None:
        """Unlock the file."""
        os.close(self.fd)


def lock(path: str, wait: float | None = None) -> Guard:
    """Lock `path` for this process, waiting up to `wait` seconds (`LOCK_WAIT`); return the guard.

    Raises:
        FileBusy: another process holds the lock after `wait` seconds.
        InputError: `path` is not a regular file (a FIFO, socket, device or folder).
        OSError: the file cannot be opened.
    """
    wait = LOCK_WAIT if wait is None else wait
    deadline = time.monotonic() + wait
    while True:
        fd = open_regular_fd(path)  # never blocks on a FIFO; refuses what is not a file
        try:
            if fcntl is not None:
                _acquire(fd, deadline, wait)
            stat = os.fstat(fd)
            with contextlib.suppress(OSError):
                if os.stat(path).st_ino != stat.st_ino:
                    # Replaced while this process waited (by the run that held the lock): the
                    # name is now another file, which is the one to lock.
                    os.close(fd)
                    continue
            return Guard(path, fd, _identity(stat))
        except BaseException:
            with contextlib.suppress(OSError):
                os.close(fd)
            raise


def _acquire(fd: int, deadline: float, wait: float) -> None:
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise FileBusy(
                    f"busy: another process is migrating it (waited {wait:g} s)"
                ) from None
            time.sleep(_POLL)


@contextlib.contextmanager
def guarded(path: str, in_place: bool) -> Iterator[Guard | None]:
    """Hold the lock of `path` over the block if it is rewritten in place (else yield None).

    Raises:
        FileBusy: another process is migrating the file.
    """
    guard = None
    if in_place:
        with contextlib.suppress(FileNotFoundError, PermissionError, IsADirectoryError, InputError):
            guard = lock(path)  # else reading it reports what is wrong
    if guard is None:
        yield None
        return
    try:
        yield guard
    finally:
        guard.release()
