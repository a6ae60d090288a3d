"""The summary tables of `evalreg validate`: printed without rich where that gives rich's lines."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from evalreg.cli.validating import _plain_table, _rich_table

CELL = st.text(alphabet="ab.-_,/09 :[]é😄\\", max_size=12) | st.text(alphabet="x", max_size=120)


@st.composite
def tables(draw: st.DrawFn) -> tuple[list[tuple[str, bool]], list[tuple[str, ...]]]:
    count = draw(st.integers(1, 6))
    columns = [(draw(CELL), draw(st.booleans())) for _ in range(count)]
    rows = draw(st.lists(st.tuples(*[CELL] * count), max_size=4))
    return columns, rows


@settings(max_examples=150, deadline=None)
@given(tables())
def test_a_plain_table_is_what_rich_prints(
    table: tuple[list[tuple[str, bool]], list[tuple[str, ...]]],
) -> None:
    plain = _plain_table(*table)
    if plain is not None:
        assert plain == _rich_table(*table)


def test_the_usual_tables_are_plain() -> None:
    columns = [("rule", True), ("files", False), ("errors", False), ("warnings", False)]
    rows = [("eee.layout", "1", "2", "0"), ("schema", "1,000", "12,345", "0")]
    assert (
        _plain_table(columns, rows)
        == _rich_table(columns, rows)
        == [
            "rule        files  errors  warnings",
            "eee.layout      1       2         0",
            "schema      1,000  12,345         0",
        ]
    )
    assert _plain_table([("rule", True)], [("[bold]x",)]) is None  # markup: rich's to print
    assert _plain_table([("x" * 120, True), ("y" * 80, False)], []) is None  # wider than 200
