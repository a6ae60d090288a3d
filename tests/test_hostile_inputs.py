"""Hostile and broken input data: every class gets one located problem and a non-zero exit,
never a hang, a traceback, unbounded memory or a silently changed number."""

from __future__ import annotations

import gzip
import io
import json
import os
import sys
from pathlib import Path

import pytest

from evalreg.cli import main
from evalreg.io import readers, streams

DEMO = Path(__file__).parent.parent / "evalreg" / "examples" / "eee" / "data" / "gsm8k"
AGGREGATE = next(DEMO.rglob("*.json"))
SAMPLES = next(DEMO.rglob("*.jsonl"))


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as info:
        main(list(args))
    out, err = capsys.readouterr()
    return int(info.value.code or 0), out, err


def summary(out: str) -> str:
    return out.strip().splitlines()[-1]


# -- FIFOs, sockets and devices ----------------------------------------------------------------

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")


@needs_fifo
@pytest.mark.parametrize("command", ["validate", "detect"])
def test_a_fifo_in_a_folder_is_reported_not_opened(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    (tmp_path / "a.json").write_bytes(AGGREGATE.read_bytes())
    os.mkfifo(tmp_path / "b.json")  # no writer: opening it for reading would block forever
    code, out, _ = run(capsys, command, str(tmp_path))
    assert code == 1
    assert f"{tmp_path / 'b.json'}: " in out
    assert "not a regular file (a FIFO)" in out
    code, out, err = run(capsys, "status", str(tmp_path))  # counts what it cannot read
    assert code == 0 and "1 unreadable" in err


@needs_fifo
def test_a_fifo_named_on_the_command_line_and_migrated_in_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "b.jsonl"
    os.mkfifo(fifo)
    code, out, _ = run(capsys, "validate", str(fifo))
    assert code == 1 and "not a regular file (a FIFO)" in out
    code, out, _ = run(capsys, "migrate", str(tmp_path), "--to", "latest", "--in-place")
    assert code == 1 and "not a regular file (a FIFO)" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.jsonl"]  # no temporary file left


def test_a_character_device_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero here")
    with pytest.raises(OSError, match="character device"):
        streams.open_regular("/dev/zero")
    items = list(readers.read_items("/dev/zero", "jsonl"))
    assert len(items) == 1 and "not a regular file (a character device)" in (items[0].error or "")


# -- gzip: truncated data, bombs -----------------------------------------------------------------


def _truncated_jsonl(tmp_path: Path, copies: int = 600) -> tuple[Path, int]:
    """Write a `.jsonl.gz` cut part way; return it and the number of whole lines before the cut."""
    data = SAMPLES.read_bytes() * copies
    packed = gzip.compress(data)
    cut = packed[: len(packed) * 2 // 3]
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(cut)
    whole = zlib_prefix_lines(cut)
    return path, whole


def zlib_prefix_lines(packed: bytes) -> int:
    import zlib

    out = zlib.decompressobj(31).decompress(packed)
    return out.count(b"\n")


def test_a_truncated_jsonl_gz_counts_alike_in_every_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, whole = _truncated_jsonl(tmp_path)
    assert whole > 300  # several chunks of lines before the cut
    code, out, _ = run(capsys, "validate", str(path))
    assert code == 1
    assert "truncated gzip data" in out
    assert summary(out).startswith(f"1 files, {whole} records: {whole} valid, 0 invalid, 1 unr")
    code, out, err = run(capsys, "detect", str(path))
    assert code == 1
    assert f"{path}:{whole + 1}: unreadable: cannot read: truncated gzip data" in out
    assert summary(err).startswith(f"1 files, {whole} records: {whole} detected")
    records = list(readers.read_items(str(path)))
    assert sum(item.ok for item in records) == whole and not records[-1].ok


def test_a_truncated_json_gz_fails_its_file_and_the_run_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    packed = gzip.compress(AGGREGATE.read_bytes())
    (tmp_path / "a.json.gz").write_bytes(packed[: len(packed) // 2])
    (tmp_path / "b.json").write_bytes(AGGREGATE.read_bytes())
    code, out, err = run(capsys, "migrate", str(tmp_path), "--to", "latest", "--out", "o")
    assert code == 1, err
    assert "interrupted" not in err
    assert f"{tmp_path / 'a.json.gz'}: unreadable: cannot read: truncated gzip data" in out
    assert f"{tmp_path / 'b.json'}: written" in out


def test_a_gzip_bomb_is_refused_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(streams, "GZIP_RATIO_FREE", 1 << 20)
    bomb = tmp_path / "bomb.jsonl.gz"
    with gzip.open(bomb, "wb") as stream:
        for _ in range(40):
            stream.write(b" " * (1 << 20))  # 40 MiB of blanks, 40 KB compressed
    assert bomb.stat().st_size * streams.MAX_GZIP_RATIO < 40 << 20
    code, out, _ = run(capsys, "validate", str(bomb))
    assert code == 1
    assert "gzip data decompresses to more than" in out
    assert f"{streams.MAX_GZIP_RATIO} times the compressed size" in out
    code, out, _ = run(capsys, "detect", str(bomb))
    assert code == 1 and "gzip data decompresses to more than" in out


def test_gzip_members_padding_and_garbage(tmp_path: Path) -> None:
    lines = [json.dumps({"n": n}).encode() + b"\n" for n in range(3)]
    path = tmp_path / "m.jsonl.gz"
    path.write_bytes(gzip.compress(lines[0]) + b"\0\0" + gzip.compress(b"".join(lines[1:])))
    assert [item.record for item in readers.read_items(str(path))] == [
        {"n": 0},
        {"n": 1},
        {"n": 2},
    ]
    path.write_bytes(gzip.compress(lines[0]) + b"not gzip")
    assert "not valid gzip data" in (list(readers.read_items(str(path)))[-1].error or "")
    empty = tmp_path / "e.json.gz"
    empty.write_bytes(b"")
    assert [item.error for item in readers.read_items(str(empty))] == ["empty file"]


# -- long lines ----------------------------------------------------------------------------------


def test_read_blocks_joins_a_long_line_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(readers, "BLOCK_BYTES", 10)
    data = b"a" * 95 + b"\nbb\n" + b"c" * 33
    blocks = list(readers.read_blocks(io.BytesIO(data)))
    lines = [line for block in blocks for line in block.lines]
    assert lines == [b"a" * 95, b"bb", b"c" * 33]
    assert [block.ended for block in blocks][-1] is False
    assert list(readers.read_blocks(io.BytesIO(b"x\n"))) == [readers.Block([b"x"])]


# -- standard input ------------------------------------------------------------------------------


def _stdin(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))


def test_malformed_json_on_standard_input_is_one_problem(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    text = json.dumps(json.loads(AGGREGATE.read_bytes()), indent=2).encode()
    _stdin(monkeypatch, text[: len(text) // 2])
    code, out, _ = run(capsys, "validate", "-")
    assert code == 1
    assert out.splitlines()[0].startswith("-: not valid JSON")
    assert summary(out) == "1 files, 0 records: 0 valid, 0 invalid, 1 unreadable"


def test_jsonl_on_standard_input_is_still_read_line_by_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = SAMPLES.read_bytes().splitlines(keepends=True)
    _stdin(monkeypatch, b"{broken\n" + b"".join(lines))
    code, out, _ = run(capsys, "validate", "-")
    assert code == 1
    assert out.splitlines()[0].startswith("-:1: not valid JSON")
    assert summary(out).startswith(f"1 files, {len(lines)} records")


# -- version strings -----------------------------------------------------------------------------

LONG_VERSION = "1" * 5000


def test_a_huge_schema_version_is_an_invalid_record(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = json.loads(AGGREGATE.read_bytes())
    record["schema_version"] = LONG_VERSION
    path = tmp_path / "v.json"
    path.write_text(json.dumps(record))
    (tmp_path / "w.json").write_bytes(AGGREGATE.read_bytes())
    code, out, _ = run(capsys, "validate", str(tmp_path))
    assert code == 1
    assert f"{path}: /schema_version: " in out and "5,000 characters" in out
    assert LONG_VERSION not in out
    assert summary(out).startswith("2 files, 2 records: 1 valid, 1 invalid")
    code, out, _ = run(capsys, "migrate", str(tmp_path), "--to", "latest", "--dry-run")
    assert code == 1 and "5,000 characters" in out and LONG_VERSION not in out


def test_a_huge_version_in_python_is_reported_not_raised(registry: object) -> None:
    from evalreg import Registry

    assert isinstance(registry, Registry)
    record = json.loads(AGGREGATE.read_bytes())
    record["schema_version"] = LONG_VERSION
    result = registry.migrate(record, "latest")
    assert not result.ok and "5,000 characters" in (result.error or "")


@pytest.mark.parametrize(
    "args",
    [
        ["migrate", str(AGGREGATE), "--dry-run", "--to", LONG_VERSION],
        ["show", f"eee.aggregate@{LONG_VERSION}"],
        ["validate", str(AGGREGATE), "--family", "eee.aggregate", "--version", LONG_VERSION],
    ],
)
def test_a_huge_version_option_is_a_one_line_usage_error(
    capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    code, out, err = run(capsys, *args)
    assert code in (1, 2)
    message = (out + err).strip()
    assert "5,000 characters" in message and LONG_VERSION not in message
    assert "Traceback" not in message and "internal error" not in message
