"""Tools for writing rules: say which part of a file's path breaks a datastore's layout, and why.

A file rule that checks where a file lives (`rules/<family>/*.py`, `SCOPE = "file"`) reports
better with the part at fault than with the whole layout: `the model folder 'nova-lite-v1:0'
holds ':', which Windows cannot hold in a name` says what to rename.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

__all__ = ["layout_problems", "unportable"]

_RESERVED = re.compile(r"(?i)(?:con|prn|aux|nul|com[1-9]|lpt[1-9])")
_FORBIDDEN = '<>:"|?*'
_UNPORTABLE = re.compile(r'[<>:"|?*\x00-\x1f]')


@lru_cache(maxsize=4096)
def unportable(name: str) -> str | None:
    """Return why a file or folder name cannot be held by every file system (None: it can).

    Refused: an empty name, `.` and `..`, the characters `<>:"|?*` and control characters,
    a trailing dot or space, and Windows' device names (`con`, `nul.txt`, `COM1`, ...).
    """
    if name in ("", ".", ".."):
        return "is empty" if not name else f"is {name!r}"
    found = _UNPORTABLE.search(name)
    if found is not None:
        char = found.group()
        if char in _FORBIDDEN:
            return f"holds {char!r}, which Windows cannot hold in a name"
        return f"holds the control character {char!r}"
    if name[-1] in ". ":
        return "ends with a dot" if name[-1] == "." else "ends with a space"
    if _RESERVED.fullmatch(name.split(".", 1)[0]):
        return f"is a Windows device name ({name.split('.', 1)[0].upper()})"
    return None


def layout_problems(
    path: str,
    root: str,
    folders: Sequence[str],
    name: re.Pattern[str],
    name_form: str,
    why_not_named: dict[str, str] | None = None,
) -> list[str]:
    """Return what is wrong with where a file is, for a layout `root/<folder>/.../<name>`.

    `path` uses `/` separators; the nearest folder named `root` above the file is the
    datastore's (so no folder below it is named `root`). Empty when the file is where the
    layout wants it, or under no `root` folder at all (it is not in a datastore). One problem
    per part at fault: a wrong number of folders below `root`, a folder whose name a file
    system cannot hold, a file name that does not match `name` (written as `name_form`;
    `why_not_named` maps a pattern, searched in the name, to the first reason that applies).
    """
    folder, _, file_name = path.rpartition("/")
    placed = _folder_problems(folder, root, tuple(folders))
    if placed is None:
        return []
    found = list(placed)
    if not name.fullmatch(file_name):
        reason = next(
            (
                why
                for pattern, why in (why_not_named or {}).items()
                if re.search(pattern, file_name)
            ),
            None,
        )
        detail = f": {reason}" if reason else ""
        found.append(f"the file name {file_name!r} is not {name_form}{detail}")
    return found


@lru_cache(maxsize=4096)
def _folder_problems(folder: str, root: str, folders: tuple[str, ...]) -> tuple[str, ...] | None:
    """Return what is wrong with the folders of a file in `folder` (see `layout_problems`), or
    None where no folder is named `root`: worked out once a folder, which a datastore's files
    share by the thousand."""
    parts = folder.split("/")
    if root not in parts:
        return None
    below = parts[len(parts) - parts[::-1].index(root) :]
    if len(below) != len(folders):
        count = len(below)
        folder_word = "folder" if count == 1 else "folders"
        inside = "/".join(below)
        shown = "/".join(f"<{f}>" for f in folders)
        return (
            f"the file is {count} {folder_word} below {root}/"
            + (f" ({inside})" if inside else "")
            + f", not {len(folders)} ({shown})",
        )
    found = []
    for label, part in zip(folders, below, strict=True):
        reason = unportable(part)
        if reason is not None:
            found.append(f"the {label} folder {part!r} {reason}")
    return tuple(found)
