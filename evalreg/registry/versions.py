"""Version strings: parsing, ordering and matching against a family's known versions.

Versions are ordered with `packaging.version.Version`, so `0.1` and `0.1.0` are the same version
and `0.10.0` sorts after `0.9.0`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from packaging.version import InvalidVersion, Version

from evalreg.errors import MAX_VERSION_LENGTH, InvalidVersionError

MAX_FILE_VERSION_LENGTH = 64
"""The longest version string that may name a file, in characters."""
_FILE_VERSION = re.compile(r"[0-9A-Za-z][0-9A-Za-z.+!_-]*")


@lru_cache(maxsize=1024)
def parse_version(text: str) -> Version:
    """Parse a version string.

    Raises:
        InvalidVersionError: `text` is not a version.
    """
    if len(text) > MAX_VERSION_LENGTH:  # long digit runs would be refused as integers
        raise InvalidVersionError(text)
    try:
        return Version(text)
    except InvalidVersion as err:
        raise InvalidVersionError(text) from err


def is_version(text: str) -> bool:
    """Return whether `text` parses as a version."""
    try:
        parse_version(text)
    except InvalidVersionError:
        return False
    return True


def sort_versions(versions: Iterable[str]) -> tuple[str, ...]:
    """Return `versions` in ascending order."""
    return tuple(sorted(versions, key=parse_version))


def match_version(text: str, known: Iterable[str]) -> str | None:
    """Return the known version equal to `text` (`0.1` matches `0.1.0`), or None."""
    if not is_version(text):
        return None
    wanted = parse_version(text)
    for version in known:
        if parse_version(version) == wanted:
            return version
    return None


def is_file_version(text: str) -> bool:
    """Return whether `text` is a version that may name a file.

    That is a version number of at most `MAX_FILE_VERSION_LENGTH` characters, starting with a
    letter or digit, with no path separator, space, `..` or other character versions do not need.
    """
    return (
        len(text) <= MAX_FILE_VERSION_LENGTH
        and _FILE_VERSION.fullmatch(text) is not None
        and ".." not in text
        and is_version(text)
    )


VERSION_IN_TEXT = re.compile(r"(?<![\w.])\d+(?:\.\d+){0,3}(?![\w.])|(?<=_)\d+(?:\.\d+){1,3}$")
"""A version number standing in a text (`0.2.1`, `instance_level_eval_0.2.1`, `v2`: not)."""

_LEVELS = {"major": 0, "minor": 1, "patch": 2}


def bump(version: str, level: str) -> str:
    """Return the next version after `version` at `level` (major, minor or patch).

    A version of three parts keeps three (`0.3.0` at patch is `0.3.1`); a shorter one gets as
    many as the level needs (`4` at minor is `4.1`, `2.1` at major `3`).

    Raises:
        InvalidVersionError: `version` is not a version.
        ValueError: `level` is not major, minor or patch.
    """
    index = _LEVELS[level]
    parts = list(parse_version(version).release)
    length = len(parts)
    parts += [0] * (index + 1 - len(parts))
    parts[index] += 1
    parts[index + 1 :] = [0] * (len(parts) - index - 1)
    keep = length if length >= 3 else index + 1
    return ".".join(str(p) for p in parts[:keep])
