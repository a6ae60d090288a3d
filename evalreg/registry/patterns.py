"""Regular expressions a registry directory supplies, refused when they could backtrack for ever.

Python's `re` backtracks: a pattern such as `(a+)+$` takes time exponential in the length of a
value it fails on, and a manifest is user input. Every manifest pattern (version markers, rule
`matches` conditions and file `path`s) is therefore compiled by `safe_pattern`, which refuses:

- a pattern longer than `MAX_PATTERN_LENGTH` characters;
- a repeated group whose iterations can split one text in several ways (nested quantifiers such
  as `(a+)+` or `(\\d+\\.?)*`, alternatives that can start alike such as `(\\w|\\d)+`, a body
  that can match nothing such as `(a*)*`), found statically;
- a pattern that takes over `PROBE_BUDGET` seconds of CPU time on the inputs of any one length,
  when tried on inputs made from its own characters, of up to `MAX_MATCHED_LENGTH` characters.

The compiled `BoundedPattern` never matches a text longer than `MAX_MATCHED_LENGTH` characters.
`unsafe_reason` gives the same verdict for JSON Schema `pattern`s, which `evalreg check` reports.
"""

from __future__ import annotations

import importlib
import re
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from evalreg.errors import RegistryError, cut_repr

# The parser `re` itself uses: private, but stable for years (`sre_parse` before 3.11).
_NEW_RE = sys.version_info >= (3, 11)
_c: Any = importlib.import_module("re._constants" if _NEW_RE else "sre_constants")
_p: Any = importlib.import_module("re._parser" if _NEW_RE else "sre_parse")

MAX_PATTERN_LENGTH = 1000
"""The longest pattern a manifest may give, in characters."""
MAX_MATCHED_LENGTH = 1024
"""The longest text a manifest pattern is matched against; a longer one does not match."""
PROBE_BUDGET = 0.05
"""CPU seconds a pattern may take on one probe input."""
PROBE_LENGTH = 256
"""The longest probe input every pump character is tried at; a few go on to `MAX_MATCHED_LENGTH`."""
PROBE_TOTAL = 1.0
"""CPU seconds all the probes of one pattern may take together."""
_PROBE_LENGTHS = (*range(2, 65, 2), *range(72, PROBE_LENGTH + 1, 8))
_LONG_LENGTHS = (512, MAX_MATCHED_LENGTH)
_LONG_PUMPS = 4
_LARGE_REPEAT = 16
"""A repeat with a higher bound than this is checked like an unbounded one."""
_SAMPLES = "\x85\xa0\xe9\xdf\u03a9\u4e2d\u2028\U0001f600"
_SHOWN = 80


def shown(pattern: str) -> str:
    """Return a pattern for a one-line message: repr'd, and cut if long."""
    text = cut_repr(pattern, _SHOWN)
    return text if len(text) <= _SHOWN else f"{text} ({len(pattern)} chars)"


@dataclass(frozen=True)
class BoundedPattern:
    """A compiled manifest pattern that never matches a text over `MAX_MATCHED_LENGTH` chars."""

    compiled: re.Pattern[str] = field(repr=False)

    @property
    def pattern(self) -> str:
        """Return the pattern's source."""
        return self.compiled.pattern

    @property
    def groupindex(self) -> dict[str, int]:
        """Return the pattern's named groups."""
        return dict(self.compiled.groupindex)

    def search(self, text: str) -> re.Match[str] | None:
        """Search `text`; None when it is longer than `MAX_MATCHED_LENGTH`."""
        return None if len(text) > MAX_MATCHED_LENGTH else self.compiled.search(text)

    def fullmatch(self, text: str) -> re.Match[str] | None:
        """Match the whole of `text`; None when it is longer than `MAX_MATCHED_LENGTH`."""
        return None if len(text) > MAX_MATCHED_LENGTH else self.compiled.fullmatch(text)


# -- static analysis -----------------------------------------------------------------------------

_CATEGORIES: dict[Any, Callable[[str], bool]] = {
    _c.CATEGORY_DIGIT: str.isdecimal,
    _c.CATEGORY_NOT_DIGIT: lambda ch: not ch.isdecimal(),
    _c.CATEGORY_SPACE: str.isspace,
    _c.CATEGORY_NOT_SPACE: lambda ch: not ch.isspace(),
    _c.CATEGORY_WORD: lambda ch: ch.isalnum() or ch == "_",
    _c.CATEGORY_NOT_WORD: lambda ch: not (ch.isalnum() or ch == "_"),
}
"""Close to `re`'s own classes (`\\d`, `\\s`, `\\w` and their complements) on the alphabet used."""
_REPEATS = (_c.MAX_REPEAT, _c.MIN_REPEAT)
# Possessive repeats and atomic groups (Python 3.11) never backtrack into what they matched.
_POSSESSIVE: Any = getattr(_c, "POSSESSIVE_REPEAT", object())
_ATOMIC: Any = getattr(_c, "ATOMIC_GROUP", object())


class _Unsafe(Exception):
    """The static analysis found a repeat that can backtrack exponentially."""


@dataclass
class _Analysis:
    """Character sets of a parsed pattern, over a finite alphabet that represents all text."""

    alphabet: frozenset[str]
    sets: list[frozenset[str]] = field(default_factory=list)

    def chars_in(self, items: list[tuple[Any, Any]]) -> frozenset[str]:
        negate = False
        found: set[str] = set()
        for op, av in items:
            if op == _c.NEGATE:
                negate = True
            elif op == _c.LITERAL:
                found.add(chr(av))
            elif op == _c.RANGE:
                found |= {ch for ch in self.alphabet if av[0] <= ord(ch) <= av[1]}
            elif op == _c.CATEGORY and av in _CATEGORIES:
                found |= {ch for ch in self.alphabet if _CATEGORIES[av](ch)}
            else:
                found |= self.alphabet  # an item this analysis does not model: anything
        return self.alphabet - found if negate else frozenset(found)

    def chars(self, op: Any, av: Any) -> frozenset[str]:
        """Return the characters one element can consume anywhere in its match."""
        if op == _c.LITERAL:
            result = frozenset(chr(av))
        elif op == _c.NOT_LITERAL:
            result = self.alphabet - {chr(av)}
        elif op == _c.IN:
            result = self.chars_in(av)
        elif op in (_c.ANY, _c.GROUPREF):
            result = self.alphabet
        elif op in (_c.AT, _c.ASSERT, _c.ASSERT_NOT):
            result = frozenset()
        else:
            result = frozenset().union(*(self.seq_chars(s) for s in _children(op, av)))
        if op in (_c.LITERAL, _c.NOT_LITERAL, _c.IN):
            self.sets.append(result)
        return result

    def seq_chars(self, seq: Any) -> frozenset[str]:
        return frozenset().union(*(self.chars(op, av) for op, av in seq))

    def first(self, seq: Any) -> frozenset[str]:
        """Return the characters a match of `seq` can start with."""
        found: set[str] = set()
        for op, av in seq:
            found |= self.first_of(op, av)
            if not _nullable(op, av):
                break
        return frozenset(found)

    def first_of(self, op: Any, av: Any) -> frozenset[str]:
        if op in (_c.LITERAL, _c.NOT_LITERAL, _c.IN, _c.ANY, _c.GROUPREF):
            return self.chars(op, av)
        if op in (_c.AT, _c.ASSERT, _c.ASSERT_NOT):
            return frozenset()
        return frozenset().union(*(self.first(s) for s in _children(op, av)))

    def tail(self, seq: Any) -> frozenset[str]:
        """Return what the variable elements at the end of `seq` can consume."""
        return self.edge(_reversed(seq))

    def head(self, seq: Any) -> frozenset[str]:
        """Return what the variable elements at the start of `seq` can consume."""
        return self.edge(seq)

    def edge(self, seq: Any) -> frozenset[str]:
        """Return what the variable elements that start `seq` can consume."""
        found: set[str] = set()
        for op, av in seq:
            if op == _c.SUBPATTERN:
                found |= self.edge(av[-1])
            elif op in _REPEATS and av[0] == av[1]:
                found |= self.edge(av[2])
            elif _variable(op, av):
                found |= self.chars(op, av)
            if not _nullable(op, av):
                break
        return frozenset(found)

    def last(self, seq: Any) -> frozenset[str]:
        """Return the characters a match of `seq` can end with."""
        return self.first(_reversed(seq))

    def check(self, seq: Any, repeated: bool = False) -> None:
        """Raise `_Unsafe` for a repeat or alternation whose matches can overlap."""
        for op, av in seq:
            if op in (_POSSESSIVE, _ATOMIC):
                continue  # no backtracking into it
            if op in _REPEATS:
                low, high, body = av
                if high == _c.MAXREPEAT or high > _LARGE_REPEAT:
                    self.check_repeat(low, body)
                    self.check(body, repeated=True)
                else:
                    if high > 1 and _seq_variable(body):
                        self.check_repeat(low, body)  # (a{1,9}){9}: 9**9 ways, bounded or not
                    self.check(body, repeated)
                continue
            if op == _c.BRANCH and repeated:
                self.check_branch(av[1])
            for child in _children(op, av):
                self.check(child, repeated)

    def check_repeat(self, low: int, body: Any) -> None:
        if _seq_nullable(body):
            raise _Unsafe("a repeated part that can match nothing")
        first = self.first(body)
        if self.tail(body) & first or self.head(body) & self.last(body):
            raise _Unsafe("a repeated part whose repetitions can split a text in several ways")

    def check_branch(self, alternatives: list[Any]) -> None:
        starts = [self.first(alt) for alt in alternatives]
        for index, start in enumerate(starts):
            for other in starts[index + 1 :]:
                if start & other:
                    raise _Unsafe("alternatives under a repeat that can start alike")


def _children(op: Any, av: Any) -> Iterator[Any]:
    """Yield the sub-sequences of an element."""
    if op == _c.SUBPATTERN:
        yield av[-1]
    elif op == _c.BRANCH:
        yield from av[1]
    elif op in _REPEATS or op == _POSSESSIVE:
        yield av[2]
    elif op in (_c.ASSERT, _c.ASSERT_NOT):
        yield av[1]
    elif op == _ATOMIC:
        yield av
    elif op == _c.GROUPREF_EXISTS:
        yield av[1]
        if av[2] is not None:
            yield av[2]


def _reversed(seq: Any) -> list[tuple[Any, Any]]:
    """Return a sequence read backwards, its sub-sequences too (for `last`)."""
    out: list[tuple[Any, Any]] = []
    for op, av in reversed(list(seq)):
        if op == _c.SUBPATTERN:
            av = (*av[:-1], _reversed(av[-1]))
        elif op == _c.BRANCH:
            av = (av[0], [_reversed(alt) for alt in av[1]])
        elif op in _REPEATS or op == _POSSESSIVE:
            av = (av[0], av[1], _reversed(av[2]))
        elif op == _ATOMIC:
            av = _reversed(av)
        out.append((op, av))
    return out


def _nullable(op: Any, av: Any) -> bool:
    if op in (_c.AT, _c.ASSERT, _c.ASSERT_NOT, _c.GROUPREF):
        return True
    if op in _REPEATS or op == _POSSESSIVE:
        return bool(av[0] == 0 or _seq_nullable(av[2]))
    if op in (_c.SUBPATTERN, _ATOMIC):
        return _seq_nullable(av[-1] if op == _c.SUBPATTERN else av)
    if op in (_c.BRANCH, _c.GROUPREF_EXISTS):
        return any(_seq_nullable(s) for s in _children(op, av)) or (
            op == _c.GROUPREF_EXISTS and av[2] is None
        )
    return False


def _seq_nullable(seq: Any) -> bool:
    return all(_nullable(op, av) for op, av in seq)


def _variable(op: Any, av: Any) -> bool:
    """Return whether an element can match texts of several lengths or in several ways."""
    if op in _REPEATS:
        return bool(av[0] != av[1] or _seq_variable(av[2]))
    if op in (_c.BRANCH, _c.GROUPREF, _c.GROUPREF_EXISTS):
        return True
    if op == _c.SUBPATTERN:
        return _seq_variable(av[-1])
    return False


def _seq_variable(seq: Any) -> bool:
    return any(_variable(op, av) for op, av in seq)


def _literals(seq: Any) -> Iterator[str]:
    for op, av in seq:
        if op == _c.LITERAL:
            yield chr(av)
        elif op == _c.IN:
            yield from (chr(v) for o, v in av if o == _c.LITERAL)
            yield from (chr(v[0]) for o, v in av if o == _c.RANGE)
        for child in _children(op, av):
            yield from _literals(child)


def _prefix(seq: Any) -> str:
    """Return the literal text a match must start with (after anchors)."""
    out = []
    for op, av in seq:
        if op == _c.AT:
            continue
        if op != _c.LITERAL:
            break
        out.append(chr(av))
    return "".join(out)


# -- the probe -----------------------------------------------------------------------------------


def _probe_inputs(analysis: _Analysis, prefix: str) -> tuple[list[str], str]:
    """Return the characters to pump and a character that ends the inputs without matching."""
    every = frozenset().union(*analysis.sets) if analysis.sets else frozenset()
    pumps: list[str] = []
    for chars in analysis.sets:
        for ch in sorted(chars)[:1]:
            if ch not in pumps:
                pumps.append(ch)
    for ch in "a0 .-_/":
        if ch not in pumps:
            pumps.append(ch)
    pumps = pumps[:8]
    pumps += [a + b for index, a in enumerate(pumps[:4]) for b in pumps[index + 1 : 4]]
    stop = next((ch for ch in "\x00!~\x7f\u4e2d" if ch not in every), "\x00")
    return [p for p in pumps if p], stop


class _OutOfTime(Exception):
    """The probe's CPU-time alarm went off."""


@contextmanager
def _cpu_alarm(seconds: float) -> Iterator[None]:
    """Interrupt what runs inside after `seconds` of CPU time, where signals allow it.

    `re` checks for signals while it matches, so an alarm stops a match that would take hours.
    Only the main thread receives signals, and Windows has no CPU-time timer: elsewhere the
    budget is checked between matches only.
    """
    if (
        not hasattr(signal, "setitimer")
        or threading.current_thread() is not threading.main_thread()
    ):
        yield
        return

    def expire(signum: int, frame: Any) -> None:
        raise _OutOfTime

    previous = signal.signal(signal.SIGVTALRM, expire)
    earlier = signal.setitimer(signal.ITIMER_VIRTUAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)
        signal.signal(signal.SIGVTALRM, signal.SIG_DFL if previous is None else previous)
        if earlier[0] > 0:  # a timer someone else had set goes on
            signal.setitimer(signal.ITIMER_VIRTUAL, *earlier)


def _probe(compiled: re.Pattern[str], analysis: _Analysis, prefix: str) -> str | None:
    """Return why matching took too long on an input made to be slow, or None."""
    pumps, stop = _probe_inputs(analysis, prefix)
    starts = ("", prefix) if prefix else ("",)
    schedule = [(n, pumps) for n in _PROBE_LENGTHS] + [
        (n, pumps[:_LONG_PUMPS]) for n in _LONG_LENGTHS
    ]
    length = 0
    try:
        with _cpu_alarm(PROBE_TOTAL):
            began = time.thread_time()
            for length, chosen in schedule:
                for start in starts:
                    for pump in chosen:
                        text = start + pump * (length // len(pump))
                        for candidate in (text, text[: MAX_MATCHED_LENGTH - 1] + stop):
                            before = time.thread_time()
                            compiled.search(candidate)
                            compiled.fullmatch(candidate)
                            now = time.thread_time()
                            if now - before > PROBE_BUDGET:
                                return (
                                    f"matching it took over {PROBE_BUDGET:g} s of CPU time on "
                                    f"an input of {len(candidate)} characters"
                                )
                            if now - began > PROBE_TOTAL:
                                raise _OutOfTime
    except _OutOfTime:
        return (
            f"trying it on inputs of up to {length} characters took over {PROBE_TOTAL:g} s "
            "of CPU time"
        )
    return None


@lru_cache(maxsize=256)
def unsafe_reason(pattern: str, probe: bool = True) -> str | None:
    """Return why `pattern` may take too long to match (None when it is safe, or not Python's).

    A pattern Python cannot compile (ECMA-262 syntax in a JSON Schema) is not judged here.
    """
    if len(pattern) > MAX_PATTERN_LENGTH:
        return f"longer than {MAX_PATTERN_LENGTH} characters ({len(pattern)})"
    try:
        compiled = re.compile(pattern)
        parsed = list(_p.parse(pattern))
    except (re.error, RecursionError, OverflowError, ValueError):
        return None
    literals = frozenset(_literals(parsed))
    alphabet = frozenset(chr(i) for i in range(128)) | frozenset(_SAMPLES) | literals
    analysis = _Analysis(alphabet)
    try:
        analysis.seq_chars(parsed)
        analysis.check(parsed)
    except _Unsafe as why:
        return f"{why} (nested or overlapping quantifiers backtrack exponentially)"
    except RecursionError:
        return "nested too deeply to analyse"
    if probe:
        return _probe(compiled, analysis, _prefix(parsed))
    return None


def safe_pattern(pattern: Any, where: str, what: str, *, trusted: bool = False) -> BoundedPattern:
    """Compile a manifest's regular expression, refusing one that could backtrack for ever.

    A `trusted` pattern (of the built-in registry, which `evalreg check` and the test suite
    analyse) is only compiled and bounded in length, to keep start-up fast.

    Raises:
        RegistryError: the pattern is malformed, too long, or may take too long to match; the
            message names `what` and the pattern.
    """
    text = str(pattern)
    if len(text) > MAX_PATTERN_LENGTH:
        raise RegistryError(
            where,
            f"{what} {shown(text)} is longer than {MAX_PATTERN_LENGTH} characters",
        )
    try:
        compiled = re.compile(text)
    except (re.error, RecursionError, OverflowError) as err:
        raise RegistryError(where, f"{what} {shown(text)}: {err}") from err
    reason = None if trusted else unsafe_reason(text)
    if reason is not None:
        raise RegistryError(where, f"{what} {shown(text)} is refused: {reason}")
    return BoundedPattern(compiled)
