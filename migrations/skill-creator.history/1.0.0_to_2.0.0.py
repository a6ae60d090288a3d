"""Turn the seed's list of tried versions into the improve mode's version history.

1.0.0 (the seed document) lists the versions of a skill's description that were tried, under
`versions`, each with its iteration and pass rate (and precision and recall). 2.0.0, the
history the skill-creator tool documents (17 Feb to Jul 2026), lists versions under
`iterations`, each with a version id, its parent, its expectation pass rate, how it fared
against its parent and whether it is the best so far, and names the skill. The step writes
each entry as version `v<iteration>`, derived from the entry before it, with its pass rate; the
first is the baseline, and each later one won, lost or tied against its parent by pass rate;
the best (the first with the highest pass rate) is the current best. The description,
precision and recall stay in the entry as extra fields. The skill's name is not in a 1.0.0
file: give it with `--set skill_name=NAME`.
"""

from __future__ import annotations

from typing import Any

from evalreg import Param, StepContext
from evalreg.errors import MigrationError
from evalreg.stepkit import at, clone

FROM = "1.0.0"
TO = "2.0.0"
PARAMS = (Param("skill_name", help="Name of the skill, which a 1.0.0 history does not record."),)


def _refuse(message: str) -> MigrationError:
    return MigrationError("skill-creator.history", f"{FROM} -> {TO}", message)


def upgrade(record: dict[str, Any], ctx: StepContext) -> dict[str, Any]:
    """Return `record` at 2.0.0."""
    name = ctx.params.get("skill_name")
    if not name:
        raise _refuse("a 1.0.0 history names no skill; give it with --set skill_name=NAME")
    versions = record.get("versions")
    if not isinstance(versions, list):
        raise _refuse("/versions is not a list")
    rates = []
    for i, entry in enumerate(versions):
        rate = entry.get("pass_rate") if isinstance(entry, dict) else None
        if not isinstance(rate, (int, float)) or isinstance(rate, bool) or not 0 <= rate <= 1:
            raise _refuse(f"/versions/{i} has no pass rate from 0 to 1")
        rates.append(rate)
    best = rates.index(max(rates)) if rates else None
    iterations: list[dict[str, Any]] = []
    parent: str | None = None
    for i, entry in enumerate(versions):
        label = f"v{entry.get('iteration', i)}"
        to = f"/iterations/{i}"
        ctx.renamed(f"/versions/{i}/pass_rate", f"{to}/expectation_pass_rate")
        if i == 0:
            result = "baseline"
        else:
            result = (
                "won" if rates[i] > rates[i - 1] else "lost" if rates[i] < rates[i - 1] else "tie"
            )
        item: dict[str, Any] = {
            "version": label,
            "parent": parent,
            "expectation_pass_rate": rates[i],
            "grading_result": result,
            "is_current_best": i == best,
        }
        derived = {
            "version": "from its iteration",
            "parent": "the entry before it",
            "grading_result": "its pass rate against its parent's",
            "is_current_best": "the first with the highest pass rate",
        }
        for key, how in derived.items():
            ctx.added(at(to, key), item[key], "derived", how)
        for key, value in entry.items():
            if key in item:
                ctx.lose(at(f"/versions/{i}", key), f"2.0.0 entries write their own {key}")
            elif key != "pass_rate":
                item[key] = clone(value)
        iterations.append(item)
        parent = label
    out: dict[str, Any] = {"skill_name": str(name)}
    ctx.param("/skill_name", "skill_name", out["skill_name"])
    if best is not None:
        out["current_best"] = iterations[best]["version"]
        ctx.added("/current_best", out["current_best"], "derived", "the best entry's version")
    for key, value in record.items():
        if key == "versions":
            ctx.renamed("/versions", "/iterations")
            out["iterations"] = iterations
        elif key not in out:
            out[key] = clone(value)
        else:
            ctx.lose(at("", key), f"2.0.0 writes its own {key}")
    return out
