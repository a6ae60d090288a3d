"""Readers: turn files into records, one `Item` per record, parse failures included as values.

Supported: `.json` (one document), `.jsonl` (one record a line, streamed), `.yaml` / `.yml`
(safe loading; one record per YAML document), each optionally gzip-compressed (`.gz`), and
`-` for standard input. Walking directories for the files to read is `evalreg.batch.walk`'s part.
A path that is a URL (`s3://...`) is opened through `evalreg.io.remote`; local paths never are.
"""

from __future__ import annotations

import io
import itertools
import os
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import IO, Any, Literal

from evalreg.errors import MissingExtraError
from evalreg.io import remote, streams
from evalreg.io.codec import DecodeError, DuplicateKeyError, TooLargeError, loads, loads_lines
from evalreg.io.streams import (
    check_memory,
    open_gzip,
    open_regular,
    open_regular_stat,
    read_all,
)

Kind = Literal["json", "jsonl", "yaml"]
STDIN = "-"
SUFFIXES: dict[str, Kind] = {".json": "json", ".jsonl": "jsonl", ".yaml": "yaml", ".yml": "yaml"}
"""The file name suffixes readers know (before any `.gz`), and the kind of each."""


@dataclass(frozen=True)
class Item:
    """One record read from a file, or the reason it could not be read."""

    path: str
    line: int | None
    """1-based line of the record (JSONL), or None for a whole-document file."""
    record: Any = None
    error: str | None = None
    raw: bytes | None = None
    """The record's own bytes (JSONL lines), so an unchanged record can be written back as is."""

    @property
    def ok(self) -> bool:
        """Return whether the record was read."""
        return self.error is None

    @property
    def where(self) -> str:
        """Return `path:line` (or just `path`)."""
        return self.path if self.line is None else f"{self.path}:{self.line}"


def file_kind(path: str | os.PathLike[str]) -> Kind | None:
    """Return the kind of a file from its name (`.gz` ignored), or None for another suffix."""
    name = os.fspath(path).lower()
    if name.endswith(".gz"):
        name = name[:-3]
    return SUFFIXES.get(os.path.splitext(name)[1])  # splitext looks at the last part only


def is_gzip(path: str | os.PathLike[str]) -> bool:
    """Return whether a file name says it is gzip-compressed."""
    return str(path).lower().endswith(".gz")


STREAM_BUFFER = 1 << 16
"""The read buffer of a file read line by line: iterating a JSONL file costs a third of what it
does with the default buffer (a few KB), for fewer system calls."""


def open_binary(path: str | os.PathLike[str]) -> IO[bytes]:
    """Open a file for binary reading, decompressing `.gz` files; `-` is standard input.

    Only regular files are opened (a FIFO or device is refused, never read), and gzip data is
    decompressed within the bounds of `evalreg.io.streams`.

    Raises:
        OSError: the file cannot be opened, or is not a regular file.
    """
    if str(path) == STDIN:
        return sys.stdin.buffer
    if remote.is_url(path):
        return remote.open_url(str(path))
    if is_gzip(path):
        return open_gzip(path, STREAM_BUFFER)
    return open_regular(path, buffering=STREAM_BUFFER)


def _describe(err: Exception) -> str:
    if isinstance(err, UnicodeDecodeError):
        return f"not valid UTF-8 (byte {err.start})"
    if isinstance(err, TooLargeError):
        return f"cannot read: {err}"
    text = str(err).splitlines()[0] if str(err) else type(err).__name__
    return f"not valid JSON: {text}"


def blank(line: bytes) -> bool:
    """Return whether a line holds nothing but white space (without copying it, as `strip`
    would: a line may be as large as the memory available)."""
    return not line or line.isspace()


def jsonl_item(path: str, line_no: int, line: bytes) -> Item | None:
    """Return the item of one JSONL line (None for a blank line)."""
    if blank(line):
        return None
    try:
        record = loads(line)
    except DecodeError as err:
        message = _describe(err)
        if not line.endswith(b"\n"):
            message = f"truncated last line ({message})"
        return Item(path, line_no, error=message, raw=line)
    return Item(path, line_no, record=record, raw=line)


JSONL_CHUNK = 256
"""Lines parsed together (`loads_lines`)."""


def jsonl_items(path: str, first: int, lines: Sequence[bytes]) -> Iterator[Item]:
    """Yield the items of consecutive JSONL lines (the first is line `first`), blanks skipped.

    A line keeps its line end, if it had one: a last line without it that does not parse is
    reported as truncated.
    """
    values = loads_lines([line for line in lines if not blank(line)])
    taken = iter(values)
    for line_no, line in enumerate(lines, first):
        if blank(line):
            continue
        value = next(taken)
        if isinstance(value, ValueError):
            message = _describe(value)
            if not line.endswith(b"\n"):
                message = f"truncated last line ({message})"
            yield Item(path, line_no, error=message, raw=line)
        else:
            yield Item(path, line_no, record=value, raw=line)


def read_jsonl(stream: IO[bytes], path: str) -> Iterator[Item]:
    """Yield one item per non-blank line of a JSONL stream, in constant memory.

    A stream that fails part way (gzip data cut off) yields the lines before the failure, then
    an item for the line where it failed.
    """
    line_no = 0
    chunk: list[bytes] = []
    try:
        for line_no, line in enumerate(stream, 1):
            chunk.append(line)
            if len(chunk) == JSONL_CHUNK:
                yield from jsonl_items(path, line_no - len(chunk) + 1, chunk)
                chunk = []
    except (OSError, EOFError) as err:
        if chunk:
            yield from jsonl_items(path, line_no - len(chunk) + 1, chunk)
        yield Item(path, line_no + 1, error=f"cannot read: {err}")
        return
    if chunk:
        yield from jsonl_items(path, line_no - len(chunk) + 1, chunk)
    if line_no == 0:
        yield empty_file(path)


def empty_file(path: str) -> Item:
    """Return the item that reports a file without a single line."""
    return Item(path, None, error="empty file")


def cannot_read(path: str, err: OSError | EOFError) -> Item:
    """Return the item that reports a file failing part way through reading."""
    return Item(path, None, error=f"cannot read: {err}")


def read_range(path: str, start: int, end: int) -> Iterator[bytes]:
    """Yield the lines of the bytes `[start, end)` of a plain file; `start` begins a line.

    Raises:
        OSError: the file cannot be opened or read.
    """
    yield from io.BytesIO(read_bytes(path, start, end))


def read_bytes(path: str, start: int, end: int) -> bytes:
    """Return the bytes `[start, end)` of a plain file or URL (fsspec's block reading).

    A URL is asked for that range alone, and no more of it is read whatever the server sends.

    Raises:
        OSError: the file cannot be opened or read, or holds fewer bytes than that.
    """
    from fsspec.utils import read_block  # on ranges only: fsspec takes a while to import

    with _open_ranges(path, max(end - start, 1)) as stream:
        data: bytes = read_block(stream, start, end - start)
    if len(data) != end - start:
        raise OSError(f"asked for bytes {start:,}..{end:,}, got {len(data):,} bytes")
    return data


class RangeItems:
    """The items of the lines of the bytes `[start, end)` of a JSONL file, numbered from 1.

    Iterate once; then `lines` holds how many lines were read. A range that fails part way
    yields the items of the lines before the failure, then one that reports it (`cannot_read`).
    """

    def __init__(self, path: str, start: int, end: int) -> None:
        self.path, self.start, self.end = path, start, end
        self.lines = 0

    def __iter__(self) -> Iterator[Item]:
        path = self.path
        chunk: list[bytes] = []
        failed: OSError | EOFError | None = None
        lines = 0
        try:
            for lines, line in enumerate(read_range(path, self.start, self.end), 1):
                chunk.append(line)
                if len(chunk) == JSONL_CHUNK:
                    yield from jsonl_items(path, lines - len(chunk) + 1, chunk)
                    chunk = []
        except (OSError, EOFError) as err:
            failed = err
        self.lines = lines
        yield from jsonl_items(path, lines - len(chunk) + 1, chunk)
        if failed is not None:
            yield cannot_read(path, failed)


BLOCK_BYTES = 1 << 20
"""How much `read_blocks` reads at a time."""


@dataclass(frozen=True)
class Block:
    """Consecutive lines of a JSONL stream, without their line ends."""

    lines: list[bytes]
    ended: bool = True
    """Whether the last line had its line end (false only for the last line of a file)."""


def read_blocks(stream: IO[bytes], limit: int | None = None) -> Iterator[Block]:
    """Yield the lines of a stream (up to `limit` bytes) in blocks of about `BLOCK_BYTES`.

    The lines are those iterating the stream gives (split at `\n` only). Reading and splitting
    a block at a time costs less than reading a line at a time.

    Raises:
        OSError, EOFError: the stream cannot be read.
    """
    carry: list[bytes] = []  # the pieces of a line that began in earlier reads
    left = limit
    # One read at most per call: what was read before a failure (a cut in gzip data) is kept.
    read = getattr(stream, "read1", stream.read)
    while True:
        size = BLOCK_BYTES if left is None else min(BLOCK_BYTES, left)
        data = read(size) if size > 0 else b""
        if left is not None:
            left -= len(data)
        if not data:
            if carry:
                yield Block([b"".join(carry)], ended=False)
            return
        lines = data.split(b"\n")
        if len(lines) == 1:
            carry.append(data)  # no line end yet: joined once, when the line ends (linear)
            continue
        if carry:
            carry.append(lines[0])  # the first line began in an earlier read
            lines[0] = b"".join(carry)
        last = lines.pop()
        carry = [last] if last else []
        yield Block(lines)


def read_range_blocks(path: str, start: int, end: int) -> Iterator[Block]:
    """Yield the lines of the bytes `[start, end)` of a plain file in blocks; `start` begins a line.

    Raises:
        OSError: the file cannot be opened or read.
    """
    yield from read_blocks(io.BytesIO(read_bytes(path, start, end)))


def count_lines(path: str, start: int, end: int) -> int:
    """Return the number of lines of the bytes `[start, end)` of a plain file (0 if unreadable).

    For a range whose records were not read (its worker died), so that those after it keep the
    line numbers of the file.
    """
    try:
        return sum(len(block.lines) for block in read_range_blocks(path, start, end))
    except (OSError, EOFError):
        return 0


def _open_ranges(path: str, block: int = remote.PROBE_BYTES) -> IO[bytes]:
    """Open a plain file, or a URL read by ranges of at most `block` bytes, for seeking."""
    if remote.is_url(path):
        return remote.open_ranges(path, block)
    return open_regular(path, buffering=min(block, STREAM_BUFFER))


def line_ranges(path: str, size: int, chunk: int) -> list[tuple[int, int]]:
    """Split the first `size` bytes of a file into ranges of about `chunk` bytes at line ends.

    Each boundary is the start of the first line after a multiple of `chunk` (fsspec's
    `seek_delimiter`); a URL is read `remote.PROBE_BYTES` at a time from there.

    Raises:
        OSError: the file cannot be opened or read.
    """
    from fsspec.utils import seek_delimiter

    bounds = [0]
    with _open_ranges(path) as stream:
        while bounds[-1] + chunk < size:
            stream.seek(bounds[-1] + chunk)
            seek_delimiter(stream, b"\n", remote.PROBE_BYTES)
            position = stream.tell()
            if position >= size:
                break
            bounds.append(position)
    bounds.append(size)
    return list(itertools.pairwise(bounds))


def read_whole(path: str) -> bytes:
    """Return the bytes of a plain file (fewer system calls and objects than `open().read()`).

    Raises:
        OSError: the file cannot be opened or read.
    """
    if remote.is_url(path):
        return remote.read_url(path)
    fd, status = open_regular_stat(path)
    try:
        return read_all(fd, status.st_size)
    finally:
        os.close(fd)


def out_of_memory(path: str) -> str:
    """Return the error of a file that took more memory than there is, naming its size."""
    try:
        size = remote.size(path) if remote.is_url(path) else os.stat(path).st_size
    except (OSError, MissingExtraError):
        return "out of memory reading it"
    return (
        f"out of memory reading it ({size:,} bytes; a document read whole takes several times "
        "its size): give evalreg more memory, or split the file"
    )


def read_json(data: bytes, path: str) -> Iterator[Item]:
    """Yield the one record of a JSON document."""
    if not data.strip():
        yield empty_file(path)
        return
    check_memory(len(data))
    try:
        yield Item(path, None, record=loads(data))
    except DecodeError as err:
        yield Item(path, None, error=_describe(err))


def read_yaml(data: bytes, path: str) -> Iterator[Item]:
    """Yield one record per document of a YAML file (safe loading).

    A mapping that names a key twice and a non-finite number (`.nan`, `.inf`) are refused, as
    in JSON: a schema cannot check them, and a migration could not write them back as they were.
    """
    import yaml

    from evalreg.io.yamlstrict import describe, strict_loader

    loader = strict_loader()
    try:
        text = data.decode("utf-8")
        documents = [d for d in yaml.load_all(text, Loader=loader) if d is not None]
    except UnicodeDecodeError as err:
        yield Item(path, None, error=f"not valid UTF-8 (byte {err.start})")
        return
    except yaml.YAMLError as err:
        yield Item(path, None, error="not valid YAML: " + describe(err))
        return
    if not documents:
        yield empty_file(path)
    for document in documents:
        yield Item(path, None, record=document)


SNIFF_LINES = 10
"""How many non-blank lines of unnamed input are tried alone when it is not one JSON document."""


def sniff_kind(data: bytes) -> Kind:
    """Guess the kind of unnamed input (standard input): one JSON document, or JSONL.

    Input that is not one document is JSONL only when it has several lines and one of its
    first `SNIFF_LINES` non-blank lines is a JSON object on its own; otherwise it is one
    malformed document (pretty-printed JSON), reported once rather than line by line.
    """
    try:
        loads(data)
    except DuplicateKeyError:
        return "json"  # one document, which names a key twice
    except DecodeError:
        pass
    else:
        return "json"
    lines = (line for line in data.split(b"\n", 4 * SNIFF_LINES) if line.strip())
    tried = list(itertools.islice(lines, SNIFF_LINES + 1))
    if len(tried) < 2:
        return "json"
    for line in tried[:SNIFF_LINES]:
        try:
            if isinstance(loads(line), dict):
                return "jsonl"
        except DecodeError:
            continue
    return "json"


def read_items_from_bytes(data: bytes, path: str, kind: Kind | None) -> Iterator[Item]:
    """Yield the records of a whole file's bytes (kind None: sniffed)."""
    kind = kind or sniff_kind(data)
    if kind == "jsonl":
        yield from read_jsonl(io.BytesIO(data), path)
    elif kind == "yaml":
        yield from read_yaml(data, path)
    else:
        yield from read_json(data, path)


def read_document(stream: IO[bytes], path: str) -> bytes:
    """Return the rest of a stream; from a URL, at most `MAX_DOCUMENT_BYTES` of it.

    Raises:
        InputError: a URL's document is larger than that.
    """
    if not remote.is_url(path):
        return stream.read()
    limit = streams.MAX_DOCUMENT_BYTES
    known = getattr(getattr(stream, "raw", None), "size", None)
    if isinstance(known, int) and known > limit:  # refused before its bytes are read
        raise streams.too_large(limit)
    data = stream.read(limit + 1)
    if len(data) > limit:
        raise streams.too_large(limit)
    return data


def read_items(path: str, kind: Kind | None = None) -> Iterator[Item]:
    """Yield the records of one file (`-`: standard input), failures included as items."""
    kind = kind or file_kind(path)
    try:
        stream = open_binary(path)
    except OSError as err:
        yield Item(path, None, error=f"cannot open: {err.strerror or err}")
        return
    try:
        if kind == "jsonl":
            yield from read_jsonl(stream, path)
        else:
            yield from read_items_from_bytes(read_document(stream, path), path, kind)
    except (OSError, EOFError) as err:
        yield cannot_read(path, err)
    except MemoryError:
        yield Item(path, None, error=out_of_memory(path))
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()
