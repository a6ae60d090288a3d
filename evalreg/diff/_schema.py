"""How the diff reads a schema: the keywords it knows, how it treats each, and JSON helpers."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


DESCRIPTIVE: Final = frozenset({"title", "description"})
ANNOTATIONS: Final = _words(
    "$comment default examples deprecated readOnly writeOnly contentMediaType contentEncoding "
    "contentSchema"
)
# Identity and storage keywords: they do not constrain the instance where they stand.
STRUCTURAL: Final = _words(
    "$schema $id $anchor $dynamicAnchor $recursiveAnchor $defs definitions $vocabulary $ref"
)
HANDLED: Final = _words(
    "type enum const properties required additionalProperties patternProperties minProperties "
    "maxProperties items prefixItems additionalItems minItems maxItems uniqueItems minLength "
    "maxLength pattern format minimum maximum exclusiveMinimum exclusiveMaximum multipleOf "
    "allOf anyOf oneOf not if then else"
)
# Validation keywords compared only as raw values: any difference is reported as undecided.
RAW_ONLY: Final = _words(
    "propertyNames dependencies dependentRequired dependentSchemas unevaluatedProperties "
    "unevaluatedItems contains minContains maxContains $dynamicRef $recursiveRef"
)
KNOWN: Final = DESCRIPTIVE | ANNOTATIONS | STRUCTURAL | HANDLED | RAW_ONLY
EMPTY: Final[Mapping[str, Any]] = {}


def validates(schema: Mapping[str, Any]) -> bool:
    """Tell whether a schema has any keyword that can reject a value."""
    return any(key in HANDLED | RAW_ONLY or key == "$ref" for key in schema)


def required_names(schema: Mapping[str, Any]) -> set[str]:
    """Return the names ``schema`` lists as required (none when ``required`` is not a list)."""
    required = schema.get("required")
    if not isinstance(required, list):
        return set()
    return {name for name in required if isinstance(name, str)}


def pick(schema: Mapping[str, Any], *keywords: str) -> dict[str, Any]:
    """Return the given keywords of ``schema`` that it has, with their values."""
    return {keyword: schema[keyword] for keyword in keywords if keyword in schema}


def as_list(value: Any) -> list[Any]:
    """Return ``value`` when it is a list, else an empty list."""
    return value if isinstance(value, list) else []


def as_mapping(value: Any) -> Mapping[str, Any]:
    """Return ``value`` when it is a mapping, else an empty one."""
    return value if isinstance(value, Mapping) else EMPTY


def ordered_keys(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """Return the keys of both mappings: the old order first, then the new-only keys."""
    return list(old) + [key for key in new if key not in old]


def _canonical(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_canonical(item) for item in value]
    if isinstance(value, Mapping):
        return {str(k): _canonical(v) for k, v in value.items()}
    return value


def json_key(value: Any) -> str:
    """Return a text that is equal for equal JSON values (1 == 1.0, but true != 1)."""
    return json.dumps(_canonical(value), sort_keys=True, ensure_ascii=False, default=repr)


def same_json(a: Any, b: Any) -> bool:
    """Tell whether two values are equal as JSON (1 == 1.0, but true != 1)."""
    return json_key(a) == json_key(b)


def child_path(path: str, name: str) -> str:
    """Return the pointer of member ``name`` below ``path``, escaped as RFC 6901 says."""
    return f"{path}/{name.replace('~', '~0').replace('/', '~1')}"


def short(value: Any, limit: int = 60) -> str:
    """Return ``value`` as compact JSON, cut to ``limit`` characters with an ellipsis."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=repr)
    return text if len(text) <= limit else text[: limit - 1] + "…"
