"""Types and values: the JSON types and the enum/const values a schema admits, and their rules.

A set of types is a ``frozenset`` of JSON type names, or ``None`` for every type; ``integer`` is
a kind of ``number``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from evalreg.diff._changes import BOTH, NEITHER, ONLY_BACKWARD, ONLY_FORWARD
from evalreg.diff._schema import as_list, as_mapping, json_key, required_names
from evalreg.io.codec import schema_type as json_type

if TYPE_CHECKING:
    from evalreg.diff._protocol import Side, Walker

_ALL_TYPES: Final = frozenset({"null", "boolean", "object", "array", "number", "string"})


def compare_degenerate(walker: Walker, old: Any, new: Any, path: str) -> None:
    """Compare where a side is ``false`` (accepts nothing) or not a schema at all."""
    if not isinstance(old, (Mapping, bool)) or not isinstance(new, (Mapping, bool)):
        if json_key(old) != json_key(new):
            walker.emit(
                path,
                "unknown",
                {"schema": old},
                {"schema": new},
                BOTH,
                "one side is not a schema (neither an object nor a boolean)",
                undecided=True,
            )
        return
    if old is False and new is False:
        return
    if old is False:
        walker.emit(
            path,
            "type-widened",
            False,
            _type_view(types_of(new) if isinstance(new, Mapping) else None),
            ONLY_FORWARD,
            "the old schema accepted nothing here; old readers reject any such value",
        )
    else:
        walker.emit(
            path,
            "type-narrowed",
            _type_view(types_of(old) if isinstance(old, Mapping) else None),
            False,
            ONLY_BACKWARD,
            "the new schema accepts nothing here; new readers reject old data that has it",
        )


def compare_types(
    walker: Walker, old_types: frozenset[str] | None, new_types: frozenset[str] | None, path: str
) -> None:
    """Report a type set that widened, narrowed or changed both ways."""
    widens = covers(new_types, old_types)
    narrows = covers(old_types, new_types)
    if widens and narrows:
        return
    before, after = _type_view(old_types), _type_view(new_types)
    if widens:
        gained = _type_text(_minus(new_types, old_types))
        walker.emit(
            path,
            "type-widened",
            before,
            after,
            ONLY_FORWARD,
            f"the new schema also accepts {gained}; old readers reject such values",
        )
    elif narrows:
        lost = _type_text(_minus(old_types, new_types))
        walker.emit(
            path,
            "type-narrowed",
            before,
            after,
            ONLY_BACKWARD,
            f"the new schema no longer accepts {lost}; new readers reject such old data",
        )
    else:
        walker.emit(
            path,
            "type-changed",
            before,
            after,
            BOTH,
            "each schema accepts types the other rejects",
        )


def compare_values(
    walker: Walker, old: Mapping[str, Any], new: Mapping[str, Any], path: str
) -> None:
    """Compare the values enum and const allow: added values break FORWARD, removed BACKWARD."""
    old_values, new_values = values_of(old), values_of(new)
    if old_values is None and new_values is None:
        return
    if old_values is None or new_values is None:
        keyword = "const" if "const" in (old if new_values is None else new) else "enum"
        if old_values is None:
            walker.emit(
                path,
                "constraint-tightened",
                {},
                {keyword: new[keyword]},
                ONLY_BACKWARD,
                f"values are now restricted by {keyword}; old data may hold other values",
            )
        else:
            walker.emit(
                path,
                "constraint-loosened",
                {keyword: old[keyword]},
                {},
                ONLY_FORWARD,
                f"values are no longer restricted by {keyword}; old readers reject others",
            )
        return
    old_keys = {json_key(value) for value in old_values}
    new_keys = {json_key(value) for value in new_values}
    added = new_keys - old_keys
    removed = old_keys - new_keys
    if not added and not removed:
        return
    if "const" in old or "const" in new:
        breaks = (ONLY_BACKWARD if removed else NEITHER) | (ONLY_FORWARD if added else NEITHER)
        walker.emit(
            path,
            "const-changed",
            old_values,
            new_values,
            breaks,
            _value_reason(bool(removed), bool(added)),
        )
        return
    if added:
        walker.emit(
            path,
            "enum-added",
            old_values,
            new_values,
            ONLY_FORWARD,
            _value_reason(False, True),
        )
    if removed:
        walker.emit(
            path,
            "enum-removed",
            old_values,
            new_values,
            ONLY_BACKWARD,
            _value_reason(True, False),
        )


def signature(
    walker: Walker, branch: Any, side: Side, seen: frozenset[int] = frozenset()
) -> tuple[frozenset[str] | None, Mapping[str, str]]:
    """Return a branch's types and the constant values of its required properties."""
    schema, side = walker.resolve(branch, side)
    if id(schema) in seen:
        return None, {}
    seen |= {id(schema)}
    if not isinstance(schema, Mapping):
        return (frozenset() if schema is False else None), {}
    types = types_of(schema)
    consts: dict[str, str] = {}
    props = as_mapping(schema.get("properties"))
    for name in required_names(schema) & props.keys():
        prop, _ = walker.resolve(props[name], side)
        values = values_of(prop) if isinstance(prop, Mapping) else None
        if values is not None and len(values) == 1:
            consts[name] = json_key(values[0])
    for part in as_list(schema.get("allOf")):
        part_types, part_consts = signature(walker, part, side, seen)
        types = meet(types, part_types)
        consts.update(part_consts)
    return types, consts


def types_of(schema: Mapping[str, Any]) -> frozenset[str] | None:
    """Return the JSON types a schema admits by ``type`` (and enum/const when untyped)."""
    declared = schema.get("type")
    types: frozenset[str] | None = None
    if isinstance(declared, str):
        types = frozenset({declared})
    elif isinstance(declared, list):
        types = frozenset(t for t in declared if isinstance(t, str))
    values = values_of(schema)
    if values is not None:
        types = meet(types, frozenset(json_type(value) for value in values))
    return types


def meet(a: frozenset[str] | None, b: frozenset[str] | None) -> frozenset[str] | None:
    """Intersect two type sets (``None`` = every type; integers are numbers)."""
    if a is None:
        return b
    if b is None:
        return a
    met = set(a & b)
    if ("integer" in a and "number" in b) or ("number" in a and "integer" in b):
        met.add("integer")
    return frozenset(met)


def covers(big: frozenset[str] | None, small: frozenset[str] | None) -> bool:
    """Tell whether every type of ``small`` is in ``big`` (``None`` = every type)."""
    if big is None:
        return True
    if small is None:
        return big >= _ALL_TYPES
    return all(t in big or (t == "integer" and "number" in big) for t in small)


def _minus(a: frozenset[str] | None, b: frozenset[str] | None) -> frozenset[str] | None:
    if b is None:
        return frozenset()
    if a is None:
        return _ALL_TYPES - b if "number" not in b else _ALL_TYPES - b - {"number"}
    return frozenset(t for t in a if not covers(b, frozenset({t})))


def may_be(types: frozenset[str] | None, wanted: str) -> bool:
    """Tell whether a value of type ``wanted`` may be admitted by ``types``."""
    if types is None:
        return True
    return wanted in types or (wanted == "number" and "integer" in types)


def _type_view(types: frozenset[str] | None) -> list[str] | None:
    return None if types is None else sorted(types)


def _type_text(types: frozenset[str] | None) -> str:
    if types is None:
        return "any type"
    if not types:
        return "no type"
    return ", ".join(sorted(types))


def values_of(schema: Mapping[str, Any]) -> list[Any] | None:
    """Return the values ``enum``/``const`` allow, or None when they do not restrict."""
    values: list[Any] | None = None
    if isinstance(schema.get("enum"), list):
        values = list(schema["enum"])
    if "const" in schema:
        const = schema["const"]
        # const and enum together allow the const only if the enum lists it.
        keep = values is None or json_key(const) in {json_key(v) for v in values}
        values = [const] if keep else []
    return values


def _value_reason(removed: bool, added: bool) -> str:
    parts = []
    if removed:
        parts.append("values were removed: new readers reject old data that holds them")
    if added:
        parts.append("values were added: old readers reject new data that holds them")
    return "; ".join(parts)
