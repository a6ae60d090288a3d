"""Rename `assert` to `assertions` and settle the case list as `tests`.

Era 3.1 (from 2026-03-15) calls the checks `assertions`: those of every test, the suite-level
ones and the inner checks of a composite. The case list, which era 3 also accepted as
`eval_cases` or `cases`, is `tests`. Nothing else changes; era 3.1 adds test `input_files` and
a suite-level `input`, which an era-3 file does not have. `$schema: agentv-eval-v3` is kept and
relabelled `agentv-eval-v3.1`; none is added.

Downgrade: `assertions` back to `assert`; `input_files` and the suite-level `input` have no
place in era 3 and are lost (only with allow-loss).
"""

from __future__ import annotations

from typing import Any

from evalreg import StepContext
from evalreg.stepkit import clone, rename_key, rename_key_each

FROM = "3"
TO = "3.1"
PARAMS = ()


def upgrade(record: dict[str, Any], ctx: StepContext) -> dict[str, Any]:
    """Return `record` at era 3.1."""
    out: dict[str, Any] = {}
    for key, value in record.items():
        if key in ("tests", "cases", "eval_cases") and isinstance(value, list):
            out["tests"] = [rename_key(t, "assert", "assertions", nested=True) for t in value]
        elif key == "assert":
            out["assertions"] = rename_key_each(value, "assert", "assertions", nested=True)
        else:
            out[key] = clone(value)
    return out


def downgrade(record: dict[str, Any], ctx: StepContext) -> dict[str, Any]:
    """Return `record` at era 3, losing (only with allow-loss) what era 3 cannot hold."""
    out: dict[str, Any] = {}
    for key, value in record.items():
        if key == "tests" and isinstance(value, list):
            tests = []
            for index, test in enumerate(value):
                if isinstance(test, dict) and "input_files" in test:
                    ctx.lose(f"/tests/{index}/input_files", "era 3 has no input_files")
                    test = {k: v for k, v in test.items() if k != "input_files"}
                tests.append(rename_key(test, "assertions", "assert", nested=True))
            out[key] = tests
        elif key == "assertions":
            out["assert"] = rename_key_each(value, "assertions", "assert", nested=True)
        elif key == "input":
            ctx.lose("/input", "era 3 has no suite-level input")
        else:
            out[key] = clone(value)
    return out
