"""Files by URL: memory:// in this process, http:// from a server on 127.0.0.1 the tests start."""

from __future__ import annotations

import functools
import http.server
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import fsspec
import pytest

import evalreg
from evalreg import Registry
from evalreg.batch import parallel
from evalreg.batch.check import validate_paths
from evalreg.batch.walk import iter_files
from evalreg.cli import main
from evalreg.errors import MissingExtraError, ReadError
from evalreg.io import http as evalreg_http
from evalreg.io import remote
from evalreg.io.readers import line_ranges, read_items, read_range
from tests.conftest import EXAMPLES

DEMO = Path(__file__).parents[2] / "evalreg" / "examples"
INSTANCE = next((EXAMPLES / "eee.instance" / "valid").glob("*.jsonl"))


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as info:
        main(list(args))
    out, err = capsys.readouterr()
    return int(info.value.code or 0), out, err


def _lines(count: int) -> bytes:
    """Instance lines with an invalid one every 7th and a line cut short at the end."""
    records = [json.loads(x) for x in INSTANCE.read_text().splitlines() if x.strip()]
    lines = []
    for index in range(count):
        record = dict(records[index % len(records)], sample_id=f"s{index}")
        if index % 7 == 3:
            record["interaction_type"] = "chat"
        lines.append(json.dumps(record))
    return ("\n".join(lines) + '\n{"schema_version": "0.2.0", "sample_').encode()


# -- memory:// ----------------------------------------------------------------------------------


@pytest.fixture
def memory() -> Iterator[Any]:
    """An empty in-process store, emptied again afterwards."""
    fs = fsspec.filesystem("memory")
    fs.store.clear()
    fs.pseudo_dirs[:] = [""]
    yield fs
    fs.store.clear()
    fs.pseudo_dirs[:] = [""]


def _upload(fs: Any, folder: Path, root: str) -> None:
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            fs.pipe_file(f"{root}/{path.relative_to(folder).as_posix()}", path.read_bytes())


def test_memory_folder_is_walked_like_a_local_one(memory: Any, tmp_path: Path) -> None:
    local = tmp_path / "store"
    shutil.copytree(DEMO / "eee", local)
    (local / ".hidden").mkdir()
    (local / ".hidden" / "x.json").write_text("{}")
    (local / "notes.txt").write_text("not read")
    _upload(memory, local, "/store")
    walked = list(iter_files(["memory://store"]))
    expected = [p[len(str(local)) + 1 :] for p in iter_files([str(local)])]
    assert [w[len("memory://store/") :] for w in walked] == expected
    assert len(walked) == 3 and not any(".hidden" in w or w.endswith(".txt") for w in walked)
    globbed = list(iter_files(["memory://store/data/*/*/*/*.jsonl"]))
    assert globbed == [w for w in walked if w.endswith(".jsonl")]


def test_validate_and_detect_memory_urls_as_local_files(
    memory: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    local = tmp_path / "d"
    local.mkdir()
    (local / "a_samples.jsonl").write_bytes(_lines(40))
    shutil.copy(next((EXAMPLES / "eee.aggregate" / "valid").glob("*.json")), local / "agg.json")
    _upload(memory, local, "/d")
    for command in (["validate", "--no-rules"], ["detect"]):
        code, out, err = run(capsys, *command, str(local))
        code_url, out_url, err_url = run(capsys, *command, "memory://d")
        assert (code_url, out_url.replace("memory://d", str(local)), err_url) == (code, out, err)
        assert "memory://d/a_samples.jsonl:41: " in out_url
    assert "truncated last line" in run(capsys, "validate", "memory://d")[1]


def test_load_reads_a_url_and_migrates_its_records(memory: Any) -> None:
    memory.pipe_file("/runs/a.jsonl", INSTANCE.read_bytes())
    records = list(evalreg.load("memory://runs/a.jsonl", to="0.3.0"))
    assert records == list(evalreg.load(str(INSTANCE), to="0.3.0"))
    assert records and all(r["schema_version"] == "0.3.0" for r in records)
    with pytest.raises(ReadError, match=re.escape("memory://runs/none.jsonl")):
        list(evalreg.load("memory://runs/none.jsonl"))


def test_migrate_out_to_a_store_writes_what_a_local_out_writes(
    memory: Any, tmp_path: Path, registry: Registry, capsys: pytest.CaptureFixture[str]
) -> None:
    from evalreg.batch.migrate import migrate_paths
    from evalreg.batch.migrate_file import FileMigration, MigrateOptions

    _upload(memory, DEMO / "eee", "/in")
    code, out, _ = run(
        capsys, "migrate", str(DEMO / "eee"), "--to", "0.2.0", "--out", str(tmp_path / "o")
    )
    code_url, out_url, _ = run(
        capsys, "migrate", "memory://in", "--to", "0.2.0", "--out", str(tmp_path / "o3")
    )
    assert code == code_url == 0
    assert out_url.replace("memory://in", str(DEMO / "eee")) == out.replace("/o/", "/o3/")
    local = {
        p.relative_to(tmp_path / "o").as_posix(): p.read_bytes()
        for p in (tmp_path / "o").rglob("*")
        if p.is_file()
    }
    assert {
        p.relative_to(tmp_path / "o3").as_posix(): p.read_bytes()
        for p in (tmp_path / "o3").rglob("*")
        if p.is_file()
    } == local
    # A store as the output (memory:// through the library: the command line refuses it).
    for source, target in (("memory://in", "memory://o"), (str(DEMO / "eee"), "memory://o2")):
        options = MigrateOptions(to="0.2.0", out=target)
        files = [
            e for e in migrate_paths(registry, [source], options) if isinstance(e, FileMigration)
        ]
        assert [f.status for f in files] == ["written"] * 3
        folder = target[len("memory:/") :]
        stored = {n[len(folder) + 1 :]: memory.cat_file(n) for n in memory.find(folder)}
        assert stored == local and len(stored) == 3


def test_in_place_refuses_urls(memory: Any, capsys: pytest.CaptureFixture[str]) -> None:
    memory.pipe_file("/in/a.json", b"{}")
    code, _, err = run(capsys, "migrate", "memory://in", "--to", "latest", "--in-place")
    assert code == 2 and "--in-place rewrites local files only" in err
    assert memory.cat_file("/in/a.json") == b"{}"


def test_a_failed_write_to_a_store_leaves_no_object(memory: Any) -> None:
    with pytest.raises(RuntimeError), remote.url_writer("memory://w/a.jsonl") as stream:
        stream.write(b'{"a": 1}\n')
        raise RuntimeError("stop half way")
    assert not memory.exists("/w/a.jsonl")
    big = b"x" * (remote.SPOOL_BYTES + 10)  # past the spool: sent from a local file
    remote.write_url("memory://w/big.bin", big)
    with remote.url_writer("memory://w/a.jsonl.gz") as stream:
        stream.write(b"zipped\n")
    assert memory.cat_file("/w/big.bin") == big
    with pytest.raises(ReadError, match=re.escape("a.jsonl.gz:1: not valid JSON")):
        list(evalreg.load("memory://w/a.jsonl.gz"))  # decompressed: the line is no JSON


def test_gzip_by_url_has_the_bounds_of_local_gzip(
    memory: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import gzip

    from evalreg.io import streams

    monkeypatch.setattr(streams, "GZIP_RATIO_FREE", 1 << 16)
    memory.pipe_file("/z/bomb.jsonl.gz", gzip.compress(b" " * (8 << 20)))
    whole = gzip.compress(_lines(400))
    memory.pipe_file("/z/cut.jsonl.gz", whole[: len(whole) // 2])
    code, out, err = run(capsys, "validate", "memory://z/bomb.jsonl.gz")
    assert code == 1 and "gzip data decompresses to more than" in out + err
    code, out, err = run(capsys, "validate", "memory://z/cut.jsonl.gz")
    assert code == 1 and "truncated gzip data" in out + err


# -- missing protocol packages ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "extra"),
    [("s3://bucket/runs", "s3"), ("gs://bucket/x.json", "gs"), ("hf://datasets/o/n", "hf")],
)
def test_a_missing_protocol_package_is_one_line_naming_the_extra(url: str, extra: str) -> None:
    package = {"s3": "s3fs", "gs": "gcsfs", "hf": "huggingface_hub"}[extra]
    if importlib.util.find_spec(package) is not None:
        pytest.skip(f"{package} is installed here")
    done = subprocess.run(
        [sys.executable, "-m", "evalreg", "validate", url],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        f"evalreg: error: reading {url.split(':')[0]}:// URLs needs the {extra} extra: "
        f"pip install 'evalreg[{extra}]'"
    ]


def test_an_unknown_protocol_is_one_line() -> None:
    with pytest.raises(MissingExtraError, match="no installed package reads nosuch:// URLs"):
        list(iter_files(["nosuch://x/y"]))


# -- http:// from a server on 127.0.0.1 ---------------------------------------------------------


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Files of a folder, with single byte ranges (`Range: bytes=A-B`), as object stores serve."""

    def log_message(self, *args: Any) -> None:
        pass

    def send_head(self) -> Any:
        spec = self.headers.get("Range")
        path = self.translate_path(self.path)
        match = re.fullmatch(r"bytes=(\d+)-(\d*)", spec or "")
        if match is None or not os.path.isfile(path):
            return super().send_head()
        data = Path(path).read_bytes()
        start = int(match[1])
        end = min(int(match[2]) + 1 if match[2] else len(data), len(data))
        self.send_response(206)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Range", f"bytes {start}-{end - 1}/{len(data)}")
        self.send_header("Content-Length", str(end - start))
        self.end_headers()
        import io

        return io.BytesIO(data[start:end])


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A folder served at http://127.0.0.1:PORT, stopped after the test."""
    folder = tmp_path / "served"
    folder.mkdir()
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Handler, directory=str(folder))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", folder
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def test_validate_a_folder_over_http_as_the_same_folder_on_disk(
    served: tuple[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    base, folder = served
    shutil.copytree(DEMO, folder / "examples")
    (folder / "examples" / ".cache").mkdir()
    (folder / "examples" / ".cache" / "x.json").write_text("not json")
    local = run(capsys, "validate", str(folder / "examples"), "--jobs", "1")
    over_http = run(capsys, "validate", f"{base}/examples/", "--jobs", "1")
    assert local[0] == over_http[0] == 1
    assert over_http[1].replace(f"{base}/examples", str(folder / "examples")) == local[1]
    assert "3 problems" not in over_http[1] and "17 files" in over_http[1]


def test_http_errors_are_reported_per_file(
    served: tuple[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    base, folder = served
    (folder / "a.json").write_bytes(
        next((EXAMPLES / "eee.aggregate" / "valid").glob("*.json")).read_bytes()
    )
    code, out, err = run(capsys, "validate", f"{base}/a.json", f"{base}/missing.json", "--no-rules")
    assert code == 1 and err == ""
    assert f"{base}/missing.json: cannot open:" in out
    assert out.strip().endswith("2 files, 1 records: 1 valid, 0 invalid, 1 unreadable")


def test_ranges_of_a_large_file_over_http_match_the_file(served: tuple[str, Path]) -> None:
    base, folder = served
    data = _lines(300)
    (folder / "big.jsonl").write_bytes(data)
    url = f"{base}/big.jsonl"
    assert remote.size(url) == len(data)
    ranges = line_ranges(url, len(data), 5000)
    assert ranges == line_ranges(str(folder / "big.jsonl"), len(data), 5000) and len(ranges) > 5
    lines = [line for start, end in ranges for line in read_range(url, start, end)]
    assert lines == data.splitlines(keepends=True)
    assert [i.where for i in read_items(url)] == [
        i.where.replace(str(folder / "big.jsonl"), url)
        for i in read_items(str(folder / "big.jsonl"))
    ]


def test_jobs_on_http_ranges_report_as_one_process(
    served: tuple[str, Path], registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    base, folder = served
    (folder / "big.jsonl").write_bytes(_lines(400))
    monkeypatch.setattr(parallel, "POOL_MIN_BYTES", 0)
    monkeypatch.setattr(parallel, "RANGE_MIN_BYTES", 20_000)
    monkeypatch.setattr(parallel, "RANGE_MAX_BYTES", 20_000)
    _, units = parallel.plan([f"{base}/big.jsonl"], 2)
    assert units is not None and len(list(units)) > 3  # ranges, read by the workers over HTTP
    one = list(validate_paths(registry, [f"{base}/big.jsonl"], jobs=1))
    two = list(validate_paths(registry, [f"{base}/big.jsonl"], jobs=2))
    assert _problems(two) == _problems(one) and len(_problems(one)) == 58
    assert sum(getattr(c, "count", 1) for c in two) == sum(getattr(c, "count", 1) for c in one)


def _problems(checks: list[Any]) -> list[tuple[str, Any, str]]:
    return [(c.path, c.line, c.status) for c in checks if getattr(c, "status", "valid") != "valid"]


def test_http_is_read_only_so_migrate_out_fails_cleanly(
    served: tuple[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    base, folder = served
    shutil.copytree(DEMO / "eee", folder / "eee")
    code, out, err = run(capsys, "migrate", f"{base}/eee", "--to", "0.2.0", "--out", f"{base}/out")
    assert code == 1 and not (folder / "out").exists()
    assert out.count("left as it was: cannot write http://") == 3
    assert all(len(line) < 1000 for line in out.splitlines())
    assert (
        err.strip()
        == "3 files: 0 written, 0 unchanged, 3 failed; records: 0 migrated, 0 current, 0 failed"
    )


class _Stalling(http.server.BaseHTTPRequestHandler):
    """Answers the headers of a JSON file, then sends nothing more."""

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "100")
        self.end_headers()
        self.wfile.write(b'{"schema_version": ')
        self.wfile.flush()
        time.sleep(3)

    do_HEAD = do_GET


def test_a_server_that_stops_answering_is_a_read_error_not_a_hang(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(evalreg_http, "HTTP_TIMEOUT", 0.5)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Stalling)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/run.json"
        started = time.monotonic()
        code, out, err = run(capsys, "validate", url, "--no-rules")
        assert time.monotonic() - started < 2.5
    finally:
        server.shutdown()
        server.server_close()
    assert code == 1 and err == ""
    assert out.startswith(f"{url}: cannot read") or out.startswith(f"{url}: cannot open"), out


def test_file_urls_are_local_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = f"file://{DEMO / 'eee'}"
    code, out, _ = run(
        capsys, "migrate", source, "--to", "0.2.0", "--out", f"file://{tmp_path / 'u'}"
    )
    local = run(capsys, "migrate", str(DEMO / "eee"), "--to", "0.2.0", "--out", str(tmp_path / "p"))
    assert code == local[0] == 0 and out.replace(source, str(DEMO / "eee")) == local[1]
    files = sorted(
        p.relative_to(tmp_path / "u") for p in (tmp_path / "u").rglob("*") if p.is_file()
    )
    assert files and files == sorted(
        p.relative_to(tmp_path / "p") for p in (tmp_path / "p").rglob("*") if p.is_file()
    )
    assert all(
        (tmp_path / "u" / f).read_bytes() == (tmp_path / "p" / f).read_bytes() for f in files
    )
