"""A document canonical but for its white space takes the fast path; nothing else it refuses does.

That both paths give the same record or problem for documents written with every kind of white
space is `test_canonical.py`'s property test (`loads` against the exact path).
"""

from __future__ import annotations

import json

import pytest

from evalreg.io import codec

RECORD = {"a": [1, 2.5, {"b": 'x: "y" \\', "c": None}], "d": "\t", "e": True, "f": {}}


@pytest.mark.parametrize(
    "text",
    [
        json.dumps(RECORD, indent=4),
        json.dumps(RECORD, indent="\t"),
        json.dumps(RECORD),
        json.dumps(RECORD, indent=2).replace("\n", "\r\n"),
        " " + json.dumps(RECORD) + " \n",
    ],
)
def test_white_space_between_tokens_is_read_fast(text: str) -> None:
    data = text.encode()
    assert codec._canonical(data, spaced=True) == RECORD
    assert codec.loads(data) == RECORD


@pytest.mark.parametrize(
    "data",
    [
        b'{ "a" : 1 , "a" : 1 }',
        b'{\n    "a": 1.50000000000000000001\n}',
        b'{ "a": 1.0e0 }',
        b'{ "a": 18446744073709551616 }',
        b'{ "a\\u003a": 1 }',
        b'{ "a": "\\u00e9" }',
        b'{ "a": "\\/" }',
        b"[ 1.5e0 ]",
    ],
)
def test_what_the_fast_path_cannot_prove_takes_the_exact_one(data: bytes) -> None:
    assert codec._canonical(data, spaced=True) is codec._NOT_CANONICAL
