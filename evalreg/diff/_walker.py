"""Compare two JSON Schemas and classify every change by schema-registry compatibility.

The two directions follow schema registries:

- BACKWARD holds when the new schema accepts everything the old one accepted
  (readers on the new schema can read data written under the old one).
- FORWARD holds when the old schema accepts everything the new one accepts
  (readers still on the old schema can read data written under the new one).

Both schemas are walked in parallel and each difference is reported at the JSON pointer of the
*instance* it governs (array items and undeclared members as ``*``), not at the place in the
schema text. ``$ref`` is resolved through a ``referencing.Registry``; nothing is ever fetched.

A property removed and another added at the same object whose schemas have nearly the same
structure are also reported as a probable rename, and compared with each other under the new
name; the removal and the addition keep their own verdicts, since a rename breaks both ways.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Final

import referencing.jsonschema
from referencing import Registry
from referencing.exceptions import Unresolvable

from evalreg.diff._annotations import compare_annotations, compare_raw_only
from evalreg.diff._arrays import compare_arrays
from evalreg.diff._changes import (
    BACKWARD,
    BOTH,
    FORWARD,
    INFORMATIONAL,
    ONLY_BACKWARD,
    ONLY_FORWARD,
    POLICIES,
    Change,
)
from evalreg.diff._constraints import (
    compare_bounds,
    compare_counts,
    compare_multiple_of,
    compare_pattern,
)
from evalreg.diff._objects import compare_objects
from evalreg.diff._protocol import Side
from evalreg.diff._report import SchemaDiff
from evalreg.diff._schema import (
    ANNOTATIONS,
    DESCRIPTIVE,
    EMPTY,
    HANDLED,
    RAW_ONLY,
    as_list,
    json_key,
    pick,
    same_json,
    validates,
)
from evalreg.diff._types import (
    compare_degenerate,
    compare_types,
    compare_values,
    covers,
    json_type,
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
        SchemaDiffError: ``policy`` is not one of :data:`POLICIES`, or a ``$ref`` cannot be resolved
            within the registry (nothing is ever fetched).
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
    return SchemaDiff(old_label, new_label, tuple(unique.values()), policy)


# ---------------------------------------------------------------------------------------------
# Walking


def _root_side(schema: Mapping[str, Any], registry: Registry[Any], fallback: str) -> Side:
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
        if (
            old is False
            or new is False
            or not isinstance(old, Mapping)
            or not isinstance(new, Mapping)
        ):
            compare_degenerate(self, old, new, path)
            return
        compare_annotations(self, old, new, path)
        if self._unions(old, old_side, new, new_side, path):
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
        self._all_of(old, old_side, new, new_side, path)
        self._conditional(old, old_side, new, new_side, path)
        self._not(old, old_side, new, new_side, path)
        compare_raw_only(self, old, new, path)

    # -- combinators ---------------------------------------------------------------------------

    def _unions(
        self,
        old: Mapping[str, Any],
        old_side: Side,
        new: Mapping[str, Any],
        new_side: Side,
        path: str,
    ) -> bool:
        """Compare oneOf/anyOf; return True when that comparison covered the whole node."""
        old_kinds = [k for k in ("oneOf", "anyOf") if isinstance(old.get(k), list)]
        new_kinds = [k for k in ("oneOf", "anyOf") if isinstance(new.get(k), list)]
        if not old_kinds and not new_kinds:
            return False
        if len(old_kinds) == 1 and not new_kinds:
            kind = old_kinds[0]
            if not validates(new):
                self._branches_one_sided(kind, old[kind], None, path, added=False)
                return True
            branches = self._with_base(old, kind)
            single = self._bare(new)
            self._branch_lists(kind, branches, old_side, kind, [single], new_side, path)
            return True
        if len(new_kinds) == 1 and not old_kinds:
            kind = new_kinds[0]
            if not validates(old):
                self._branches_one_sided(kind, None, new[kind], path, added=True)
                return True
            branches = self._with_base(new, kind)
            single = self._bare(old)
            self._branch_lists(kind, [single], old_side, kind, branches, new_side, path)
            return True
        if len(old_kinds) == 1 and len(new_kinds) == 1 and old_kinds != new_kinds:
            old_kind, new_kind = old_kinds[0], new_kinds[0]
            undecided = self._branch_lists(
                old_kind, old[old_kind], old_side, new_kind, new[new_kind], new_side, path
            )
            if not undecided and not (
                self._pairwise_disjoint(old[old_kind], old_side)
                and self._pairwise_disjoint(new[new_kind], new_side)
            ):
                self.emit(
                    path,
                    "branches-changed",
                    {old_kind: old[old_kind]},
                    {new_kind: new[new_kind]},
                    BOTH,
                    f"{old_kind} became {new_kind} over branches that may overlap, which changes "
                    "what data that matches several branches does",
                    undecided=True,
                )
            return False
        for kind in ("oneOf", "anyOf"):
            if kind in old_kinds and kind in new_kinds:
                self._branch_lists(kind, old[kind], old_side, kind, new[kind], new_side, path)
            elif kind in old_kinds or kind in new_kinds:
                self.emit(
                    path,
                    "branches-changed",
                    {kind: old[kind]} if kind in old_kinds else {},
                    {kind: new[kind]} if kind in new_kinds else {},
                    BOTH,
                    f"{kind} appeared or disappeared beside another combinator",
                    undecided=True,
                )
        return False

    def _with_base(self, schema: Mapping[str, Any], kind: str) -> list[Any]:
        """Return the branches of ``schema[kind]``, each joined with the keywords beside it."""
        base = {k: v for k, v in self._bare(schema).items() if k != kind}
        branches: list[Any] = schema[kind]
        if not base:
            return list(branches)
        base = self.make(("base", id(schema), kind), base)
        joined: list[Any] = []
        for index, branch in enumerate(branches):
            if isinstance(branch, Mapping) and "$ref" not in branch and not branch.keys() & base:
                made = {**base, **branch}
            else:
                made = {"allOf": [base, branch]}
            joined.append(self.make(("join", id(schema), kind, index), made))
        return joined

    def _bare(self, schema: Mapping[str, Any]) -> Mapping[str, Any]:
        """Return ``schema`` without its annotations (the node already compared them)."""
        if not schema.keys() & (DESCRIPTIVE | ANNOTATIONS):
            return schema
        bare = {k: v for k, v in schema.items() if k not in DESCRIPTIVE | ANNOTATIONS}
        made: Mapping[str, Any] = self.make(("bare", id(schema)), bare)
        return made

    def _branches_one_sided(
        self, kind: str, before: Any, after: Any, path: str, *, added: bool
    ) -> None:
        if added:
            self.emit(
                path,
                "branches-changed",
                {},
                {kind: after},
                ONLY_BACKWARD,
                f"{kind} now restricts a value that was unconstrained; "
                "old data may match no branch",
            )
        else:
            self.emit(
                path,
                "branches-changed",
                {kind: before},
                {},
                ONLY_FORWARD,
                f"{kind} no longer restricts the value; old readers reject new data outside it",
            )

    def _branch_lists(
        self,
        old_kind: str,
        old_branches: Sequence[Any],
        old_side: Side,
        new_kind: str,
        new_branches: Sequence[Any],
        new_side: Side,
        path: str,
    ) -> bool:
        """Pair the branches of two combinators, compare the pairs, report the rest.

        Return whether an undecided change was reported for the unpaired branches.
        """
        if "allOf" not in (old_kind, new_kind) and self._split_by_type(
            old_branches, old_side, new_branches, new_side, path
        ):
            return False
        pairs, old_left, new_left = self._pair(old_branches, old_side, new_branches, new_side)
        for old_branch, new_branch in pairs:
            self.compare(old_branch, old_side, new_branch, new_side, path)
        if old_left and new_left:
            self.emit(
                path,
                "branches-changed",
                {old_kind: old_left},
                {new_kind: new_left},
                BOTH,
                f"{len(old_left)} old and {len(new_left)} new {new_kind} branches cannot be "
                "paired with each other; compare them by hand",
                undecided=True,
            )
            return True
        if not old_left and not new_left:
            return False
        added = bool(new_left)
        kind = new_kind if added else old_kind
        left = new_left if added else old_left
        if kind == "allOf":
            self.emit(
                path,
                "branches-changed",
                {} if added else {kind: left},
                {kind: left} if added else {},
                ONLY_BACKWARD if added else ONLY_FORWARD,
                "a condition was added to allOf; old data may fail it"
                if added
                else "a condition was removed from allOf; "
                "old readers reject new data that fails it",
            )
            return False
        branches = new_branches if added else old_branches
        side = new_side if added else old_side
        if kind == "oneOf" and not all(
            self._disjoint_from_rest(branch, branches, side) for branch in left
        ):
            self.emit(
                path,
                "branches-changed",
                {} if added else {kind: left},
                {kind: left} if added else {},
                BOTH,
                "a oneOf branch that may overlap another was "
                + ("added" if added else "removed")
                + ": data matching two branches is rejected, so this may break either way",
                undecided=True,
            )
            return True
        self.emit(
            path,
            "branches-changed",
            {} if added else {kind: left},
            {kind: left} if added else {},
            ONLY_FORWARD if added else ONLY_BACKWARD,
            f"{kind} branch added: old readers reject new data that matches only it"
            if added
            else f"{kind} branch removed: new readers reject old data that matched only it",
        )
        return False

    def _split_by_type(
        self,
        old_branches: Sequence[Any],
        old_side: Side,
        new_branches: Sequence[Any],
        new_side: Side,
        path: str,
    ) -> bool:
        """Compare alternatives that split the values by type; return whether that applied.

        It applies when every branch admits a known, non-empty set of types, no two branches of
        one side share a type (so each value has at most one branch that may take it, and oneOf
        means anyOf), each branch shares types with at most one branch of the other side, and at
        least one such pair differs in its types (pairs of equal types are left to the general
        pairing). A plain schema on one side counts as a single branch: ``type: [array, null]``
        against ``oneOf: [string, array]`` pairs the two array alternatives.

        The types are then compared as a whole, once, and each pair is compared on the types it
        shares; branches that share no type with the other side are covered by the type change.
        """
        old_types = [signature(self, branch, old_side)[0] for branch in old_branches]
        new_types = [signature(self, branch, new_side)[0] for branch in new_branches]
        if not _splits_by_type(old_types) or not _splits_by_type(new_types):
            return False
        links = [
            (i, j)
            for i, j in itertools.product(range(len(old_types)), range(len(new_types)))
            if meet(old_types[i], new_types[j])
        ]
        linked_old = [i for i, _ in links]
        linked_new = [j for _, j in links]
        if len(set(linked_old)) < len(linked_old) or len(set(linked_new)) < len(linked_new):
            return False  # a branch overlaps several on the other side: ambiguous
        if all(old_types[i] == new_types[j] for i, j in links):
            return False
        compare_types(self, _union(old_types), _union(new_types), path)
        for i, j in links:
            shared = meet(old_types[i], new_types[j])
            old_part, old_part_side = self._narrow(old_branches[i], old_side, old_types[i], shared)
            new_part, new_part_side = self._narrow(new_branches[j], new_side, new_types[j], shared)
            self.compare(old_part, old_part_side, new_part, new_part_side, path)
        return True

    def _narrow(
        self,
        branch: Any,
        side: Side,
        types: frozenset[str] | None,
        shared: frozenset[str] | None,
    ) -> tuple[Any, Side]:
        """Return ``branch`` restricted to the ``shared`` types (the values it keeps, if any)."""
        if shared == types or shared is None:
            return branch, side
        schema, side = self.resolve(branch, side)
        if not isinstance(schema, Mapping):
            return schema, side
        narrowed = {**schema, "type": sorted(shared)}
        if isinstance(schema.get("enum"), list):
            narrowed["enum"] = [
                value for value in schema["enum"] if covers(shared, frozenset({json_type(value)}))
            ]
        return self.make(("narrow", id(schema), tuple(sorted(shared))), narrowed), side

    def _pair(
        self,
        old_branches: Sequence[Any],
        old_side: Side,
        new_branches: Sequence[Any],
        new_side: Side,
    ) -> tuple[list[tuple[Any, Any]], list[Any], list[Any]]:
        """Pair branches that stand for the same alternative; return pairs and the unpaired."""
        old_left = list(range(len(old_branches)))
        new_left = list(range(len(new_branches)))
        old_sigs = [signature(self, branch, old_side) for branch in old_branches]
        new_sigs = [signature(self, branch, new_side) for branch in new_branches]
        pairs: list[tuple[int, int]] = []

        def match(same: Callable[[int, int], bool]) -> None:
            for i in list(old_left):
                candidates = [j for j in new_left if same(i, j)]
                if len(candidates) != 1:
                    continue
                j = candidates[0]
                if [k for k in old_left if same(k, j)] == [i]:
                    pairs.append((i, j))
                    old_left.remove(i)
                    new_left.remove(j)

        match(lambda i, j: same_json(old_branches[i], new_branches[j]))
        match(
            lambda i, j: (
                _ref_of(old_branches[i]) is not None
                and _ref_of(old_branches[i]) == _ref_of(new_branches[j])
            )
        )
        match(lambda i, j: bool(old_sigs[i][1]) and old_sigs[i][1] == new_sigs[j][1])
        match(lambda i, j: old_sigs[i][0] is not None and old_sigs[i][0] == new_sigs[j][0])
        if len(old_left) == 1 and len(new_left) == 1:
            pairs.append((old_left.pop(), new_left.pop()))
        return (
            [(old_branches[i], new_branches[j]) for i, j in sorted(pairs)],
            [old_branches[i] for i in old_left],
            [new_branches[j] for j in new_left],
        )

    def _disjoint(self, a: Any, b: Any, side: Side) -> bool:
        a_types, a_consts = signature(self, a, side)
        b_types, b_consts = signature(self, b, side)
        if meet(a_types, b_types) == frozenset():
            return True
        return any(a_consts[name] != b_consts[name] for name in a_consts.keys() & b_consts.keys())

    def _disjoint_from_rest(self, branch: Any, branches: Sequence[Any], side: Side) -> bool:
        return all(self._disjoint(branch, other, side) for other in branches if other is not branch)

    def _pairwise_disjoint(self, branches: Sequence[Any], side: Side) -> bool:
        return all(self._disjoint_from_rest(branch, branches, side) for branch in branches)

    def _all_of(
        self,
        old: Mapping[str, Any],
        old_side: Side,
        new: Mapping[str, Any],
        new_side: Side,
        path: str,
    ) -> None:
        old_parts, new_parts = as_list(old.get("allOf")), as_list(new.get("allOf"))
        if old_parts or new_parts:
            self._branch_lists("allOf", old_parts, old_side, "allOf", new_parts, new_side, path)

    def _conditional(
        self,
        old: Mapping[str, Any],
        old_side: Side,
        new: Mapping[str, Any],
        new_side: Side,
        path: str,
    ) -> None:
        if "if" not in old and "if" not in new:
            return
        if "if" in old and "if" in new:
            _, _, changes = self.probe(old["if"], old_side, new["if"], new_side, path)
            if any(change.kind not in INFORMATIONAL for change in changes):
                self.emit(
                    path,
                    "branches-changed",
                    {"if": old["if"]},
                    {"if": new["if"]},
                    BOTH,
                    "the if condition changed, so which of then/else applies to a value changed; "
                    "compare by hand",
                    undecided=True,
                )
                return
            for keyword in ("then", "else"):
                self.compare(
                    old.get(keyword, True), old_side, new.get(keyword, True), new_side, path
                )
            return
        added = "if" in new
        holder = new if added else old
        clause = {k: holder[k] for k in ("if", "then", "else") if k in holder}
        self.emit(
            path,
            "branches-changed",
            {} if added else clause,
            clause if added else {},
            ONLY_BACKWARD if added else ONLY_FORWARD,
            "an if/then/else condition was added; old data may fail it"
            if added
            else "an if/then/else condition was removed; old readers reject new data that fails it",
        )

    def _not(
        self,
        old: Mapping[str, Any],
        old_side: Side,
        new: Mapping[str, Any],
        new_side: Side,
        path: str,
    ) -> None:
        if "not" not in old and "not" not in new:
            return
        before, after = pick(old, "not"), pick(new, "not")
        if "not" in old and "not" in new:
            breaks, undecided, changes = self.probe(
                old["not"], old_side, new["not"], new_side, path
            )
            if not any(change.kind not in INFORMATIONAL for change in changes):
                return
            # What `not` rejects grew where its schema widened: the directions swap.
            swapped = frozenset(
                {BACKWARD: FORWARD, FORWARD: BACKWARD}[direction] for direction in breaks
            )
            self.emit(
                path,
                "branches-changed",
                before,
                after,
                swapped,
                "the schema under not changed; what it excludes changed the opposite way",
                undecided=undecided,
            )
        elif "not" in new:
            self.emit(
                path,
                "branches-changed",
                before,
                after,
                ONLY_BACKWARD,
                "a not condition was added; old data may match what it excludes",
            )
        else:
            self.emit(
                path,
                "branches-changed",
                before,
                after,
                ONLY_FORWARD,
                "a not condition was removed; old readers reject new data that matches it",
            )


# ---------------------------------------------------------------------------------------------
# Keyword helpers


def _splits_by_type(types: Sequence[frozenset[str] | None]) -> bool:
    """Tell whether each branch admits known types, and no two branches share one."""
    if not all(types):
        return False
    return all(not meet(a, b) for a, b in itertools.combinations(types, 2))


def _union(types: Sequence[frozenset[str] | None]) -> frozenset[str]:
    """Join type sets that are all known."""
    return frozenset().union(*(t for t in types if t is not None))


def _ref_of(schema: Any) -> str | None:
    if isinstance(schema, Mapping) and isinstance(schema.get("$ref"), str):
        return str(schema["$ref"])
    return None
