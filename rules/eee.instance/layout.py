"""A samples file lives at data/<collection>/<developer>/<model>/<uuid4>_samples.jsonl.

In a datastore (a file under a folder named `data`, the nearest such folder being the
datastore's), Every Eval Ever keeps each samples file beside its aggregate, three folders
down, named by the aggregate's lower-case UUID v4; no folder name holds `<>:"|?*` or a
control character, ends with a dot or a space, is a Windows device name, or is `data`. Each
finding names the part at fault and why (that the aggregate is there is `eee.companion`'s).
"""

from __future__ import annotations

import re
from typing import Any

from evalreg.rulekit import layout_problems

ID = "eee.layout"
SCOPE = "file"

LAYOUT = "data/<collection>/<developer>/<model>/<uuid4>_samples.jsonl"
FOLDERS = ("collection", "developer", "model")
NAME = re.compile(
    r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}_samples\.jsonl"
)
UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
WHY = {
    r"(?<!_samples\.jsonl)$": "it does not end in _samples.jsonl",
    rf"^(?!{UUID}_samples\.jsonl$)": "it is not a UUID followed by _samples.jsonl",
    r"[A-F]": "its UUID is written in upper case",
    r"^.{14}[^4]": "its UUID is not of version 4 (a 4 as the 13th digit)",
    r"^.{19}[^89ab]": "its UUID's variant digit (the 17th) is not 8, 9, a or b",
}


def check(record: Any, ctx: Any) -> None:
    if ctx.path is None:
        return
    path = ctx.path.replace("\\", "/")
    for problem in layout_problems(path, "data", FOLDERS, NAME, "<uuid4>_samples.jsonl", WHY):
        ctx.report("", f"{problem} (a samples file lives at {LAYOUT})")
