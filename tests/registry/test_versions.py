from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalreg.errors import InvalidVersionError
from evalreg.registry.versions import is_version, match_version, parse_version, sort_versions


def test_short_and_long_forms_are_the_same_version() -> None:
    assert parse_version("0.1") == parse_version("0.1.0")
    assert match_version("0.1", ["0.1.0", "0.2.0"]) == "0.1.0"
    assert match_version("0.1.0", ["0.1"]) == "0.1"


def test_versions_sort_numerically_not_as_text() -> None:
    assert sort_versions(["0.10.0", "0.2.1", "0.9.0", "0.2.0", "1"]) == (
        "0.2.0",
        "0.2.1",
        "0.9.0",
        "0.10.0",
        "1",
    )


def test_unknown_or_malformed_versions_match_nothing() -> None:
    assert match_version("0.4.0", ["0.1.0", "0.2.0"]) is None
    assert match_version("banana", ["0.1.0"]) is None
    assert not is_version("instance_level_eval_0.2.0")


def test_invalid_version_error_shows_the_input() -> None:
    with pytest.raises(InvalidVersionError, match=r"'v0\.x'"):
        parse_version("v0.x")


@given(st.lists(st.integers(0, 30), min_size=1, max_size=4))
def test_trailing_zeros_never_change_a_version(parts: list[int]) -> None:
    text = ".".join(map(str, parts))
    assert match_version(text + ".0", [text]) == text


def test_versions_longer_than_the_limit_are_invalid() -> None:
    from evalreg.errors import MAX_VERSION_LENGTH

    longest = "1." + "0" * (MAX_VERSION_LENGTH - 2)
    assert parse_version(longest) == parse_version("1")
    too_long = longest + "0"
    assert not is_version(too_long)
    assert match_version(too_long, ["1.0"]) is None
    with pytest.raises(InvalidVersionError, match=f"{MAX_VERSION_LENGTH + 1} characters"):
        parse_version(too_long)
    with pytest.raises(InvalidVersionError) as info:
        parse_version("9" * 5000)  # an integer Python would refuse to read
    assert len(str(info.value)) < 200
