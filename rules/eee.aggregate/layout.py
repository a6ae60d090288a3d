"""An aggregate lives at data/<collection>/<developer>/<model>/<uuid4>.json, in portable folders.

In a datastore (a file under a folder named `data`, the nearest such folder being the
datastore's), Every Eval Ever keeps each aggregate three folders down, named by a lower-case
UUID v4; no folder name holds `<>:"|?*` or a control character, ends with a dot or a space, is
a Windows device name, or is `data`. Each finding names the part at fault and why.
"""

from __future__ import annotations

import re
from typing import Any

from evalreg.rulekit import layout_problems

ID = "eee.layout"
SCOPE = "file"

LAYOUT = "data/<collection>/<developer>/<model>/<uuid4>.json"
FOLDERS = ("collection", "developer", "model")
NAME = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\.json")
UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
WHY = {
    r"(?<!\.json)$": "it does not end in .json",
    rf"^(?!{UUID}\.json$)": "it is not a UUID followed by .json",
    r"[A-F]": "its UUID is written in upper case",
    r"^.{14}[^4]": "its UUID is not of version 4 (a 4 as the 13th digit)",
    r"^.{19}[^89ab]": "its UUID's variant digit (the 17th) is not 8, 9, a or b",
}


def check(record: Any, ctx: Any) -> None:
    if ctx.path is None:
        return
    path = ctx.path.replace("\\", "/")
    for problem in layout_problems(path, "data", FOLDERS, NAME, "<uuid4>.json", WHY):
        ctx.report("", f"{problem} (an aggregate lives at {LAYOUT})")
