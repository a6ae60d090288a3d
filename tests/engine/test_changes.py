"""Structural differences between records, and the audit of a step's notes against them."""

from __future__ import annotations

from typing import Any

from evalreg import StepContext
from evalreg.engine.changes import audit, diff, same


def test_same_tells_json_types_apart_but_not_integer_and_float() -> None:
    assert same({"a": [1, {"b": None}]}, {"a": [1, {"b": None}]})
    assert not same(True, 1) and not same(0, False) and not same({"a": True}, {"a": 1})
    assert same(1, 1.0) and not same("1", 1) and not same([1], [1, 2])


def test_diff_lists_each_difference_once_where_it_starts() -> None:
    before = {"keep": 1, "gone": {"deep": [1, 2]}, "change": 7.242, "list": [1, 2, 3]}
    after = {"keep": 1, "change": "7.242", "list": [1, 5], "new": {"x": 1}}
    assert [str(d) for d in diff(before, after)] == [
        '- /gone = {"deep": [1, 2]}',
        '~ /change: 7.242 -> "7.242"',
        "~ /list/1: 2 -> 5",
        "- /list/2 = 3",
        '+ /new = {"x": 1}',
    ]
    assert diff(before, before) == []
    assert [str(d) for d in diff({"a/b": 1}, {"a/b": 2})] == ["~ /a~1b: 1 -> 2"]


def _audit(before: Any, after: Any, report: Any) -> list[str]:
    ctx = StepContext(allow_loss=True)
    report(ctx)
    return audit(before, after, ctx.notes).lines()


def test_a_step_that_reports_everything_passes() -> None:
    before = {"interactions": [{"a": 1}], "score": 0.5, "n": 5, "junk": 1, "same": "x"}
    after = {
        "messages": [{"a": 1}],
        "score": {"value": 0.5},
        "n": "5",
        "library": {"name": "unknown"},
        "same": "x",
    }

    def report(ctx: StepContext) -> None:
        ctx.renamed("/interactions", "/messages")
        ctx.moved("/score", "/score/value")
        ctx.converted("/n", 5, "5")
        ctx.placeholder("/library/name", "unknown")
        ctx.lose("/junk", "no place")

    assert _audit(before, after, report) == []


def test_every_change_left_unreported_is_named() -> None:
    before = {"a": 1, "b": {"c": 2}, "d": [1, 2]}
    after = {"a": "1", "b": {}, "d": [1, 2], "e": True}
    assert _audit(before, after, lambda ctx: None) == [
        'unreported ~ /a: 1 -> "1"',
        "unreported + /e = true",
        "unreported - /b/c = 2",
    ]


def test_a_move_must_carry_the_value_unchanged() -> None:
    before = {"a": 1}
    after = {"b": 2}
    assert _audit(before, after, lambda ctx: ctx.moved("/a", "/b")) == ["unreported ~ /b: 1 -> 2"]


def test_notes_that_point_at_nothing_are_unfounded() -> None:
    lines = _audit({"a": 1}, {"a": 1}, lambda ctx: ctx.moved("/x", "/y"))
    assert lines == ["unfounded note: moved /x -> /y"]
    assert _audit({"a": 1}, {"a": 1}, lambda ctx: ctx.dropped("/z", "why")) == [
        "unfounded note: dropped /z: why"
    ]


def test_items_taken_out_of_a_list_shift_the_rest() -> None:
    before = {"results": [{"s": 1}, {"s": "bad"}, {"s": 3}, {"s": 4}]}
    after = {"results": [{"s": 1}, {"s": 3}, {"s": 4}]}
    assert _audit(before, after, lambda ctx: ctx.lose("/results/1", "no score")) == []
    assert _audit(before, after, lambda ctx: None) != []


def test_items_put_into_a_list_shift_the_rest() -> None:
    before = {"prompts": ["b", "c"]}
    after = {"prompts": ["a", "b", "c"]}
    assert _audit(before, after, lambda ctx: ctx.default("/prompts/0", "a")) == []


def test_empty_containers_filled_or_emptied() -> None:
    before = {"details": {}, "list": [1]}
    after = {"details": {"kind": "unknown"}, "list": []}

    def report(ctx: StepContext) -> None:
        ctx.placeholder("/details/kind", "unknown")
        ctx.dropped("/list/0", "redundant")

    assert _audit(before, after, report) == []


def test_the_engine_written_marker_can_be_set_aside() -> None:
    ctx = StepContext()
    assert audit({"v": "1"}, {"v": "2"}, ctx.notes, ignore=["/v"]).ok
    assert not audit({"v": "1"}, {"v": "2"}, ctx.notes).ok


def test_a_conversion_inside_a_moved_value_needs_both_notes() -> None:
    before = {"args": {"seed": 42}}
    after = {"args": {}, "details": {"seed": "42"}}

    def moved_only(ctx: StepContext) -> None:
        ctx.moved("/args/seed", "/details/seed")

    def both(ctx: StepContext) -> None:
        moved_only(ctx)
        ctx.converted("/details/seed", 42, "42")

    assert _audit(before, after, moved_only) == ['unreported ~ /details/seed: 42 -> "42"']
    assert _audit(before, after, both) == []


def test_a_value_moved_into_a_container_the_step_added_is_not_removed() -> None:
    before = {"args": {"seed": "1", "0": "x"}}
    after: dict[str, Any] = {"args": {}, "details": {"seed": "1", "0": "x"}}

    def report(ctx: StepContext) -> None:
        ctx.added("/details", {}, "derived", "to hold args")
        ctx.moved("/args/seed", "/details/seed")
        ctx.moved("/args/0", "/details/0")

    def report_one_move_less(ctx: StepContext) -> None:
        report(ctx)
        ctx.notes.pop()

    assert _audit(before, after, report) == []
    assert _audit(before, after, report_one_move_less) == ['unreported - /args/0 = "x"']
