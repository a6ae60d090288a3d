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
from evalreg.stepkit import at, clone

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
        ctx.converted(where, value, int(value), "2.0.0 case ids are integers")
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
            out.update(_up_assertions(value, f"{where}/assertions", where, ctx, f"{FROM} -> {TO}"))
        else:
            out[key] = clone(value)
    return out


def _up_assertions(
    items: list[Any], where: str, to: str, ctx: StepContext, direction: str
) -> dict[str, Any]:
    """Return the 2.0.0 fields of assertions (a list at `where`; its case at `to`): the texts
    under `assertions`, with `assertion_ids` and `assertion_details` where they say more."""
    texts: list[str] = []
    ids: list[tuple[Any, str | None]] = []  # each id, and where it was (None: generated)
    details: list[tuple[dict[str, Any] | None, str]] = []
    for i, item in enumerate(items):
        place = f"{where}/{i}"
        if isinstance(item, str) and item:
            texts.append(item)
            ids.append((_generated(i), None))
            details.append((None, place))
            continue
        if not isinstance(item, dict):
            raise _refuse(direction, f"{place} is neither a text nor an assertion object")
        name = next((n for n in _TEXT if isinstance(item.get(n), str) and item[n]), None)
        if name is None:
            raise _refuse(direction, f"{place} has no text ({', '.join(_TEXT)})")
        texts.append(item[name])
        ctx.moved(at(place, name), f"{to}/assertions/{i}", "the assertion's text")
        ids.append((clone(item["id"]), at(place, "id")) if "id" in item else (_generated(i), None))
        rest = {k: clone(v) for k, v in item.items() if k not in (name, "id")}
        details.append((rest or None, place))
    out: dict[str, Any] = {"assertions": texts}
    if any(ident != _generated(i) for i, (ident, _) in enumerate(ids)):
        out["assertion_ids"] = [ident for ident, _ in ids]
        for i, (ident, source) in enumerate(ids):
            if source is None:
                ctx.added(f"{to}/assertion_ids/{i}", ident, "derived", "its position")
            else:
                ctx.moved(source, f"{to}/assertion_ids/{i}")
    else:
        for _, source in ids:
            if source is not None:
                ctx.dropped(source, "the id follows from the assertion's position")
    if any(rest for rest, _ in details):
        out["assertion_details"] = [rest for rest, _ in details]
        for i, (rest, place) in enumerate(details):
            if rest is None:
                ctx.added(f"{to}/assertion_details/{i}", None, "derived", "no other fields")
            for key in rest or ():
                ctx.moved(at(place, key), at(f"{to}/assertion_details/{i}", key))
    return out


def _down_assertions(
    holder: dict[str, Any], where: str, ctx: StepContext
) -> tuple[str, list[Any] | None, set[str]]:
    """Return the 1.0.0 assertion objects of a 2.0.0 file or case (at `where`): the key they
    come from, the objects (None: no list), and the side lists folded into them."""
    source = "assertions" if "assertions" in holder else "expectations"
    texts = holder.get(source, [])
    if not isinstance(texts, list):
        return source, None, set()
    ids = holder.get("assertion_ids")
    fits_ids = isinstance(ids, list) and len(ids) == len(texts)
    details = holder.get("assertion_details")
    fits_details = isinstance(details, list) and len(details) == len(texts)
    objects = []
    for i, text in enumerate(texts):
        target = f"{where}/assertions/{i}"
        extra = details[i] if fits_details else None  # type: ignore[index]
        item: dict[str, Any] = {}
        if isinstance(extra, dict):
            for key, value in extra.items():
                if key not in ("id", "text"):
                    item[key] = clone(value)
                    ctx.moved(at(f"{where}/assertion_details/{i}", key), at(target, key))
                else:
                    ctx.lose(at(f"{where}/assertion_details/{i}", key), f"the assertion's {key}")
        elif fits_details:
            ctx.dropped(f"{where}/assertion_details/{i}", "no other fields")
        if fits_ids:
            item["id"] = clone(ids[i])  # type: ignore[index]
            ctx.moved(f"{where}/assertion_ids/{i}", f"{target}/id")
        else:
            item["id"] = _generated(i)
            ctx.added(f"{target}/id", item["id"], "derived", "its position")
        item["text"] = text
        ctx.moved(f"{where}/{source}/{i}", f"{target}/text")
        objects.append(item)
    if source in holder and source == "expectations":
        ctx.renamed(f"{where}/expectations", f"{where}/assertions")
    sides = (("assertion_ids", fits_ids), ("assertion_details", fits_details))
    return source, objects, {name for name, fits in sides if fits}


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
    if "assertions" not in case and "expectations" not in case:
        return clone(case)
    source, objects, folded = _down_assertions(case, where, ctx)
    out: dict[str, Any] = {}
    for key, value in case.items():
        if key in folded:
            continue
        if key == source and objects is not None:
            out["assertions"] = objects
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
