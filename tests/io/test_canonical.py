"""The canonical fast path of JSON reading gives the records and problems of the exact path.

`codec.loads` reads a document that is its own canonical encoding (compact, or indented by two
spaces) by decoding it without the exact-number hook and comparing its encoding with its bytes;
any other document takes the exact path (`_exact_loads`). Documents are generated here as text,
written every way JSON allows (escapes, white space, number spellings, keys named twice), so
that both paths see canonical documents and hostile ones alike.
"""

from __future__ import annotations

import json
import random
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from evalreg.io import codec
from evalreg.io.codec import MAX_DEPTH, ExactNumber, TooLargeError, loads, loads_lines
from tests.conftest import examples

# -- documents as trees, written out as text -----------------------------------------------------

HOSTILE_NUMBERS = [
    "1.50000000000000000001",  # more digits than a double holds
    "1e-400",  # below the smallest double
    "1e400",  # beyond the largest: refused
    "-0",
    "-0.0",
    "1E5",
    "2.50",
    "1e16",
    "1e+16",
    "0.1000000000000000055511151231257827",
    "123456789012345678901234567890.5",
    str(2**63 - 1),
    str(2**63),
    str(2**64),
    str(-(2**63) - 1),
    "9" * 4300,  # the most digits an integer may have
    "9" * 4301,  # one more: refused
]

number_texts = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(lambda f: orjson.dumps(f).decode()),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.sampled_from(HOSTILE_NUMBERS),
)
"""Numbers as written: as orjson writes them (canonical), as Python does, and hostile ones."""

keys = st.one_of(
    st.sampled_from(["a", "b", "a:b", ":", '"', 'say "hi"', "\\", "é", "\u2028", "\x00", "~/"]),
    st.text(max_size=6),
)
"""Keys, from a small set (so that objects name one twice) and any text."""

Tree = tuple[str, Any]

trees: st.SearchStrategy[Tree] = st.recursive(
    st.one_of(
        number_texts.map(lambda text: ("num", text)),
        st.text(max_size=10).map(lambda text: ("str", text)),
        st.sampled_from(["true", "false", "null"]).map(lambda text: ("lit", text)),
    ),
    lambda children: st.one_of(
        st.lists(children, max_size=4).map(lambda items: ("arr", items)),
        st.lists(st.tuples(keys, children), max_size=4).map(lambda pairs: ("obj", pairs)),
    ),
    max_leaves=25,
)


def _string(text: str, rng: random.Random, escapes: str) -> str:
    """Write a JSON string: as orjson does, or with escapes JSON allows and orjson does not use."""
    if escapes == "orjson":
        return orjson.dumps(text).decode()
    if escapes == "ascii":
        return json.dumps(text, ensure_ascii=True)
    written = json.dumps(text, ensure_ascii=False)[1:-1]
    if escapes == "colons":
        written = written.replace(":", "\\u003a")
    elif escapes == "quotes":
        written = written.replace('\\"', "\\u0022")
    elif escapes == "some" and written:
        at = rng.randrange(len(written))
        if written[at] not in '\\"' and (at == 0 or written[at - 1] != "\\"):
            written = written[:at] + f"\\u{ord(written[at]):04x}" + written[at + 1 :]
    return f'"{written}"'


SPACES = ["compact", "indent", "loose", "tabs", "crlf"]
ESCAPES = ["orjson", "orjson", "orjson", "ascii", "colons", "quotes", "some"]


def render(tree: Tree, rng: random.Random, space: str, escapes: str, level: int = 0) -> str:
    """Write a tree as JSON text with the given white space and string escapes."""
    kind, content = tree
    if kind in ("num", "lit"):
        return str(content)
    if kind == "str":
        return _string(content, rng, escapes)
    if kind == "arr":
        parts = [render(child, rng, space, escapes, level + 1) for child in content]
        opening, closing = "[", "]"
    else:
        parts = [
            f"{_string(key, rng, escapes)}{': ' if space != 'compact' else ':'}"
            + render(child, rng, space, escapes, level + 1)
            for key, child in content
        ]
        opening, closing = "{", "}"
    if not parts:
        return opening + closing
    if space == "compact":
        return opening + ",".join(parts) + closing
    if space == "loose":
        return opening + " " + " , ".join(parts) + " " + closing
    if space == "tabs":
        return opening + "\n\t" + ",\n\t".join(parts) + "\n" + closing
    newline = "\r\n" if space == "crlf" else "\n"
    pad, inner = "  " * level, "  " * (level + 1)
    return opening + newline + inner + f",{newline}{inner}".join(parts) + newline + pad + closing


# -- comparing outcomes ------------------------------------------------------------------------


def _shape(value: Any) -> Any:
    """Return a value with every number's type made part of it (1 != 1.0, ExactNumber apart)."""
    if isinstance(value, ExactNumber):
        return ("exact", value.text)
    if type(value) is float:
        return ("float", repr(value))
    if type(value) is int:
        return ("int", value)
    if type(value) is dict:
        return ("dict", [(key, _shape(child)) for key, child in value.items()])
    if type(value) is list:
        return ("list", [_shape(child) for child in value])
    return (type(value).__name__, value)


def outcome(read: Any, data: bytes) -> Any:
    """Return what reading `data` gives: the shape of its value, or the error raised."""
    try:
        return _shape(read(data))
    except ValueError as err:
        return ("error", type(err).__name__, str(err))


def exact(data: bytes) -> Any:
    """Read `data` by the exact path alone."""
    return codec._exact_loads(data)


def exact_large(data: bytes) -> Any:
    """Read `data` by the exact path, as a document too large to write again (colons counted)."""
    saved = codec.LARGE_BYTES
    codec.LARGE_BYTES = 0
    try:
        return codec.loads(data)
    finally:
        codec.LARGE_BYTES = saved


# -- the properties ----------------------------------------------------------------------------


@pytest.mark.parametrize("count", examples(400, quick=60))
def test_both_paths_give_the_same_record_or_problem(count: int) -> None:
    @settings(max_examples=count, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(
        tree=trees,
        space=st.sampled_from(SPACES),
        escapes=st.sampled_from(ESCAPES),
        rng=st.randoms(use_true_random=False),
        end=st.sampled_from(["", "\n", "\r\n", "  \n", "\t"]),
    )
    def check(tree: Tree, space: str, escapes: str, rng: random.Random, end: str) -> None:
        data = (render(tree, rng, space, escapes) + end).encode("utf-8", "surrogatepass")
        expected = outcome(exact, data)
        fast = codec._canonical(data) is not codec._NOT_CANONICAL
        event(f"canonical: {fast}, exact path: {'error' if expected[0] == 'error' else 'record'}")
        assert outcome(loads, data) == expected
        assert outcome(exact_large, data) == expected

    check()


@pytest.mark.parametrize("count", examples(150, quick=25))
def test_lines_read_together_give_what_each_gives_alone(count: int) -> None:
    @settings(max_examples=count, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(
        lines=st.lists(
            st.tuples(trees, st.sampled_from(["compact", "loose"]), st.sampled_from(ESCAPES)),
            max_size=6,
        ),
        rng=st.randoms(use_true_random=False),
    )
    def check(lines: list[tuple[Tree, str, str]], rng: random.Random) -> None:
        texts = [(render(t, rng, space, escapes) + "\n").encode() for t, space, escapes in lines]
        together = loads_lines(texts)
        for text, value in zip(texts, together, strict=True):
            shown = (
                ("error", type(value).__name__, str(value))
                if isinstance(value, ValueError)
                else None
            )
            assert (shown or _shape(value)) == outcome(exact, text)

    check()


def test_canonical_documents_take_the_fast_path_and_others_do_not() -> None:
    record = {"a": [1, 2.5, {"b": "x:y", "c": None}], "d": "é", "e": True}
    for written in (orjson.dumps(record), orjson.dumps(record, option=orjson.OPT_INDENT_2)):
        for end in (b"", b"\n", b" \r\n"):
            assert codec._canonical(written + end) == record
    assert codec._canonical(json.dumps(record, indent=2).encode()) is codec._NOT_CANONICAL  # \u00e9
    for hostile in (
        b'{"a": 1, "a": 1}',  # white space orjson does not write
        b'{"a":1,"a":1}',
        b'{"a":1.50000000000000000001}',
        b'{"a":1.0e0}',
        b'{"a":18446744073709551616}',
        b'{"a\\u003a":1}',
        b'{"a":1}x',
        b' {"a":1}',
        b"1.5e0",  # a number followed by more: canonical up to `1.5`
    ):
        assert codec._canonical(hostile) is codec._NOT_CANONICAL, hostile


@pytest.mark.parametrize("depth", [MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1, MAX_DEPTH + 2])
@pytest.mark.parametrize("space", ["compact", "indent"])
@pytest.mark.parametrize("kind", ["arr", "obj"])
def test_nesting_near_the_limit_reads_alike_both_ways(depth: int, space: str, kind: str) -> None:
    tree: Tree = ("num", "1")
    for _ in range(depth):
        tree = ("arr", [tree]) if kind == "arr" else ("obj", [("k", tree)])
    data = render(tree, random.Random(0), space, "orjson").encode()
    expected = outcome(exact, data)
    assert (expected[0] == "error") == (depth > MAX_DEPTH)
    assert outcome(loads, data) == expected
    assert outcome(exact_large, data) == expected


@pytest.mark.parametrize(
    ("text", "key", "pointer"),
    [
        ('{"a":1,"a":1}', "a", ""),
        ('{"x":{"t":"12:00","b":[{"k":1,"k":1}]}}', "k", "/x/b/0"),
        ('{\n  "a": "x:y",\n  "a~/b": {\n    "c": 1,\n    "c": 1\n  }\n}', "c", "/a~0~1b"),
        ('{"a\\u003a":1,"a:":2}', "a:", ""),
    ],
)
def test_a_key_named_twice_is_found_whichever_path_reads_it(
    text: str, key: str, pointer: str
) -> None:
    for read in (loads, exact, exact_large):
        with pytest.raises(codec.DuplicateKeyError) as caught:
            read(text.encode())
        assert (caught.value.key, caught.value.pointer) == (key, pointer)


def test_the_exact_number_hole_stays_closed() -> None:
    value = loads(b'{"score":1.50000000000000000001,"max":1.0}')
    assert isinstance(value["score"], ExactNumber) and value["score"].text.endswith("1")
    assert type(value["max"]) is float


def test_a_document_that_does_not_fit_in_memory_is_a_decode_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def no_memory(data: bytes) -> Any:
        raise MemoryError

    monkeypatch.setattr(codec, "_decode", no_memory)
    data = b'{"a":1.50000000000000000001}'  # not canonical: the exact path decodes it
    with pytest.raises(TooLargeError, match=f"{len(data)} bytes do not fit"):
        loads(data)
    [error] = loads_lines([data])
    assert isinstance(error, TooLargeError) and isinstance(error, ValueError)
