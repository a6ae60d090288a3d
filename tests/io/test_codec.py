from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalreg.io.codec import DecodeError, DuplicateKeyError, clone, dumps, loads

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)


def test_integers_wider_than_64_bits_stay_exact() -> None:
    big = 2**64 + 1
    text = f'{{"n": {big}, "m": -{big}, "small": 3}}'
    value = loads(text.encode())
    assert value == {"n": big, "m": -big, "small": 3}
    assert isinstance(value["n"], int)
    assert dumps(value) == f'{{"n":{big},"m":-{big},"small":3}}'.encode()


@given(json_values)
def test_dumps_then_loads_is_the_identity(value: object) -> None:
    assert loads(dumps(value)) == value
    assert loads(dumps(value, indent=True)) == value


def test_key_order_is_kept() -> None:
    assert dumps(loads(b'{"b": 1, "a": 2}')) == b'{"b":1,"a":2}'


@pytest.mark.parametrize(
    "data",
    [
        b"{",
        b'{"a": NaN}',
        b"\xff\xfe",
        b'{"n": 12345678901234567890123,}',
        b"[1e400]",
        b'"\\ud800"',
        b"[" * 100_000 + b"]" * 100_000,
    ],
    ids=["cut", "nan", "not-utf8", "trailing-comma", "out-of-range", "lone-surrogate", "deep"],
)
def test_invalid_input_raises_a_decode_error(data: bytes) -> None:
    with pytest.raises(DecodeError):
        loads(data)


def test_indented_output_matches_the_usual_two_space_layout() -> None:
    assert dumps({"a": [1, {"b": None}]}, indent=True) == (
        b'{\n  "a": [\n    1,\n    {\n      "b": null\n    }\n  ]\n}'
    )


@pytest.mark.parametrize(
    ("text", "key", "pointer"),
    [
        ('{"a": 1, "a": 2}', "a", ""),
        ('{"x": {"t": "12:00", "b": [{"k": 1, "k": 1}]}}', "k", "/x/b/0"),
        ('{"a": "x:y", "a~/b": {"c": 1, "c": "2:3"}}', "c", "/a~0~1b"),
        ('[{"id": 1}, {"id": 2, "id": 3}]', "id", "/1"),
        ('{"a\\u003a": 1, "a:": 2}', "a:", ""),  # one key written two ways
        ('{"a": 1, "\\u0061": 2}', "a", ""),
    ],
)
def test_a_key_named_twice_is_refused_with_its_place(text: str, key: str, pointer: str) -> None:
    with pytest.raises(DuplicateKeyError) as caught:
        loads(text.encode())
    assert (caught.value.key, caught.value.pointer) == (key, pointer)
    assert isinstance(caught.value, ValueError)


@pytest.mark.parametrize(
    "text",
    [
        '{"t": "12:00:01", "u": "c\\u003ad", "v": {"w": "::"}}',  # colons in strings, escaped
        '{"a": {"k": 1}, "b": {"k": 1}}',  # one key in two objects
        '{"n": 123456789012345678901234567890, "s": "x:"}',  # wider than the encoder's integers
        "[]",
        '"a:b"',
    ],
)
def test_documents_without_duplicates_are_read_as_they_are(text: str) -> None:
    import json

    assert loads(text.encode()) == json.loads(text)
    assert loads(text) == json.loads(text)


@given(json_values)
def test_no_generated_document_is_taken_for_one_with_duplicates(value: object) -> None:
    import json

    assert loads(json.dumps(value, ensure_ascii=True)) == value
    assert loads(json.dumps(value, ensure_ascii=False, separators=(" , ", " : "))) == value


@pytest.mark.parametrize(
    "text",
    [
        "1e-400",
        "-2.5E-999",
        "0.1000000000000000055511151231257827",
        "123456789012345678901234567890.5",
        "3.14159265358979323846264338327950288",
    ],
)
def test_numbers_a_double_cannot_hold_are_written_back_as_read(text: str) -> None:
    from evalreg.io.codec import ExactNumber

    value = loads(f'{{"x": [{text}], "y": 1.5}}')
    number = value["x"][0]
    assert isinstance(number, ExactNumber) and str(number) == text
    assert number == float(text)  # its value is the nearest double
    assert dumps(value) == f'{{"x":[{text}],"y":1.5}}'.encode()
    assert text.encode() in dumps(value | {"big": 10**40}, indent=True)
    assert clone(value)["x"][0].text == text


@pytest.mark.parametrize("text", ["0.5", "0.30000000000000004", "1.5e-320", "1E5", "2.50"])
def test_numbers_a_double_holds_stay_plain_floats(text: str) -> None:
    value = loads(f"[{text}]")[0]
    assert type(value) is float and value == float(text)


@pytest.mark.parametrize("indent", [False, True])
@pytest.mark.parametrize("value", [{"a": [1, 2.5, None]}, {"n": 10**30, "x": "é"}, [], "text"])
def test_dumps_as_a_line_is_the_text_and_a_line_feed(value: object, indent: bool) -> None:
    assert dumps(value, indent=indent, line=True) == dumps(value, indent=indent) + b"\n"
