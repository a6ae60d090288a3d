from __future__ import annotations

import errno
import gzip
import io
import os
import sys
from pathlib import Path

import pytest

from evalreg.io import streams
from evalreg.io.readers import file_kind, read_items, read_whole
from evalreg.io.streams import InputError


def _write(path: Path, data: bytes | str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return str(path)


def test_json_file_is_one_record(tmp_path: Path) -> None:
    [item] = read_items(_write(tmp_path / "a.json", '{"a": 1}\n'))
    assert item.ok and item.record == {"a": 1} and item.line is None


def test_jsonl_lines_carry_exact_line_numbers(tmp_path: Path) -> None:
    path = _write(tmp_path / "a.jsonl", '{"n": 1}\n\n{"n": 3}\n{"n": \n{"n": 5}\n')
    items = list(read_items(path))
    assert [(i.line, i.ok) for i in items] == [(1, True), (3, True), (4, False), (5, True)]
    assert items[2].error is not None and items[2].error.startswith("not valid JSON")
    assert items[1].raw == b'{"n": 3}\n'


def test_truncated_last_line_is_named(tmp_path: Path) -> None:
    items = list(read_items(_write(tmp_path / "a.jsonl", '{"n": 1}\n{"n": 2, "tex')))
    assert items[0].ok
    assert items[1].line == 2
    assert items[1].error is not None and items[1].error.startswith("truncated last line")


def test_a_last_line_without_newline_that_parses_is_fine(tmp_path: Path) -> None:
    items = list(read_items(_write(tmp_path / "a.jsonl", '{"n": 1}\n{"n": 2}')))
    assert [i.record for i in items] == [{"n": 1}, {"n": 2}]


@pytest.mark.parametrize("name", ["a.json", "a.jsonl", "a.yaml"])
def test_empty_files_are_unreadable(tmp_path: Path, name: str) -> None:
    [item] = read_items(_write(tmp_path / name, ""))
    assert item.error == "empty file"


def test_bad_utf8_is_reported_with_its_byte(tmp_path: Path) -> None:
    [item] = read_items(_write(tmp_path / "a.yaml", b"a: \xff\n"))
    assert item.error == "not valid UTF-8 (byte 3)"
    [item] = read_items(_write(tmp_path / "a.jsonl", b'{"a": "\xff"}\n'))
    assert (item.line, item.error) == (1, "not valid UTF-8 (byte 7)")
    [item] = read_items(_write(tmp_path / "b.json", b'{"ok": "\xc3\xa9", "a": "\xc3"}'))
    assert item.error == "not valid UTF-8 (byte 19)"


def test_yaml_is_loaded_safely(tmp_path: Path) -> None:
    [item] = read_items(
        _write(tmp_path / "a.yaml", "a: !!python/object/apply:os.system ['true']\n")
    )
    assert not item.ok and item.error is not None and item.error.startswith("not valid YAML")
    [item] = read_items(_write(tmp_path / "b.yml", "a: 1\nb: [x, y]\n"))
    assert item.record == {"a": 1, "b": ["x", "y"]}


def test_gzip_variants(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl.gz"
    path.write_bytes(gzip.compress(b'{"n": 1}\n{"n": 2}\n'))
    assert [i.record["n"] for i in read_items(str(path))] == [1, 2]
    broken = tmp_path / "b.json.gz"
    broken.write_bytes(b"not gzip")
    [item] = read_items(str(broken))
    assert item.error is not None and item.error.startswith("cannot read")


def test_standard_input(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b'{"a": 1}\n{"a": 2}\n')))
    assert [i.record for i in read_items("-")] == [{"a": 1}, {"a": 2}]
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b'{\n "a": 1\n}\n')))
    assert [i.record for i in read_items("-")] == [{"a": 1}]


def test_missing_file_is_an_item_not_an_exception(tmp_path: Path) -> None:
    [item] = read_items(str(tmp_path / "nope.json"))
    assert item.error is not None and item.error.startswith("cannot open")


def test_file_kinds() -> None:
    assert file_kind("x/run.JSONL.gz") == "jsonl"
    assert file_kind("a.yml") == "yaml"
    assert file_kind("a.txt") is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a: 1\nb: {x: 1, x: 2}\n", "found duplicate key 'x' (line 2, column 11)"),
        ("a: 1\na: 1\n", "found duplicate key 'a' (line 2, column 1)"),
        ("a: .nan\n", "found a non-finite number '.nan' (line 1, column 4)"),
        ("a: [1, -.inf]\n", "found a non-finite number '-.inf' (line 1, column 8)"),
    ],
)
def test_yaml_refuses_what_json_refuses(tmp_path: Path, text: str, message: str) -> None:
    [item] = read_items(_write(tmp_path / "a.yaml", text))
    assert item.error is not None and item.error.startswith("not valid YAML: ")
    assert item.error.endswith(message)


def test_yaml_merge_keys_may_be_overridden(tmp_path: Path) -> None:
    text = "base: &b {x: 1, y: 2}\nc:\n  <<: *b\n  x: 3\n"
    [item] = read_items(_write(tmp_path / "a.yaml", text))
    assert item.record == {"base": {"x": 1, "y": 2}, "c": {"x": 3, "y": 2}}


def test_a_duplicate_key_in_json_is_a_located_problem_of_its_line(tmp_path: Path) -> None:
    lines = b'{"a": 1}\n{"a": 1, "b": {"c": 1, "c": 2}}\n{"a": 3}\n'
    items = list(read_items(_write(tmp_path / "a.jsonl", lines)))
    assert [i.ok for i in items] == [True, False, True]
    assert items[1].line == 2
    assert items[1].error == "not valid JSON: duplicate key 'c' in the object at /b"
    [item] = read_items(_write(tmp_path / "a.json", b'{"a": 1, "a": 2}'))
    assert item.error == "not valid JSON: duplicate key 'a' in the top-level object"


def test_gzip_files_are_read_in_pieces_and_cuts_are_located(tmp_path: Path) -> None:
    from evalreg.io.readers import open_binary

    data = b"".join(b'{"n": %d}\n' % n for n in range(50_000))
    path = tmp_path / "a.jsonl.gz"
    path.write_bytes(gzip.compress(data))
    with open_binary(path) as stream:
        assert stream.read() == data
    packed = gzip.compress(data)
    path.write_bytes(packed[:-20])  # the end marker and some data missing
    items = list(read_items(str(path)))
    assert all(item.ok for item in items[:-1])
    assert items[-1].line == len(items)
    assert (items[-1].error or "").startswith("cannot read: truncated gzip data")


def test_sniffing_standard_input(tmp_path: Path) -> None:
    from evalreg.io.readers import sniff_kind

    assert sniff_kind(b'{"a": 1}') == "json"
    assert sniff_kind(b'{"a": 1}\n{"a": 2}\n') == "jsonl"
    assert sniff_kind(b'{\n  "a": 1,\n  "b": [1,\n') == "json"  # pretty-printed, cut off
    assert sniff_kind(b'{"a": 1, "a": 2}') == "json"  # one document naming a key twice
    assert sniff_kind(b'{"a": \n{"b": 2}\n') == "jsonl"  # a broken first line of JSONL
    assert sniff_kind(b"[1,\n2") == "json"


def test_read_whole_reads_a_file_whole_and_refuses_a_folder(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    path.write_bytes(b'{"a": 1}' * 1000)
    assert read_whole(str(path)) == b'{"a": 1}' * 1000
    (tmp_path / "empty.json").write_bytes(b"")
    assert read_whole(str(tmp_path / "empty.json")) == b""
    with pytest.raises(InputError, match="not a regular file"):
        read_whole(str(tmp_path))


def test_read_whole_reads_on_where_a_regular_file_would_block(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file system that honours O_NONBLOCK for regular files (`BlockingIOError` on a read)
    gets the file switched to blocking reads and read again, not an error."""
    path = tmp_path / "run.json"
    path.write_bytes(b"x" * 5000)
    real, refused = os.read, []

    def read(fd: int, size: int) -> bytes:
        if not refused and os.get_blocking(fd) is False:
            refused.append(fd)
            raise BlockingIOError(errno.EAGAIN, "Resource temporarily unavailable")
        return real(fd, size)

    monkeypatch.setattr(streams.os, "read", read)
    assert read_whole(str(path)) == b"x" * 5000
    assert refused


def test_read_whole_reads_a_file_that_grew_to_its_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "run.json"
    path.write_bytes(b"y" * 100)
    real = os.fstat

    def fstat(fd: int) -> os.stat_result:  # the size as it was, before the file grew
        found = real(fd)
        fields = list(found)
        fields[6] = 40  # st_size
        return os.stat_result(fields)

    monkeypatch.setattr(streams.os, "fstat", fstat)
    assert read_whole(str(path)) == b"y" * 100
