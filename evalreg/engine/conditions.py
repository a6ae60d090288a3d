"""Declarative rules compiled: a family's conditions on JSON pointers turned into Python source.

The declared rules of a family are written out once as the source of one Python module, one
function per rule, and compiled (as fastjsonschema does for schemas). Within a rule, each place
that `each` reaches is read once per pointer prefix (`/metric_config/min_score` and
`/metric_config/max_score` read `/metric_config` once), each condition is an expression over
those values, and a message is built only when a condition fails. `rules_source` gives the
module's source, to read or debug (tracebacks through it show its lines).

Comparisons are those of JSON values: numbers compare as numbers (an `ExactNumber`, which a
double cannot hold, by its exact value as written: `1.50000000000000000001 > 1.5`), strings
with strings; any other pair holds (the schema says what types are allowed).
"""

from __future__ import annotations

import linecache
import operator
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from decimal import Decimal
from typing import Any, Protocol

from evalreg.io.codec import ExactNumber
from evalreg.io.pointer import MISSING, split, to_pointer
from evalreg.registry.rules import Condition, Operand, RuleSpec

_MAX_SHOWN = 60


class Reporter(Protocol):
    """Where a check reports what it found (a rule's context)."""

    def report(self, pointer: str, message: str) -> None: ...


Check = Callable[[Any, Reporter, dict[str, str]], None]
"""A compiled rule: it reports each failed condition of each place it checks."""

# -- what the compiled source calls ----------------------------------------------------------

_PLAIN = (int, float)
"""The types of numbers compared as they are (`bool` is not one: `type(True) is bool`)."""
_NUMBERS = (int, float, ExactNumber)


def _exact(number: Any) -> Decimal:
    """Return a number's exact value as written (a plain float's shortest text is that)."""
    if type(number) is ExactNumber:
        return Decimal(number.text)
    return Decimal(number) if type(number) is int else Decimal(repr(number))


def _orders(compare: Callable[[Any, Any], bool], a: Any, b: Any) -> bool:
    """Return whether `compare(a, b)` holds where `a` and `b` are not both plain numbers:
    numbers by their exact values, strings as strings, any other pair holds."""
    if type(a) in _NUMBERS and type(b) in _NUMBERS:
        return compare(_exact(a), _exact(b))
    if type(a) is str and type(b) is str:
        return compare(a, b)
    return True


def _equal(a: Any, b: Any) -> bool:
    """Return whether two JSON values are equal (1 == 1.0, but True != 1; exact numbers exactly)."""
    if type(a) in _NUMBERS and type(b) in _NUMBERS:
        if type(a) is ExactNumber or type(b) is ExactNumber:
            return _exact(a) == _exact(b)
        return bool(a == b)
    return type(a) is type(b) and bool(a == b)


def _is_in(value: Any, allowed: Sequence[Any]) -> bool:
    return any(_equal(value, candidate) for candidate in allowed)


def _each(node: Any) -> Iterable[tuple[int | str, Any]]:
    """Return the places a `*` token reaches: every item of an array (or a key named `*`)."""
    if type(node) is list:
        return enumerate(node)
    if type(node) is dict and "*" in node:
        return (("*", node["*"]),)
    return ()


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _MAX_SHOWN else text[: _MAX_SHOWN - 3] + "..."


def _groups(match: Any) -> dict[str, str]:
    return {k: v for k, v in match.groupdict().items() if v is not None}


_RUNTIME: dict[str, Any] = {
    "MISSING": MISSING,
    "PLAIN": _PLAIN,
    "each": _each,
    "equal": _equal,
    "is_in": _is_in,
    "orders": _orders,
    "shown": _shown,
    "pointer": to_pointer,
    "path_groups": _groups,
    "lt": operator.lt,
    "le": operator.le,
    "gt": operator.gt,
    "ge": operator.ge,
}
"""The names the compiled source uses besides its own constants."""

_SYMBOL = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_INLINE = {"lt": "<", "le": "<=", "gt": ">", "ge": ">="}

# -- writing the source ----------------------------------------------------------------------


class _Module:
    """The source of one module of compiled rules, and the constants it refers to."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.constants: dict[str, Any] = {}

    def constant(self, value: Any) -> str:
        """Return the source of a value: a literal where one is exact, else a named constant."""
        if value is None or type(value) in (bool, int, str):
            return repr(value)
        if type(value) is float and repr(value) not in ("inf", "-inf", "nan"):
            return repr(value)
        name = f"K{len(self.constants) + 1}"
        self.constants[name] = value
        return name


class _Function:
    """The source of one rule's function: its lines, and the places and values it reads."""

    def __init__(self, module: _Module) -> None:
        self.module = module
        self.lines: list[str] = []
        self.indent = 1
        self.count = 0
        self.reads: dict[tuple[str, tuple[str, ...]], str] = {}
        """The variable holding each pointer prefix read from a root (item, record)."""

    def line(self, text: str) -> None:
        self.lines.append("    " * self.indent + text)

    def name(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def read(self, root: str, tokens: tuple[str, ...]) -> str:
        """Return the variable of the value at `tokens` under `root`, reading what is not read."""
        if not tokens:
            return root
        found = self.reads.get((root, tokens))
        if found is not None:
            return found
        parent = self.read(root, tokens[:-1])
        variable = self.name("v")
        self.line(f"{variable} = {_step(parent, tokens[-1])}")
        self.reads[root, tokens] = variable
        return variable


def _step(parent: str, token: str) -> str:
    """Return the expression of one token's step from `parent` (MISSING where it leads nowhere)."""
    key = repr(token)
    if token.isascii() and token.isdigit():
        index = int(token)
        return (
            f"{parent}.get({key}, MISSING) if type({parent}) is dict else "
            f"({parent}[{index}] if type({parent}) is list and {index} < len({parent}) "
            "else MISSING)"
        )
    return f"{parent}.get({key}, MISSING) if type({parent}) is dict else MISSING"


class _Scope:
    """Where the operands of conditions are read: the item, the record's groups."""

    def __init__(self, function: _Function, item: str, groups: str) -> None:
        self.function = function
        self.item = item
        self.groups = groups
        self.values: dict[tuple[str, str], str] = {}
        self.literals: set[str] = set()
        self.plain: dict[str, str] = {}
        """The flag that a value is a plain number, for values two orderings compare."""

    def operand(self, operand: Operand) -> str:
        """Return the expression of an operand's value (reading it here if need be)."""
        if operand.kind == "value":
            literal = self.function.module.constant(operand.value)
            self.literals.add(literal)
            return literal
        if operand.kind == "pointer":
            return self.function.read(self.item, tuple(split(str(operand.value))))
        name = str(operand.value) if operand.kind == "group" else f"${operand.value}"
        found = self.values.get((self.groups, name))
        if found is None:
            found = self.values[self.groups, name] = self.function.name("g")
            self.function.line(f"{found} = {self.groups}.get({name!r}, MISSING)")
        return found

    def prepare(self, conditions: Iterable[Condition]) -> None:
        """Read every operand of `conditions` (so that each is read once, before any test), and
        tell once whether a value two orderings compare is a plain number."""
        ordered: dict[str, int] = {}
        self._read(conditions, ordered)
        for value, count in ordered.items():
            if count > 1 and value not in self.literals and value not in self.plain:
                flag = self.plain[value] = self.function.name("p")
                self.function.line(f"{flag} = type({value}) in PLAIN")

    def _read(self, conditions: Iterable[Condition], ordered: dict[str, int]) -> None:
        for cond in conditions:
            self._read(cond.conditions, ordered)
            values = [self.operand(operand) for operand in cond.operands]
            if cond.op in _INLINE:
                for value in values:
                    ordered[value] = ordered.get(value, 0) + 1

    def is_plain(self, value: str) -> str:
        """Return the test that `value` is a plain number (a flag `prepare` set, if any)."""
        return self.plain.get(value) or f"type({value}) in PLAIN"

    def fails(self, cond: Condition) -> tuple[str, str]:
        """Return the expressions of whether `cond` fails, and of why (valid once it fails)."""
        op, module = cond.op, self.function.module
        if op == "any":
            parts = [self.fails(c) for c in cond.conditions]
            failing = " and ".join(f"({f})" for f, _ in parts)
            return failing, ' + "; " + '.join(w for _, w in parts)
        if op == "not":
            failing, _ = self.fails(cond.conditions[0])
            return f"not ({failing})", repr(f"{cond.conditions[0]} holds")
        values = [self.operand(o) for o in cond.operands]
        if op in ("present", "absent"):
            (value,) = values
            pointer = cond.operands[0].value
            if op == "present":
                return f"{value} is MISSING", repr(f"{pointer} is missing")
            return f"{value} is not MISSING", repr(f"{pointer} is present")
        if op in _SYMBOL:
            return _comparison(cond, *values, found=self.found, plain=self.is_plain)
        (value,) = values
        shown = f"{f'{cond.operands[0]} = '!r} + shown({value})"
        if op == "in":
            allowed = module.constant(tuple(cond.values))
            why = f"{shown} + {f', not one of {list(cond.values)!r}'!r}"
            return f"{self.found(value)}not is_in({value}, {allowed})", why
        assert cond.pattern is not None
        pattern = module.constant(cond.pattern)
        why = f"{shown} + {f' does not match {cond.pattern.pattern!r}'!r}"
        matching = f"isinstance({value}, str) and {pattern}.search({value})"
        return f"{self.found(value)}not ({matching})", why

    def found(self, value: str) -> str:
        """Return the test that `value` was found, followed by `and` (none for a literal)."""
        return "" if value in self.literals else f"{value} is not MISSING and "


def _comparison(
    cond: Condition,
    a: str,
    b: str,
    *,
    found: Callable[[str], str],
    plain: Callable[[str], str],
) -> tuple[str, str]:
    first, second = cond.operands
    op = cond.op
    if op in _INLINE:
        # Two plain numbers first, with no test for MISSING (which is not one); a missing
        # operand holds.
        missing = "".join(f"{v} is MISSING or " for v in (a, b) if found(v))
        failing = (
            f"not ({a} {_INLINE[op]} {b} if {plain(a)} and {plain(b)} "
            f"else {missing}orders({op}, {a}, {b}))"
        )
    else:
        holds = f"{'' if op == 'eq' else 'not '}equal({a}, {b})"
        failing = f"{found(a)}{found(b)}not {holds}"
    expected = f"; expected {first} {_SYMBOL[op]} {second}"
    why = f"{f'{first} = '!r} + shown({a}) + {f', {second} = '!r} + shown({b}) + {expected!r}"
    return failing, why


def _place(cond: Condition) -> tuple[str, ...]:
    """Return where a failed condition points: its first pointer (the parent, for `present`)."""
    for operand in cond.operands:
        if operand.kind == "pointer":
            tokens = split(str(operand.value))
            return tuple(tokens[:-1] if cond.op == "present" else tokens)
    return ()


def _places(function: _Function, tokens: Sequence[str], node: str) -> Iterator[list[str]]:
    """Write the loops and tests that reach every place of `each`; yield once, inside them,
    the source of the place's path (entries of a tuple); `item` is then the place's value."""
    path: list[str] = []
    opened = function.indent
    for index, token in enumerate(tokens):
        child = "item" if index == len(tokens) - 1 else function.name("n")
        if token == "*":
            key = function.name("k")
            function.line(f"for {key}, {child} in each({node}):")
            path.append(key)
        else:
            function.line(f"{child} = {_step(node, token)}")
            function.line(f"if {child} is not MISSING:")
            path.append(repr(token))
        function.indent += 1
        node = child
    yield path
    function.indent = opened


def _rule_function(module: _Module, spec: RuleSpec, name: str) -> list[str]:
    """Return the source lines of the function of one declared rule."""
    function = _Function(module)
    message = spec.message
    header = [
        f"def {name}(record, ctx, groups):",
        f"    # {spec.id} ({spec.scope}, {spec.severity}): {message}",
    ]
    function.line("report = ctx.report")
    if spec.path is not None:
        # A file rule: `when` says whether it applies, then the path must match.
        scope = _Scope(function, "record", "groups")
        scope.prepare(spec.when)
        for cond in spec.when:
            failing, _ = scope.fails(cond)
            function.line(f"if {failing}:  # when {cond}")
            function.line("    return")
        pattern = module.constant(spec.path)
        function.line('shown_path = groups.get("$path", "")')
        function.line(f"match = {pattern}.search(shown_path)")
        function.line("if match is None:")
        function.line(f'    report("", {message + " (the file is "!r} + shown_path + ")")')
        function.line("    return")
        if not spec.require:
            return [*header, *function.lines]
        function.line("groups = {**groups, **path_groups(match)}")
    each = split(spec.each) if spec.each else []
    places = _places(function, each, "record") if each else iter([[]])
    for path in places:
        item = "item" if each else "record"
        skip = "continue" if "*" in each else "return"  # one place without a loop
        scope = _Scope(function, item, "groups")
        checked = list(spec.require) if spec.path is not None else [*spec.when, *spec.require]
        scope.prepare(checked)
        if spec.path is None:
            for cond in spec.when:
                failing, _ = scope.fails(cond)
                function.line(f"if {failing}:  # when {cond}")
                function.line(f"    {skip}")
        for cond in spec.require:
            failing, why = scope.fails(cond)
            where = ", ".join([*path, *(repr(t) for t in _place(cond))])
            function.line(f"if {failing}:  # require {cond}")
            function.line(
                f"    report(pointer(({where}{',' if where else ''})), "
                f"{message + ' ('!r} + {why} + ')')"
            )
    return [*header, *function.lines]


def _constant(value: Any) -> str:
    """Return how a constant is shown in the source's comments (a pattern by its text)."""
    pattern = getattr(value, "pattern", None)
    return f"pattern {pattern!r}" if isinstance(pattern, str) else _shown(value)


def _function_name(rule_id: str) -> str:
    return "rule_" + re.sub(r"\W", "_", rule_id)


def _module(specs: Sequence[RuleSpec], title: str) -> tuple[str, dict[str, Any], list[str]]:
    """Return the source of the module of `specs`, its constants and its functions' names."""
    module = _Module()
    names: list[str] = []
    body: list[str] = []
    for index, spec in enumerate(specs):
        name = _function_name(spec.id)
        name = name if name not in names else f"{name}_{index}"
        names.append(name)
        body += ["", "", *_rule_function(module, spec, name)]
    head = [
        f"# {title}: the declared rules, compiled by evalreg.",
        "# Besides the constants below, the functions use MISSING (what a pointer reaching",
        "# nowhere gives) and the helpers of evalreg.engine.conditions: each, equal, is_in,",
        "# orders, shown, pointer, path_groups, PLAIN (int, float), and lt, le, gt, ge.",
    ]
    head += [f"# {name} = {_constant(value)}" for name, value in module.constants.items()]
    return "\n".join([*head, *body]) + "\n", module.constants, names


_compiled = 0


def compile_rules(specs: Sequence[RuleSpec], title: str = "rules") -> list[Check]:
    """Compile declared rules (of one family) into one module; return each rule's check."""
    global _compiled
    if not specs:
        return []
    source, constants, names = _module(specs, title)
    _compiled += 1
    filename = f"<evalreg rules {_compiled}: {title}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {**_RUNTIME, **constants}
    exec(compile(source, filename, "exec"), namespace)
    return [namespace[name] for name in names]


def declared_check(spec: RuleSpec) -> Check:
    """Return the compiled check of one declarative rule."""
    (check,) = compile_rules([spec], spec.id)
    return check


def reads_file(spec: RuleSpec) -> bool:
    """Return whether a declared rule's check reads its file's groups (`path`, `{file: ...}`,
    `{group: ...}`): the others are given none."""

    def reads(conditions: Iterable[Condition]) -> bool:
        return any(
            reads(cond.conditions) or any(o.kind in ("file", "group") for o in cond.operands)
            for cond in conditions
        )

    return spec.path is not None or reads(spec.when) or reads(spec.require)


def rules_source(specs: Sequence[RuleSpec], title: str = "rules") -> str:
    """Return the Python source that declared rules compile to (see `compile_rules`)."""
    return _module(specs, title)[0]
