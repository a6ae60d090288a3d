"""Servers that misbehave, served on 127.0.0.1 by `hostile_server`: nothing hangs, nothing is
read unbounded, nothing is asked twice, and every failure says why in one line.

Time limits are lowered (`HTTP_TIMEOUT` of 0.6 s, which a message rounds to "1 s") and byte limits
too, so that each case is fast.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from evalreg.batch import parallel
from evalreg.cli import main
from evalreg.io import http as evalreg_http
from evalreg.io import remote, streams
from evalreg.io.readers import line_ranges
from tests.conftest import EXAMPLES
from tests.io.hostile_server import HostileServer, closed_port

AGGREGATE = next((EXAMPLES / "eee.aggregate" / "valid").glob("*.json")).read_bytes()
INSTANCE = next((EXAMPLES / "eee.instance" / "valid").glob("*.jsonl"))


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as info:
        main(list(args))
    out, err = capsys.readouterr()
    return int(info.value.code or 0), out, err


def instance_lines(count: int) -> bytes:
    records = [json.loads(x) for x in INSTANCE.read_text().splitlines() if x.strip()]
    rows = [dict(records[i % len(records)], sample_id=f"s{i}") for i in range(count)]
    return b"".join(json.dumps(r).encode() + b"\n" for r in rows)


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[HostileServer]:
    monkeypatch.setattr(evalreg_http, "HTTP_TIMEOUT", 0.6)
    monkeypatch.setattr(evalreg_http, "_failures", {})
    with HostileServer({"a.json": AGGREGATE}, trickle=0.2) as hostile:
        yield hostile


def one_problem(out: str, url: str) -> str:
    """Return what the report says of `url` (one line), after checking the summary follows."""
    lines = out.strip().splitlines()
    assert lines[-1].startswith("2 files, ")
    (line,) = [x for x in lines if x.startswith(url + ": ")]
    return line[len(url) + 2 :]


# -- 6. one deadline per file, every reason said ---------------------------------------------------


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("/silent/run.json", "timed out after 1 s waiting for an answer"),
        pytest.param(
            "/stall/run.json", "timed out after 1 s reading the body", marks=pytest.mark.slow
        ),
        ("/trickle/run.json", "timed out after 1 s reading the body"),
        ("/reset/run.json", "connection reset by the server"),
    ],
    ids=["silent", "stall", "trickle", "reset"],
)
def test_a_failing_server_costs_one_deadline_and_says_why(
    server: HostileServer, capsys: pytest.CaptureFixture[str], path: str, reason: str
) -> None:
    url = server.url + path
    started = time.monotonic()
    code, out, err = run(capsys, "validate", "--no-rules", url, f"{server.url}/files/a.json")
    assert time.monotonic() - started < 3.5  # one deadline, not one per request
    assert code == 1 and err == ""
    assert one_problem(out, url).endswith(f": {reason}")
    gets = [r for r in server.asked(path) if r[0] == "GET"]
    assert len(gets) <= 1  # asked once (a HEAD may come first, for its size): never again


def test_a_refused_connection_and_a_redirect_loop_say_so(
    server: HostileServer, capsys: pytest.CaptureFixture[str]
) -> None:
    refused = f"http://127.0.0.1:{closed_port()}/run.json"
    loop = f"{server.url}/loop/a"
    code, out, _ = run(capsys, "validate", "--no-rules", refused, loop)
    assert code == 1
    assert out.startswith(f"{refused}: cannot open: connection refused\n")
    assert f"{loop}: cannot open: redirect loop: {loop} -> {server.url}/loop/b -> {loop}\n" in out
    assert len(server.asked("/loop/")) == 2


def test_a_folder_page_that_links_to_itself_is_read_once(
    server: HostileServer, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out, err = run(capsys, "validate", "--no-rules", f"{server.url}/listing/")
    assert err == "" and "Unclosed" not in out
    assert out.startswith(f"{server.url}/listing/run.json: ")
    assert out.strip().splitlines()[-1].startswith("1 files, 1 records")
    assert len([r for r in server.asked("/listing/") if r[1] == "/listing/"]) <= 2


# -- 8. redirects stay within the origin given, unless allowed -----------------------------------


def test_a_redirect_to_another_origin_is_refused_and_named(
    server: HostileServer, capsys: pytest.CaptureFixture[str]
) -> None:
    with HostileServer({"b.json": AGGREGATE}) as other:
        server.redirects[:] = [f"{other.url}/files/b.json", "http://10.255.255.1/x.json"]
        urls = [f"{server.url}/redirect/0/x.json", f"{server.url}/redirect/1/x.json"]
        code, out, _ = run(capsys, "validate", "--no-rules", *urls)
        assert other.requests == []
    assert code == 1
    for url, target in zip(urls, server.redirects, strict=True):
        assert f"{url}: cannot open: redirect to {target} refused: it leaves {server.url} " in out


@pytest.mark.parametrize("how", ["option", "environment", "any"])
def test_a_redirect_allowed_explicitly_is_followed(
    server: HostileServer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    how: str,
) -> None:
    with HostileServer({"b.json": AGGREGATE}) as other:
        server.redirects[:] = [f"{other.url}/files/b.json"]
        url = f"{server.url}/redirect/0/x.json"
        options = ["--allow-redirect", other.url] if how == "option" else []
        if how != "option":
            monkeypatch.setenv(
                evalreg_http.ALLOW_REDIRECTS, other.url if how == "environment" else "*"
            )
        code, out, _ = run(capsys, *options, "validate", "--no-rules", url)
        assert other.asked("/files/b.json")
    assert code == 0 and out.strip().endswith(
        "1 files, 1 records: 1 valid, 0 invalid, 0 unreadable"
    )


# -- 4. bounded bodies, ranges and folder pages ----------------------------------------------------


def test_a_document_larger_than_the_bound_is_refused_and_the_run_goes_on(
    server: HostileServer, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(streams, "MAX_DOCUMENT_BYTES", 1 << 20)
    url = f"{server.url}/huge/{64 << 20}.json"
    files = (url, f"{server.url}/files/a.json")
    code, out, _ = run(capsys, "validate", "--no-rules", "--jobs", "1", *files)
    assert code == 1
    assert one_problem(out, url).endswith(
        "larger than 1,048,576 bytes, the most evalreg reads from one URL"
    )
    assert f"{server.url}/files/a.json: " not in out  # valid, read after it
    time.sleep(0.2)
    assert server.sent < 16 << 20  # refused from its length: the body was not read


def test_an_endless_stream_stops_at_the_bound(
    server: HostileServer, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(streams, "MAX_URL_BYTES", 4 << 20)
    server.line = instance_lines(1)  # a valid record, quick to check
    url = f"{server.url}/endless/run.jsonl"
    files = (url, f"{server.url}/files/a.json")
    code, out, _ = run(capsys, "validate", "--no-rules", "--jobs", "1", *files)
    assert code == 1
    assert "larger than 4,194,304 bytes, the most evalreg reads from one URL" in out
    assert out.strip().splitlines()[-1].startswith("2 files, ")


def test_range_probes_stop_after_their_range(server: HostileServer, registry: object) -> None:
    data = instance_lines(20_000)
    server.files["big.jsonl"] = data
    url = f"{server.url}/norange/big.jsonl"
    with pytest.raises(OSError, match="the server does not answer byte ranges"):
        line_ranges(url, len(data), 100_000)
    time.sleep(0.2)
    assert server.sent < len(data) // 2  # the body was not read (what was sent sits in buffers)
    ranged = line_ranges(f"{server.url}/files/big.jsonl", len(data), 100_000)
    assert len(ranged) > 5 and ranged[-1][1] == len(data)


def test_jobs_over_a_server_without_ranges_read_the_file_whole(
    server: HostileServer, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(parallel, "POOL_MIN_BYTES", 0)
    monkeypatch.setattr(parallel, "RANGE_MIN_BYTES", 50_000)
    monkeypatch.setattr(parallel, "RANGE_MAX_BYTES", 50_000)
    server.files["big.jsonl"] = instance_lines(600)
    ranged = run(capsys, "validate", "--no-rules", "-j", "2", f"{server.url}/files/big.jsonl")
    whole = run(capsys, "validate", "--no-rules", "-j", "2", f"{server.url}/norange/big.jsonl")
    assert ranged[0] == whole[0] == 0
    assert whole[1].replace("/norange/", "/files/") == ranged[1]


def test_a_page_without_a_suffix_that_never_ends_is_no_folder(
    server: HostileServer, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(evalreg_http, "MAX_LISTING_BYTES", 1 << 20)
    monkeypatch.setattr(streams, "MAX_DOCUMENT_BYTES", 4 << 20)
    started = time.monotonic()
    assert not remote.isdir(f"{server.url}/html/page")
    code, _, err = run(capsys, "status", f"{server.url}/html/page")
    assert time.monotonic() - started < 30 and code == 0
    assert "1 unreadable" in err


def test_a_failed_server_is_not_asked_again_by_later_reads(server: HostileServer) -> None:
    url = f"{server.url}/silent/run.json"
    for _ in range(3):
        with pytest.raises(OSError, match="timed out after 1 s"):
            remote.read_url(url)
    assert len(server.asked("/silent/")) == 1


# -- MemoryError, anywhere: one line naming the file ----------------------------------------------


def test_a_document_the_memory_cannot_hold_is_one_line_and_the_run_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(streams, "_CHECKED_FROM", 1000)
    monkeypatch.setattr(streams, "memory_left", lambda: 5000)
    big, small = tmp_path / "big.json", tmp_path / "small.json"
    record = json.loads(AGGREGATE)
    record["padding"] = "x" * 3000
    big.write_text(json.dumps(record))
    small.write_bytes(AGGREGATE)
    message = f"out of memory reading it ({big.stat().st_size:,} bytes; a document read whole"
    code, out, _ = run(capsys, "validate", "--no-rules", "-j", "1", str(big), str(small))
    assert code == 1 and out.startswith(f"{big}: {message}")
    assert out.strip().splitlines()[-1] == "2 files, 1 records: 1 valid, 0 invalid, 1 unreadable"
    code, out, _ = run(
        capsys, "migrate", str(big), str(small), "--to", "latest", "--out", str(tmp_path / "o")
    )
    assert code == 1 and f"{big}: failed: 0 migrated, 0 current, 0 failed (left as it was: " in out
    assert (tmp_path / "o" / "small.json").exists() and not (tmp_path / "o" / "big.json").exists()


def test_a_file_read_in_pieces_is_read_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """One read(2) returns at most about 2 GiB: a larger file took that much for all of it."""
    import os

    read = os.read
    monkeypatch.setattr(os, "read", lambda fd, size: read(fd, min(size, 1000)))
    path = tmp_path / "run.json"
    path.write_bytes(AGGREGATE)
    assert len(AGGREGATE) > 2000
    code, out, _ = run(capsys, "validate", "--no-rules", str(path))
    assert code == 0 and "not valid JSON" not in out
