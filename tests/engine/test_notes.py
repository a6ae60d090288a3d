"""Notes: what a step reports of each change, their text, JSON and lean forms, and the context."""

from __future__ import annotations

import pickle

import pytest

from evalreg import Note, Param, StepContext
from evalreg.engine.notes import count_kinds, general, json_type
from evalreg.errors import DataLossError


def test_each_kind_is_reported_with_its_fields() -> None:
    declared = {"lib": Param("lib", "the library", "unknown", placeholder=True)}
    ctx = StepContext({"lib": "unknown"}, step="1 -> 2", declared=declared, allow_loss=True)
    ctx.moved("/a", "/b/a")
    ctx.renamed("/old", "/new")
    ctx.added("/x", 3, "derived", "the sum", source="/y")
    ctx.placeholder("/p", "unknown")
    ctx.default("/d", [])
    ctx.param("/lib", "lib", "unknown")
    ctx.converted("/n", 7.242, "7.242")
    ctx.dropped("/v", "it repeats /w")
    ctx.lose("/l", "no place")
    ctx.kept("/k", "an extra field")
    assert [(n.kind, n.source, n.pointer, n.origin) for n in ctx.notes] == [
        ("moved", "/a", "/b/a", None),
        ("renamed", "/old", "/new", None),
        ("added", "/y", "/x", "derived"),
        ("added", None, "/p", "placeholder"),
        ("added", None, "/d", "default"),
        ("added", None, "/lib", "placeholder"),
        ("converted", None, "/n", None),
        ("dropped", None, "/v", None),
        ("lost", None, "/l", None),
        ("kept", None, "/k", None),
    ]
    assert all(n.step == "1 -> 2" for n in ctx.notes)
    converted = ctx.notes[6]
    assert (converted.from_type, converted.to_type) == ("number", "string")
    assert (converted.before, converted.value) == (7.242, "7.242")
    assert [n.placeholder for n in ctx.notes].count(True) == 2
    assert count_kinds(ctx.notes) == {
        "moved": 1,
        "renamed": 1,
        "added": 4,
        "converted": 1,
        "dropped": 1,
        "lost": 1,
        "kept": 1,
    }


def test_a_parameter_set_by_the_user_is_no_placeholder() -> None:
    declared = {"lib": Param("lib", "the library", "unknown", placeholder=True)}
    given = StepContext({"lib": "lm-eval"}, given={"lib"}, declared=declared)
    given.param("/lib", "lib", "lm-eval")
    assert (given.notes[0].origin, given.notes[0].detail) == ("parameter", "--set lib")
    plain = StepContext({"n": 5}, declared={"n": Param("n", "a count", 5)})
    plain.param("/n", "n", 5)
    assert plain.notes[0].origin == "default"
    unset = StepContext(declared=declared)
    unset.param("/lib", "lib", "unknown")
    assert unset.notes[0].origin == "placeholder"
    assert "give it with --set lib=VALUE" in unset.notes[0].detail


def test_losses_and_lossy_conversions_need_allow_loss() -> None:
    with pytest.raises(DataLossError) as raised:
        StepContext().lose("/x", "no place")
    assert raised.value.pointer == "/x"
    with pytest.raises(DataLossError):
        StepContext().converted("/c", {"a": 1}, '{"a":1}', "structure as text", lossy=True)
    ctx = StepContext(allow_loss=True)
    ctx.converted("/c", {"a": 1}, '{"a":1}', "structure as text", lossy=True)
    assert ctx.notes[0].kind == "converted"


def test_the_text_of_each_kind() -> None:
    ctx = StepContext(step="s")
    ctx.moved("/results/3/a", "/results/3/b")
    ctx.placeholder("/eval_library/name", "unknown", "the record does not say")
    ctx.converted("/model_info/additional_details/params_billions", 7.242, "7.242")
    ctx.added("/results/2/n", 12, "derived", source="/results/2/m")
    ctx.dropped("/version", "the structure says it")
    moved, placeholder, converted, derived, dropped = ctx.notes
    assert str(moved) == "moved /results/3/a -> /results/3/b"
    assert moved.describe(generalise=True) == "moved /results/*/a -> /results/*/b"
    assert str(placeholder) == (
        'added /eval_library/name (placeholder "unknown"): the record does not say'
    )
    assert str(converted) == (
        "converted /model_info/additional_details/params_billions: number -> string "
        '(7.242 -> "7.242")'
    )
    assert converted.describe(generalise=True) == (
        "converted /model_info/additional_details/params_billions: number -> string"
    )
    assert str(derived) == "added /results/2/n (derived 12, from /results/2/m)"
    assert derived.describe(generalise=True) == "added /results/*/n (derived, from /results/*/m)"
    assert str(dropped) == "dropped /version: the structure says it"


def test_json_rows_hold_what_each_kind_says() -> None:
    ctx = StepContext(step="s")
    ctx.placeholder("/p", {"name": "unknown"})
    ctx.converted("/n", 1, "1")
    ctx.moved("/a", "/b")
    assert [n.as_json() for n in ctx.notes] == [
        {
            "kind": "added",
            "pointer": "/p",
            "value": {"name": "unknown"},
            "origin": "placeholder",
            "placeholder": True,
            "detail": "",
            "step": "s",
        },
        {
            "kind": "converted",
            "pointer": "/n",
            "from_type": "integer",
            "to_type": "string",
            "before": 1,
            "after": "1",
            "detail": "",
            "step": "s",
        },
        {"kind": "moved", "pointer": "/b", "from": "/a", "detail": "", "step": "s"},
    ]


def test_lean_notes_of_different_records_compare_equal_and_describe_alike() -> None:
    one, two = StepContext(), StepContext()
    one.converted("/ids/0", 5, "5")
    two.converted("/ids/3", 8, "8")
    one.placeholder("/lib", ["unknown"])
    two.placeholder("/lib", ["unknown"])
    assert one.notes != two.notes
    lean = [tuple(n.lean() for n in ctx.notes) for ctx in (one, two)]
    assert lean[0] == lean[1] and hash(lean[0]) == hash(lean[1])
    assert [n.describe(generalise=True) for n in one.notes] == [
        n.describe(generalise=True) for n in lean[0]
    ]
    assert lean[0][1].value == ["unknown"]  # a placeholder's value is the same everywhere
    assert pickle.loads(pickle.dumps(one.notes)) == one.notes


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        (None, "null"),
        (True, "boolean"),
        (3, "integer"),
        (2.5, "number"),
        ("x", "string"),
        ({}, "object"),
        ([], "array"),
    ],
)
def test_json_types(value: object, kind: str) -> None:
    assert json_type(value) == kind


def test_general_pointers() -> None:
    assert general("/a/12/b/0") == "/a/*/b/*"
    assert general("/a12/b") == "/a12/b"
    assert general("") == "/"


def test_a_note_is_a_small_frozen_value() -> None:
    note = Note("kept", "/x", "why")
    with pytest.raises(AttributeError):
        note.kind = "lost"  # type: ignore[misc]
    assert not hasattr(note, "__dict__")


def test_notes_made_fast_are_the_same_frozen_notes() -> None:
    from evalreg.engine.notes import make_note

    made = make_note("converted", "/n", "why", "s", None, ["1"], 1, None, "integer", "array")
    direct = Note("converted", "/n", "why", "s", None, ["1"], 1, None, "integer", "array")
    assert type(made) is Note and made == direct and hash(made) == hash(direct)
    with pytest.raises(AttributeError):
        made.kind = "lost"  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(made)) == direct


@pytest.mark.parametrize(
    ("before", "after", "types"),
    [
        ("id", ["id"], ("string", "array")),
        (True, 1.0, ("boolean", "number")),
        (7, "7", ("integer", "string")),
        ((1, 2), "[1,2]", ("array", "string")),  # a tuple is no key of the fast lookup
    ],
)
def test_a_converted_note_is_the_note_of_its_conversion(
    before: object, after: object, types: tuple[str, str]
) -> None:
    from evalreg.engine.notes import converted_note

    made = converted_note("/x/0", before, after, "why", "0.2.0 -> 0.2.1")
    direct = Note("converted", "/x/0", "why", "0.2.0 -> 0.2.1", None, after, before, None, *types)
    assert type(made) is Note and made == direct and hash(made) == hash(direct)
    assert made.as_json()["from_type"] == types[0] and made.as_json()["to_type"] == types[1]
    with pytest.raises(AttributeError):
        made.pointer = "/y"  # type: ignore[misc]
