"""Compose a Hypothesis strategy for the records valid at a ref-free JSON Schema."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy


VALIDATION_KEYWORDS = frozenset(
    {
        "type",
        "enum",
        "const",
        "properties",
        "patternProperties",
        "additionalProperties",
        "required",
        "dependencies",
        "dependentRequired",
        "dependentSchemas",
        "propertyNames",
        "minProperties",
        "maxProperties",
        "items",
        "prefixItems",
        "additionalItems",
        "contains",
        "minContains",
        "maxContains",
        "minItems",
        "maxItems",
        "uniqueItems",
        "unevaluatedItems",
        "unevaluatedProperties",
        "minLength",
        "maxLength",
        "pattern",
        "format",
        "contentEncoding",
        "contentMediaType",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "if",
        "then",
        "else",
    }
)
_COMBINATORS = ("allOf", "anyOf", "oneOf", "not")
_PLAIN_OBJECT = frozenset(
    {"type", "properties", "required", "additionalProperties", "minProperties", "maxProperties"}
)
_PLAIN_ARRAY = frozenset({"type", "items", "minItems", "maxItems", "contains"})
_ARRAY_CAP = 3
_MAX_DEPTH = 60


class Composer:
    """Build a Hypothesis strategy for the records valid at a (ref-free) schema, once.

    hypothesis-jsonschema recomputes its object strategies at every draw, which makes large
    nested schemas very slow. Here plain objects and arrays are composed directly, `allOf` /
    `anyOf` / `oneOf` are distributed into branches, and everything else (strings, numbers,
    patterns, enums, unusual keywords) is left to hypothesis-jsonschema. Free-form values are
    small, and arrays hold at most three items beyond their minimum: a subset of the valid
    records, which keeps examples small and fast while still exercising extra fields.
    """

    def __init__(self) -> None:
        from hypothesis import strategies as st

        scalars = (
            st.none()
            | st.booleans()
            | st.integers()
            | st.floats(allow_nan=False, allow_infinity=False)
            | st.text(max_size=10)
        )
        self.any_value: SearchStrategy[Any] = (
            scalars
            | st.lists(scalars, max_size=2)
            | st.dictionaries(st.text(max_size=6), scalars, max_size=2)
        )

    @staticmethod
    def _checker(schema: Any) -> Callable[[Any], bool]:
        from jsonschema.validators import Draft7Validator, validator_for

        from evalreg.engine.schemaregex import linear

        cls = linear(validator_for(schema, default=Draft7Validator))
        return cls(schema).is_valid

    def compose(self, schema: Any, depth: int = 0) -> SearchStrategy[Any]:
        from hypothesis_jsonschema import from_schema as _from_schema

        def from_schema(body: Any) -> SearchStrategy[Any]:
            return cast("SearchStrategy[Any]", _from_schema(body))

        from hypothesis import strategies as st
        from hypothesis_jsonschema._canonicalise import FALSEY, canonicalish, get_type

        if not isinstance(schema, dict):
            schema = canonicalish(schema)
        body = {k: v for k, v in schema.items() if k in VALIDATION_KEYWORDS}
        if body == FALSEY:
            return st.nothing()
        if not body:
            return self.any_value
        if depth > _MAX_DEPTH:
            return from_schema(body)
        if any(k in body for k in _COMBINATORS):
            rest = {k: v for k, v in body.items() if k not in _COMBINATORS}
            parts = [*body.get("allOf", ())]
            parts += [{k: body[k]} for k in ("anyOf", "oneOf") if k in body]
            strategy = self._conjoin(rest, parts, depth + 1)
            if "not" in body:
                excluded = self._checker(body["not"])
                strategy = strategy.filter(lambda value: not excluded(value))
            return strategy
        types = get_type(body) if "type" in body else None
        if types is not None and len(types) > 1:
            kept = [t for t in types if not (t == "integer" and "number" in types)]
            return st.one_of(
                [self.compose(canonicalish({**body, "type": [t]}), depth + 1) for t in kept]
            )
        if types == ["object"] and set(body) <= _PLAIN_OBJECT:
            return self._object(body, depth)
        if (
            types == ["array"]
            and set(body) <= _PLAIN_ARRAY
            and isinstance(body.get("items", {}), dict)
        ):
            return self._array(body, depth)
        return from_schema(body)

    def _array(self, body: Mapping[str, Any], depth: int) -> SearchStrategy[Any]:
        from hypothesis import strategies as st
        from hypothesis_jsonschema._canonicalise import FALSEY, merged

        low = int(body.get("minItems", 0))
        high = min(int(body.get("maxItems", low + _ARRAY_CAP)), low + _ARRAY_CAP)
        items_schema = body.get("items", {})
        items = self.compose(items_schema, depth + 1)
        if "contains" not in body:
            return st.lists(items, min_size=low, max_size=high)
        # One item matching `contains`, inserted among the others.
        wanted = merged([items_schema, body["contains"]])
        if wanted is None or wanted == FALSEY or high < 1:
            return st.nothing()
        rest = st.lists(items, min_size=max(low - 1, 0), max_size=high - 1)
        return st.builds(
            lambda others, item, at: [
                *others[: at % (len(others) + 1)],
                item,
                *others[at % (len(others) + 1) :],
            ],
            rest,
            self.compose(wanted, depth + 1),
            st.integers(min_value=0, max_value=_ARRAY_CAP),
        )

    def _conjoin(self, rest: Any, parts: Sequence[Any], depth: int) -> SearchStrategy[Any]:
        if not parts:
            return self.compose(rest, depth)
        first, others = parts[0], parts[1:]
        for key in ("anyOf", "oneOf"):
            if key not in first:
                continue
            base = {k: v for k, v in first.items() if k != key}
            branches = first[key]
            strategies = []
            for index, branch in enumerate(branches):
                strategy = self._merge(rest, [base, branch], others, depth)
                if key == "oneOf":
                    rivals = [self._checker(b) for i, b in enumerate(branches) if i != index]
                    strategy = strategy.filter(partial(_matches_none, rivals))
                strategies.append(strategy)
            from hypothesis import strategies as st

            return st.one_of(strategies)
        return self._merge(rest, [first], others, depth)

    def _merge(
        self, rest: Any, added: Sequence[Any], others: Sequence[Any], depth: int
    ) -> SearchStrategy[Any]:
        from hypothesis_jsonschema._canonicalise import FALSEY, merged

        combined = merged([rest, *added])
        if combined is None:
            checks = [self._checker(schema) for schema in added]
            return self._conjoin(rest, others, depth + 1).filter(
                lambda value: all(check(value) for check in checks)
            )
        if combined == FALSEY:
            from hypothesis import strategies as st

            return st.nothing()
        return self._conjoin(combined, others, depth + 1)

    def _object(self, body: Mapping[str, Any], depth: int) -> SearchStrategy[Any]:
        from hypothesis import strategies as st
        from hypothesis_jsonschema._canonicalise import FALSEY

        properties: Mapping[str, Any] = body.get("properties", {})
        required: Sequence[str] = body.get("required", [])
        extra = body.get("additionalProperties", {})
        fixed = {name: self.compose(properties.get(name, extra), depth + 1) for name in required}
        optional = {
            name: self.compose(schema, depth + 1)
            for name, schema in properties.items()
            if name not in required
        }
        strategy = st.fixed_dictionaries(fixed, optional=optional)
        if extra != FALSEY:
            names = st.text(min_size=1, max_size=8).filter(lambda name: name not in properties)
            extras = st.dictionaries(names, self.compose(extra, depth + 1), max_size=2)
            strategy = st.builds(lambda a, b: {**a, **b}, strategy, extras)
        low, high = body.get("minProperties", 0), body.get("maxProperties")
        if low or high is not None:
            strategy = strategy.filter(
                lambda value: low <= len(value) and (high is None or len(value) <= high)
            )
        return strategy


def _matches_none(checks: Sequence[Callable[[Any], bool]], value: Any) -> bool:
    return not any(check(value) for check in checks)
