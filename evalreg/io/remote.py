"""Files named by URL (`s3://`, `gs://`, `hf://`, `https://`, `memory://`, ...), through fsspec.

Local paths never come here: readers open them directly. A URL is read as a stream, whole, or by
byte range, listed the way a local folder is walked (sorted, hidden names skipped), and written
whole: the bytes are gathered in a local temporary file and then sent as one object, so a reader
sees the old object or the new one, never part of one. Errors of the transport become `OSError`,
as for local files; a protocol whose package is not installed is a `MissingExtraError` naming the
extra that installs it.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import re
from collections.abc import Iterator
from typing import IO, Any

from evalreg.errors import MissingExtraError
from evalreg.io.streams import GzipReader

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]+://")
EXTRAS: dict[str, str] = {
    "s3": "s3",
    "s3a": "s3",
    "gs": "gs",
    "gcs": "gs",
    "hf": "hf",
    "http": "http",
    "https": "http",
}
"""The extra of evalreg that installs each protocol's package (`pip install 'evalreg[s3]'`)."""
SPOOL_BYTES = 8 << 20
"""An object being written is kept in memory up to this size, then in a local temporary file."""
PROBE_BYTES = 1 << 16
"""How much is read at a time when looking for the end of a line in a remote file."""
HTTP_TIMEOUT = 60.0
"""Seconds an HTTP server may take to accept a connection, and between two reads of an answer."""
_SIZES_KEPT = 100_000
"""File sizes remembered from listings (a remote size otherwise costs a request)."""
_sizes: dict[str, int] = {}


def is_url(path: object) -> bool:
    """Return whether `path` is a URL (`scheme://...`) rather than a local path."""
    return isinstance(path, str) and _URL.match(path) is not None


def protocol(url: str) -> str:
    """Return the protocol of a URL, lower case."""
    return url.split("://", 1)[0].lower()


def is_local_url(url: str) -> bool:
    """Return whether a URL names a local file (`file://`, `local://`)."""
    return protocol(url) in ("file", "local")


def local_path(url: str) -> str:
    """Return the local path of a `file://` URL."""
    return url.split("://", 1)[1]


def filesystem(url: str) -> tuple[Any, str]:
    """Return the fsspec file system of a URL and the path within it.

    Raises:
        MissingExtraError: the package of the URL's protocol (or fsspec) is not installed, or
            the protocol is unknown.
    """
    scheme = protocol(url)
    try:
        from fsspec.core import url_to_fs
    except ImportError as err:  # pragma: no cover - fsspec is a dependency
        raise MissingExtraError(scheme, "remote") from err
    try:
        fs, path = url_to_fs(url, **_options(scheme))
    except ImportError as err:
        raise MissingExtraError(scheme, EXTRAS.get(scheme)) from err
    except ValueError as err:
        if "protocol" in str(err).lower():
            raise MissingExtraError(scheme, EXTRAS.get(scheme)) from err
        raise
    return fs, str(path)


def _options(scheme: str) -> dict[str, Any]:
    """Return the options of a protocol's file system: for HTTP, timeouts (none by default)."""
    if scheme not in ("http", "https"):
        return {}
    import aiohttp  # the http extra; fsspec names it if it is missing

    timeout = aiohttp.ClientTimeout(sock_connect=HTTP_TIMEOUT, sock_read=HTTP_TIMEOUT)
    return {"client_kwargs": {"timeout": timeout}}


def _streaming(fs: Any) -> bool:
    return "http" in fs.protocol if isinstance(fs.protocol, tuple) else fs.protocol == "http"


class _Guarded(io.RawIOBase):
    """A remote file read through `read`, its transport's errors raised as `OSError`."""

    def __init__(self, url: str, stream: Any) -> None:
        self.url = url
        self._stream = stream

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        data = _call(self.url, self._stream.read, len(view))
        view[: len(data)] = data
        return len(data)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._stream.close()
        super().close()


def _call(url: str, function: Any, *args: Any, **options: Any) -> Any:
    """Call a transport function; its failures become `OSError` naming the URL."""
    try:
        return function(*args, **options)
    except OSError:
        raise
    except MissingExtraError:
        raise
    except Exception as err:  # a transport's own errors (HTTP status, credentials, ...)
        reason = str(err).splitlines()[0] if str(err) else url
        raise OSError(f"{type(err).__name__}: {reason}") from err


def open_url(url: str) -> IO[bytes]:
    """Open a URL for binary reading as a stream, decompressing names ending in `.gz`.

    Raises:
        OSError: it cannot be opened.
        MissingExtraError: its protocol's package is not installed.
    """
    fs, path = filesystem(url)
    options = {"block_size": 0} if _streaming(fs) else {}
    raw = _call(url, fs.open, path, "rb", **options)
    stream = io.BufferedReader(_Guarded(url, raw), buffer_size=1 << 20)
    if url.lower().endswith(".gz"):  # within the bounds local gzip files have
        return io.BufferedReader(GzipReader(stream), buffer_size=1 << 20)
    return stream


def read_url(url: str) -> bytes:
    """Return the bytes of the object at a URL (not decompressed).

    Raises:
        OSError: it cannot be read.
        MissingExtraError: its protocol's package is not installed.
    """
    fs, path = filesystem(url)
    data: bytes = _call(url, fs.cat_file, path)
    return data


def read_url_range(url: str, start: int, end: int) -> bytes:
    """Return the bytes `[start, end)` of the object at a URL.

    Raises:
        OSError: they cannot be read (a server without range requests, among others).
    """
    fs, path = filesystem(url)
    data: bytes = _call(url, fs.cat_file, path, start, end)
    if len(data) != end - start:
        raise OSError(f"asked for bytes {start}..{end}, got {len(data)} bytes")
    return data


def size(url: str) -> int:
    """Return the size of the object at a URL, in bytes.

    Raises:
        OSError: it cannot be found out.
    """
    known = _sizes.get(url)
    if known is not None:
        return known
    fs, path = filesystem(url)
    found = _call(url, fs.size, path)
    if found is None:
        raise OSError(f"{url}: the server does not tell the size")
    return int(found)


def line_ranges(url: str, total: int, chunk: int) -> list[tuple[int, int]]:
    """Split the first `total` bytes of a remote file into ranges of about `chunk` at line ends.

    Raises:
        OSError: the file cannot be read by range.
    """
    bounds = [0]
    while bounds[-1] + chunk < total:
        position = bounds[-1] + chunk
        while True:  # the line end at or after `position`
            probe = read_url_range(url, position, min(position + PROBE_BYTES, total))
            found = probe.find(b"\n")
            if found >= 0:
                position += found + 1
                break
            position += len(probe)
            if position >= total:
                break
        if position >= total:
            break
        bounds.append(position)
    bounds.append(total)
    return list(itertools.pairwise(bounds))


def list_files(url: str) -> list[str] | None:
    """Return the files under a remote folder as URLs, sorted; None when `url` is no folder.

    Names starting with `.` (files, and every file in such a folder) are left out, as in a
    local walk. A URL whose last part has a file name suffix (`.json`, `.jsonl.gz`) is taken for
    a file without asking the server.

    Raises:
        OSError: the folder cannot be listed.
        MissingExtraError: its protocol's package is not installed.
    """
    tail = url.rstrip("/").rsplit("/", 1)[-1]
    if not url.endswith("/") and "." in tail and not tail.startswith("."):
        return None
    fs, path = filesystem(url)
    if not _call(url, fs.isdir, path):
        return None
    root = path.rstrip("/")
    found = _call(url, fs.find, path, detail=True)
    prefix = url.rstrip("/")
    files = []
    for name in sorted(found):
        if not name.startswith(root + "/"):
            continue
        relative = name[len(root) + 1 :]
        if any(part.startswith(".") for part in relative.split("/")):
            continue
        files.append(f"{prefix}/{relative}")
        known = found[name].get("size")
        if isinstance(known, int) and len(_sizes) < _SIZES_KEPT:
            _sizes[files[-1]] = known
    return files


def glob(url: str) -> list[str]:
    """Return the files matching a URL with glob characters (`*`, `?`, `[`), sorted.

    Raises:
        OSError: the store cannot be listed.
        MissingExtraError: its protocol's package is not installed.
    """
    fs, path = filesystem(url)
    matched = _call(url, fs.glob, path)
    static = glob_folder(url) + "/"
    root = filesystem(static)[1].rstrip("/") + "/"
    spelled = []
    for name in matched:
        if name.startswith(root):
            spelled.append(static + name[len(root) :])
        elif is_url(name):
            spelled.append(name)
        else:
            spelled.append(fs.unstrip_protocol(name))
    return sorted(spelled)


def has_glob(url: str) -> bool:
    """Return whether a URL's path holds glob characters."""
    return any(c in url.split("://", 1)[1] for c in "*?[")


def glob_folder(url: str) -> str:
    """Return the folder of a URL with glob characters before the first of them (no `/` last)."""
    first = min(i for i in (url.find(c) for c in "*?[") if i >= 0)
    return url[: url.rfind("/", 0, first)]


def isdir(url: str) -> bool:
    """Return whether a URL names a folder (False when that cannot be found out)."""
    try:
        fs, path = filesystem(url)
        return bool(_call(url, fs.isdir, path))
    except (OSError, MissingExtraError):
        return False


def join(url: str, relative: str) -> str:
    """Return the URL of `relative` (with `/` separators) under the folder `url`."""
    return url.rstrip("/") + "/" + relative.lstrip("/")


@contextlib.contextmanager
def url_writer(url: str, *, compress: bool | None = None) -> Iterator[IO[bytes]]:
    """Gather what is written, then store it at `url` as one object; nothing if the block raises.

    The bytes are kept in memory up to `SPOOL_BYTES`, beyond that in a local temporary file. With
    `compress` (default: the name ends in `.gz`), they are gzip-compressed first.

    Raises:
        OSError: the object cannot be stored (a read-only protocol such as HTTP, among others).
        MissingExtraError: the protocol's package is not installed.
    """
    import gzip  # writing to a store only: not imported by every command that checks for URLs
    import tempfile

    fs, path = filesystem(url)
    if compress is None:
        compress = url.lower().endswith(".gz")
    with tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES) as spool:
        if compress:
            with gzip.GzipFile(fileobj=spool, mode="wb", mtime=0, filename="") as zipped:
                yield zipped  # type: ignore[misc]
        else:
            yield spool
        spool.seek(0)
        parent = path.rstrip("/").rsplit("/", 1)[0]
        with contextlib.suppress(Exception):  # stores without folders need none
            fs.makedirs(parent, exist_ok=True)
        _call(url, _store, fs, path, spool)


def _store(fs: Any, path: str, spool: IO[bytes]) -> None:
    """Send the whole of `spool` to `path`: one request where it fits in memory."""
    spool.seek(0, io.SEEK_END)
    length = spool.tell()
    spool.seek(0)
    if length <= SPOOL_BYTES:
        fs.pipe_file(path, spool.read())
        return
    import tempfile

    with tempfile.NamedTemporaryFile() as local:  # put_file sends large files in parts
        while chunk := spool.read(1 << 20):
            local.write(chunk)
        local.flush()
        fs.put_file(local.name, path)


def write_url(url: str, data: bytes) -> None:
    """Store `data` at `url` as one object.

    Raises:
        OSError: it cannot be stored.
        MissingExtraError: the protocol's package is not installed.
    """
    with url_writer(url, compress=False) as stream:
        stream.write(data)
