"""An aggregate lives in the developer and model folders its model_info.id names.

Every Eval Ever files `org/name` under `org/name` (further slashes of the name become `_`), a
flat id under `model_info.developer`, and writes `:` as `_` in both folders. Ids that name no
folder (an empty or `unknown` part, or one a file system cannot hold) are reported too. A file
outside the datastore layout (`eee.layout`) is left to that rule, as Every Eval Ever does.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

ID = "eee.model-path"
SEVERITY = "warning"
SCOPE = "file"

_UNPORTABLE = re.compile(r'[<>:"|?*\x00-\x1f]|[. ]$')
_RESERVED = re.compile(r"(?i)(?:con|prn|aux|nul|com[1-9]|lpt[1-9])")
_NAME = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\.json")


@lru_cache(maxsize=4096)
def portable(part: str) -> bool:
    """Return whether a folder name is one every file system can hold."""
    return (
        bool(part)
        and not _UNPORTABLE.search(part)
        and not _RESERVED.fullmatch(part.split(".", 1)[0])
    )


def folders(path: str) -> tuple[str, str] | None:
    """Return the developer and model folders of a file in the datastore layout, or None."""
    folder, _, name = path.replace("\\", "/").rpartition("/")
    if not _NAME.fullmatch(name):
        return None
    return _folders(folder)


@lru_cache(maxsize=4096)
def _folders(folder: str) -> tuple[str, str] | None:
    """Return the developer and model folders of a well-named file in `folder` (or None)."""
    parts = folder.split("/")
    if "data" not in parts:
        return None
    below = parts[len(parts) - 1 - parts[::-1].index("data") + 1 :]
    if len(below) != 3:
        return None
    if not all(portable(part) and part != "data" for part in below):
        return None
    return below[1], below[2]


@lru_cache(maxsize=4096)
def named(model_id: str, developer: str | None) -> tuple[str, str] | None:
    """Return the folders an id names (None: it names none)."""
    if "/" in model_id:
        org, name = model_id.split("/", 1)
        wanted = (org, name.replace("/", "_"))
    elif isinstance(developer, str):
        wanted = (developer, model_id)
    else:
        return None
    wanted = (wanted[0].replace(":", "_"), wanted[1].replace(":", "_"))
    if any(part.lower() == "unknown" or not portable(part) for part in wanted):
        return None
    return wanted


def check(record: Any, ctx: Any) -> None:
    model = record.get("model_info") if isinstance(record, dict) else None
    model_id = model.get("id") if isinstance(model, dict) else None
    actual = None if ctx.path is None else folders(ctx.path)
    if not isinstance(model_id, str) or actual is None:
        return
    developer = model.get("developer")
    wanted = named(model_id, developer if isinstance(developer, str) else None)
    if wanted is None:
        ctx.report("/model_info/id", f"the id {model_id!r} names no datastore folder")
    elif wanted != actual:
        ctx.report(
            "/model_info/id",
            f"the id {model_id!r} belongs in {wanted[0]}/{wanted[1]}, not {actual[0]}/{actual[1]}",
        )
