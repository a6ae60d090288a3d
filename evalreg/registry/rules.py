"""Rule declarations: checks beyond JSON Schema that a family declares, as data.

A family declares rules in its manifest (declarative: conditions on JSON pointers, and path
patterns) or as Python modules `rules/<family>/<name>.py` (for what conditions cannot say).
Here they are parsed and checked; the engine runs them.

A declarative rule, in the manifest's `rules` list:

    - id: acme.score-in-range        # unique; lower case, digits, `.`, `-`, `_`
      severity: error                # error (the default) or warning
      scope: record                  # record (the default): every record; file: once a file
      versions: ">=2.0"              # a version specifier, or a list of versions (default: all)
      message: the score lies between the bounds
      each: /results/*               # check every place this pointer reaches (default: "")
      when: [{eq: [/kind, scored]}]  # conditions that make the rule apply (all of them)
      require:                       # conditions that must hold, each one a finding if not
        - le: [/min, /score]
        - le: [/score, /max]
      path: '/runs/(?P<team>[^/]+)/[^/]+\\.json$'   # file scope: the path must match

A condition is a mapping with one key: `present` or `absent` (a pointer); `eq`, `ne`, `lt`,
`le`, `gt`, `ge` (two operands); `in` (an operand and a list of values); `matches` (an operand
and a regular expression, searched); `any` (a list of conditions, one of which holds); `not`
(a condition). An operand is a JSON pointer (a string starting with `/`, read from the item
that `each` reached), `{group: NAME}` (a named group of `path`), `{file: path}` or
`{file: name}` (where the record's file is, with `/` separators), `{value: X}` or any other
literal. A file rule's `when` says whether the rule applies to a file at all (before `path`
must match), and its `require` conditions see the groups of `path`. A comparison whose operand
is missing, or of a type it cannot order, holds: use `present` to require a value.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from evalreg.errors import RegistryError, cut_repr
from evalreg.io.pointer import split
from evalreg.registry.patterns import BoundedPattern, safe_pattern
from evalreg.registry.versions import match_version, parse_version

if TYPE_CHECKING:
    from packaging.specifiers import SpecifierSet

Severity = Literal["error", "warning"]
Scope = Literal["record", "file", "collection"]
SEVERITIES: tuple[Severity, ...] = ("error", "warning")
SCOPES: tuple[Scope, ...] = ("record", "file", "collection")
COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge")
OPERATORS = ("present", "absent", *COMPARISONS, "in", "matches", "any", "not")
_ID = re.compile(r"[a-z0-9][a-z0-9._-]*")
_C = TypeVar("_C", bound=str)
_KEYS = {"id", "severity", "scope", "versions", "message", "each", "when", "require", "path"}


@dataclass(frozen=True)
class Operand:
    """A value a condition reads: at a pointer, from a path group, or given literally."""

    kind: Literal["pointer", "group", "file", "value"]
    value: Any

    def __str__(self) -> str:
        if self.kind == "pointer":
            return str(self.value)
        if self.kind == "group":
            return f"{{{self.value}}}"
        if self.kind == "file":
            return f"the file's {self.value}"
        return repr(self.value)


@dataclass(frozen=True)
class Condition:
    """One condition of a declarative rule: an operator and its operands or sub-conditions."""

    op: str
    operands: tuple[Operand, ...] = ()
    conditions: tuple[Condition, ...] = ()
    values: tuple[Any, ...] = ()
    """For `in`: the allowed values."""
    pattern: BoundedPattern | None = None
    """For `matches`: the regular expression."""

    def __str__(self) -> str:
        if self.op in ("any", "not"):
            return f"{self.op} [{'; '.join(str(c) for c in self.conditions)}]"
        shown = ", ".join(str(o) for o in self.operands)
        if self.op == "in":
            shown += f" in {list(self.values)!r}"
        elif self.pattern is not None:
            shown += f" matches {self.pattern.pattern!r}"
        return f"{self.op} {shown}"


@dataclass(frozen=True)
class Versions:
    """The versions a rule applies to: a specifier set, listed versions, or all."""

    specifier: SpecifierSet | None = None
    listed: tuple[str, ...] | None = None

    def __contains__(self, version: object) -> bool:
        if not isinstance(version, str):
            return False
        if self.listed is not None:
            return match_version(version, self.listed) is not None
        if self.specifier is not None:
            return self.specifier.contains(parse_version(version), prereleases=True)
        return True

    def __str__(self) -> str:
        if self.listed is not None:
            return ", ".join(self.listed)
        return "every version" if self.specifier is None else str(self.specifier)


@dataclass(frozen=True)
class RuleSpec:
    """A declarative rule of a family's manifest."""

    id: str
    family: str
    severity: Severity
    scope: Scope
    message: str
    versions: Versions
    each: str = ""
    when: tuple[Condition, ...] = ()
    require: tuple[Condition, ...] = ()
    path: BoundedPattern | None = None
    source: str = ""
    """The manifest that declares it."""


def rule_id(value: Any, where: str) -> str:
    """Return a checked rule id.

    Raises:
        RegistryError: not a string of lower-case letters, digits, `.`, `-` and `_`.
    """
    if not isinstance(value, str) or not _ID.fullmatch(value):
        raise RegistryError(
            where,
            f"rule id {cut_repr(value, 80)} must be lower-case letters, digits, '.', '-' or '_'",
        )
    return value


def _choice(value: Any, where: str, allowed: Sequence[_C], what: str) -> _C:
    """Return `value` as one of `allowed` (the first of them when None)."""
    if value is None:
        return allowed[0]
    for known in allowed:
        if value == known:
            return known
    raise RegistryError(
        where, f"{what} must be one of {', '.join(allowed)}, not {cut_repr(value, 80)}"
    )


def severity(value: Any, where: str) -> Severity:
    """Return a checked severity (`error` when None).

    Raises:
        RegistryError: neither `error` nor `warning`.
    """
    return _choice(value, where, SEVERITIES, "severity")


def scope(value: Any, where: str, allowed: Sequence[Scope] = SCOPES) -> Scope:
    """Return a checked scope (`record` when None).

    Raises:
        RegistryError: not one of the allowed scopes.
    """
    return _choice(value, where, allowed, "scope")


def versions(value: Any, where: str) -> Versions:
    """Return the versions a rule applies to, from a specifier string or a list of versions.

    Raises:
        RegistryError: neither a valid specifier set nor a list of version strings.
    """
    if value is None:
        return Versions()
    if isinstance(value, list) and all(isinstance(v, (str, int, float)) for v in value):
        return Versions(listed=tuple(str(v) for v in value))
    if isinstance(value, str):
        from packaging.specifiers import InvalidSpecifier, SpecifierSet

        try:
            return Versions(specifier=SpecifierSet(value))
        except InvalidSpecifier as err:
            raise RegistryError(where, f"versions {cut_repr(value, 80)}: {err}") from err
    raise RegistryError(where, "versions must be a specifier such as '>=0.2' or a list")


def _pointer(value: str, where: str) -> str:
    try:
        split(value)
    except ValueError as err:
        raise RegistryError(where, str(err)) from err
    return value


def _operand(value: Any, where: str) -> Operand:
    if isinstance(value, str) and value.startswith("/"):
        return Operand("pointer", _pointer(value, where))
    if isinstance(value, dict) and len(value) == 1:
        ((key, inner),) = value.items()
        if key == "group" and isinstance(inner, str):
            return Operand("group", inner)
        if key == "file" and inner in ("path", "name"):
            return Operand("file", inner)
        if key == "value":
            return Operand("value", inner)
    if isinstance(value, (dict, list)):
        raise RegistryError(
            where,
            f"operand {cut_repr(value, 80)}: use a pointer, {{group: NAME}}, {{file: path}}, "
            "{file: name} or {value: ...}",
        )
    return Operand("value", value)


def condition(data: Any, where: str) -> Condition:
    """Parse one condition.

    Raises:
        RegistryError: not a mapping with one known operator and well-formed operands, or a
            regular expression RE2 cannot compile (see `safe_pattern`).
    """
    if not isinstance(data, dict) or len(data) != 1:
        raise RegistryError(
            where,
            f"a condition is a mapping with one of {', '.join(OPERATORS)}: {cut_repr(data, 80)}",
        )
    ((op, args),) = data.items()
    here = f"{where}: {op}"
    if op in ("present", "absent"):
        if not isinstance(args, str) or not args.startswith("/"):
            raise RegistryError(here, "takes one JSON pointer")
        return Condition(op, (Operand("pointer", _pointer(args, here)),))
    if op in COMPARISONS:
        if not isinstance(args, list) or len(args) != 2:
            raise RegistryError(here, "takes a list of two operands")
        return Condition(op, tuple(_operand(a, here) for a in args))
    if op == "in":
        if not isinstance(args, list) or len(args) != 2 or not isinstance(args[1], list):
            raise RegistryError(here, "takes an operand and a list of values")
        return Condition(op, (_operand(args[0], here),), values=tuple(args[1]))
    if op == "matches":
        if not isinstance(args, list) or len(args) != 2 or not isinstance(args[1], str):
            raise RegistryError(here, "takes an operand and a regular expression")
        pattern = safe_pattern(args[1], here, "pattern")
        return Condition(op, (_operand(args[0], here),), pattern=pattern)
    if op == "any":
        if not isinstance(args, list) or not args:
            raise RegistryError(here, "takes a list of conditions")
        return Condition(op, conditions=tuple(condition(c, here) for c in args))
    if op == "not":
        return Condition(op, conditions=(condition(args, here),))
    raise RegistryError(where, f"unknown condition {op!r} (known: {', '.join(OPERATORS)})")


def _conditions(data: Any, where: str) -> tuple[Condition, ...]:
    if data is None:
        return ()
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list):
        raise RegistryError(where, "must be a list of conditions")
    return tuple(condition(item, where) for item in data)


def _groups(conditions: Sequence[Condition]) -> set[str]:
    found: set[str] = set()
    for c in conditions:
        found |= {str(o.value) for o in c.operands if o.kind == "group"}
        found |= _groups(c.conditions)
    return found


def parse_rule(data: Any, family: str, where: str) -> RuleSpec:
    """Parse one declarative rule of a manifest's `rules` list.

    Raises:
        RegistryError: a key is unknown, missing or malformed.
    """
    if not isinstance(data, dict):
        raise RegistryError(where, "each rule must be a mapping with an id")
    ident = rule_id(data.get("id"), where)
    here = f"{where}: rule {ident}"
    unknown = set(data) - _KEYS
    if unknown:
        raise RegistryError(
            here, f"unknown keys {', '.join(sorted(unknown))} (known: {', '.join(sorted(_KEYS))})"
        )
    kind = scope(data.get("scope"), here, ("record", "file"))
    message = data.get("message")
    if not isinstance(message, str) or not message.strip():
        raise RegistryError(here, "needs a message saying what must hold")
    each = data.get("each", "")
    if not isinstance(each, str) or (each and not each.startswith("/")):
        raise RegistryError(here, "each must be a JSON pointer")
    path = None
    if data.get("path") is not None:
        if kind != "file":
            raise RegistryError(here, "path needs scope: file")
        path = safe_pattern(data["path"], here, "path")
    when = _conditions(data.get("when"), f"{here}: when")
    require = _conditions(data.get("require"), f"{here}: require")
    if not require and path is None:
        raise RegistryError(here, "needs require (conditions) or, with scope: file, a path")
    named = set() if path is None else set(path.groupindex)
    missing = _groups((*when, *require)) - named
    if missing:
        raise RegistryError(here, f"no path group named {', '.join(sorted(missing))}")
    return RuleSpec(
        id=ident,
        family=family,
        severity=severity(data.get("severity"), here),
        scope=kind,
        message=" ".join(message.split()),
        versions=versions(data.get("versions"), here),
        each=_pointer(each, here) if each else "",
        when=when,
        require=require,
        path=path,
        source=where,
    )


def parse_rules(data: Any, family: str, where: str) -> tuple[RuleSpec, ...]:
    """Parse a manifest's `rules` list, refusing an id used twice.

    Raises:
        RegistryError: the list or a rule is malformed.
    """
    if data is None:
        return ()
    if not isinstance(data, list):
        raise RegistryError(where, "rules must be a list")
    rules = tuple(parse_rule(item, family, where) for item in data)
    seen: set[str] = set()
    for rule in rules:
        if rule.id in seen:
            raise RegistryError(where, f"rule id {rule.id} is declared twice")
        seen.add(rule.id)
    return rules
