"""Atomic file writes: a crash leaves every file either entirely old or entirely new.

A file is written unnamed where the system allows it (Linux's `O_TMPFILE`) and given its name
once complete (linked into place where the name is free, else under a temporary name renamed
over the old file); elsewhere it is written under a temporary name beside the target and renamed.
A file written with `sync=False` is not flushed before it takes its name: `sync_written` flushes
the file systems written to at the end of the run (Linux's `syncfs`, never a system-wide
`sync`), or, where there is no such call, each file was flushed on its own in the background.
"""

from __future__ import annotations

import contextlib
import errno
import filecmp
import gzip
import os
import re
import shutil
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
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


_datasync = getattr(os, "fdatasync", os.fsync)


class _Syncer:
    """Files renamed into place unflushed, flushed by threads in the background.

    The file system makes concurrent flushes share their journal commits, and the threads wait
    for the disk while the run goes on. At most `PENDING` files are held open: a run that
    writes faster than the disk takes them waits for it.
    """

    THREADS = 8
    PENDING = 256

    def __init__(self) -> None:
        self._slots = threading.BoundedSemaphore(self.PENDING)
        self._executor: ThreadPoolExecutor | None = None
        self._futures: deque[Future[None]] = deque()
        self._lock = threading.Lock()

    def _flush(self, fd: int) -> None:
        try:
            _datasync(fd)
        finally:
            os.close(fd)
            self._slots.release()

    def add(self, fd: int) -> None:
        """Flush the file open as `fd` (a descriptor of its own, closed once flushed)."""
        self._slots.acquire()
        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(self.THREADS, "evalreg-sync")
            self._futures.append(self._executor.submit(self._flush, fd))
            while self._futures and self._futures[0].done():  # forget those flushed well
                if self._futures[0].exception() is not None:
                    break  # for `wait` to raise
                self._futures.popleft()

    def wait(self) -> None:
        """Wait until every file added is flushed, and let the threads go (a process with
        threads starts its workers more slowly: see `parallel.START_METHOD`).

        Raises:
            OSError: a file could not be flushed (the first such error).
        """
        with self._lock:
            futures, self._futures = self._futures, deque()
            executor, self._executor = self._executor, None
        failed: OSError | None = None
        for future in futures:
            try:
                future.result()
            except OSError as err:
                failed = failed or err
        if executor is not None:
            executor.shutdown(wait=True)
        if failed is not None:
            raise failed


_unsynced = _Syncer()
"""The files this process renamed into place unflushed (`sync=False`)."""


def _forked() -> None:
    global _unsynced
    _unsynced = _Syncer()  # the parent's files are the parent's to flush


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forked)


def _load_syncfs() -> Callable[[int], None] | None:
    """Return Linux's `syncfs` (flush the file system of an open file), or None elsewhere."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes  # only to end a run that wrote files unflushed

    try:
        call = ctypes.CDLL(None, use_errno=True).syncfs
    except (OSError, AttributeError):
        return None
    call.argtypes, call.restype = [ctypes.c_int], ctypes.c_int

    def syncfs(fd: int) -> None:
        if call(fd) != 0:
            code = ctypes.get_errno()
            raise OSError(code, os.strerror(code))

    return syncfs


_syncfs: list[Callable[[int], None] | None] = []


def _file_system_sync() -> Callable[[int], None] | None:
    if not _syncfs:
        _syncfs.append(_load_syncfs())
    return _syncfs[0]


def _sync_file_systems(
    folders: Iterable[str | os.PathLike[str]], syncfs: Callable[[int], None]
) -> None:
    """Flush each file system that holds one of `folders`, once."""
    done: set[int] = set()
    for folder in sorted({os.fspath(f) for f in folders}):
        try:
            fd = os.open(folder, os.O_RDONLY)
        except OSError:
            continue  # removed since: nothing of it to flush
        try:
            device = os.fstat(fd).st_dev
            if device not in done:
                done.add(device)
                syncfs(fd)
        finally:
            os.close(fd)


def sync_written(folders: Iterable[str | os.PathLike[str]], *, files_synced: bool) -> None:
    """Make the files written in `folders` last: their bytes (unless synced) and their names.

    Files written with `sync=False` are flushed with the file systems that hold `folders`
    (Linux's `syncfs`: those file systems, not every one as `sync` does), files written by
    other processes of the run included; elsewhere each such file was flushed on its own in the
    background as it was written, and this waits for the last of them. Then the folders.

    Raises:
        OSError: a file, a file system or a folder could not be flushed.
    """
    if not files_synced:
        syncfs = _file_system_sync()
        if syncfs is not None:
            _sync_file_systems(folders, syncfs)
            return  # the folders' names with the rest
        _unsynced.wait()
    sync_folders(folders)


def wait_written(folders: Iterable[str | os.PathLike[str]]) -> None:
    """In a worker of a run, make the files it wrote with `sync=False` last where they are
    flushed one by one (waiting for them, and flushing `folders`); where file systems are
    flushed whole, the process that ends the run flushes them for every process (see
    `sync_written`).

    Raises:
        OSError: a file or a folder could not be flushed.
    """
    if _file_system_sync() is None:
        _unsynced.wait()
        sync_folders(folders)


TEMPORARY = re.compile(r"\.(?P<name>.+)\.evalreg-(?P<pid>\d+)-[0-9a-f]+\.(?:tmp|part)")
"""The names of the files being written, before they take their place: `.NAME.evalreg-PID-X.tmp`
(and `.part` for a piece of a file), PID being the process that writes them."""


def temporary_name(folder: str, name: str, tag: str, suffix: str = "tmp") -> str:
    """Return the path of a temporary file beside `name` in `folder`, owned by this process."""
    return os.path.join(folder, f".{name}.evalreg-{os.getpid()}-{tag}.{suffix}")


_UNNAMED = getattr(os, "O_TMPFILE", 0)
"""The flag that opens an unnamed file in a folder (Linux), or 0 where there is none."""
_NO_UNNAMED = {errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL, errno.ENOSYS, errno.EACCES}
"""What opening an unnamed file fails with where the file system has none: a name is used."""
_PROC_FD = "/proc/self/fd"
_unnamed = [bool(_UNNAMED) and os.path.isdir(_PROC_FD)]
"""Whether to try unnamed files: not without the flag, /proc, or once a file system said no."""


def _create_temporary(folder: str, name: str) -> tuple[int, str | None]:
    """Create an empty file in `folder` to become `name`, with the mode a new file gets.

    Returns its descriptor and its temporary name, or None for an unnamed file (`O_TMPFILE`),
    which takes a name only once complete and vanishes if the process dies first.
    """
    if _unnamed[0]:
        try:
            return os.open(folder, os.O_RDWR | _UNNAMED, 0o666), None
        except OSError as err:
            if err.errno not in _NO_UNNAMED:
                raise
            if err.errno != errno.EACCES:  # no unnamed files here: names from now on
                _unnamed[0] = False
    for _ in range(100):
        temp = temporary_name(folder, name, os.urandom(6).hex())
        try:
            # 0o666 less the umask, as for any new file (mkstemp would give 0o600)
            return os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _BINARY, 0o666), temp
        except FileExistsError:
            continue
    raise FileExistsError(f"cannot create a temporary file beside {os.path.join(folder, name)}")


def _link(fd: int, path: str) -> None:
    """Give the unnamed file open as `fd` the name `path` (which must be free).

    Raises:
        FileExistsError: `path` exists.
        OSError: the link cannot be made.
    """
    # linkat(AT_SYMLINK_FOLLOW) on /proc/self/fd/N links the open file itself (an absolute
    # source: its folder descriptor, there only to have linkat called, is not used).
    os.link(f"{_PROC_FD}/{fd}", path, src_dir_fd=fd, follow_symlinks=True)


def _name_unnamed(fd: int, folder: str, name: str, sync: bool) -> str:
    """Give the unnamed file open as `fd` a temporary name beside `name`; return it.

    Where it cannot be linked (a file system without hard links), its bytes are copied to a
    named temporary file (synced if `sync`), and files are named from the start from now on.
    """
    for _ in range(100):
        temp = temporary_name(folder, name, os.urandom(6).hex())
        try:
            _link(fd, temp)
            return temp
        except FileExistsError:
            continue
        except OSError as err:
            if err.errno not in _NO_LINKS:
                raise
            _unnamed[0] = False
            return _copied(fd, folder, name, sync)
    raise FileExistsError(f"cannot create a temporary file beside {os.path.join(folder, name)}")


def _copied(fd: int, folder: str, name: str, sync: bool) -> str:
    """Copy the file open as `fd` to a new named temporary file beside `name`; return its name."""
    out, temp = _create_temporary(folder, name)
    assert temp is not None
    try:
        offset = 0
        while chunk := os.pread(fd, 1 << 20, offset):
            view = memoryview(chunk)
            while view:
                view = view[os.write(out, view) :]
            offset += len(chunk)
        if sync:
            os.fsync(out)
    except BaseException:
        os.close(out)
        os.unlink(temp)
        raise
    os.close(out)
    return temp


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
    """Open a new file to become `path`; on success, fsync it and give it its name atomically.

    If the block raises, the new file is removed and `path` is untouched. The new file is
    unnamed until complete where the system allows (see the module); a file that takes the place
    of another is renamed over it from a temporary name. With `backup`,
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

    With `sync=False` the file is not fsynced before it takes its name: the replacement is
    still atomic (a reader sees the old file or the new one), but after a power loss before the
    flush the new name may hold an incomplete file. Use it only where an original survives
    elsewhere (writing into another folder), and call `sync_written(folders,
    files_synced=False)` once at the end, which flushes what was written (see the module).
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
    placed = False
    try:
        with os.fdopen(fd, "wb", buffering=WRITE_BUFFER) as raw:
            if compress:
                with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as zipped:
                    yield zipped  # type: ignore[misc]
            else:
                yield raw
            raw.flush()
            if sync:
                os.fsync(fd)
            if check is not None:
                check()
            if temp is None:
                try:
                    _link(fd, target)  # a new name: the complete file takes it at once
                    placed = True
                except OSError:  # the name is taken (or no links here): through a temporary
                    temp = _name_unnamed(fd, str(parent), name, sync)
            if not placed:
                assert temp is not None
                if os.path.exists(target):
                    shutil.copymode(target, temp)
                    if backup and _keep_backup(target, target + backup, overwrite_backup):
                        kept = target + backup
                os.replace(temp, target)
                placed, kept = True, None
            if not sync:
                _flush_later(fd)
        _placed_in(parent, folders, sync)
    except BaseException:
        if temp is not None and not placed:
            try:
                os.unlink(temp)
            except FileNotFoundError:
                kept = None  # renamed already (a signal came right after): the backup must stay
        if kept is not None:
            with contextlib.suppress(OSError):
                os.unlink(kept)
        raise


def _flush_later(fd: int) -> None:
    """Have the file open as `fd`, written unsynced, flushed in the background where there is
    no `syncfs` to flush it with its file system at the end."""
    if _file_system_sync() is None:
        _unsynced.add(os.dup(fd))


def _placed_in(parent: Path, folders: set[Path] | None, sync: bool) -> None:
    """Record a file placed in `parent`: its folder added to `folders` to flush later, or
    flushed now (`sync`)."""
    if folders is not None:
        folders.add(parent)
    elif sync:
        _fsync_directory(parent)


def write_atomic(path: str | os.PathLike[str], data: bytes, *, backup: str | None = None) -> None:
    """Replace `path` with `data` atomically."""
    with atomic_writer(path, backup=backup) as stream:
        stream.write(data)


def write_new(
    path: str, data: bytes, *, folders: set[Path] | None = None, sync: bool = True
) -> None:
    """Write `data` as the file `path` atomically: `atomic_writer` with one write.

    Where the file is new, as every output of a run into an empty folder is, it is written
    unnamed and linked into place with a few system calls and no file object (a run writes
    thousands); any other case (a file to replace, a symbolic link, a compressed name, a file
    system without unnamed files or links) goes through `atomic_writer`, as does every failure
    before the file takes its name.

    Raises:
        OSError: the file could not be written.
    """
    head = os.path.dirname(path) or os.curdir
    parent = _PARENTS.get(head)
    if parent is None:
        if len(_PARENTS) >= 10_000:
            _PARENTS.clear()
        parent = _PARENTS[head] = Path(head)
    fd = -1
    if _unnamed[0] and not path.lower().endswith(".gz"):
        if folders is None or parent not in folders:  # else written to already: it exists
            parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(OSError):  # `atomic_writer` says why
            fd, temp = _create_temporary(head, os.path.basename(path))
            if temp is not None:  # a named one after all: `atomic_writer` handles those
                os.close(fd)
                fd = -1
                os.unlink(temp)
    if fd >= 0:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if sync:
                os.fsync(fd)
            _link(fd, path)
        except OSError:  # the name is taken, or no links here: the general way
            pass
        else:
            if not sync:
                _flush_later(fd)
            _placed_in(parent, folders, sync)
            return
        finally:
            os.close(fd)
    with atomic_writer(path, folders=folders, sync=sync) as stream:
        stream.write(data)


_PARENTS: dict[str, Path] = {}
"""The folder of each file `write_new` wrote, as a `Path` (made once: files share folders)."""
