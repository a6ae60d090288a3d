"""Combinators: oneOf, anyOf and allOf branches, if/then/else, and not.

Branches are paired with the branches of the other side that stand for the same alternative (the
same schema, the same ``$ref``, the same constant tags, the same names that only they require,
the same types), the pairs are compared,
and what is left over is reported as branches added, removed or not paired.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from evalreg.diff._changes import (
    BACKWARD,
    BOTH,
    FORWARD,
    INFORMATIONAL,
    ONLY_BACKWARD,
    ONLY_FORWARD,
)
from evalreg.diff._schema import (
    ANNOTATIONS,
    DESCRIPTIVE,
    as_list,
    pick,
    required_names,
    same_json,
    validates,
)
from evalreg.diff._types import compare_types, covers, meet, signature
from evalreg.io.codec import schema_type as json_type

if TYPE_CHECKING:
    from evalreg.diff._protocol import Side, Walker

_KEY_DEPTH = 8


def compare_unions(
    walker: Walker,
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
            _branches_one_sided(walker, kind, old[kind], None, path, added=False)
            return True
        branches = _with_base(walker, old, kind)
        single = _bare(walker, new)
        _branch_lists(walker, kind, branches, old_side, kind, [single], new_side, path)
        return True
    if len(new_kinds) == 1 and not old_kinds:
        kind = new_kinds[0]
        if not validates(old):
            _branches_one_sided(walker, kind, None, new[kind], path, added=True)
            return True
        branches = _with_base(walker, new, kind)
        single = _bare(walker, old)
        _branch_lists(walker, kind, [single], old_side, kind, branches, new_side, path)
        return True
    if len(old_kinds) == 1 and len(new_kinds) == 1 and old_kinds != new_kinds:
        old_kind, new_kind = old_kinds[0], new_kinds[0]
        undecided = _branch_lists(
            walker, old_kind, old[old_kind], old_side, new_kind, new[new_kind], new_side, path
        )
        if not undecided and not (
            _pairwise_disjoint(walker, old[old_kind], old_side)
            and _pairwise_disjoint(walker, new[new_kind], new_side)
        ):
            walker.emit(
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
            _branch_lists(walker, kind, old[kind], old_side, kind, new[kind], new_side, path)
        elif kind in old_kinds or kind in new_kinds:
            walker.emit(
                path,
                "branches-changed",
                {kind: old[kind]} if kind in old_kinds else {},
                {kind: new[kind]} if kind in new_kinds else {},
                BOTH,
                f"{kind} appeared or disappeared beside another combinator",
                undecided=True,
            )
    return False


def compare_all_of(
    walker: Walker,
    old: Mapping[str, Any],
    old_side: Side,
    new: Mapping[str, Any],
    new_side: Side,
    path: str,
) -> None:
    """Pair the allOf parts of both sides, compare the pairs, report parts added or removed."""
    old_parts, new_parts = as_list(old.get("allOf")), as_list(new.get("allOf"))
    if old_parts or new_parts:
        _branch_lists(walker, "allOf", old_parts, old_side, "allOf", new_parts, new_side, path)


def compare_conditional(
    walker: Walker,
    old: Mapping[str, Any],
    old_side: Side,
    new: Mapping[str, Any],
    new_side: Side,
    path: str,
) -> None:
    """Compare if/then/else: then and else only while the if condition stays the same."""
    if "if" not in old and "if" not in new:
        return
    if "if" in old and "if" in new:
        _, _, changes = walker.probe(old["if"], old_side, new["if"], new_side, path)
        if any(change.kind not in INFORMATIONAL for change in changes):
            walker.emit(
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
            walker.compare(old.get(keyword, True), old_side, new.get(keyword, True), new_side, path)
        return
    added = "if" in new
    holder = new if added else old
    clause = {k: holder[k] for k in ("if", "then", "else") if k in holder}
    walker.emit(
        path,
        "branches-changed",
        {} if added else clause,
        clause if added else {},
        ONLY_BACKWARD if added else ONLY_FORWARD,
        "an if/then/else condition was added; old data may fail it"
        if added
        else "an if/then/else condition was removed; old readers reject new data that fails it",
    )


def compare_not(
    walker: Walker,
    old: Mapping[str, Any],
    old_side: Side,
    new: Mapping[str, Any],
    new_side: Side,
    path: str,
) -> None:
    """Compare the schemas under not; what not excludes changes the opposite way."""
    if "not" not in old and "not" not in new:
        return
    before, after = pick(old, "not"), pick(new, "not")
    if "not" in old and "not" in new:
        breaks, undecided, changes = walker.probe(old["not"], old_side, new["not"], new_side, path)
        if not any(change.kind not in INFORMATIONAL for change in changes):
            return
        # What `not` rejects grew where its schema widened: the directions swap.
        swapped = frozenset(
            {BACKWARD: FORWARD, FORWARD: BACKWARD}[direction] for direction in breaks
        )
        walker.emit(
            path,
            "branches-changed",
            before,
            after,
            swapped,
            "the schema under not changed; what it excludes changed the opposite way",
            undecided=undecided,
        )
    elif "not" in new:
        walker.emit(
            path,
            "branches-changed",
            before,
            after,
            ONLY_BACKWARD,
            "a not condition was added; old data may match what it excludes",
        )
    else:
        walker.emit(
            path,
            "branches-changed",
            before,
            after,
            ONLY_FORWARD,
            "a not condition was removed; old readers reject new data that matches it",
        )


def _with_base(walker: Walker, schema: Mapping[str, Any], kind: str) -> list[Any]:
    """Return the branches of ``schema[kind]``, each joined with the keywords beside it."""
    base = {k: v for k, v in _bare(walker, schema).items() if k != kind}
    branches: list[Any] = schema[kind]
    if not base:
        return list(branches)
    base = walker.make(("base", id(schema), kind), base)
    joined: list[Any] = []
    for index, branch in enumerate(branches):
        if isinstance(branch, Mapping) and "$ref" not in branch and not branch.keys() & base:
            made = {**base, **branch}
        else:
            made = {"allOf": [base, branch]}
        joined.append(walker.make(("join", id(schema), kind, index), made))
    return joined


def _bare(walker: Walker, schema: Mapping[str, Any]) -> Mapping[str, Any]:
    """Return ``schema`` without its annotations (the node already compared them)."""
    if not schema.keys() & (DESCRIPTIVE | ANNOTATIONS):
        return schema
    bare = {k: v for k, v in schema.items() if k not in DESCRIPTIVE | ANNOTATIONS}
    made: Mapping[str, Any] = walker.make(("bare", id(schema)), bare)
    return made


def _branches_one_sided(
    walker: Walker, kind: str, before: Any, after: Any, path: str, *, added: bool
) -> None:
    if added:
        walker.emit(
            path,
            "branches-changed",
            {},
            {kind: after},
            ONLY_BACKWARD,
            f"{kind} now restricts a value that was unconstrained; old data may match no branch",
        )
    else:
        walker.emit(
            path,
            "branches-changed",
            {kind: before},
            {},
            ONLY_FORWARD,
            f"{kind} no longer restricts the value; old readers reject new data outside it",
        )


def _branch_lists(
    walker: Walker,
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
    if "allOf" not in (old_kind, new_kind) and _split_by_type(
        walker, old_branches, old_side, new_branches, new_side, path
    ):
        return False
    pairs, old_left, new_left = _pair(walker, old_branches, old_side, new_branches, new_side)
    for old_branch, new_branch in pairs:
        walker.compare(old_branch, old_side, new_branch, new_side, path)
    if old_left and new_left:
        walker.emit(
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
        walker.emit(
            path,
            "branches-changed",
            {} if added else {kind: left},
            {kind: left} if added else {},
            ONLY_BACKWARD if added else ONLY_FORWARD,
            "a condition was added to allOf; old data may fail it"
            if added
            else "a condition was removed from allOf; old readers reject new data that fails it",
        )
        return False
    branches = new_branches if added else old_branches
    side = new_side if added else old_side
    if kind == "oneOf" and not all(
        _disjoint_from_rest(walker, branch, branches, side) for branch in left
    ):
        walker.emit(
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
    walker.emit(
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
    walker: Walker,
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
    old_types = [signature(walker, branch, old_side)[0] for branch in old_branches]
    new_types = [signature(walker, branch, new_side)[0] for branch in new_branches]
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
    compare_types(walker, _union(old_types), _union(new_types), path)
    for i, j in links:
        shared = meet(old_types[i], new_types[j])
        old_part, old_part_side = _narrow(walker, old_branches[i], old_side, old_types[i], shared)
        new_part, new_part_side = _narrow(walker, new_branches[j], new_side, new_types[j], shared)
        walker.compare(old_part, old_part_side, new_part, new_part_side, path)
    return True


def _narrow(
    walker: Walker,
    branch: Any,
    side: Side,
    types: frozenset[str] | None,
    shared: frozenset[str] | None,
) -> tuple[Any, Side]:
    """Return ``branch`` restricted to the ``shared`` types (the values it keeps, if any)."""
    if shared == types or shared is None:
        return branch, side
    schema, side = walker.resolve(branch, side)
    if not isinstance(schema, Mapping):
        return schema, side
    narrowed = {**schema, "type": sorted(shared)}
    if isinstance(schema.get("enum"), list):
        narrowed["enum"] = [
            value for value in schema["enum"] if covers(shared, frozenset({json_type(value)}))
        ]
    return walker.make(("narrow", id(schema), tuple(sorted(shared))), narrowed), side


def _pair(
    walker: Walker,
    old_branches: Sequence[Any],
    old_side: Side,
    new_branches: Sequence[Any],
    new_side: Side,
) -> tuple[list[tuple[Any, Any]], list[Any], list[Any]]:
    """Pair branches that stand for the same alternative; return pairs and the unpaired."""
    old_left = list(range(len(old_branches)))
    new_left = list(range(len(new_branches)))
    old_sigs = [signature(walker, branch, old_side) for branch in old_branches]
    new_sigs = [signature(walker, branch, new_side) for branch in new_branches]
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
    # The keys that tell the alternatives apart: the names each requires (`evalcases` and
    # `eval_cases` spell one name), where some branch of a side requires what another does not.
    old_keys = _telling_keys(walker, old_branches, old_side)
    new_keys = _telling_keys(walker, new_branches, new_side)
    match(lambda i, j: bool(old_keys[i] & new_keys[j]))
    match(lambda i, j: old_sigs[i][0] is not None and old_sigs[i][0] == new_sigs[j][0])
    if len(old_left) == 1 and len(new_left) == 1:
        pairs.append((old_left.pop(), new_left.pop()))
    return (
        [(old_branches[i], new_branches[j]) for i, j in sorted(pairs)],
        [old_branches[i] for i in old_left],
        [new_branches[j] for j in new_left],
    )


def _telling_keys(walker: Walker, branches: Sequence[Any], side: Side) -> list[frozenset[str]]:
    """Return the required names of each branch that not every branch requires, normalised."""
    required = [_required_names(walker, branch, side, 0) for branch in branches]
    common = frozenset.intersection(*required) if len(required) > 1 else frozenset()
    return [names - common for names in required]


def _required_names(walker: Walker, schema: Any, side: Side, depth: int) -> frozenset[str]:
    """Return the names a schema requires (through `allOf`), lower-case without `_` and `-`."""
    schema, side = walker.resolve(schema, side)
    if not isinstance(schema, Mapping) or depth > _KEY_DEPTH:
        return frozenset()
    names = {_spelling(name) for name in required_names(schema)}
    for part in as_list(schema.get("allOf")):
        names |= _required_names(walker, part, side, depth + 1)
    return frozenset(names)


def _spelling(name: str) -> str:
    return name.lower().replace("_", "").replace("-", "")


def _disjoint(walker: Walker, a: Any, b: Any, side: Side) -> bool:
    a_types, a_consts = signature(walker, a, side)
    b_types, b_consts = signature(walker, b, side)
    if meet(a_types, b_types) == frozenset():
        return True
    return any(a_consts[name] != b_consts[name] for name in a_consts.keys() & b_consts.keys())


def _disjoint_from_rest(walker: Walker, branch: Any, branches: Sequence[Any], side: Side) -> bool:
    return all(_disjoint(walker, branch, other, side) for other in branches if other is not branch)


def _pairwise_disjoint(walker: Walker, branches: Sequence[Any], side: Side) -> bool:
    return all(_disjoint_from_rest(walker, branch, branches, side) for branch in branches)


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
