"""Regular expressions a manifest supplies: compiled by RE2, and bounded in what they match.

Every manifest pattern (version markers, rule `matches` conditions and file `path`s) is compiled
by `safe_pattern` with RE2 (see `evalreg.regex`), which matches in time linear in the text, so
that no pattern can make a command hang, whatever its nesting. A pattern that needs a
backtracking engine (a backreference, lookaround), one in a syntax RE2 lacks, or one longer than
`MAX_PATTERN_LENGTH` characters is refused when its manifest loads, in one line naming the file,
the pattern and why. The compiled `BoundedPattern` never matches a text longer than
`MAX_MATCHED_LENGTH` characters, so that a rule costs the same on every record whatever its
size. Schema `pattern`s and `patternProperties` names are held to the same (`schemawalk`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from evalreg.errors import RegistryError, cut_repr
from evalreg.regex import MAX_PATTERN_LENGTH, compile_pattern, encode, refusal

__all__ = [
    "MAX_MATCHED_LENGTH",
    "MAX_PATTERN_LENGTH",
    "BoundedPattern",
    "PatternMatch",
    "refusal",
    "safe_pattern",
    "shown",
]

MAX_MATCHED_LENGTH = 1024
"""The longest text a manifest pattern is matched against; a longer one does not match."""
_SHOWN = 80


def shown(pattern: str) -> str:
    """Return a pattern for a one-line message: repr'd, and cut if long."""
    text = cut_repr(pattern, _SHOWN)
    return text if len(text) <= _SHOWN else f"{text} ({len(pattern)} chars)"


class PatternMatch:
    """A match of a manifest pattern: what its named groups matched, as text."""

    __slots__ = ("_names", "_values")

    def __init__(self, names: tuple[str, ...], values: tuple[str | None, ...]) -> None:
        self._names = names
        self._values = values

    def group(self, name: str) -> str | None:
        """Return what a named group matched; None if it took no part in the match."""
        return self._values[self._names.index(name)]

    def groupdict(self) -> dict[str, str | None]:
        """Return what each named group matched."""
        return dict(zip(self._names, self._values, strict=True))


def _named(
    pattern: str, whole: bool, text: str, numbers: tuple[int, ...]
) -> tuple[str | None, ...] | None:
    """Return what the groups `numbers` matched in `text`, or None when it does not match."""
    compiled = compile_pattern(pattern)
    found = (compiled.fullmatch if whole else compiled.search)(encode(text))
    if found is None:
        return None
    if not numbers:
        return ()
    parts = found.group(*numbers) if len(numbers) > 1 else (found.group(numbers[0]),)
    return tuple(None if part is None else part.decode("utf-8", "surrogatepass") for part in parts)


_remembered = lru_cache(maxsize=4096)(_named)
"""`_named`, remembered for short texts: those a pattern sees repeat (a version on every record
of a file, a folder name in every path), and a call into RE2 costs more than a lookup."""
_REMEMBERED_LENGTH = 64


@dataclass(frozen=True)
class BoundedPattern:
    """A compiled manifest pattern that never matches a text over `MAX_MATCHED_LENGTH` chars."""

    pattern: str
    """The pattern as the manifest gives it (compiled, when matched, through a bounded cache)."""
    names: tuple[str, ...] = field(repr=False, compare=False)
    """The names of its named groups."""
    numbers: tuple[int, ...] = field(repr=False, compare=False)
    """The number of each named group."""

    @property
    def groupindex(self) -> dict[str, int]:
        """Return the number of each named group."""
        return dict(zip(self.names, self.numbers, strict=True))

    def _match(self, whole: bool, text: str) -> PatternMatch | None:
        if len(text) > MAX_MATCHED_LENGTH:
            return None
        match = _remembered if len(text) <= _REMEMBERED_LENGTH else _named
        found = match(self.pattern, whole, text, self.numbers)
        return None if found is None else PatternMatch(self.names, found)

    def search(self, text: str) -> PatternMatch | None:
        """Search `text`; None when it is longer than `MAX_MATCHED_LENGTH`."""
        return self._match(False, text)

    def fullmatch(self, text: str) -> PatternMatch | None:
        """Match the whole of `text`; None when it is longer than `MAX_MATCHED_LENGTH`."""
        return self._match(True, text)


def safe_pattern(pattern: Any, where: str, what: str) -> BoundedPattern:
    """Compile a manifest's regular expression with RE2.

    Raises:
        RegistryError: the pattern is too long, needs a backtracking engine, or is not RE2
            syntax; the message names `what`, the pattern and why.
    """
    text = str(pattern)
    if len(text) > MAX_PATTERN_LENGTH:
        raise RegistryError(
            where,
            f"{what} {shown(text)} is longer than {MAX_PATTERN_LENGTH} characters",
        )
    why = refusal(text)
    if why is not None:
        raise RegistryError(where, f"{what} {shown(text)} is refused: {why}")
    compiled = compile_pattern(text)
    named = sorted(compiled.groupindex.items(), key=lambda item: item[1])
    return BoundedPattern(
        text, tuple(name for name, _ in named), tuple(number for _, number in named)
    )
