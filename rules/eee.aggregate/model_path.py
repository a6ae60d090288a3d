"""An aggregate lives in the developer and model folders its model_info.id names.

Every Eval Ever files `org/name` under `org/name` (further slashes of the name become `_`), a
flat id under `model_info.developer`, and writes `:` as `_` in both folders. Ids that name no
folder (an empty or `unknown` part, or one a file system cannot hold) are reported too. Files
outside the datastore layout are left to the layout rule.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Any

ID = "eee.model-path"
SEVERITY = "warning"
SCOPE = "file"

_UNPORTABLE = re.compile(r'[<>:"|?*\x00-\x1f]|[. ]$')
_RESERVED = re.compile(r"(?i)(?:con|prn|aux|nul|com[1-9]|lpt[1-9])")


def folders(path: str) -> tuple[str, str] | None:
    """Return the developer and model folders of a file in the layout, or None."""
    parts = PurePosixPath(path.replace("\\", "/")).parts
    if "data" not in parts:
        return None
    below = parts[len(parts) - 1 - parts[::-1].index("data") + 1 :]
    if len(below) != 4:
        return None
    return below[1], below[2]


def named(model_id: str, developer: Any) -> tuple[str, str] | None:
    """Return the folders an id names (None: it names none)."""
    if "/" in model_id:
        org, name = model_id.split("/", 1)
        wanted = (org, name.replace("/", "_"))
    elif isinstance(developer, str):
        wanted = (developer, model_id)
    else:
        return None
    wanted = (wanted[0].replace(":", "_"), wanted[1].replace(":", "_"))
    for part in wanted:
        if not part or part.lower() == "unknown" or _UNPORTABLE.search(part):
            return None
        if _RESERVED.fullmatch(part.split(".", 1)[0]):
            return None
    return wanted


def check(record: Any, ctx: Any) -> None:
    model = record.get("model_info") if isinstance(record, dict) else None
    model_id = model.get("id") if isinstance(model, dict) else None
    actual = None if ctx.path is None else folders(ctx.path)
    if not isinstance(model_id, str) or actual is None:
        return
    wanted = named(model_id, model.get("developer"))
    if wanted is None:
        ctx.report("/model_info/id", f"the id {model_id!r} names no datastore folder")
    elif wanted != actual:
        ctx.report(
            "/model_info/id",
            f"the id {model_id!r} belongs in {wanted[0]}/{wanted[1]}, not {actual[0]}/{actual[1]}",
        )
