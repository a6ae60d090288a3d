"""Write the checks of each case as plain strings, as the skill-creator tool does.

1.0.0 (the seed document) gives each case's `assertions` as objects with an `id` and a `text`;
real files of that era also write the text as `description` or `name`. 2.0.0, the tool's own
format (17 Feb to Jul 2026), has the checks as strings (`expectations` in references/schemas.md,
`assertions` in SKILL.md) and integer case ids. The step keeps each text, under `assertions`,
and moves ids to the case's `assertion_ids` unless they are the positional ones the downgrade
makes again (`assertion-1`, `assertion-2`, ...). Other fields of an assertion object (a check
type, a value) are moved, per assertion, to the case's `assertion_details`. A case id that is
not an integer (or a string of digits) stops the migration.

Downgrade: the strings become objects with an id, taken from `assertion_ids` or generated from
the position (`assertion-1`, ...), and the fields kept in `assertion_details`; a case that has
only `expectations` gets them as `assertions`.
"""

from __future__ import annotations

from typing import Any

from evalreg import StepContext
from evalreg.errors import MigrationError
from evalreg.stepkit import clone

FROM = "1.0.0"
TO = "2.0.0"
PARAMS = ()

_FAMILY = "skill-creator.evals"
_TEXT = ("text", "description", "name")


def _refuse(direction: str, message: str) -> MigrationError:
    return MigrationError(_FAMILY, direction, message)


def _generated(index: int) -> str:
    return f"assertion-{index + 1}"


def _up_id(value: Any, where: str, ctx: StepContext) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.isascii() and value.isdigit():
        ctx.moved(where, f"{where} (as the integer {int(value)})")
        return int(value)
    raise _refuse(f"{FROM} -> {TO}", f"{where} is {value!r}; 2.0.0 case ids are integers")


def _up_case(case: Any, where: str, ctx: StepContext) -> Any:
    if not isinstance(case, dict):
        raise _refuse(f"{FROM} -> {TO}", f"{where} is not an object")
    out: dict[str, Any] = {}
    for key, value in case.items():
        if key == "id":
            out["id"] = _up_id(value, f"{where}/id", ctx)
        elif key == "assertions" and isinstance(value, list):
            texts, ids, details = _up_assertions(value, f"{where}/assertions", ctx)
            out["assertions"] = texts
            if any(ident != _generated(i) for i, ident in enumerate(ids)):
                ctx.moved(f"{where}/assertions/*/id", f"{where}/assertion_ids")
                out["assertion_ids"] = ids
            elif ids:
                ctx.kept(f"{where}/assertions", "ids assertion-1.. follow from the positions")
            if any(details):
                ctx.moved(f"{where}/assertions/*", f"{where}/assertion_details (other fields)")
                out["assertion_details"] = details
        else:
            out[key] = clone(value)
    return out


def _up_assertions(
    items: list[Any], where: str, ctx: StepContext
) -> tuple[list[str], list[Any], list[Any]]:
    texts: list[str] = []
    ids: list[Any] = []
    details: list[Any] = []
    for i, item in enumerate(items):
        place = f"{where}/{i}"
        if isinstance(item, str) and item:
            texts.append(item)
            ids.append(_generated(i))
            details.append(None)
            continue
        if not isinstance(item, dict):
            raise _refuse(f"{FROM} -> {TO}", f"{place} is neither a text nor an assertion object")
        name = next((n for n in _TEXT if isinstance(item.get(n), str) and item[n]), None)
        if name is None:
            raise _refuse(f"{FROM} -> {TO}", f"{place} has no text ({', '.join(_TEXT)})")
        if name != "text":
            ctx.moved(f"{place}/{name}", place)
        texts.append(item[name])
        ids.append(clone(item.get("id", _generated(i))))
        rest = {k: clone(v) for k, v in item.items() if k not in (name, "id")}
        details.append(rest or None)
    return texts, ids, details


def upgrade(record: dict[str, Any], ctx: StepContext) -> dict[str, Any]:
    """Return `record` at 2.0.0, with its checks as strings."""
    cases = record.get("evals")
    if not isinstance(cases, list):
        raise _refuse(f"{FROM} -> {TO}", "/evals is not a list")
    out: dict[str, Any] = {}
    for key, value in record.items():
        if key == "evals":
            out[key] = [_up_case(c, f"/evals/{i}", ctx) for i, c in enumerate(cases)]
        else:
            out[key] = clone(value)
    return out


def _down_case(case: Any, where: str, ctx: StepContext) -> Any:
    if not isinstance(case, dict):
        raise _refuse(f"{TO} -> {FROM}", f"{where} is not an object")
    texts = case.get("assertions")
    source = "assertions"
    if texts is None and "expectations" in case:
        texts, source = case["expectations"], "expectations"
    count = len(texts) if isinstance(texts, list) else 0
    ids = case.get("assertion_ids")
    if not isinstance(ids, list) or len(ids) != count:
        ids = [_generated(i) for i in range(count)]
    details = case.get("assertion_details")
    if not isinstance(details, list) or len(details) != count:
        details = [None] * count
    # The side lists are folded back into the assertions only when they fit them.
    folded = {"assertion_ids": ids, "assertion_details": details}
    out: dict[str, Any] = {}
    for key, value in case.items():
        if key in folded and value is folded[key]:
            ctx.moved(f"{where}/{key}", f"{where}/assertions/*")
        elif key == source and isinstance(value, list):
            if source != "assertions":
                ctx.moved(f"{where}/{source}", f"{where}/assertions")
            out["assertions"] = [
                {
                    **(clone(details[i]) if isinstance(details[i], dict) else {}),
                    "id": clone(ids[i]),
                    "text": text,
                }
                for i, text in enumerate(value)
            ]
        else:
            out[key] = clone(value)
    return out


def downgrade(record: dict[str, Any], ctx: StepContext) -> dict[str, Any]:
    """Return `record` at 1.0.0, with assertion objects that carry ids."""
    cases = record.get("evals")
    if not isinstance(cases, list):
        raise _refuse(f"{TO} -> {FROM}", "/evals is not a list")
    out: dict[str, Any] = {}
    for key, value in record.items():
        if key == "evals":
            out[key] = [_down_case(c, f"/evals/{i}", ctx) for i, c in enumerate(cases)]
        else:
            out[key] = clone(value)
    return out
