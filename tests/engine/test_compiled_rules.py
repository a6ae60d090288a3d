"""Declared rules compiled to Python source give the findings their declaration means.

The findings of compiled rules are compared with those of a reference reading of the same
declarations (written here, plainly, from the rule language's description in
`evalreg.registry.rules`) on generated rules and records; exact numbers are compared exactly.
"""

from __future__ import annotations

import linecache
import re
import shutil
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalreg import Registry
from evalreg.engine.conditions import compile_rules
from evalreg.engine.rules import check, declared_source, rule_set
from evalreg.io.codec import ExactNumber, dumps, loads
from evalreg.io.pointer import MISSING, split, to_pointer
from evalreg.registry.rules import Condition, Operand, RuleSpec, parse_rule

EXAMPLES = Path(__file__).resolve().parents[2] / "evalreg" / "examples" / "eee"
AGGREGATE = next(p for p in EXAMPLES.rglob("*.json") if not p.name.endswith("_samples.json"))

# -- a reference reading of declared rules -----------------------------------------------------


def _get(node: Any, tokens: list[str]) -> Any:
    for token in tokens:
        if type(node) is dict:
            node = node.get(token, MISSING)
        elif type(node) is list and token.isascii() and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return MISSING
    return node


def _reached(node: Any, tokens: list[str], path: tuple[Any, ...] = ()) -> list[tuple[Any, Any]]:
    if not tokens:
        return [(path, node)]
    token, rest = tokens[0], tokens[1:]
    if token == "*" and type(node) is list:
        return [p for i, item in enumerate(node) for p in _reached(item, rest, (*path, i))]
    if type(node) is dict and token in node:
        return _reached(node[token], rest, (*path, token))
    if type(node) is list and token.isascii() and token.isdigit() and int(token) < len(node):
        return _reached(node[int(token)], rest, (*path, int(token)))
    return []


def _value(operand: Operand, item: Any, groups: dict[str, str]) -> Any:
    if operand.kind == "pointer":
        return _get(item, split(operand.value))
    if operand.kind == "group":
        return groups.get(operand.value, MISSING)
    if operand.kind == "file":
        return groups.get(f"${operand.value}", MISSING)
    return operand.value


def _number(value: Any) -> bool:
    return type(value) in (int, float, ExactNumber)


def _exact(value: Any) -> Decimal:
    if isinstance(value, ExactNumber):
        return Decimal(value.text)
    return Decimal(value) if type(value) is int else Decimal(repr(value))


def _same(a: Any, b: Any) -> bool:
    if _number(a) and _number(b):
        return _exact(a) == _exact(b)
    return type(a) is type(b) and a == b


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


ORDER = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}


def why(cond: Condition, item: Any, groups: dict[str, str]) -> str | None:
    """Why `cond` does not hold for `item` (None when it holds), by the language's description."""
    if cond.op == "any":
        reasons = [why(c, item, groups) for c in cond.conditions]
        return None if None in reasons else "; ".join(r for r in reasons if r)
    if cond.op == "not":
        return (
            f"{cond.conditions[0]} holds" if why(cond.conditions[0], item, groups) is None else None
        )
    values = [_value(o, item, groups) for o in cond.operands]
    shown = str(cond.operands[0])
    if cond.op == "present":
        return f"{cond.operands[0].value} is missing" if values[0] is MISSING else None
    if cond.op == "absent":
        return None if values[0] is MISSING else f"{cond.operands[0].value} is present"
    if cond.op in ORDER:
        a, b = values
        if a is MISSING or b is MISSING:
            return None
        if cond.op in ("eq", "ne"):
            holds = _same(a, b) == (cond.op == "eq")
        elif _number(a) and _number(b):
            holds = eval(f"x {ORDER[cond.op]} y", {"x": _exact(a), "y": _exact(b)})
        elif type(a) is str and type(b) is str:
            holds = eval(f"x {ORDER[cond.op]} y", {"x": a, "y": b})
        else:
            holds = True
        if holds:
            return None
        second = str(cond.operands[1])
        return (
            f"{shown} = {_shown(a)}, {second} = {_shown(b)}; "
            f"expected {shown} {ORDER[cond.op]} {second}"
        )
    (value,) = values
    if value is MISSING:
        return None
    if cond.op == "in":
        if any(_same(value, allowed) for allowed in cond.values):
            return None
        return f"{shown} = {_shown(value)}, not one of {list(cond.values)!r}"
    assert cond.pattern is not None
    if isinstance(value, str) and cond.pattern.search(value):
        return None
    return f"{shown} = {_shown(value)} does not match {cond.pattern.pattern!r}"


def _place(cond: Condition) -> tuple[str, ...]:
    for operand in cond.operands:
        if operand.kind == "pointer":
            tokens = split(operand.value)
            return tuple(tokens[:-1] if cond.op == "present" else tokens)
    return ()


def reference(spec: RuleSpec, record: Any, groups: dict[str, str]) -> list[tuple[str, str]]:
    """The findings of a record rule, by the language's description."""
    found = []
    places = _reached(record, split(spec.each)) if spec.each else [((), record)]
    for path, item in places:
        if any(why(c, item, groups) is not None for c in spec.when):
            continue
        for cond in spec.require:
            reason = why(cond, item, groups)
            if reason is not None:
                found.append((to_pointer((*path, *_place(cond))), f"{spec.message} ({reason})"))
    return found


class Findings:
    """A rule context that keeps what is reported."""

    def __init__(self) -> None:
        self.found: list[tuple[str, str]] = []

    def report(self, pointer: str, message: str) -> None:
        self.found.append((pointer, message))


# -- generated rules and records -----------------------------------------------------------------

TOKENS = ["a", "b", "*", "0", "1", "x~y", "p/q"]
pointers = st.lists(st.sampled_from(TOKENS), min_size=1, max_size=3).map(
    lambda tokens: to_pointer(tokens)
)
numbers = st.one_of(
    st.integers(-3, 3),
    st.sampled_from([0.5, 1.0, 1.5, -0.0]),
    st.sampled_from(
        ["1.50000000000000000001", "0.99999999999999999999", "1.0000000000000000000001"]
    ).map(ExactNumber),
)
literals = st.one_of(numbers, st.sampled_from(["a", "b", "", "x:y"]), st.booleans(), st.none())
operands = st.one_of(pointers, pointers, literals.map(lambda v: {"value": v}))


def _conditions(depth: int) -> st.SearchStrategy[dict[str, Any]]:
    simple = st.one_of(
        pointers.map(lambda p: {"present": p}),
        pointers.map(lambda p: {"absent": p}),
        st.tuples(st.sampled_from(list(ORDER)), operands, operands).map(
            lambda t: {t[0]: [t[1], t[2]]}
        ),
        st.tuples(operands, st.lists(literals, min_size=1, max_size=3)).map(
            lambda t: {"in": [t[0], t[1]]}
        ),
        st.tuples(operands, st.sampled_from(["^a", "b$", ":", "^$"])).map(
            lambda t: {"matches": [t[0], t[1]]}
        ),
    )
    if depth == 0:
        return simple
    inner = _conditions(depth - 1)
    return st.one_of(
        simple,
        simple,
        st.lists(inner, min_size=1, max_size=3).map(lambda cs: {"any": cs}),
        inner.map(lambda c: {"not": c}),
    )


specs = st.fixed_dictionaries(
    {
        "id": st.just("demo.generated"),
        "message": st.just("it holds"),
        "require": st.lists(_conditions(2), min_size=1, max_size=3),
    },
    optional={
        "each": st.lists(st.sampled_from(TOKENS), min_size=1, max_size=2).map(to_pointer),
        "when": st.lists(_conditions(1), min_size=1, max_size=2),
    },
)

records = st.recursive(
    literals,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(st.sampled_from(TOKENS), children, max_size=4),
    ),
    max_leaves=15,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=specs, record=records)
def test_compiled_rules_find_what_their_declaration_says(data: dict[str, Any], record: Any) -> None:
    spec = parse_rule(data, "demo.generated", "generated")
    (compiled,) = compile_rules([spec], "generated")
    findings = Findings()
    groups = {"$path": "data/x.json", "$name": "x.json"}
    compiled(record, findings, groups)
    assert findings.found == reference(spec, record, groups)


# -- exact numbers in the built-in rules ---------------------------------------------------------


def _aggregate_with(score: str, minimum: str = "0", maximum: str = "1.0") -> Any:
    text = AGGREGATE.read_text()
    text = re.sub(r'"score": [0-9.]+', f'"score": {score}', text, count=1)
    text = re.sub(r'"min_score": [0-9.]+', f'"min_score": {minimum}', text, count=1)
    text = re.sub(r'"max_score": [0-9.]+', f'"max_score": {maximum}', text, count=1)
    return loads(text.encode())


@pytest.mark.parametrize(
    ("score", "minimum", "maximum", "reported"),
    [
        ("1.50000000000000000001", "0", "1.0", True),  # above, and more digits than a double
        ("1.5", "0", "1.0", True),
        (
            "1.00000000000000000001",
            "0",
            "1.0",
            True,
        ),  # the nearest double is 1.0: above all the same
        ("1.0000000000000000000", "0", "1.0", False),  # equal, however written
        ("0.99999999999999999999", "1", "2", True),  # below the lower bound by 1e-20
        ("0.5", "0.50000000000000000001", "1", True),
        ("123456789012345678901234567890", "0", "1e400", True),  # refused: not reported twice
    ],
)
def test_exact_scores_are_compared_with_their_bounds_exactly(
    registry: Registry, score: str, minimum: str, maximum: str, reported: bool
) -> None:
    if maximum == "1e400":
        with pytest.raises(ValueError):
            _aggregate_with(score, minimum, maximum)
        return
    record = _aggregate_with(score, minimum, maximum)
    rules = rule_set(registry, "eee.aggregate", "0.2.0")
    found = [
        i
        for i in check(rules.record, record, "eee.aggregate", "0.2.0")
        if i.rule == "eee.score-bounds"
    ]
    assert bool(found) == reported, found
    if reported:
        assert score in found[0].message  # shown as written


def test_an_exact_score_above_its_bound_fails_validation(tmp_path: Path) -> None:
    from evalreg.batch.check import validate_paths

    folder = tmp_path / "data" / "gsm8k" / "Qwen" / "Qwen2.5-7B-Instruct"
    folder.mkdir(parents=True)
    path = folder / AGGREGATE.name
    shutil.copy(AGGREGATE, path)
    record = _aggregate_with("1.50000000000000000001")
    path.write_bytes(dumps(record, indent=True))
    assert b"1.50000000000000000001" in path.read_bytes()
    from evalreg import default_registry

    problems = [
        issue
        for found in validate_paths(default_registry(), [str(path)])
        for issue in getattr(found, "issues", ())
    ]
    (bounds,) = [i for i in problems if i.rule == "eee.score-bounds"]
    assert bounds.severity == "error" and bounds.pointer.endswith("/score_details/score")
    assert "/score_details/score = 1.50000000000000000001, /metric_config/max_score = 1.0" in (
        bounds.message
    )


# -- the source ----------------------------------------------------------------------------------


def test_the_source_of_a_family_versions_rules_can_be_read(registry: Registry) -> None:
    source = declared_source(registry, "eee.aggregate", "0.2.0")
    compile(source, "<test>", "exec")
    assert "def rule_eee_score_bounds(record, ctx, groups):" in source
    bounds = source[source.index("def rule_eee_score_bounds") :]
    assert bounds.count(".get('metric_config'") == 1  # a pointer shared by three conditions
    assert bounds.count(".get('max_score'") == 1
    assert "eee.score-bounds" in source


def test_compiled_rules_show_their_source_in_tracebacks(registry: Registry) -> None:
    rules = rule_set(registry, "eee.aggregate", "0.2.0")
    (bounds,) = [r for r in rules.record if r.id == "eee.score-bounds"]
    code = bounds.check.__code__  # type: ignore[union-attr]
    first = linecache.getline(code.co_filename, code.co_firstlineno)
    assert first.startswith("def rule_eee_score_bounds(")
