"""Walking paths: the files a run over paths reads, directories walked in sorted order."""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from evalreg.io import remote
from evalreg.io.readers import STDIN, SUFFIXES

DEFAULT_INCLUDE = tuple(f"*{s}{gz}" for s in SUFFIXES for gz in ("", ".gz"))
"""The files taken in a directory unless the caller says otherwise: every suffix readers know."""

_GLOB = re.compile(r"[*?\[]")


class _Globs:
    """Glob patterns (`fnmatch`), compiled once, matched against a relative path or its name."""

    def __init__(self, patterns: Sequence[str]) -> None:
        alternatives = "|".join(f"(?:{fnmatch.translate(os.path.normcase(p))})" for p in patterns)
        self._match = re.compile(alternatives).match if patterns else None
        # `*.json` and the like (every default) match a name ending so, whatever the folders.
        literal = all(p.startswith("*") and not _GLOB.search(p[1:]) for p in patterns)
        self._endings = tuple(os.path.normcase(p[1:]) for p in patterns) if literal else None

    @property
    def patterns(self) -> bool:
        """Return whether there is any pattern at all."""
        return self._match is not None

    @property
    def endings(self) -> tuple[str, ...] | None:
        """Return the endings that decide a match by a file's name alone, if the patterns do.

        That is when every pattern is `*` and a literal ending without a folder separator.
        """
        if self._endings is None or any("/" in e for e in self._endings):
            return None
        return self._endings

    def __call__(self, relative: str) -> bool:
        """Return whether `relative` (with `/` separators), or its last part, matches."""
        if self._match is None:
            return False
        if self._endings is not None:
            return os.path.normcase(relative).endswith(self._endings)
        name = relative.rsplit("/", 1)[-1]
        return bool(self._match(os.path.normcase(relative)) or self._match(os.path.normcase(name)))


def iter_files(
    paths: Iterable[str | os.PathLike[str]],
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
) -> Iterator[str]:
    """Yield the files to read: files as given, directories walked in sorted order.

    In a directory, only files matching `include` (default: every supported suffix) and not
    `exclude` are taken; hidden files and folders (names starting with `.`) are skipped, and
    symbolic links to folders are not followed. Paths that do not exist are yielded as given,
    so that reading them reports the problem. URLs are walked alike, through `io.remote`; a URL
    with glob characters (`s3://bucket/runs/*/*.jsonl`) stands for the files it matches.

    Raises:
        MissingExtraError: a URL's protocol needs a package that is not installed.
    """
    included, excluded = _Globs(tuple(include) or DEFAULT_INCLUDE), _Globs(exclude)
    for path in paths:
        text = os.fspath(path)
        if remote.is_url(text):
            yield from _walk_url(text, included, excluded)
            continue
        if text == STDIN or not os.path.isdir(text):
            if not excluded(Path(text).as_posix()):
                yield text
            continue
        # With the defaults (`*.json` and the like, no exclusions) a name's ending decides.
        endings = included.endings if not excluded.patterns else None
        for root, dirs, files in os.walk(text):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            names = sorted(name for name in files if not name.startswith("."))
            base = root if root.endswith(os.sep) else root + os.sep  # as `os.path.join` does
            if endings is not None:
                yield from [base + n for n in names if os.path.normcase(n).endswith(endings)]
                continue
            folder = Path(os.path.relpath(root, text)).as_posix()
            prefix = "" if folder == "." else folder + "/"
            for name in names:
                relative = prefix + name
                if included(relative) and not excluded(relative):
                    yield base + name


def _walk_url(url: str, included: _Globs, excluded: _Globs) -> Iterator[str]:
    """Yield the files of a URL: a file as given, a folder's or a glob's files in sorted order."""
    try:
        if remote.has_glob(url):
            for name in remote.glob(url):
                relative = name.rsplit("/", 1)[-1]
                if not relative.startswith(".") and included(relative) and not excluded(relative):
                    yield name
            return
        files = remote.list_files(url)
    except OSError:
        files = None  # reading it reports the problem
    if files is None:
        if not excluded(url.rsplit("/", 1)[-1]):
            yield url
        return
    prefix = len(url.rstrip("/")) + 1
    for name in files:
        relative = name[prefix:]
        if included(relative) and not excluded(relative):
            yield name
