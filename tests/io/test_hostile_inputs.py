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

DEMO = Path(__file__).parents[2] / "evalreg" / "examples" / "eee" / "data" / "gsm8k"
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
    source = tmp_path / "in"
    source.mkdir()
    packed = gzip.compress(AGGREGATE.read_bytes())
    (source / "a.json.gz").write_bytes(packed[: len(packed) // 2])
    (source / "b.json").write_bytes(AGGREGATE.read_bytes())
    out_dir = str(tmp_path / "out")
    code, out, err = run(capsys, "migrate", str(source), "--to", "latest", "--out", out_dir)
    assert code == 1, err
    assert "interrupted" not in err
    assert f"{source / 'a.json.gz'}: unreadable: cannot read: truncated gzip data" in out
    assert f"{source / 'b.json'}: written" in out


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


# -- YAML alias bombs and recursion --------------------------------------------------------------


def _laughs(levels: int, width: int = 9) -> str:
    lines = ["a0: &a0 [" + ", ".join(['"lol"'] * width) + "]"]
    for level in range(1, levels):
        refs = ", ".join([f"*a{level - 1}"] * width)
        lines.append(f"a{level}: &a{level} [{refs}]")
    return "\n".join([*lines, 'schema_version: "0.2.0"', f"evaluation_id: *a{levels - 1}", ""])


@pytest.mark.parametrize("command", ["validate", "detect"])
def test_a_yaml_alias_bomb_is_refused_before_it_grows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(_laughs(9))  # 600 bytes standing for 9 ** 9 (387 million) strings
    assert bomb.stat().st_size < 1000
    code, out, _ = run(capsys, command, str(bomb))
    assert code == 1
    assert f"{bomb}: " in out and "the document stands for more than 1,000,000 nodes" in out
    assert "(line " in out


def test_a_yaml_bomb_in_migrate_leaves_the_file_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(_laughs(9))
    code, out, _ = run(capsys, "migrate", str(bomb), "--to", "latest", "--in-place")
    assert code == 1 and "more than 1,000,000 nodes" in out
    assert bomb.read_text() == _laughs(9)


def test_yaml_aliases_within_the_bounds_are_read() -> None:
    from evalreg.io.yamlstrict import MAX_YAML_NODES

    small = _laughs(3)  # 9 ** 3 strings
    items = list(readers.read_yaml(small.encode(), "s.yaml"))
    assert items[0].ok and len(items[0].record["evaluation_id"]) == 9
    assert MAX_YAML_NODES > 9**3


def test_yaml_aliases_too_deep_or_recursive(tmp_path: Path) -> None:
    from evalreg.io import yamlstrict

    limit = yamlstrict.MAX_YAML_DEPTH
    chain = ["a0: &a0 [1]"] + [f"a{n}: &a{n} [*a{n - 1}]" for n in range(1, limit + 5)]
    items = list(readers.read_yaml("\n".join(chain).encode(), "deep.yaml"))
    assert items[0].error is not None
    assert f"nested more than {limit} levels deep" in items[0].error
    within = "x: " + "[" * (limit - 1) + "]" * (limit - 1) + "\n"  # the mapping is a level
    assert next(iter(readers.read_yaml(within.encode(), "ok.yaml"))).ok
    beyond = "x: " + "[" * limit + "]" * limit + "\n"
    assert "(line 1, column" in (
        next(iter(readers.read_yaml(beyond.encode(), "no.yaml"))).error or ""
    )
    items = list(readers.read_yaml(b"a: &a [1, *a]\n", "r.yaml"))
    assert items[0].error == "not valid YAML: found an alias to a node that contains it " + (
        "(line 1, column 4)"
    )


def test_duplicate_keys_stay_refused_in_yaml_and_json(tmp_path: Path) -> None:
    yaml_item = next(readers.read_yaml(b"a: 1\nb: 2\na: 3\n", "d.yaml"))
    assert "duplicate key 'a'" in (yaml_item.error or "")
    json_item = next(readers.read_json(b'{"a": {"b": 1, "b": 2}}', "d.json"))
    assert "duplicate key 'b' in the object at /a" in (json_item.error or "")


def test_deeply_nested_json_is_one_located_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from evalreg.io.codec import MAX_DEPTH

    deep = tmp_path / "deep.jsonl"
    lines = [
        '{"ok": 1}',
        "[" * 100_000 + "]" * 100_000,
        '{"a": ' * MAX_DEPTH + "1" + "}" * MAX_DEPTH,
    ]
    lines.append('{"b": ' * (MAX_DEPTH + 1) + "1" + "}" * (MAX_DEPTH + 1))
    lines.append("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1))
    deep.write_text("\n".join(lines) + "\n")
    for command in ("validate", "detect"):
        code, out, err = run(capsys, command, str(deep))
        assert code == 1
        for line in (2, 4, 5):
            assert f"{deep}:{line}: " in out
        assert out.count(f"nested more than {MAX_DEPTH} levels deep") == 3
        assert f"{deep}:3: not valid" not in out
        assert "Traceback" not in out + err and "RecursionError" not in out + err


@pytest.mark.parametrize("command", [["validate"], ["migrate", "--to", "latest", "--dry-run"]])
def test_records_nested_to_the_limit_are_checked_without_exhausting_the_stack(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    from evalreg.io.codec import MAX_DEPTH

    line = SAMPLES.read_bytes().splitlines()[0][:-1]
    inner = MAX_DEPTH - 1  # the record itself is the first level
    deep_list = b"[" * inner + b"1" + b"]" * inner
    deep_object = b'{"a": ' * (inner - 1) + b"1" + b"}" * (inner - 1)
    path = tmp_path / "deep.jsonl"
    path.write_bytes(
        line
        + b', "evaluation_name": '
        + deep_list
        + b"}\n"
        + line
        + b', "metadata": {"x": '
        + deep_object
        + b"}}\n"
    )
    code, out, err = run(capsys, command[0], str(path), *command[1:])
    assert code == 1, out + err
    assert "internal error" not in out + err and "nested more than" not in out
    assert f"{path}:1: " in out


# -- file names that are not text ----------------------------------------------------------------

needs_bytes_names = pytest.mark.skipif(
    sys.platform in ("win32", "darwin"), reason="names must be arbitrary bytes"
)


@pytest.fixture
def odd_names(tmp_path: Path) -> Path:
    folder = tmp_path / "d"
    folder.mkdir()
    data = AGGREGATE.read_bytes()
    for name in (b"bad\xff.json", b"nl\nx.json", b"z.json"):
        with open(os.path.join(os.fsencode(folder), name), "wb") as stream:
            stream.write(data)
    return folder


def _run_with_strict_stdout(argv: list[str]) -> tuple[int, str]:
    """Run the command line with a standard output that refuses what is not UTF-8, as under a
    UTF-8 locale; return the exit code and the output."""
    strict = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sys, "stdout", strict)
        with pytest.raises(SystemExit) as info:
            main(argv)
        strict.flush()
        out = strict.buffer.getvalue().decode("utf-8")  # type: ignore[attr-defined]
    return int(info.value.code or 0), out


@needs_bytes_names
@pytest.mark.parametrize(
    "args",
    [
        ["detect"],
        ["validate", "--no-rules"],
        ["status", "--require-latest"],
        ["migrate", "--to", "latest", "--dry-run"],
    ],
)
def test_odd_file_names_are_escaped_in_text_output(odd_names: Path, args: list[str]) -> None:
    if args[0] == "validate":  # it prints the records that fail
        for path in os.listdir(os.fsencode(odd_names)):
            with open(os.path.join(os.fsencode(odd_names), path), "wb") as stream:
                stream.write(b"{}")
    code, out = _run_with_strict_stdout([args[0], str(odd_names), *args[1:]])
    assert code in (0, 1)
    assert f"{odd_names}/bad\\xff.json" in out
    assert f"{odd_names}/nl\\nx.json" in out
    # One line per file; status adds the one line of the command that migrates them, and
    # migrate names the first record of each distinct note at the end of its line.
    fix = [line for line in out.splitlines() if line.startswith("  evalreg migrate ")]
    assert len(fix) == (1 if args[0] == "status" else 0)
    lines = [line for line in out.splitlines() if line.startswith(str(odd_names))]
    assert len(lines) == 3
    others = [line for line in out.splitlines() if str(odd_names) in line]
    others = [line for line in others if line not in lines and line not in fix]
    assert all(line.endswith("]") for line in others)


@needs_bytes_names
@pytest.mark.parametrize(
    "args",
    [
        ["validate", "--format", "json"],
        ["migrate", "--to", "latest", "--dry-run", "--format", "json"],
        ["status", "--format", "json", "--require-latest"],
        ["detect", "--format", "json"],
    ],
)
def test_odd_file_names_keep_json_output_valid(odd_names: Path, args: list[str]) -> None:
    code, out = _run_with_strict_stdout([args[0], str(odd_names), *args[1:]])
    assert code in (0, 1)
    text = out.strip()
    documents = (
        [json.loads(text)] if text.startswith("{\n") else list(map(json.loads, text.splitlines()))
    )
    found = json.dumps(documents)
    assert "bad\\\\xff.json" in found and "nl\\nx.json" in found


@needs_bytes_names
def test_a_run_goes_past_a_name_that_is_not_utf8(odd_names: Path) -> None:
    checks = list(readers.read_items(os.path.join(str(odd_names), os.fsdecode(b"bad\xff.json"))))
    assert checks[0].ok


# -- numbers a double cannot hold ----------------------------------------------------------------


def test_migrate_keeps_every_number_as_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = SAMPLES.read_bytes().splitlines()[0]
    numbers = {"tiny": "1e-400", "long": "0.1000000000000000055511151231257827", "plain": "0.25"}
    extra = ", ".join(f'"{key}": {text}' for key, text in numbers.items())
    source = tmp_path / "in"
    source.mkdir()
    (source / "n.jsonl").write_bytes(line[:-1] + b', "metadata": {' + extra.encode() + b"}}\n")
    code, out, err = run(
        capsys, "migrate", str(source), "--to", "latest", "--out", str(tmp_path / "o")
    )
    assert code == 0, out + err
    written = (tmp_path / "o" / "n.jsonl").read_text()
    for text in numbers.values():
        assert f'"{text}"' in written  # metadata holds strings from 0.2.1 on: the text as written


def test_a_json_document_keeps_long_numbers_through_a_migration(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = AGGREGATE.read_text()
    assert '"score": 0.' in text or '"score":' in text
    record = json.loads(text)
    record["evaluation_results"][0]["score_details"]["score"] = 0.5
    data = json.dumps(record, indent=2).replace("0.5", "0.50000000000000000000000000001", 1)
    (tmp_path / "a.json").write_text(data)
    code, out, err = run(
        capsys, "migrate", str(tmp_path / "a.json"), "--to", "latest", "--in-place"
    )
    assert code == 0, out + err
    assert "0.50000000000000000000000000001" in (tmp_path / "a.json").read_text()


def test_integers_beyond_the_digit_limit_are_one_located_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from evalreg.io.codec import MAX_INT_DIGITS, loads

    assert loads(b"[" + b"7" * MAX_INT_DIGITS + b"]") == [int("7" * MAX_INT_DIGITS)]
    path = tmp_path / "big.jsonl"
    path.write_bytes(b'{"a": 1}\n{"n": ' + b"7" * (MAX_INT_DIGITS + 1) + b"}\n")
    code, out, _ = run(capsys, "validate", str(path))
    assert code == 1
    assert f"{path}:2: not valid JSON: an integer has more than {MAX_INT_DIGITS:,} digits" in out


# -- large inputs (benchmarks/reliability_inputs.py, at a small scale) ---------------------------


@pytest.mark.slow
def test_reliability_benchmark_passes_its_bounds_at_a_small_scale(tmp_path: Path) -> None:
    import subprocess

    script = Path(__file__).parents[2] / "benchmarks" / "reliability_inputs.py"
    done = subprocess.run(
        [sys.executable, str(script), "--scale", "0.1", "--dir", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("PASS") == 4 and "FAIL" not in done.stdout
