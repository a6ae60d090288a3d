"""Walk two schemas in parallel and collect their differences: ``diff_schemas`` and ``_Differ``.

Each difference is reported at the JSON pointer of the *instance* it governs (array items and
undeclared members as ``*``), not at the place in the schema text. ``$ref`` is resolved through a
``referencing.Registry``; nothing is ever fetched. The walker compares nothing itself: it hands
each pair of subschemas to the keyword rules, which call back through the ``Walker`` protocol.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Final

import referencing.jsonschema
from referencing import Registry
from referencing.exceptions import Unresolvable

from evalreg.diff._annotations import compare_annotations, compare_raw_only
from evalreg.diff._arrays import compare_arrays
from evalreg.diff._changes import (
    BOTH,
    POLICIES,
    Change,
)
from evalreg.diff._combinators import (
    compare_all_of,
    compare_conditional,
    compare_not,
    compare_unions,
)
from evalreg.diff._constraints import (
    compare_bounds,
    compare_counts,
    compare_multiple_of,
    compare_pattern,
)
from evalreg.diff._moves import moved_properties
from evalreg.diff._objects import compare_objects
from evalreg.diff._protocol import Side
from evalreg.diff._report import SchemaDiff
from evalreg.diff._schema import (
    DESCRIPTIVE,
    EMPTY,
    HANDLED,
    RAW_ONLY,
    json_key,
)
from evalreg.diff._types import (
    compare_degenerate,
    compare_types,
    compare_values,
    may_be,
    meet,
    signature,
    values_of,
)
from evalreg.errors import SchemaDiffError

_MAX_DEPTH: Final = 200


def diff_schemas(
    old: Mapping[str, Any],
    new: Mapping[str, Any],
    *,
    registry: Registry[Any] | None = None,
    policy: str = "lenient",
    old_label: str = "old",
    new_label: str = "new",
) -> SchemaDiff:
    """Compare two JSON Schemas and classify each change for BACKWARD and FORWARD compatibility.

    ``registry`` supplies the schemas that ``$ref`` may point to besides ``old`` and ``new``
    themselves; a schema without ``$id`` is looked up in it by identity, else given a local id.
    ``policy`` decides the contested case of an optional property added to (or removed from) an
    object that allows undeclared properties: ``"lenient"`` treats it as compatible, ``"strict"``
    flags the value constraint that appears (or disappears) with it.

    Raises:
        SchemaDiffError: ``policy`` is not one of ``POLICIES`` (lenient, strict), or a ``$ref``
            cannot be resolved within the registry (nothing is ever fetched).
    """
    if policy not in POLICIES:
        raise SchemaDiffError(f"unknown diff policy {policy!r}: use one of {', '.join(POLICIES)}")
    base: Registry[Any] = registry if registry is not None else Registry()
    old_side = _root_side(old, base, "urn:evalreg:diff:old")
    new_side = _root_side(new, base, "urn:evalreg:diff:new")
    differ = _Differ(policy)
    if old.get("$schema") != new.get("$schema"):
        differ.emit(
            "",
            "unknown",
            {"$schema": old.get("$schema")},
            {"$schema": new.get("$schema")},
            BOTH,
            "the dialect changed; keywords were compared as written, but their meaning may differ",
            undecided=True,
        )
    differ.compare(old, old_side, new, new_side, "")
    # Sibling branches that share a subschema report the same change more than once.
    unique = {json_key(change.to_json()): change for change in differ.changes}
    changes = tuple(unique.values())
    return SchemaDiff(old_label, new_label, changes + tuple(moved_properties(changes)), policy)


# ---------------------------------------------------------------------------------------------
# Walking


def _root_side(schema: Mapping[str, Any], registry: Registry[Any], fallback: str) -> Side:
    """Return where references in ``schema`` resolve, with its dialect's rules for ``$ref``."""
    dialect = schema.get("$schema")
    specification = referencing.jsonschema.DRAFT202012
    if isinstance(dialect, str):
        specification = referencing.jsonschema.specification_with(
            dialect, default=referencing.jsonschema.DRAFT202012
        )
    resource = specification.create_resource(schema)
    uri = resource.id() or _uri_of(schema, registry) or fallback
    resolver = registry.with_resource(uri, resource).crawl().resolver(base_uri=uri)
    legacy = isinstance(dialect, str) and "draft-0" in dialect
    return Side(resolver, legacy)


def _uri_of(schema: Mapping[str, Any], registry: Registry[Any]) -> str | None:
    """Return the URI under which ``registry`` already holds this very schema object."""
    for uri in registry:
        if registry[uri].contents is schema:
            return uri
    return None


class _Differ:
    """Collect the changes between two schemas, walking both in parallel."""

    def __init__(
        self,
        policy: str,
        active: set[tuple[int, int]] | None = None,
        made: dict[tuple[Any, ...], Any] | None = None,
    ) -> None:
        self.policy = policy
        self.changes: list[Change] = []
        # Pairs of schema objects being compared further up: meeting one again means recursion.
        self._active = active if active is not None else set()
        # Schemas this walk builds, kept by recipe so that a recursion through them is seen
        # (and so that the ids in `_active` stay unique while they are alive).
        self._made = made if made is not None else {}

    def emit(
        self,
        path: str,
        kind: str,
        before: Any,
        after: Any,
        breaks: frozenset[str],
        reason: str,
        *,
        undecided: bool = False,
    ) -> None:
        """Report one change."""
        self.changes.append(Change(path, kind, before, after, breaks, reason, undecided))

    def probe(
        self, old: Any, old_side: Side, new: Any, new_side: Side, path: str
    ) -> tuple[frozenset[str], bool, list[Change]]:
        """Compare without reporting; return the broken directions, undecided flag, changes."""
        sub = _Differ(self.policy, self._active, self._made)
        sub.compare(old, old_side, new, new_side, path)
        breaks = frozenset().union(*(change.breaks for change in sub.changes))
        return breaks, any(change.undecided for change in sub.changes), sub.changes

    def make(self, recipe: tuple[Any, ...], schema: Any) -> Any:
        """Return the schema first made by ``recipe``: remaking it yields the same object."""
        return self._made.setdefault(recipe, schema)

    def compare(self, old: Any, old_side: Side, new: Any, new_side: Side, path: str) -> None:
        """Compare two subschemas that govern the instance at ``path``."""
        old, old_side = self.resolve(old, old_side)
        new, new_side = self.resolve(new, new_side)
        key = (id(old), id(new))
        if key in self._active:
            return
        if len(self._active) >= _MAX_DEPTH:
            self.emit(
                path,
                "unknown",
                {},
                {},
                BOTH,
                f"schemas nest more than {_MAX_DEPTH} levels deep here; not compared further",
                undecided=True,
            )
            return
        self._active.add(key)
        try:
            self._compare(old, old_side, new, new_side, path)
        finally:
            self._active.discard(key)

    def resolve(self, schema: Any, side: Side) -> tuple[Any, Side]:
        """Follow ``$ref`` until a schema without one; ``true`` becomes ``{}``.

        Raises:
            SchemaDiffError: a reference cannot be resolved, or references only lead to each other.
        """
        seen: list[int] = []
        while isinstance(schema, Mapping) and isinstance(schema.get("$ref"), str):
            ref = schema["$ref"]
            try:
                resolved = side.resolver.lookup(ref)
            except Unresolvable as err:
                raise SchemaDiffError(
                    f"cannot resolve $ref {ref!r}: nothing is fetched, so put the schema it "
                    "points to in the registry passed to diff_schemas"
                ) from err
            if id(resolved.contents) in seen:
                raise SchemaDiffError(f"$ref {ref!r} leads back to itself through references only")
            seen.append(id(resolved.contents))
            target = resolved.contents
            siblings = {key: value for key, value in schema.items() if key != "$ref"}
            validating = {k: v for k, v in siblings.items() if k in HANDLED | RAW_ONLY}
            notes = {k: v for k, v in siblings.items() if k in DESCRIPTIVE}
            if validating and not side.legacy_refs:
                # Keywords beside the reference apply too: fold them into the target when that
                # cannot change their meaning, else keep both as an allOf.
                foldable = (
                    isinstance(target, Mapping)
                    and not target.keys() & (validating.keys() | {"$ref"})
                    and '"$ref"' not in json_key(validating)
                )
                if foldable:
                    joined = {**target, **validating, **notes}
                else:
                    joined = {**notes, "allOf": [target, validating]}
                target = self.make(("ref-and", id(schema)), joined)
            elif notes and isinstance(target, Mapping):
                target = self.make(("ref-notes", id(schema)), {**target, **notes})
            schema = target
            side = replace(side, resolver=resolved.resolver)
        if schema is True:
            return EMPTY, side
        return schema, side

    def _compare(self, old: Any, old_side: Side, new: Any, new_side: Side, path: str) -> None:
        """Hand two resolved subschemas to the keyword rules that apply to them."""
        if (
            old is False
            or new is False
            or not isinstance(old, Mapping)
            or not isinstance(new, Mapping)
        ):
            compare_degenerate(self, old, new, path)
            return
        compare_annotations(self, old, new, path)
        if compare_unions(self, old, old_side, new, new_side, path):
            return
        # allOf parts narrow the types too (keywords beside a 2020-12 $ref end up there).
        old_types = signature(self, old, old_side)[0]
        new_types = signature(self, new, new_side)[0]
        # Where both sides list their values, the value comparison says exactly what changed.
        both_valued = values_of(old) is not None and values_of(new) is not None
        if not both_valued:
            compare_types(self, old_types, new_types, path)
            if meet(old_types, new_types) == frozenset():
                return  # nothing can be valid under both: the type change says it all
        compare_values(self, old, new, path)
        if may_be(old_types, "object") and may_be(new_types, "object"):
            compare_objects(self, old, old_side, new, new_side, path)
        if may_be(old_types, "array") and may_be(new_types, "array"):
            compare_arrays(self, old, old_side, new, new_side, path)
        if may_be(old_types, "string") and may_be(new_types, "string"):
            compare_counts(self, old, new, path, ("minLength", "maxLength"))
            compare_pattern(self, old, new, path, "pattern")
            compare_pattern(self, old, new, path, "format")
        if may_be(old_types, "number") and may_be(new_types, "number"):
            compare_bounds(self, old, new, path)
            compare_multiple_of(self, old, new, path)
        compare_all_of(self, old, old_side, new, new_side, path)
        compare_conditional(self, old, old_side, new, new_side, path)
        compare_not(self, old, old_side, new, new_side, path)
        compare_raw_only(self, old, new, path)
