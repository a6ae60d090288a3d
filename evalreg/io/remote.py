"""Files named by URL (`s3://`, `gs://`, `hf://`, `https://`, `memory://`, ...), through fsspec.

Local paths never come here: readers open them directly. A URL is read as a stream, whole, or by
byte range, listed the way a local folder is walked (sorted, hidden names skipped), and written
whole: the bytes are gathered in a local temporary file and then sent as one object, so a reader
sees the old object or the new one, never part of one. Every read is bounded: at most
`streams.MAX_URL_BYTES` from one URL streamed and `streams.MAX_DOCUMENT_BYTES` of a document read
whole (a larger one is an `InputError` saying so), a range no further than its end. HTTP(S)
goes through `evalreg.io.http`, which bounds time, redirects and folder pages too. Errors of the
transport become `OSError`, as for local files; a protocol whose package is not installed is a
`MissingExtraError` naming the extra that installs it.
"""

from __future__ import annotations

import contextlib
import io
import re
from collections.abc import Iterator
from typing import IO, Any, cast

from evalreg.errors import MissingExtraError
from evalreg.io import streams
from evalreg.io.streams import GzipReader, too_large

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]+://")
EXTRAS: dict[str, str] = {
    "s3": "s3",
    "s3a": "s3",
    "gs": "gs",
    "gcs": "gs",
    "hf": "hf",
}
"""The extra of evalreg that installs each protocol's package (`pip install 'evalreg[s3]'`)."""
SPOOL_BYTES = 8 << 20
"""An object being written is kept in memory up to this size, then in a local temporary file."""
PROBE_BYTES = 1 << 16
"""How much is read at a time when looking for the end of a line in a remote file."""
_SIZES_KEPT = 100_000
"""File sizes remembered from listings (a remote size otherwise costs a request)."""
_sizes: dict[str, int] = {}


def is_url(path: object) -> bool:
    """Return whether `path` is a URL (`scheme://...`) rather than a local path."""
    # Most paths hold no "://": the substring test spares them the pattern.
    return isinstance(path, str) and "://" in path and _URL.match(path) is not None


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
    if scheme in ("http", "https"):
        from evalreg.io.http import HTTPFileSystem  # bounded: see its module

        return HTTPFileSystem(), url
    try:
        from fsspec.core import url_to_fs
    except ImportError as err:  # pragma: no cover - fsspec is a dependency
        raise MissingExtraError(scheme, "remote") from err
    try:
        fs, path = url_to_fs(url)
    except ImportError as err:
        raise MissingExtraError(scheme, EXTRAS.get(scheme)) from err
    except ValueError as err:
        if "protocol" in str(err).lower():
            raise MissingExtraError(scheme, EXTRAS.get(scheme)) from err
        raise
    return fs, str(path)


def _streaming(fs: Any) -> bool:
    return bool(getattr(fs, "streams", False))


class _Guarded(io.RawIOBase):
    """A remote file read through `read`, its transport's errors raised as `OSError`."""

    def __init__(self, url: str, stream: Any, limit: int | None = None) -> None:
        self.url = url
        self._stream = stream
        self._read = 0
        self._limit = streams.MAX_URL_BYTES if limit is None else limit
        known = getattr(stream, "size", None)
        self.size: int | None = known if isinstance(known, int) else None
        """The length the store or server gives, if it does."""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        data = _call(self.url, self._stream.read, len(view))
        view[: len(data)] = data
        self._read += len(data)
        if self._read > self._limit:
            raise too_large(self._limit)
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


def read_url(url: str, limit: int | None = None) -> bytes:
    """Return the bytes of the object at a URL (not decompressed), at most `limit`.

    An object the store or server says is larger is refused before its bytes are read.

    Raises:
        InputError: it is larger than `limit` (default: `streams.MAX_DOCUMENT_BYTES`).
        OSError: it cannot be read.
        MissingExtraError: its protocol's package is not installed.
    """
    limit = streams.MAX_DOCUMENT_BYTES if limit is None else limit
    fs, path = filesystem(url)
    options = {"block_size": 0} if _streaming(fs) else {}
    raw = _call(url, fs.open, path, "rb", **options)
    with contextlib.closing(_Guarded(url, raw, limit)) as stream:
        known = getattr(raw, "size", None)
        if isinstance(known, int) and known > limit:
            raise too_large(limit)
        parts = []
        while data := stream.read(1 << 20):
            parts.append(data)
    return b"".join(parts)


def open_ranges(url: str, block: int = PROBE_BYTES) -> IO[bytes]:
    """Open a URL for reading by byte range: each read of `block` bytes at most asks for them
    alone (fsspec's block reading, with no read-ahead), and reads no further.

    Raises:
        OSError: it cannot be opened.
        MissingExtraError: its protocol's package is not installed.
    """
    fs, path = filesystem(url)
    raw = _call(url, fs.open, path, "rb", block_size=block, cache_type="none")
    return cast(IO[bytes], _Ranges(url, raw))


class _Ranges(io.RawIOBase):
    """A remote file read by range (`open_ranges`), its transport's errors raised as `OSError`."""

    def __init__(self, url: str, raw: Any) -> None:
        self.url = url
        self._raw = raw

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        return int(_call(self.url, self._raw.seek, offset, whence))

    def tell(self) -> int:
        return int(self._raw.tell())

    def read(self, size: int = -1) -> bytes:
        data: bytes = _call(self.url, self._raw.read, size)
        return data

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._raw.close()
        super().close()


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
