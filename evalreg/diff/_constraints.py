"""Numeric and string constraints: counts, bounds, multipleOf, pattern and format.

Each rule reports whether a constraint became stricter or looser, or that the two cannot be
ordered (two different patterns, or steps that are not multiples of each other).
"""

from __future__ import annotations

import operator
from collections.abc import Mapping
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from evalreg.diff._changes import BOTH, ONLY_BACKWARD, ONLY_FORWARD
from evalreg.diff._schema import pick

if TYPE_CHECKING:
    from evalreg.diff._protocol import Walker


def compare_counts(
    walker: Walker,
    old: Mapping[str, Any],
    new: Mapping[str, Any],
    path: str,
    keywords: tuple[str, str],
) -> None:
    """Compare a lower and an upper count (length, items, properties)."""
    low, high = keywords
    for keyword, tighter in ((low, operator.gt), (high, operator.lt)):
        old_value, new_value = _number(old.get(keyword)), _number(new.get(keyword))
        if old_value == new_value:
            continue
        if old_value is None or new_value is None:
            tightened = new_value is not None
        else:
            tightened = tighter(new_value, old_value)
        _constraint(walker, old, new, path, (keyword,), tightened)


def compare_bounds(
    walker: Walker, old: Mapping[str, Any], new: Mapping[str, Any], path: str
) -> None:
    """Compare the lower and the upper bound of a number, inclusive or exclusive."""
    for keywords, sign in (
        (("minimum", "exclusiveMinimum"), 1),
        (("maximum", "exclusiveMaximum"), -1),
    ):
        old_bound, new_bound = _bound(old, keywords, sign), _bound(new, keywords, sign)
        if old_bound == new_bound:
            continue
        if old_bound is None or new_bound is None:
            tightened = new_bound is not None
        else:
            tightened = new_bound > old_bound
        _constraint(walker, old, new, path, keywords, tightened)


def compare_multiple_of(
    walker: Walker, old: Mapping[str, Any], new: Mapping[str, Any], path: str
) -> None:
    """Compare multipleOf: a multiple of the old step is stricter, a divisor of it looser."""
    old_step, new_step = _fraction(old.get("multipleOf")), _fraction(new.get("multipleOf"))
    if old_step == new_step:
        return
    if old_step is None or new_step is None:
        _constraint(walker, old, new, path, ("multipleOf",), new_step is not None)
    elif (new_step / old_step).denominator == 1:
        _constraint(walker, old, new, path, ("multipleOf",), True)
    elif (old_step / new_step).denominator == 1:
        _constraint(walker, old, new, path, ("multipleOf",), False)
    else:
        _constraint(walker, old, new, path, ("multipleOf",), None)


def compare_pattern(
    walker: Walker, old: Mapping[str, Any], new: Mapping[str, Any], path: str, keyword: str
) -> None:
    """Compare ``pattern`` or ``format``: two different values cannot be ordered."""
    old_value, new_value = old.get(keyword), new.get(keyword)
    if old_value == new_value:
        return
    if old_value is None or new_value is None:
        _constraint(walker, old, new, path, (keyword,), new_value is not None)
    else:
        _constraint(walker, old, new, path, (keyword,), None)


def _constraint(
    walker: Walker,
    old: Mapping[str, Any],
    new: Mapping[str, Any],
    path: str,
    keywords: tuple[str, ...],
    tightened: bool | None,
) -> None:
    """Report a changed constraint; ``tightened=None`` means it cannot be ordered."""
    before, after = pick(old, *keywords), pick(new, *keywords)
    names = "/".join(keywords)
    note = (
        " (format is checked only where the validator asserts formats)"
        if "format" in keywords
        else ""
    )
    if tightened is None:
        walker.emit(
            path,
            "constraint-changed",
            before,
            after,
            BOTH,
            f"{names} changed and the two cannot be ordered; compare them by hand{note}",
            undecided=True,
        )
    elif tightened:
        walker.emit(
            path,
            "constraint-tightened",
            before,
            after,
            ONLY_BACKWARD,
            f"{names} is stricter: new readers reject old data outside it{note}",
        )
    else:
        walker.emit(
            path,
            "constraint-loosened",
            before,
            after,
            ONLY_FORWARD,
            f"{names} is looser: old readers reject new data outside the old limit{note}",
        )


def _bound(
    schema: Mapping[str, Any], keywords: tuple[str, str], sign: int
) -> tuple[float, bool] | None:
    """Return the tightest of an inclusive and an exclusive bound as ``(sign * value, exclusive)``.

    ``sign`` is 1 for lower and -1 for upper bounds, so that the larger tuple is the tighter one.
    """
    inclusive, exclusive = keywords
    bounds = [
        (sign * float(schema[keyword]), keyword == exclusive)
        for keyword in (inclusive, exclusive)
        if _number(schema.get(keyword)) is not None
    ]
    return max(bounds) if bounds else None


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _fraction(value: Any) -> Fraction | None:
    if _number(value) is None or value <= 0:
        return None
    return Fraction(str(value))
