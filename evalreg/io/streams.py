"""Opening input safely: regular files only, and gzip data decompressed within stated bounds.

A FIFO, socket or device given as a file would block a reader forever (or never end), so files
are opened without blocking and refused unless they are regular files. Gzip data is decompressed
here, a piece at a time: a cut-off stream is reported as truncated (an `OSError`, where the
standard library raises `EOFError`, after handing out the data before the cut), and a stream
that expands beyond `MAX_GZIP_RATIO` times its compressed size or beyond `MAX_GZIP_BYTES` is
refused before it fills the memory or the disk.
"""

from __future__ import annotations

import errno
import io
import os
import stat
import zlib
from typing import IO

MAX_GZIP_RATIO = 100
"""Gzip data may decompress to at most this many times its compressed size (past the first
`GZIP_RATIO_FREE` bytes). Evaluation data compresses about 5 to 20 times; a gzip bomb, 1,000."""
GZIP_RATIO_FREE = 16 << 20
"""Decompressed bytes (16 MiB) allowed whatever the ratio, so that small files are never refused."""
MAX_GZIP_BYTES = 16 << 30
"""Gzip data may decompress to at most this many bytes (16 GiB)."""

MAX_URL_BYTES = MAX_GZIP_BYTES
"""The most bytes read from one URL as a stream (16 GiB), as from a local gzip file."""
MAX_DOCUMENT_BYTES = 2 << 30
"""The most bytes of a document read whole from one URL (2 GiB): a JSON or YAML document is held
in memory with its records, several times its size."""

_IN_CHUNK = 1 << 16
_OUT_CHUNK = 1 << 20
_BINARY = getattr(os, "O_BINARY", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


class InputError(OSError):
    """Input that cannot be read as a file of records: its message says why, and nothing else."""

    def __init__(self, message: str, code: int = errno.EINVAL) -> None:
        super().__init__(code, message)

    def __str__(self) -> str:
        return str(self.strerror)


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    return "not a file"


def open_regular_fd(path: str | os.PathLike[str]) -> int:
    """Open a file for reading and return its descriptor, refusing anything but a regular file.

    The file is opened without blocking (a FIFO without a writer would block the open itself),
    examined, and switched back to blocking reads.

    Raises:
        InputError: `path` is a FIFO, socket, device or directory.
        OSError: `path` cannot be opened.
    """
    fd, _ = open_regular_stat(path)
    if _NONBLOCK:
        try:
            os.set_blocking(fd, True)
        except BaseException:
            os.close(fd)
            raise
    return fd


def open_regular_stat(path: str | os.PathLike[str]) -> tuple[int, os.stat_result]:
    """Open a regular file like `open_regular_fd`, but leave it non-blocking; return its
    descriptor and what `fstat` said of it.

    Reading a regular file blocks whatever its flag says (POSIX file systems ignore it for
    regular files), so a reader that reads it whole at once needs no switch back, and no two
    more system calls per file; a reader should still take `BlockingIOError` as a cue to
    switch (see `read_all`).

    Raises:
        InputError: `path` is a FIFO, socket, device or directory.
        OSError: `path` cannot be opened.
    """
    fd = os.open(path, os.O_RDONLY | _BINARY | _NONBLOCK)
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            raise InputError(f"not a regular file ({_kind(status.st_mode)})")
    except BaseException:
        os.close(fd)
        raise
    return fd, status


def read_all(fd: int, size: int) -> bytes:
    """Read a file open as `fd` (by `open_regular_stat`) to its end; `size`: its size when
    opened, so that one read nearly always does.

    Raises:
        OSError: the file cannot be read.
    """
    try:
        data = os.read(fd, size + 1)
    except BlockingIOError:  # a file system that honours the flag for regular files
        os.set_blocking(fd, True)
        data = os.read(fd, size + 1)
    if len(data) == size:
        return data  # the whole file in one read
    # Less (one read returns at most about 2 GiB), or more (the file grew): read to the end.
    os.set_blocking(fd, True)
    parts = [data]
    while chunk := os.read(fd, max(size - len(data), 1 << 20)):
        parts.append(chunk)
    return b"".join(parts)


def open_regular(path: str | os.PathLike[str], buffering: int = -1) -> IO[bytes]:
    """Open a regular file for binary reading (see `open_regular_fd`).

    Raises:
        InputError: `path` is not a regular file.
        OSError: `path` cannot be opened.
    """
    fd = open_regular_fd(path)
    try:
        return open(fd, "rb", buffering=buffering)
    except BaseException:
        os.close(fd)
        raise


class GzipReader(io.RawIOBase):
    """Decompressed gzip data (one member or several), read in bounded pieces."""

    def __init__(self, raw: IO[bytes], compressed_size: int | None = None) -> None:
        super().__init__()
        self._raw = raw
        self._size = compressed_size
        self._input = b""
        self._read = 0  # compressed bytes read
        self._out = 0  # decompressed bytes handed out or pending
        self._pending = memoryview(b"")
        self._zlib: zlib._Decompress | None = None  # the member being decompressed
        self._eof = False

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        if not self.closed:
            self._raw.close()
        super().close()

    def _limit(self) -> int:
        compressed = self._size if self._size is not None else self._read
        return min(MAX_GZIP_BYTES, max(GZIP_RATIO_FREE, MAX_GZIP_RATIO * compressed))

    def _fill(self) -> bytes:
        """Return the next piece of decompressed data (empty at the end of the last member).

        Raises:
            InputError: the data is truncated, not gzip, or expands beyond the bounds.
        """
        while True:
            if not self._input:
                self._input = self._raw.read(_IN_CHUNK)
                self._read += len(self._input)
                if not self._input:
                    if self._zlib is not None:
                        raise InputError(
                            f"truncated gzip data: it ends after {self._read:,} compressed "
                            f"bytes ({self._out:,} bytes decompressed)"
                        )
                    self._eof = True
                    return b""
            if self._zlib is None:
                self._input = self._input.lstrip(b"\0")  # padding between members is allowed
                if not self._input:
                    continue
                self._zlib = zlib.decompressobj(31)
            try:
                out = self._zlib.decompress(self._input, _OUT_CHUNK)
            except zlib.error as err:
                raise InputError(f"not valid gzip data ({err})") from None
            if self._zlib.eof:
                self._input, self._zlib = self._zlib.unused_data, None
            else:
                self._input = self._zlib.unconsumed_tail
            if out:
                self._out += len(out)
                limit = self._limit()
                if self._out > limit:
                    raise InputError(
                        f"gzip data decompresses to more than {limit:,} bytes (limits: "
                        f"{MAX_GZIP_RATIO} times the compressed size, {MAX_GZIP_BYTES:,} bytes)",
                        errno.EFBIG,
                    )
                return out

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        if not self._pending:
            if self._eof:
                return 0
            self._pending = memoryview(self._fill())
        size = min(len(buffer), len(self._pending))
        buffer[:size] = self._pending[:size]
        self._pending = self._pending[size:]
        return size

    def readall(self) -> bytes:
        parts = [bytes(self._pending)]
        self._pending = memoryview(b"")
        while not self._eof and (piece := self._fill()):
            parts.append(piece)
        return b"".join(parts)


def open_gzip(path: str | os.PathLike[str], buffering: int = io.DEFAULT_BUFFER_SIZE) -> IO[bytes]:
    """Open a regular gzip-compressed file for reading its decompressed data, within bounds.

    Raises:
        InputError: `path` is not a regular file (reading raises it for bad data).
        OSError: `path` cannot be opened.
    """
    raw = open_regular(path, buffering=0)
    size = os.fstat(raw.fileno()).st_size
    return io.BufferedReader(GzipReader(raw, size), buffer_size=buffering)


DOCUMENT_MEMORY = 2
"""A document read whole needs this many times its size in free memory, beyond its bytes, to be
decoded: less, and it is reported out of memory before decoding starts (a decoder that runs out
of memory half way may crash the process rather than raise `MemoryError`)."""
_CHECKED_FROM = 64 << 20
"""Documents smaller than this (64 MiB) are decoded without looking at the memory left."""


def memory_left() -> int | None:
    """Return how many bytes this process may still allocate, as far as it can tell (None: no
    limit found): the least of its address-space limit, its cgroup's limit, and the memory the
    system has available."""
    found: list[int] = []
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
        if soft != resource.RLIM_INFINITY:
            with open("/proc/self/statm") as statm:
                size = int(statm.read().split()[0]) * resource.getpagesize()
            found.append(soft - size)
    except (ImportError, OSError, ValueError):
        pass
    try:
        with open("/proc/self/cgroup") as groups:
            group = next(line.split(":", 2)[2].strip() for line in groups if line[:3] == "0::")
        base = f"/sys/fs/cgroup{group.rstrip('/')}"
        with open(f"{base}/memory.max") as limit, open(f"{base}/memory.current") as used:
            most = limit.read().strip()
            if most != "max":
                found.append(int(most) - int(used.read()))
    except (OSError, ValueError, StopIteration, IndexError):
        pass
    try:
        with open("/proc/meminfo") as info:
            for line in info:
                if line.startswith("MemAvailable:"):
                    found.append(int(line.split()[1]) * 1024)
                    break
    except (OSError, ValueError, IndexError):
        pass
    return min(found) if found else None


def check_memory(size: int) -> None:
    """Refuse to decode a document of `size` bytes that the memory left cannot hold.

    Raises:
        MemoryError: less than `DOCUMENT_MEMORY` times `size` bytes are left.
    """
    if size < _CHECKED_FROM:
        return
    left = memory_left()
    if left is not None and left < DOCUMENT_MEMORY * size:
        raise MemoryError(f"{size:,} bytes to decode, {max(left, 0):,} bytes of memory left")


def too_large(limit: int) -> InputError:
    """Return the error of a URL's body longer than `limit` bytes."""
    message = f"larger than {limit:,} bytes, the most evalreg reads from one URL"
    return InputError(message, errno.EFBIG)
