"""Write the assertions as plain strings, as SKILL.md asks from 24 Feb 2026.

1.0.0 (the seed document) gives the assertions as objects with an `id` and a `text`; real files
of that era also write the text as `description` or `name`. 2.0.0 has them as strings (the
grader matches results to them by text). The step keeps each text and moves the ids to
`assertion_ids`, unless they are the positional ones the downgrade makes again
(`assertion-1`, ...). Other fields of an assertion object (a check type, a value) are moved, per
assertion, to `assertion_details`.

Downgrade: the strings (or, when there are none, the `expectations`) become objects with an id
from `assertion_ids` or generated from the position, with the fields kept in
`assertion_details`. A file with no `eval_id` cannot go down, as 1.0.0 requires one.
"""

from __future__ import annotations

from typing import Any

from evalreg import StepContext
from evalreg.errors import MigrationError
from evalreg.stepkit import clone

FROM = "1.0.0"
TO = "2.0.0"
PARAMS = ()

_FAMILY = "skill-creator.eval-metadata"
_TEXT = ("text", "description", "name")


def _refuse(direction: str, message: str) -> MigrationError:
    return MigrationError(_FAMILY, direction, message)


def _generated(index: int) -> str:
    return f"assertion-{index + 1}"


def upgrade(record: dict[str, Any], ctx: StepContext) -> dict[str, Any]:
    """Return `record` at 2.0.0, with its assertions as strings."""
    direction = f"{FROM} -> {TO}"
    out: dict[str, Any] = {}
    for key, value in record.items():
        if key == "assertions" and isinstance(value, list):
            texts: list[str] = []
            ids: list[Any] = []
            details: list[Any] = []
            for i, item in enumerate(value):
                place = f"/assertions/{i}"
                if isinstance(item, str) and item:
                    texts.append(item)
                    ids.append(_generated(i))
                    details.append(None)
                    continue
                if not isinstance(item, dict):
                    raise _refuse(direction, f"{place} is neither a text nor an assertion object")
                name = next((n for n in _TEXT if isinstance(item.get(n), str) and item[n]), None)
                if name is None:
                    raise _refuse(direction, f"{place} has no text ({', '.join(_TEXT)})")
                if name != "text":
                    ctx.moved(f"{place}/{name}", place)
                texts.append(item[name])
                ids.append(clone(item.get("id", _generated(i))))
                rest = {k: clone(v) for k, v in item.items() if k not in (name, "id")}
                details.append(rest or None)
            out["assertions"] = texts
            if any(ident != _generated(i) for i, ident in enumerate(ids)):
                ctx.moved("/assertions/*/id", "/assertion_ids")
                out["assertion_ids"] = ids
            elif ids:
                ctx.kept("/assertions", "ids assertion-1.. follow from the positions")
            if any(details):
                ctx.moved("/assertions/*", "/assertion_details (other fields)")
                out["assertion_details"] = details
        else:
            out[key] = clone(value)
    return out


def downgrade(record: dict[str, Any], ctx: StepContext) -> dict[str, Any]:
    """Return `record` at 1.0.0, with assertion objects that carry ids."""
    direction = f"{TO} -> {FROM}"
    if "eval_id" not in record:
        raise _refuse(direction, "the file has no eval_id, which 1.0.0 requires")
    source = "assertions" if "assertions" in record else "expectations"
    texts = record.get(source, [])
    if not isinstance(texts, list):
        raise _refuse(direction, f"/{source} is not a list")
    ids = record.get("assertion_ids")
    if not isinstance(ids, list) or len(ids) != len(texts):
        ids = [_generated(i) for i in range(len(texts))]
    details = record.get("assertion_details")
    if not isinstance(details, list) or len(details) != len(texts):
        details = [None] * len(texts)
    objects = [
        {
            **(clone(details[i]) if isinstance(details[i], dict) else {}),
            "id": clone(ids[i]),
            "text": text,
        }
        for i, text in enumerate(texts)
    ]
    # The side lists are folded back into the assertions only when they fit them.
    folded = {"assertion_ids": ids, "assertion_details": details}
    out: dict[str, Any] = {}
    for key, value in record.items():
        if key in folded and value is folded[key]:
            ctx.moved(f"/{key}", "/assertions/*")
        elif key == source:
            if source != "assertions":
                ctx.moved(f"/{source}", "/assertions")
            out["assertions"] = objects
        else:
            out[key] = clone(value)
    if "assertions" not in out:
        out["assertions"] = objects
    return out
