"""Files by `http://` and `https://` URL, read from servers that may be slow, broken or hostile.

An fsspec file system on the standard library's `http.client`, so that every read is bounded:

- one deadline per file, for everything its reading waits on (connecting, each answer, each read
  of the body): `HTTP_TIMEOUT` seconds, plus one second for every `HTTP_MIN_RATE` bytes received,
  so that a large file has the time it needs and a server that stalls or trickles does not. No
  request is tried again, so no retry multiplies it;
- a body is read up to `streams.MAX_URL_BYTES`; a range is read up to its end, whatever the
  server sends (one that ignores `Range` is refused after its headers, unless it starts the file);
- a folder page is read up to `MAX_LISTING_BYTES`, each page of a folder once (pages that link to
  themselves or to each other), at most `MAX_LISTING_DEPTH` folders deep and `MAX_LISTING_PAGES`
  pages in all;
- redirects are followed within the origin of the URL given (scheme, host and port), at most
  `MAX_REDIRECTS` of them; one to another origin is refused, and named in the error, unless
  `EVALREG_ALLOW_REDIRECTS` allows it (origins separated by spaces or commas, `*` for any);
- every failure is an `OSError` whose message says why: timed out (and waiting for what),
  connection refused, connection reset, redirect loop, HTTP status.

Bodies are asked for uncompressed (`Accept-Encoding: identity`), and connections are kept open
between the requests of one thread to one origin.
"""

from __future__ import annotations

import contextlib
import errno
import http.client
import os
import re
import socket
import ssl
import threading
import time
from collections import deque
from html import unescape
from typing import Any
from urllib.parse import urljoin, urlsplit

from fsspec.spec import AbstractBufferedFile, AbstractFileSystem

from evalreg.io import streams
from evalreg.io.streams import InputError, too_large

HTTP_TIMEOUT = 60.0
"""Seconds a file's reading may wait in all (connecting, answers, reads), before `HTTP_MIN_RATE`."""
HTTP_MIN_RATE = 64 * 1024
"""Bytes a second a body must average: each such many bytes received give a file a second more."""
MAX_REDIRECTS = 10
"""Redirects followed for one request."""
MAX_LISTING_BYTES = 8 << 20
"""The most bytes of a folder page (HTML) read; a longer page is taken for a file, not a folder."""
MAX_LISTING_PAGES = 10_000
"""Folder pages read to list the files under one URL."""
MAX_LISTING_DEPTH = 64
"""Folders below the URL given that a listing goes into."""
ALLOW_REDIRECTS = "EVALREG_ALLOW_REDIRECTS"
"""The environment variable naming the other origins redirects may lead to (`*`: any)."""

_REDIRECTS = {301, 302, 303, 307, 308}
_LINK = re.compile(r"""<a\s(?:[^>]*?\s)?href\s*=\s*["']([^"']+)["']""", re.IGNORECASE)
_HEADERS = {"Accept-Encoding": "identity", "User-Agent": "evalreg"}


class Deadline:
    """The time one file's reading may still take (see `HTTP_TIMEOUT`, `HTTP_MIN_RATE`)."""

    def __init__(self) -> None:
        self.start = time.monotonic()
        self.received = 0

    def left(self, doing: str) -> float:
        """Return the seconds left.

        Raises:
            TimeoutError: none are (its message says how long it waited, and for what).
        """
        left = self.start + HTTP_TIMEOUT + self.received / HTTP_MIN_RATE - time.monotonic()
        if left <= 0:
            raise self.expired(doing)
        return left

    def expired(self, doing: str) -> TimeoutError:
        """Return the error of a file whose time ran out while `doing`."""
        waited = time.monotonic() - self.start
        return TimeoutError(errno.ETIMEDOUT, f"timed out after {waited:.0f} s {doing}")


def origin(url: str) -> tuple[str, str, int]:
    """Return the origin of a URL: scheme, host and port."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    port = parts.port or (443 if scheme == "https" else 80)
    return scheme, (parts.hostname or "").lower(), port


def _allowed(target: str, start: str) -> bool:
    """Return whether a redirect from a URL of `start`'s origin may lead to `target`."""
    if origin(target) == origin(start):
        return True
    allowed = re.split(r"[\s,]+", os.environ.get(ALLOW_REDIRECTS, "").strip())
    if "*" in allowed:
        return True
    return any(a and origin(a if "://" in a else f"https://{a}") == origin(target) for a in allowed)


def _reason(err: BaseException) -> str:
    """Return why a request failed, in a few words."""
    if isinstance(err, ConnectionRefusedError):
        return "connection refused"
    if isinstance(err, ConnectionResetError):
        return "connection reset by the server"
    if isinstance(err, http.client.RemoteDisconnected):
        return "the server closed the connection without answering"
    if isinstance(err, http.client.IncompleteRead):
        return f"the body ended early ({len(err.partial):,} bytes read)"
    if isinstance(err, socket.gaierror):
        return f"cannot find the host ({err.strerror or err})"
    if isinstance(err, ssl.SSLError):
        return f"TLS failed ({err.reason or err})"
    if isinstance(err, OSError) and err.strerror:
        return err.strerror
    return str(err) or type(err).__name__


# -- connections --------------------------------------------------------------------------------

_idle = threading.local()
"""Per thread: the open connection to each origin, ready for another request."""


def _connection(url: str, deadline: Deadline) -> http.client.HTTPConnection:
    scheme, host, port = origin(url)
    kept: dict[tuple[str, str, int], http.client.HTTPConnection] = _idle.__dict__.setdefault(
        "connections", {}
    )
    found = kept.pop((scheme, host, port), None)
    if found is not None:
        return found
    timeout = deadline.left("connecting")
    if scheme == "https":
        return http.client.HTTPSConnection(
            host, port, timeout=timeout, context=ssl.create_default_context()
        )
    return http.client.HTTPConnection(host, port, timeout=timeout)


def _keep(url: str, connection: http.client.HTTPConnection) -> None:
    """Keep a connection whose last answer was read to its end, for the next request."""
    kept = _idle.__dict__.setdefault("connections", {})
    old = kept.pop(origin(url), None)
    if old is not None:
        old.close()
    kept[origin(url)] = connection


class Answer:
    """An answer's status, headers and body (read with `read`, within the file's deadline)."""

    def __init__(
        self,
        url: str,
        connection: http.client.HTTPConnection,
        response: http.client.HTTPResponse,
        deadline: Deadline,
    ) -> None:
        self.url = url
        self.start = url
        """The URL asked for, before any redirect."""
        self.status = response.status
        self.headers = response.headers
        self._connection = connection
        self._response = response
        self.deadline = deadline

    @property
    def length(self) -> int | None:
        """Return the length the server gives, if it does."""
        value = self.headers.get("Content-Length", "")
        return int(value) if value.strip().isdigit() else None

    def read(self, size: int) -> bytes:
        """Return up to `size` bytes of the body (empty at its end).

        Raises:
            OSError: the read fails or the file's time runs out.
        """
        sock = self._connection.sock
        if sock is not None:
            sock.settimeout(self.deadline.left("reading the body"))
        try:
            data = self._response.read1(size) if size > 0 else b""
            self.deadline.received += len(data)
            self.deadline.left("reading the body")  # a trickle runs out of time, too
        except TimeoutError:
            raise failed(self.start, self.deadline.expired("reading the body")) from None
        except (OSError, http.client.HTTPException) as err:
            raise failed(self.start, OSError(errno.EIO, _reason(err))) from None
        return data

    def close(self, *, keep: bool = False) -> None:
        """Close the answer; with `keep`, keep its connection for the next request if it can."""
        if keep and self._response.isclosed() and not self._response.will_close:
            _keep(self.url, self._connection)
            return
        self._response.close()
        self._connection.close()


class StatusError(OSError):
    """The server answered, with an HTTP status that is not success."""


class NotFound(StatusError, FileNotFoundError):
    """The server answered 404 or 410."""


FAILURE_KEPT = 600.0
"""Seconds a URL whose server failed (time out, refused, reset, redirects) fails again at once
with the same reason, rather than wait again (a run reads a file more than once: its size, its
records, a companion)."""
_FAILURES_KEPT = 10_000
_failures: dict[str, tuple[float, int, str]] = {}


def failed(url: str, err: OSError) -> OSError:
    """Remember that reading `url` failed with `err` (but for an HTTP status); return `err`."""
    if not isinstance(err, StatusError) and len(_failures) < _FAILURES_KEPT:
        _failures[url] = (time.monotonic(), err.errno or errno.EIO, err.strerror or str(err))
    return err


def fetch(
    url: str,
    deadline: Deadline,
    *,
    method: str = "GET",
    headers: dict[str, str] | None = None,
) -> Answer:
    """Ask for `url`, following redirects within its origin; return the answer (2xx).

    A URL whose server failed in the last `FAILURE_KEPT` seconds (see `failed`) fails again at
    once, with the same reason: no request is tried twice.

    Raises:
        FileNotFoundError: the server answers 404 or 410.
        OSError: anything else fails (its message says why).
    """
    known = _failures.get(url)
    if known is not None:
        if time.monotonic() - known[0] < FAILURE_KEPT:
            raise OSError(known[1], known[2])
        del _failures[url]
    try:
        answer = _follow(url, deadline, method, headers or {})
    except OSError as err:
        raise failed(url, err) from None
    answer.start = url
    return answer


def _follow(url: str, deadline: Deadline, method: str, headers: dict[str, str]) -> Answer:
    start, seen = url, [url]
    for _ in range(MAX_REDIRECTS + 1):
        answer = _ask(url, method, headers, deadline)
        if answer.status not in _REDIRECTS:
            break
        location = answer.headers.get("Location")
        answer.close()
        if not location:
            raise OSError(errno.EIO, f"HTTP {answer.status} without a Location")
        target = urljoin(url, location.strip())
        if target in seen:
            raise OSError(errno.ELOOP, "redirect loop: " + " -> ".join([*seen, target]))
        if not _allowed(target, start):
            raise PermissionError(
                errno.EACCES,
                f"redirect to {target} refused: it leaves {origin_text(start)} "
                f"(allow it with {ALLOW_REDIRECTS} or --allow-redirect)",
            )
        seen.append(target)
        url = target
    else:
        raise OSError(errno.ELOOP, f"more than {MAX_REDIRECTS} redirects")
    if answer.status in (404, 410):
        answer.close()
        raise NotFound(errno.ENOENT, f"not found (HTTP {answer.status})")
    if not 200 <= answer.status < 300:
        answer.close()
        raise StatusError(errno.EIO, f"HTTP {answer.status} {answer._response.reason}".strip())
    return answer


def origin_text(url: str) -> str:
    """Return the origin of a URL as written in messages (`https://host:port`)."""
    scheme, host, port = origin(url)
    return f"{scheme}://{host}:{port}"


def _ask(url: str, method: str, headers: dict[str, str], deadline: Deadline) -> Answer:
    """Send one request and read the answer's headers (once more on a fresh connection, if a
    kept connection turns out to be closed: that is not the server's answer)."""
    parts = urlsplit(url)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    for fresh in (False, True):
        connection = _connection(url, deadline) if not fresh else _fresh(url, deadline)
        reused = connection.sock is not None
        try:
            if connection.sock is not None:
                connection.sock.settimeout(deadline.left("sending the request"))
            connection.timeout = deadline.left("connecting")
            connection.request(method, target, headers=_HEADERS | headers)
            if connection.sock is not None:
                connection.sock.settimeout(deadline.left("waiting for an answer"))
            response = connection.getresponse()
        except TimeoutError:
            doing = "connecting" if connection.sock is None else "waiting for an answer"
            connection.close()
            raise deadline.expired(doing) from None
        except (OSError, http.client.HTTPException) as err:
            connection.close()
            stale = isinstance(err, (http.client.RemoteDisconnected, BrokenPipeError))
            if reused and stale and not fresh:
                continue
            raise OSError(getattr(err, "errno", None) or errno.EIO, _reason(err)) from None
        return Answer(url, connection, response, deadline)
    raise AssertionError("unreachable")  # pragma: no cover


def _fresh(url: str, deadline: Deadline) -> http.client.HTTPConnection:
    _idle.__dict__.setdefault("connections", {}).pop(origin(url), None)
    return _connection(url, deadline)


def read_body(answer: Answer, limit: int | None = None) -> bytes:
    """Return a whole body, refusing one longer than `limit` bytes.

    Raises:
        InputError: the body is longer than `limit`.
        OSError: it cannot be read.
    """
    limit = streams.MAX_URL_BYTES if limit is None else limit
    parts = []
    total = 0
    with contextlib.ExitStack() as stack:
        stack.callback(answer.close)
        while data := answer.read(1 << 20):
            total += len(data)
            if total > limit:
                raise too_large(limit)
            parts.append(data)
    return b"".join(parts)


# -- the file system ---------------------------------------------------------------------------


def read_range(url: str, start: int, end: int) -> bytes:
    """Return the bytes `[start, end)` at a URL, reading no more than that.

    Raises:
        OSError: they cannot be read; the server answers the whole file to a range that does
            not start it (then nothing of its body is read).
    """
    if end <= start:
        return b""
    answer = fetch(url, Deadline(), headers={"Range": f"bytes={start}-{end - 1}"})
    if answer.status != 206 and start > 0:
        answer.close()  # its whole body would follow
        raise OSError(errno.EIO, f"the server does not answer byte ranges (HTTP {answer.status})")
    wanted, parts, got = end - start, [], 0
    try:
        while got < wanted and (data := answer.read(min(1 << 20, wanted - got))):
            parts.append(data)
            got += len(data)
    except BaseException:
        answer.close()
        raise
    answer.close(keep=got == wanted and answer.length == wanted)
    return b"".join(parts)


class Body(AbstractBufferedFile):  # type: ignore[misc]
    """A file read by byte range: each read asks for one range (`read_range`) and no more."""

    def __init__(self, fs: HTTPFileSystem, url: str, **options: Any) -> None:
        super().__init__(fs, url, mode="rb", **options)

    def _fetch_range(self, start: int, end: int) -> bytes:
        return read_range(self.path, start, end)


class Stream:
    """A body read from start to end as it comes, within its file's deadline and its bound."""

    def __init__(self, answer: Answer) -> None:
        self._answer = answer
        self._read = 0
        self.closed = False
        self.size = answer.length
        """The length the server gives (None if it gives none)."""

    def read(self, size: int = -1) -> bytes:
        if size < 0:
            return read_body(self._answer, streams.MAX_URL_BYTES - self._read)
        return self._answer.read(size)  # its reader counts the bytes against its bound

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._answer.close()


class HTTPFileSystem(AbstractFileSystem):  # type: ignore[misc]
    """Read-only files by HTTP(S) URL, every read bounded (see the module)."""

    protocol = ("http", "https")
    root_marker = ""
    streams = True
    """Files open as streams with `block_size=0` (for `remote`)."""

    @classmethod
    def _strip_protocol(cls, path: str) -> str:
        return str(path)

    def _open(
        self,
        path: str,
        mode: str = "rb",
        block_size: int | None = None,
        autocommit: bool = True,
        cache_options: Any = None,
        **options: Any,
    ) -> Any:
        if mode != "rb":
            raise PermissionError(errno.EROFS, "HTTP URLs are read-only")
        if block_size == 0:
            return Stream(fetch(path, Deadline()))
        options.setdefault("cache_type", "none")
        return Body(self, path, block_size=block_size or (1 << 16), **options)

    def info(self, path: str, **options: Any) -> dict[str, Any]:
        """Return the size of the file at a URL (from a HEAD request)."""
        answer = fetch(path, Deadline(), method="HEAD")
        answer.close()
        return {"name": path, "size": answer.length, "type": "file"}

    def cat_file(
        self, path: str, start: int | None = None, end: int | None = None, **options: Any
    ) -> bytes:
        """Return the body at a URL (within `streams.MAX_URL_BYTES`), or its bytes [start, end)."""
        if start is None and end is None:
            return read_body(fetch(path, Deadline()))
        if end is None:
            end = self.size(path)
        return read_range(path, start or 0, end)

    def ls(self, path: str, detail: bool = True, **options: Any) -> list[Any]:
        """Return the links of a folder page under the folder (empty for no folder page)."""
        found = self._links(path, Deadline())
        names = sorted(found)
        if not detail:
            return names
        return [{"name": n, "size": None, "type": _kind(n)} for n in names]

    def isdir(self, path: str) -> bool:
        """Return whether a URL is a folder page that links to anything under it."""
        try:
            return bool(self._links(path, Deadline()))
        except OSError:
            return False

    def find(
        self, path: str, maxdepth: int | None = None, withdirs: bool = False, **options: Any
    ) -> Any:
        """Return the files under a folder page, each page read once (see the module's bounds)."""
        detail = options.pop("detail", False)
        deadline = Deadline()
        root = path.rstrip("/") + "/"
        files: dict[str, dict[str, Any]] = {}
        seen = {root}
        pending: deque[tuple[str, int]] = deque([(root, 0)])
        pages = 0
        limit = MAX_LISTING_DEPTH if maxdepth is None else min(maxdepth, MAX_LISTING_DEPTH)
        while pending:
            page, depth = pending.popleft()
            pages += 1
            if pages > MAX_LISTING_PAGES:
                raise OSError(errno.EFBIG, f"more than {MAX_LISTING_PAGES:,} folder pages")
            for link in sorted(self._links(page, deadline)):
                if _kind(link) == "directory":
                    if link not in seen and depth + 1 < limit:
                        seen.add(link)
                        pending.append((link, depth + 1))
                else:
                    files.setdefault(link, {"name": link, "size": None, "type": "file"})
        return files if detail else sorted(files)

    def _links(self, path: str, deadline: Deadline) -> set[str]:
        """Return the links of a folder page that lead below it (none if it is no folder page).

        A page that is not HTML, or is longer than `MAX_LISTING_BYTES`, is no folder page; it
        is read no further than its headers, or that bound.
        """
        folder = path.rstrip("/") + "/"
        answer = fetch(path, deadline)
        kind = answer.headers.get("Content-Type", "").split(";")[0].strip().lower()
        if kind not in ("text/html", ""):
            answer.close()
            return set()
        try:
            page = read_body(answer, MAX_LISTING_BYTES)
        except InputError:
            return set()
        found = set()
        for href in _LINK.findall(page.decode("utf-8", "replace")):
            link = urljoin(folder, unescape(href)).split("#", 1)[0].split("?", 1)[0]
            if link.startswith(folder) and link != folder:
                found.add(link)
        return found

    def _rm(self, path: str) -> None:
        raise PermissionError(errno.EROFS, "HTTP URLs are read-only")

    def pipe_file(self, path: str, value: bytes, **options: Any) -> None:
        raise PermissionError(errno.EROFS, "HTTP URLs are read-only")

    def put_file(self, lpath: str, rpath: str, **options: Any) -> None:
        raise PermissionError(errno.EROFS, "HTTP URLs are read-only")

    def makedirs(self, path: str, exist_ok: bool = False) -> None:
        raise PermissionError(errno.EROFS, "HTTP URLs are read-only")


def _kind(link: str) -> str:
    return "directory" if link.endswith("/") else "file"
