"""Regular expressions from registry directories, matched by RE2 in time linear in the text.

A registry directory is user input, and so are its patterns: manifest version markers, rule
`matches` conditions and `path`s, schema `pattern`s and `patternProperties` names. Python's `re`
backtracks, so a pattern such as `(a+)+$` takes time exponential in the length of a text it
fails on. evalreg matches them with RE2 (google-re2) instead, which never backtracks: for every
pattern it compiles, matching takes time linear in the length of the text. What only a
backtracking engine can do (backreferences, lookahead and lookbehind, atomic groups, possessive
quantifiers, conditional groups) RE2 does not compile, so a pattern using it is refused, and
`refusal` says why in one line.

The syntax is RE2's, which Python's and ECMA-262's mostly share: `(?P<name>...)`, `(?i)`,
classes, `\\d` `\\w` `\\s` `\\b` on ASCII characters (as ECMA-262 has them), `$` at the very end
of the text only (Python's also matches before a final newline), `\\z` for Python's `\\Z`.
ECMA-262's and Python's `\\uXXXX` is read as RE2's `\\x{XXXX}`. RE2 itself is imported on the
first pattern compiled. A pattern is at most `MAX_PATTERN_LENGTH` characters and
`MAX_PROGRAM_SIZE` RE2 instructions, and at most `_CACHED` compiled patterns are kept, so
that the memory patterns take stays bounded.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

MAX_PATTERN_LENGTH = 1000
"""The longest pattern a registry directory may give, in characters."""
MAX_PROGRAM_SIZE = 20_000
"""The most RE2 instructions a pattern may compile to. RE2 spells a counted repetition out, so
`[\\p{L}\\p{N} ]{1,100}` (22 characters) takes 134,401 instructions and some 13 MB: without a
bound, a registry's small patterns could take gigabytes."""
_CACHED = 128
"""Compiled patterns kept at once (each at most about 2 MB): memory stays bounded whatever the
number of patterns in the registries loaded, at the cost of compiling again past it."""

# `\\uXXXX`, or an escaped backslash (kept as it is, so that `\\\\u0041` stays a backslash and u).
_UNICODE_ESCAPE = re.compile(r"\\(?:(\\)|u([0-9A-Fa-f]{4}))")
_NEEDS_BACKTRACKING = {
    "(?=": "a lookahead (?=...)",
    "(?!": "a negative lookahead (?!...)",
    "(?<=": "a lookbehind (?<=...)",
    "(?<!": "a negative lookbehind (?<!...)",
    "(?>": "an atomic group (?>...)",
    "(?(": "a conditional group (?(...)...)",
}
_ENGINE = "which only a backtracking engine runs (registry patterns run on RE2, in linear time)"


class PatternRefused(ValueError):
    """A pattern RE2 cannot compile, or one too long; the message says why."""


def _translate(pattern: str) -> str:
    """Return `pattern` with its `\\uXXXX` escapes spelled as RE2 spells them, `\\x{XXXX}`."""
    if "\\u" not in pattern:
        return pattern
    return _UNICODE_ESCAPE.sub(
        lambda m: m.group(0) if m.group(1) else f"\\x{{{m.group(2)}}}", pattern
    )


def _why(pattern: str, error: str) -> str:
    """Return why RE2 refused `pattern`, from RE2's own `error`, for a one-line message."""
    kind, _, part = error.partition(": ")
    if kind == "invalid perl operator":
        if part == "(?P" and "(?P=" in pattern:
            return f"it has a backreference (?P=name), {_ENGINE}"
        if part in _NEEDS_BACKTRACKING:
            return f"it has {_NEEDS_BACKTRACKING[part]}, {_ENGINE}"
    elif kind == "invalid escape sequence":
        if part[1:].isdigit() or part == "\\k":
            return f"it has a backreference {part}, {_ENGINE}"
        if part == "\\Z":
            return "RE2 has no \\Z (Python's end of the text): write \\z"
    elif kind == "bad repetition operator" and len(part) > 1 and part.endswith("+"):
        return f"it has a possessive quantifier {part}, {_ENGINE}"
    return f"RE2 cannot compile it: {error}"


@lru_cache(maxsize=_CACHED)
def _compile(pattern: str) -> tuple[Any, str | None]:
    """Return the compiled pattern and None, or None and why it is refused."""
    if len(pattern) > MAX_PATTERN_LENGTH:
        return None, f"longer than {MAX_PATTERN_LENGTH} characters ({len(pattern):,})"
    import re2

    options = re2.Options()
    options.log_errors = False  # RE2 would print to standard error as well
    # RE2's compiler itself stops at max_mem, before `MAX_PROGRAM_SIZE` is looked at.
    options.max_mem = 4 << 20
    try:
        compiled = re2.compile(_translate(pattern), options)
    except re2.error as err:
        detail = err.args[0] if err.args else ""
        text = detail.decode("utf-8", "replace") if isinstance(detail, bytes) else str(detail)
        return None, _why(pattern, " ".join(text.split()))
    except UnicodeEncodeError:
        return None, "it is not valid Unicode text (it holds a lone surrogate)"
    size = compiled.programsize
    if size > MAX_PROGRAM_SIZE:
        return None, (
            f"it compiles to {size:,} RE2 instructions, more than {MAX_PROGRAM_SIZE:,} (a counted "
            "repetition is spelled out: use a smaller count, or maxLength in a schema)"
        )
    return compiled, None


def refusal(pattern: str) -> str | None:
    """Return why `pattern` is refused (too long, or not RE2's), or None when it is accepted."""
    return _compile(pattern)[1]


def compile_pattern(pattern: str) -> Any:
    """Return `pattern` compiled by RE2 (a `re2` regular expression).

    Raises:
        PatternRefused: the pattern is too long or RE2 cannot compile it (see `refusal`).
    """
    compiled, why = _compile(pattern)
    if compiled is None:
        raise PatternRefused(why)
    return compiled


def encode(text: str) -> bytes:
    """Return `text` as RE2 reads it: UTF-8 (a lone surrogate kept, so that it matches nothing)."""
    return text.encode("utf-8", "surrogatepass")


def search(pattern: str, text: str) -> bool:
    """Return whether `pattern` matches somewhere in `text`, as JSON Schema's `pattern` does.

    Raises:
        PatternRefused: see `compile_pattern`.
    """
    return compile_pattern(pattern).search(encode(text)) is not None
