"""Keywords compared as written: annotations, unknown keywords, and the ones not reasoned about.

Titles, descriptions and annotations never break a reader; they are reported as informational.
The validation keywords in ``RAW_ONLY`` are compared only as raw values, and any difference is
reported as undecided.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from evalreg.diff._changes import BOTH, NEITHER
from evalreg.diff._schema import (
    ANNOTATIONS,
    DESCRIPTIVE,
    KNOWN,
    RAW_ONLY,
    ordered_keys,
    pick,
    same_json,
)

if TYPE_CHECKING:
    from evalreg.diff._protocol import Walker


def compare_annotations(
    walker: Walker, old: Mapping[str, Any], new: Mapping[str, Any], path: str
) -> None:
    """Report changed titles, descriptions, annotations and unknown keywords; none breaks."""
    for keyword in ordered_keys(old, new):
        if keyword in KNOWN and keyword not in DESCRIPTIVE | ANNOTATIONS:
            continue
        if same_json(old.get(keyword), new.get(keyword)) and (keyword in old) == (keyword in new):
            continue
        before, after = pick(old, keyword), pick(new, keyword)
        if keyword in DESCRIPTIVE:
            walker.emit(path, "description-changed", before, after, NEITHER, "informational")
        elif keyword in ANNOTATIONS:
            walker.emit(
                path, "annotation-changed", before, after, NEITHER, "annotation; not validated"
            )
        else:
            walker.emit(
                path,
                "annotation-changed",
                before,
                after,
                NEITHER,
                f"{keyword!r} is not a JSON Schema keyword; validators ignore it",
            )


def compare_raw_only(
    walker: Walker, old: Mapping[str, Any], new: Mapping[str, Any], path: str
) -> None:
    """Report each changed keyword of ``RAW_ONLY`` as undecided, with where its values differ."""
    for keyword in ordered_keys(old, new):
        if keyword not in RAW_ONLY or same_json(old.get(keyword), new.get(keyword)):
            continue
        if keyword in old and keyword in new:
            from deepdiff import DeepDiff  # 0.8 s to import (pandas, polars): only where needed

            changed = ", ".join(DeepDiff(old[keyword], new[keyword]).affected_paths)
            where = f" (differs at {changed})" if changed else ""
        else:
            where = " (appeared)" if keyword in new else " (disappeared)"
        walker.emit(
            path,
            "unknown",
            pick(old, keyword),
            pick(new, keyword),
            BOTH,
            f"{keyword} changed{where}; this keyword is compared only as written",
            undecided=True,
        )
