"""A hostile HTTP server on 127.0.0.1, for the tests of reading URLs.

`HostileServer` serves a few well-behaved files and every misbehaviour a reader must survive,
by path:

    /files/NAME           a file of `files`, with single byte ranges and HEAD
    /norange/NAME         the same file, but a `Range` header is ignored (200 and the whole body)
    /huge/N.json          N bytes of one JSON document, made as they are sent (never held)
    /endless/NAME         JSONL lines for ever, without a length
    /silent/NAME          reads the request, then never answers
    /stall/NAME           answers the headers and a few bytes of the body, then nothing more
    /trickle/NAME         sends one byte of the body every `trickle` seconds
    /reset/NAME           closes the connection with a reset, without answering
    /redirect/N/NAME      302 to `redirects[N]` (another origin, say)
    /loop/a, /loop/b      redirect to each other
    /listing/             an HTML folder page that links to itself, to its parent and to a file
    /html/NAME            an endless `text/html` page (a URL without a suffix that is no folder)

Every request is recorded (`requests`: method and path), so a test can say what was asked.
"""

from __future__ import annotations

import contextlib
import http.server
import socket
import struct
import threading
import time
from collections.abc import Iterator
from typing import Any

LINE = b'{"v": "1.0", "n": 1}\n'


class _Handler(http.server.BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def do_HEAD(self) -> None:
        self._answer(head=True)

    def do_GET(self) -> None:
        self._answer(head=False)

    def _answer(self, head: bool) -> None:
        owner = self.server.owner
        owner.requests.append((self.command, self.path))
        kind, _, name = self.path.lstrip("/").partition("/")
        handler = getattr(self, f"_{kind}", None)
        if handler is None:
            self.send_error(404)
            return
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            handler(name, head)

    def _body(self, data: bytes, head: bool, status: int = 200, kind: str = "") -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind or "application/octet-stream")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if not head:
            self.wfile.write(data)

    def _files(self, name: str, head: bool) -> None:
        data = self.server.owner.files.get(name)
        if data is None:
            self.send_error(404)
            return
        spec = self.headers.get("Range", "")
        if not spec.startswith("bytes="):
            self._body(data, head)
            return
        first, _, last = spec[6:].partition("-")
        start = int(first)
        end = min(int(last) + 1 if last else len(data), len(data))
        self.send_response(206)
        self.send_header("Content-Range", f"bytes {start}-{end - 1}/{len(data)}")
        self.send_header("Content-Length", str(end - start))
        self.end_headers()
        if not head:
            self.wfile.write(data[start:end])

    def _norange(self, name: str, head: bool) -> None:
        owner = self.server.owner
        data = owner.files.get(name, b"")
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        for start in range(0, 0 if head else len(data), 1 << 16):
            self.wfile.write(data[start : start + (1 << 16)])
            owner.sent += min(1 << 16, len(data) - start)

    def _huge(self, name: str, head: bool) -> None:
        size = int(name.split(".")[0])
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(size))
        self.end_headers()
        if head:
            return
        piece = b" " * (1 << 20)
        self.wfile.write(b"[")
        left = size - 2
        while left > 0:
            self.wfile.write(piece[: min(left, len(piece))])
            self.server.owner.sent += min(left, len(piece))
            left -= len(piece)
        self.wfile.write(b"]")

    def _endless(self, name: str, head: bool) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Connection", "close")
        self.end_headers()
        if head:
            return
        block = self.server.owner.line * 4096
        while not self.server.owner.stopping.is_set():
            self.wfile.write(block)

    def _silent(self, name: str, head: bool) -> None:
        self.server.owner.stopping.wait()

    def _stall(self, name: str, head: bool) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "100")
        self.end_headers()
        if not head:
            self.wfile.write(b'{"v": ')
            self.wfile.flush()
        self.server.owner.stopping.wait()

    def _trickle(self, name: str, head: bool) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "1000000")
        self.end_headers()
        if head:
            return
        owner = self.server.owner
        while not owner.stopping.wait(owner.trickle):
            self.wfile.write(b" ")
            self.wfile.flush()

    def _reset(self, name: str, head: bool) -> None:
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()
        self.close_connection = True

    def _redirect(self, name: str, head: bool) -> None:
        index, _, _ = name.partition("/")
        self.send_response(302)
        self.send_header("Location", self.server.owner.redirects[int(index)])
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _loop(self, name: str, head: bool) -> None:
        self.send_response(302)
        self.send_header("Location", "/loop/b" if name == "a" else "/loop/a")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _listing(self, name: str, head: bool) -> None:
        page = (
            '<html><body><a href="./">this folder</a> <a href="/listing/">again</a> '
            '<a href="../">up</a> <a href="run.json">run.json</a></body></html>'
        )
        if name == "run.json":
            self._body(b'{"v": "1.0"}', head, kind="application/json")
            return
        self._body(page.encode(), head, kind="text/html")

    def _html(self, name: str, head: bool) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Connection", "close")
        self.end_headers()
        if head:
            return
        block = b"<p>" + b"x" * 65536 + b"</p>\n"
        while not self.server.owner.stopping.is_set():
            self.wfile.write(block)


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    owner: HostileServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that hangs up is what these tests do


class HostileServer:
    """The hostile server, started by `with`; `url` is its origin (`http://127.0.0.1:PORT`)."""

    def __init__(self, files: dict[str, bytes] | None = None, trickle: float = 0.2) -> None:
        self.files = dict(files or {})
        self.trickle = trickle
        self.line = LINE
        """The line /endless/ repeats."""
        self.redirects: list[str] = []
        self.requests: list[tuple[str, str]] = []
        self.sent = 0
        """Bytes of bodies sent from /norange/ and /huge/ (to a client that may have stopped
        reading them)."""
        self.stopping = threading.Event()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.owner = self
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> HostileServer:
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    def asked(self, prefix: str) -> list[tuple[str, str]]:
        """Return the requests whose path starts with `prefix`."""
        return [r for r in self.requests if r[1].startswith(prefix)]


def closed_port() -> int:
    """Return a port of 127.0.0.1 on which nothing listens (a connection is refused)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def served(files: dict[str, bytes] | None = None, **options: Any) -> Iterator[HostileServer]:
    """Yield a running hostile server (for fixtures)."""
    with HostileServer(files, **options) as server:
        yield server


def wait_for(condition: Any, timeout: float = 10.0) -> bool:
    """Return whether `condition()` became true within `timeout` seconds."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.05)
    return bool(condition())
