"""Declarative rules compiled: conditions on JSON pointers turned into fast Python functions.

A manifest's rule is compiled once into closures that read pre-split pointers, so that a rule
checked on every record costs a few dictionary lookups per condition, and builds a message only
when a condition fails.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Protocol

from evalreg.io.pointer import MISSING, split, to_pointer
from evalreg.registry.rules import COMPARISONS, Condition, Operand, RuleSpec

_MAX_SHOWN = 60


class Reporter(Protocol):
    """Where a check reports what it found (a rule's context)."""

    def report(self, pointer: str, message: str) -> None: ...


Test = Callable[[Any, dict[str, str]], "str | None"]
"""A compiled condition: why it does not hold for an item (None when it holds)."""
Getter = Callable[[Any, dict[str, str]], Any]
_NUMBERS = (int, float)


def _walk(node: Any, tokens: tuple[str, ...]) -> Any:
    for token in tokens:
        if type(node) is dict:
            node = node.get(token, MISSING)
            if node is MISSING:
                return MISSING
        elif type(node) is list and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return MISSING
    return node


def _getter(operand: Operand) -> Getter:
    """Return a function reading an operand's value from an item (and the path's groups)."""
    if operand.kind in ("group", "file"):
        name = str(operand.value) if operand.kind == "group" else f"${operand.value}"
        return lambda item, groups: groups.get(name, MISSING)
    if operand.kind == "value":
        value = operand.value
        return lambda item, groups: value
    tokens = tuple(split(operand.value))
    if len(tokens) == 1:
        (token,) = tokens
        return lambda item, groups: (
            item.get(token, MISSING) if type(item) is dict else _walk(item, tokens)
        )
    if len(tokens) == 2:
        outer, inner = tokens

        def get(item: Any, groups: dict[str, str]) -> Any:
            # The usual case, an object in an object, without the general walk.
            if type(item) is dict:
                middle = item.get(outer)
                if type(middle) is dict:
                    return middle.get(inner, MISSING)
            return _walk(item, tokens)

        return get
    return lambda item, groups: _walk(item, tokens)


def _ordered(a: Any, b: Any) -> bool:
    """Return whether `a` and `b` can be ordered: both numbers (not booleans), or both strings."""
    kinds = (type(a), type(b))
    return (kinds[0] in _NUMBERS and kinds[1] in _NUMBERS) or kinds == (str, str)


def _equal(a: Any, b: Any) -> bool:
    """Return whether two JSON values are equal (1 == 1.0, but True != 1)."""
    if type(a) in _NUMBERS and type(b) in _NUMBERS:
        return bool(a == b)
    return type(a) is type(b) and bool(a == b)


_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "eq": _equal,
    "ne": lambda a, b: not _equal(a, b),
    "lt": lambda a, b: bool(a < b),
    "le": lambda a, b: bool(a <= b),
    "gt": lambda a, b: bool(a > b),
    "ge": lambda a, b: bool(a >= b),
}
_SYMBOL = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _MAX_SHOWN else text[: _MAX_SHOWN - 3] + "..."


def compile_condition(cond: Condition) -> Test:
    """Return a function telling why `cond` does not hold for an item (None when it holds)."""
    op = cond.op
    if op in ("any", "not"):
        tests = [compile_condition(c) for c in cond.conditions]
        if op == "not":
            (inner,) = tests
            shown = str(cond.conditions[0])
            return lambda item, groups: f"{shown} holds" if inner(item, groups) is None else None

        def any_of(item: Any, groups: dict[str, str]) -> str | None:
            reasons = [test(item, groups) for test in tests]
            return None if None in reasons else "; ".join(r for r in reasons if r)

        return any_of
    getters = [_getter(o) for o in cond.operands]
    if op in ("present", "absent"):
        (get,) = getters
        pointer = cond.operands[0].value
        if op == "present":
            return lambda item, groups: (
                f"{pointer} is missing" if get(item, groups) is MISSING else None
            )
        return lambda item, groups: (
            None if get(item, groups) is MISSING else f"{pointer} is present"
        )
    if op in COMPARISONS:
        return _comparison(cond, getters)
    (get,) = getters
    (operand,) = cond.operands
    if op == "in":
        allowed = cond.values

        def within(item: Any, groups: dict[str, str]) -> str | None:
            value = get(item, groups)
            if value is MISSING or any(_equal(value, a) for a in allowed):
                return None
            return f"{operand} = {_shown(value)}, not one of {list(allowed)!r}"

        return within
    pattern = cond.pattern
    assert pattern is not None
    expected = f"does not match {pattern.pattern!r}"

    def matches(item: Any, groups: dict[str, str]) -> str | None:
        value = get(item, groups)
        if value is MISSING or (isinstance(value, str) and pattern.search(value)):
            return None
        return f"{operand} = {_shown(value)} {expected}"

    return matches


def _comparison(cond: Condition, getters: list[Getter]) -> Test:
    left, right = getters
    compare = _COMPARE[cond.op]
    ordering = cond.op not in ("eq", "ne")
    first, second = cond.operands
    expected = f"expected {first} {_SYMBOL[cond.op]} {second}"

    def test(item: Any, groups: dict[str, str]) -> str | None:
        a = left(item, groups)
        if a is MISSING:
            return None
        b = right(item, groups)
        if b is MISSING or (ordering and not _ordered(a, b)) or compare(a, b):
            return None
        return f"{first} = {_shown(a)}, {second} = {_shown(b)}; {expected}"

    return test


def _place(cond: Condition) -> tuple[str, ...]:
    """Return where a failed condition points: its first pointer (the parent, for `present`)."""
    for operand in cond.operands:
        if operand.kind == "pointer":
            tokens = split(operand.value)
            return tuple(tokens[:-1] if cond.op == "present" else tokens)
    return ()


def _places(record: Any, tokens: tuple[str, ...]) -> Iterator[tuple[tuple[str | int, ...], Any]]:
    """Yield the path and value of every place `tokens` reach (`*`: every array item)."""
    stack: list[tuple[Any, int, tuple[str | int, ...]]] = [(record, 0, ())]
    while stack:
        node, depth, path = stack.pop()
        if depth == len(tokens):
            yield path, node
            continue
        token = tokens[depth]
        if token == "*" and type(node) is list:
            for index in range(len(node) - 1, -1, -1):
                stack.append((node[index], depth + 1, (*path, index)))
        elif type(node) is dict and token in node:
            stack.append((node[token], depth + 1, (*path, token)))
        elif type(node) is list and token.isdigit() and int(token) < len(node):
            stack.append((node[int(token)], depth + 1, (*path, int(token))))


def declared_check(spec: RuleSpec) -> Callable[[Any, Reporter, dict[str, str]], None]:
    """Return the check of a declarative rule: it reports each failed condition of each item."""
    each = tuple(split(spec.each)) if spec.each else ()
    when = [compile_condition(c) for c in spec.when]
    require = [(compile_condition(c), _place(c)) for c in spec.require]
    message, pattern = spec.message, spec.path

    def check(record: Any, ctx: Reporter, groups: dict[str, str]) -> None:
        if pattern is not None:
            # A file rule: `when` says whether it applies, then the path must match.
            if when and any(test(record, groups) is not None for test in when):
                return
            shown = groups.get("$path", "")
            match = pattern.search(shown)
            if match is None:
                ctx.report("", f"{message} (the file is {shown})")
                return
            groups = {**groups, **{k: v for k, v in match.groupdict().items() if v is not None}}
            if not require:
                return
        for path, item in _places(record, each) if each else (((), record),):
            if when and pattern is None and any(test(item, groups) is not None for test in when):
                continue
            for test, place in require:
                why = test(item, groups)
                if why is not None:
                    ctx.report(to_pointer((*path, *place)), f"{message} ({why})")

    return check
