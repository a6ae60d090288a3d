"""Arrays: the items at each position, the items after them, their count and uniqueness."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from evalreg.diff._changes import ONLY_BACKWARD, ONLY_FORWARD
from evalreg.diff._constraints import compare_counts
from evalreg.diff._schema import child_path, pick

if TYPE_CHECKING:
    from evalreg.diff._protocol import Side, Walker


def compare_arrays(
    walker: Walker,
    old: Mapping[str, Any],
    old_side: Side,
    new: Mapping[str, Any],
    new_side: Side,
    path: str,
) -> None:
    """Compare the items position by position, then the rest, the count and uniqueItems."""
    old_prefix, old_rest = _item_rules(old, old_side.legacy_refs)
    new_prefix, new_rest = _item_rules(new, new_side.legacy_refs)
    for index in range(max(len(old_prefix), len(new_prefix))):
        old_item = old_prefix[index] if index < len(old_prefix) else old_rest
        new_item = new_prefix[index] if index < len(new_prefix) else new_rest
        walker.compare(old_item, old_side, new_item, new_side, child_path(path, str(index)))
    walker.compare(old_rest, old_side, new_rest, new_side, child_path(path, "*"))
    compare_counts(walker, old, new, path, ("minItems", "maxItems"))
    old_unique = old.get("uniqueItems") is True
    new_unique = new.get("uniqueItems") is True
    if old_unique != new_unique:
        before, after = pick(old, "uniqueItems"), pick(new, "uniqueItems")
        if new_unique:
            walker.emit(
                path,
                "constraint-tightened",
                before,
                after,
                ONLY_BACKWARD,
                "items must now be unique; old data may repeat items",
            )
        else:
            walker.emit(
                path,
                "constraint-loosened",
                before,
                after,
                ONLY_FORWARD,
                "items may now repeat; old readers reject new data that repeats them",
            )


def _item_rules(schema: Mapping[str, Any], legacy: bool) -> tuple[list[Any], Any]:
    """Return the per-position item schemas and the schema for the items after them."""
    items = schema.get("items", True)
    if isinstance(items, list):
        return list(items), schema.get("additionalItems", True)
    prefix = schema.get("prefixItems")
    if isinstance(prefix, list) and not legacy:
        return list(prefix), items
    return [], items
