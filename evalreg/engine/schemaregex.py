"""`jsonschema` validator classes that match a schema's regular expressions with RE2.

`jsonschema` matches `pattern` and `patternProperties` with Python's `re`, which backtracks, and
so do `additionalProperties` and `unevaluatedProperties`, which depend on the properties those
patterns claim. evalreg's reference validator explains invalid records with `jsonschema`, and
`evalreg check` tries steps on generated records with it: `linear` gives a validator class these
four keywords with the patterns matched by `evalreg.regex`, in time linear in the text, and the
messages `jsonschema` writes. A pattern RE2 cannot compile raises `PatternRefused`; registry
loading and `evalreg check` refuse such patterns before a validator ever sees one.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import cache
from typing import TYPE_CHECKING, Any, cast

from evalreg.regex import search

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

Errors = Iterator[Any]


def _extras(keys: list[str]) -> str:
    """Return `'a', 'b' were` (or `'a' was`), as jsonschema words a list of properties."""
    verb = "was" if len(keys) == 1 else "were"
    return f"{', '.join(repr(key) for key in keys)} {verb}"


def _error(message: str) -> Any:
    from jsonschema.exceptions import ValidationError

    return ValidationError(message)


def _claimed(key: str, patterns: Mapping[str, Any]) -> bool:
    return any(search(pattern, key) for pattern in patterns)


def pattern(validator: Any, regex: str, instance: Any, schema: Mapping[str, Any]) -> Errors:
    """The `pattern` keyword: a string must match the expression somewhere."""
    if validator.is_type(instance, "string") and not search(regex, instance):
        yield _error(f"{instance!r} does not match {regex!r}")


def pattern_properties(
    validator: Any, patterns: Mapping[str, Any], instance: Any, schema: Mapping[str, Any]
) -> Errors:
    """The `patternProperties` keyword: each property an expression matches meets its schema."""
    if not validator.is_type(instance, "object"):
        return
    for regex, subschema in patterns.items():
        for key, value in instance.items():
            if search(regex, key):
                yield from validator.descend(value, subschema, path=key, schema_path=regex)


def additional_properties(
    validator: Any, rule: Any, instance: Any, schema: Mapping[str, Any]
) -> Errors:
    """The `additionalProperties` keyword, over the properties no other keyword claims."""
    if not validator.is_type(instance, "object"):
        return
    declared = schema.get("properties", {})
    patterns = schema.get("patternProperties", {})
    extras = [k for k in instance if k not in declared and not _claimed(k, patterns)]
    if validator.is_type(rule, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], rule, path=extra)
    elif not rule and extras:
        if "patternProperties" in schema:
            verb = "does" if len(extras) == 1 else "do"
            joined = ", ".join(repr(extra) for extra in sorted(extras))
            listed = ", ".join(repr(regex) for regex in sorted(patterns))
            yield _error(f"{joined} {verb} not match any of the regexes: {listed}")
        else:
            unexpected = _extras(sorted(extras, key=str))
            yield _error(f"Additional properties are not allowed ({unexpected} unexpected)")


def _valid(validator: Any, instance: Any, schema: Any) -> bool:
    return next(iter(validator.descend(instance, schema)), None) is None


def _evaluated(validator: Any, instance: Mapping[str, Any], schema: Any) -> set[str]:
    """Return the properties of `instance` that `schema` and its in-place subschemas evaluate."""
    if not isinstance(schema, Mapping):
        return set()
    found: set[str] = set()
    for keyword in ("$ref", "$dynamicRef", "$recursiveRef"):
        if isinstance(schema.get(keyword), str):
            if keyword == "$recursiveRef":
                from referencing.jsonschema import lookup_recursive_ref

                resolved = lookup_recursive_ref(validator._resolver)
            else:
                resolved = validator._resolver.lookup(schema[keyword])
            inner = validator.evolve(schema=resolved.contents, _resolver=resolved.resolver)
            found |= _evaluated(inner, instance, resolved.contents)
    properties = schema.get("properties")
    if isinstance(properties, Mapping):
        found |= properties.keys() & instance.keys()
    for keyword in ("additionalProperties", "unevaluatedProperties"):
        if keyword in schema:
            rule = schema[keyword]
            found |= {key for key, value in instance.items() if _valid(validator, value, rule)}
    patterns = schema.get("patternProperties", {})
    found |= {key for key in instance if _claimed(key, patterns)}
    for name, subschema in schema.get("dependentSchemas", {}).items():
        if name in instance:
            found |= _evaluated(validator, instance, subschema)
    for keyword in ("allOf", "oneOf", "anyOf"):
        for subschema in schema.get(keyword, []):
            if _valid(validator, instance, subschema):
                found |= _evaluated(validator, instance, subschema)
    if "if" in schema:
        if validator.evolve(schema=schema["if"]).is_valid(instance):
            found |= _evaluated(validator, instance, schema["if"])
            if "then" in schema:
                found |= _evaluated(validator, instance, schema["then"])
        elif "else" in schema:
            found |= _evaluated(validator, instance, schema["else"])
    return found


def unevaluated_properties(
    validator: Any, rule: Any, instance: Any, schema: Mapping[str, Any]
) -> Errors:
    """The `unevaluatedProperties` keyword, over the properties no other keyword evaluated."""
    if not validator.is_type(instance, "object"):
        return
    evaluated = _evaluated(validator, instance, schema)
    failed = [
        key
        for key in instance
        if key not in evaluated and not _valid_at(validator, instance[key], rule, key)
    ]
    if not failed:
        return
    if rule is False:
        unexpected = _extras(sorted(failed, key=str))
        yield _error(f"Unevaluated properties are not allowed ({unexpected} unexpected)")
    else:
        yield _error(
            "Unevaluated properties are not valid under the given schema "
            f"({_extras(failed)} unevaluated and invalid)"
        )


def _valid_at(validator: Any, value: Any, rule: Any, key: str) -> bool:
    errors = validator.descend(value, rule, path=key, schema_path=key)
    return next(iter(errors), None) is None


_KEYWORDS = {
    "pattern": pattern,
    "patternProperties": pattern_properties,
    "additionalProperties": additional_properties,
    "unevaluatedProperties": unevaluated_properties,
}


@cache
def linear(cls: type[Validator]) -> type[Validator]:
    """Return `cls` (a `jsonschema` validator class) with its patterns matched by RE2."""
    from jsonschema.validators import extend

    known = cls.VALIDATORS
    keywords = {name: fn for name, fn in _KEYWORDS.items() if name in known}
    return cast("type[Validator]", extend(cls, keywords))  # type: ignore[no-untyped-call]
