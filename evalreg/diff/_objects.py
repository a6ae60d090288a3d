"""Objects: declared properties, required names, additional and pattern properties, counts.

A property removed and another added at the same object whose schemas have nearly the same
structure are also reported as a probable rename, and compared with each other under the new
name; the removal and the addition keep their own verdicts, since a rename breaks both ways.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Final

from evalreg.diff._changes import BACKWARD, BOTH, FORWARD, NEITHER, ONLY_BACKWARD, ONLY_FORWARD
from evalreg.diff._constraints import compare_counts
from evalreg.diff._schema import (
    as_list,
    as_mapping,
    child_path,
    ordered_keys,
    required_names,
    short,
    validates,
)
from evalreg.diff._types import signature
from evalreg.regex import PatternRefused, search

if TYPE_CHECKING:
    from evalreg.diff._protocol import Side, Walker

# A removed and an added property are a probable rename when they share this much structure.
_RENAME_SIMILARITY: Final = Fraction(4, 5)
_RENAME_MIN_MEMBERS: Final = 3
_SHAPE_DEPTH: Final = 8

_OPENNESS_TEXT: Final = {
    "open": "allowed with any value",
    "schema": "allowed when they match additionalProperties",
    "closed": "forbidden",
}


def compare_objects(
    walker: Walker,
    old: Mapping[str, Any],
    old_side: Side,
    new: Mapping[str, Any],
    new_side: Side,
    path: str,
) -> None:
    """Compare the declared properties, the required names, undeclared members and counts."""
    old_props = as_mapping(old.get("properties"))
    new_props = as_mapping(new.get("properties"))
    old_required = required_names(old)
    new_required = required_names(new)
    renamed = _renames(walker, old_props, old_side, new_props, new_side)
    for name in ordered_keys(old_props, new_props):
        child = child_path(path, name)
        if name in old_props and name in new_props:
            walker.compare(old_props[name], old_side, new_props[name], new_side, child)
        elif name in new_props:
            _property_added(walker, name, old, old_side, new, new_side, child)
            if name in renamed:
                # The removal and the addition carry the breaks; this adds what changed inside.
                was = renamed[name]
                walker.emit(
                    child,
                    "property-renamed",
                    child_path(path, was),
                    child,
                    NEITHER,
                    f"probable rename: {was} -> {name}, compared below",
                )
                walker.compare(old_props[was], old_side, new_props[name], new_side, child)
        else:
            _property_removed(walker, name, old, old_side, new, new_side, child)
    # A property declared on one side only carries its required change in its own finding.
    one_sided = old_props.keys() ^ new_props.keys()
    for name in sorted(new_required - old_required - one_sided):
        walker.emit(
            child_path(path, name),
            "required-added",
            False,
            True,
            ONLY_BACKWARD,
            "now required: data written under the old schema may lack it",
        )
    for name in sorted(old_required - new_required - one_sided):
        walker.emit(
            child_path(path, name),
            "required-removed",
            True,
            False,
            ONLY_FORWARD,
            "now optional: old readers reject new data that lacks it",
        )
    _additional_properties(walker, old, old_side, new, new_side, path)
    _pattern_properties(walker, old, old_side, new, new_side, path)
    compare_counts(walker, old, new, path, ("minProperties", "maxProperties"))


def _renames(
    walker: Walker,
    old_props: Mapping[str, Any],
    old_side: Side,
    new_props: Mapping[str, Any],
    new_side: Side,
) -> dict[str, str]:
    """Pair removed with added properties that are probably one property renamed.

    A removed and an added property of one object are a probable rename when their schemas
    admit the same types, each declares at least 3 nested properties (found through
    ``properties``, ``items`` and ``allOf``, named by their path below the property), and
    those paths, together with which of them are required, overlap by at least 0.8 (shared
    over all: the Jaccard index). A pair counts only when neither property is that close to
    any other property of the other side. Leaves and small objects are never paired: a
    matching type alone says too little.

    Return the old name of each renamed property, by its new name.
    """
    removed = [name for name in old_props if name not in new_props]
    added = [name for name in new_props if name not in old_props]
    if not removed or not added:
        return {}
    old_shapes = {name: _shape(walker, old_props[name], old_side) for name in removed}
    new_shapes = {name: _shape(walker, new_props[name], new_side) for name in added}
    close = [
        (was, name)
        for was in removed
        for name in added
        if _alike(old_shapes[was], new_shapes[name])
    ]
    return {
        name: was
        for was, name in close
        if [pair for pair in close if pair[0] == was or pair[1] == name] == [(was, name)]
    }


def _shape(walker: Walker, schema: Any, side: Side) -> _Shape:
    """Return the types a property admits and the nested properties it declares."""
    members: set[str] = set()
    required: set[str] = set()

    def walk(node: Any, node_side: Side, prefix: str, seen: frozenset[int]) -> None:
        node, node_side = walker.resolve(node, node_side)
        if not isinstance(node, Mapping) or id(node) in seen or len(seen) >= _SHAPE_DEPTH:
            return
        seen |= {id(node)}
        names = required_names(node)
        for name, sub in as_mapping(node.get("properties")).items():
            child = child_path(prefix, name)
            members.add(child)
            if name in names:
                required.add(child)
            walk(sub, node_side, child, seen)
        items = node.get("items")
        if isinstance(items, Mapping):
            walk(items, node_side, child_path(prefix, "*"), seen)
        for part in as_list(node.get("allOf")):
            walk(part, node_side, prefix, seen)

    walk(schema, side, "", frozenset())
    return _Shape(signature(walker, schema, side)[0], frozenset(members), frozenset(required))


def _property_added(
    walker: Walker,
    name: str,
    old: Mapping[str, Any],
    old_side: Side,
    new: Mapping[str, Any],
    new_side: Side,
    path: str,
) -> None:
    schema = new["properties"][name]
    old_rule, rule_text = _member_rule(old, name)
    value_breaks, undecided, _ = walker.probe(old_rule, old_side, schema, new_side, path)
    was_required, now_required = name in required_names(old), name in required_names(new)
    reasons: list[str] = []
    contested = not was_required and not now_required
    if contested and walker.policy == "lenient":
        breaks = value_breaks & ONLY_FORWARD
    else:
        breaks = value_breaks
    reasons.append(
        _member_reason(rule_text, old_rule, value_breaks, contested, walker.policy, added=True)
    )
    if now_required and not was_required:
        breaks |= ONLY_BACKWARD
        reasons.append("required: data written under the old schema may lack it")
    if was_required and not now_required:
        breaks |= ONLY_FORWARD
        reasons.append("no longer required: old readers reject new data that lacks it")
    walker.emit(
        path,
        "property-added",
        None,
        {"required": now_required, "schema": schema},
        breaks,
        "; ".join(reasons),
        undecided=undecided,
    )


def _property_removed(
    walker: Walker,
    name: str,
    old: Mapping[str, Any],
    old_side: Side,
    new: Mapping[str, Any],
    new_side: Side,
    path: str,
) -> None:
    schema = old["properties"][name]
    new_rule, rule_text = _member_rule(new, name)
    value_breaks, undecided, _ = walker.probe(schema, old_side, new_rule, new_side, path)
    was_required, now_required = name in required_names(old), name in required_names(new)
    contested = not was_required and not now_required
    if contested and walker.policy == "lenient":
        breaks = value_breaks & ONLY_BACKWARD
    else:
        breaks = value_breaks
    reasons = [
        _member_reason(rule_text, new_rule, value_breaks, contested, walker.policy, added=False)
    ]
    if was_required and not now_required:
        breaks |= ONLY_FORWARD
        reasons.append("was required: old readers reject new data that lacks it")
    if now_required and not was_required:
        breaks |= ONLY_BACKWARD
        reasons.append("now required: data written under the old schema may lack it")
    walker.emit(
        path,
        "property-removed",
        {"required": was_required, "schema": schema},
        None,
        breaks,
        "; ".join(reasons),
        undecided=undecided,
    )


def _additional_properties(
    walker: Walker,
    old: Mapping[str, Any],
    old_side: Side,
    new: Mapping[str, Any],
    new_side: Side,
    path: str,
) -> None:
    old_rule = old.get("additionalProperties", True)
    new_rule = new.get("additionalProperties", True)
    old_kind = _openness(walker.resolve(old_rule, old_side)[0])
    new_kind = _openness(walker.resolve(new_rule, new_side)[0])
    if old_kind == new_kind == "schema":
        walker.compare(old_rule, old_side, new_rule, new_side, child_path(path, "*"))
        return
    if old_kind == new_kind:
        return
    order = {"open": 2, "schema": 1, "closed": 0}
    if order[new_kind] < order[old_kind]:
        walker.emit(
            path,
            "additional-properties-tightened",
            old_rule,
            new_rule,
            ONLY_BACKWARD,
            f"undeclared properties were {_OPENNESS_TEXT[old_kind]}, now "
            f"{_OPENNESS_TEXT[new_kind]}: new readers reject old data that had others",
        )
    else:
        walker.emit(
            path,
            "additional-properties-loosened",
            old_rule,
            new_rule,
            ONLY_FORWARD,
            f"undeclared properties were {_OPENNESS_TEXT[old_kind]}, now "
            f"{_OPENNESS_TEXT[new_kind]}: old readers reject new data that uses the freedom",
        )


def _pattern_properties(
    walker: Walker,
    old: Mapping[str, Any],
    old_side: Side,
    new: Mapping[str, Any],
    new_side: Side,
    path: str,
) -> None:
    old_patterns = as_mapping(old.get("patternProperties"))
    new_patterns = as_mapping(new.get("patternProperties"))
    for pattern in ordered_keys(old_patterns, new_patterns):
        child = child_path(path, f"<{pattern}>")
        if pattern in old_patterns and pattern in new_patterns:
            walker.compare(old_patterns[pattern], old_side, new_patterns[pattern], new_side, child)
            continue
        before = {"patternProperties": old_patterns[pattern]} if pattern in old_patterns else {}
        after = {"patternProperties": new_patterns[pattern]} if pattern in new_patterns else {}
        walker.emit(
            child,
            "unknown",
            before,
            after,
            BOTH,
            "a patternProperties entry appeared or disappeared; how it meets the declared "
            "and additional properties is not compared",
            undecided=True,
        )


@dataclass(frozen=True)
class _Shape:
    """What a property's schema declares: its types, its nested properties, the required ones."""

    types: frozenset[str] | None
    members: frozenset[str]
    required: frozenset[str]


def _alike(old: _Shape, new: _Shape) -> bool:
    """Tell whether two property schemas are close enough to be one property renamed."""
    if old.types != new.types:
        return False
    if min(len(old.members), len(new.members)) < _RENAME_MIN_MEMBERS:
        return False
    old_marks = old.members | {f"{member} (required)" for member in old.required}
    new_marks = new.members | {f"{member} (required)" for member in new.required}
    return Fraction(len(old_marks & new_marks), len(old_marks | new_marks)) >= _RENAME_SIMILARITY


def _openness(rule: Any) -> str:
    if rule is False:
        return "closed"
    if rule is True or (isinstance(rule, Mapping) and not validates(rule)):
        return "open"
    return "schema"


def _member_rule(schema: Mapping[str, Any], name: str) -> tuple[Any, str]:
    """Return the schema that governs an undeclared member ``name``, and where it comes from."""
    for pattern, rule in as_mapping(schema.get("patternProperties")).items():
        try:
            if search(pattern, name):
                return rule, f"patternProperties {pattern!r}"
        except PatternRefused:
            continue
    rule = schema.get("additionalProperties", True)
    if rule is True:
        return True, "additionalProperties (absent: any value)"
    return rule, f"additionalProperties {short(rule)}"


def _member_reason(
    rule_text: str,
    rule: Any,
    value_breaks: frozenset[str],
    contested: bool,
    policy: str,
    *,
    added: bool,
) -> str:
    """Explain why adding or removing a declared property does or does not break."""
    other = "old" if added else "new"
    if rule is False:
        if added:
            return "the old schema forbids undeclared properties: old readers reject data with it"
        return "the new schema forbids undeclared properties: new readers reject old data with it"
    open_rule = _openness(rule) == "open"
    if contested and open_rule:
        if policy == "lenient":
            return (
                f"optional, and the {other} schema allows undeclared properties: compatible under "
                "the lenient policy, which assumes no data used the name for another value"
            )
        if not value_breaks:
            return f"optional, and its value is unconstrained; the {other} schema allows it too"
        if added:
            return (
                "optional; strict policy: the old schema accepted any value under this name, and "
                "the new value constraint can reject such old data"
            )
        return (
            "optional; strict policy: the new schema accepts any value under this name, and "
            "the old value constraint rejects new data that uses it differently"
        )
    if open_rule:
        return f"the {other} schema allows it as an undeclared property with any value"
    verdict = ", ".join(sorted(value_breaks)) if value_breaks else "nothing"
    suffix = ""
    if contested and policy == "lenient" and value_breaks:
        suffix = f" (lenient policy: only {FORWARD if added else BACKWARD} counts)"
    return (
        f"the {other} schema checks it as an undeclared property against {rule_text}; "
        f"that rule against the declaration breaks {verdict}{suffix}"
    )
