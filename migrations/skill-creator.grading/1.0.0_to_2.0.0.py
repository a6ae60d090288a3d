"""Gather the counts and pass rate under `summary`, with expectations under the viewer's names.

2.0.0 is the grader output of the skill-creator tool (17 Feb to Jul 2026), which its viewer
and scripts/aggregate_benchmark.py read: `summary` holds passed, failed, total and pass_rate.
A file of the 1.0.0 era has no `summary`: the seed document puts `pass_rate` at the top level,
and real files carry the counts as `passed_count`/`pass_count`/`passed` and
`total`/`total_count`, or nothing at all. The step moves what the file states into `summary`
and counts what it does not state from the expectations (reported as kept). Expectations
written under other names are renamed to the ones the viewer reads: `name`/`description` to
`text`, `met` to `passed`, `details`/`reason` to `evidence`. The seed's claims (strings) become
claim objects, its `critique` becomes `eval_feedback.overall`, and its `metrics` object, which
2.0.0 has no place for, is kept as an extra field.

Downgrade: `summary.pass_rate` back to the top level, the counts dropped where the expectations
give the same ones; what 1.0.0 cannot hold (expectation fields other than text, passed and
evidence, claim details, counts that disagree with the expectations) is lost, only with
allow-loss.
"""

from __future__ import annotations

from typing import Any

from evalreg import StepContext
from evalreg.errors import MigrationError
from evalreg.stepkit import at, clone

FROM = "1.0.0"
TO = "2.0.0"
PARAMS = ()

_FAMILY = "skill-creator.grading"
_TEXT = ("text", "name", "description", "assertion", "expectation")
_PASSED = ("passed", "met", "pass")
_EVIDENCE = ("evidence", "details", "reason")
_VERDICTS = {"pass": True, "passed": True, "fail": False, "failed": False}
_PASSED_COUNT = ("passed_count", "pass_count", "passed")
_FAILED_COUNT = ("failed_count", "fail_count", "failed")
_TOTAL = ("total", "total_count")


def _refuse(direction: str, message: str) -> MigrationError:
    return MigrationError(_FAMILY, direction, message)


def _pick(item: dict[str, Any], names: tuple[str, ...]) -> str | None:
    return next((name for name in names if name in item), None)


def _verdict(value: Any, where: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _VERDICTS:
        return _VERDICTS[value.strip().lower()]
    raise _refuse(f"{FROM} -> {TO}", f"{where} is {value!r}, not a pass or fail verdict")


def _up_expectation(item: Any, where: str, ctx: StepContext) -> dict[str, Any]:
    if not isinstance(item, dict):
        raise _refuse(f"{FROM} -> {TO}", f"{where} is not an object with a verdict")
    out: dict[str, Any] = {}
    renamed: dict[str, str] = {}
    for field, names in (("text", _TEXT), ("passed", _PASSED), ("evidence", _EVIDENCE)):
        name = _pick(item, names)
        if name is None:
            raise _refuse(f"{FROM} -> {TO}", f"{where} has no {field} ({', '.join(names)})")
        renamed[name] = field
    for key, value in item.items():
        field = renamed.get(key)
        if field is None:
            if key in renamed.values():  # a field name another one is renamed to
                ctx.lose(at(where, key), f"the verdict's {key} is under another name too")
            else:
                out[key] = clone(value)
            continue
        if field != key:
            ctx.renamed(at(where, key), at(where, field))
        if field == "passed":
            out[field] = _verdict(value, at(where, key))
            if out[field] is not value:
                ctx.converted(at(where, field), value, out[field], "a pass or fail verdict")
        else:
            out[field] = clone(value)
    return out


def _count(record: dict[str, Any], names: tuple[str, ...]) -> tuple[str, int] | None:
    for name in names:
        value = record.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return name, value
    return None


def upgrade(record: dict[str, Any], ctx: StepContext) -> dict[str, Any]:
    """Return `record` at 2.0.0, with its counts and pass rate under `summary`."""
    direction = f"{FROM} -> {TO}"
    expectations = record.get("expectations")
    if not isinstance(expectations, list):
        raise _refuse(direction, "/expectations is not a list")
    if "summary" in record:
        raise _refuse(direction, "/summary is already there but is not a 2.0.0 summary")
    items = [_up_expectation(e, f"/expectations/{i}", ctx) for i, e in enumerate(expectations)]
    passed_count = sum(1 for e in items if e["passed"])
    stated = {
        "passed": _count(record, _PASSED_COUNT),
        "failed": _count(record, _FAILED_COUNT),
        "total": _count(record, _TOTAL),
    }
    counted = {"passed": passed_count, "failed": len(items) - passed_count, "total": len(items)}
    summary: dict[str, Any] = {}
    for field in ("passed", "failed", "total"):
        found = stated[field]
        if found is not None:
            ctx.moved(at("", found[0]), f"/summary/{field}")
            summary[field] = found[1]
    if "total" in summary and "passed" in summary and "failed" not in summary:
        summary["failed"] = max(summary["total"] - summary["passed"], 0)
        ctx.added("/summary/failed", summary["failed"], "derived", "total less passed")
    for field in ("passed", "failed", "total"):
        if field not in summary:
            summary[field] = counted[field]
            ctx.added(f"/summary/{field}", counted[field], "derived", "counted from expectations")
    rate = record.get("pass_rate")
    if isinstance(rate, (int, float)) and not isinstance(rate, bool) and 0 <= rate <= 1:
        ctx.moved("/pass_rate", "/summary/pass_rate")
        summary["pass_rate"] = rate
    else:
        if "pass_rate" in record:
            raise _refuse(direction, f"/pass_rate is {record['pass_rate']!r}, not a share 0 to 1")
        total = summary["total"]
        summary["pass_rate"] = round(summary["passed"] / total, 4) if total else 0.0
        ctx.added("/summary/pass_rate", summary["pass_rate"], "derived", "passed over total")
    summary = {k: summary[k] for k in ("passed", "failed", "total", "pass_rate")}

    moved = {"pass_rate"} | {found[0] for found in stated.values() if found is not None}
    out: dict[str, Any] = {}
    for key, value in record.items():
        if key == "expectations":
            out["expectations"] = items
            out["summary"] = summary
        elif key in moved:
            continue
        elif key == "claims" and isinstance(value, list):
            out["claims"] = [_up_claim(c, f"/claims/{i}", ctx) for i, c in enumerate(value)]
        elif key == "critique" and "eval_feedback" not in record and isinstance(value, str):
            ctx.moved("/critique", "/eval_feedback/overall")
            out["eval_feedback"] = {"overall": value}
        elif key == "metrics":
            ctx.kept("/metrics", "2.0.0 has no place for these run metrics")
            out[key] = clone(value)
        else:
            out[key] = clone(value)
    return out


def _up_claim(claim: Any, where: str, ctx: StepContext) -> Any:
    if isinstance(claim, str):
        ctx.moved(where, f"{where}/claim")
        return {"claim": claim}
    if isinstance(claim, dict) and isinstance(claim.get("claim"), str):
        return clone(claim)
    raise _refuse(f"{FROM} -> {TO}", f"{where} is neither a claim text nor a claim object")


def downgrade(record: dict[str, Any], ctx: StepContext) -> dict[str, Any]:
    """Return `record` at 1.0.0: the pass rate at the top level, no summary."""
    direction = f"{TO} -> {FROM}"
    summary = record.get("summary")
    expectations = record.get("expectations")
    if not isinstance(summary, dict) or not isinstance(expectations, list):
        raise _refuse(direction, "the record has no summary object or no expectation list")
    items: list[dict[str, Any]] = []
    for i, item in enumerate(expectations):
        if not isinstance(item, dict):
            raise _refuse(direction, f"/expectations/{i} is not an object")
        for key in item:
            if key not in ("text", "passed", "evidence"):
                ctx.lose(
                    at(f"/expectations/{i}", key),
                    "1.0.0 expectations hold only text, passed, evidence",
                )
        items.append({k: clone(v) for k, v in item.items() if k in ("text", "passed", "evidence")})
    passed = sum(1 for e in items if e.get("passed") is True)
    counted = {"passed": passed, "failed": len(items) - passed, "total": len(items)}
    for key, value in summary.items():
        if key == "pass_rate":
            ctx.moved("/summary/pass_rate", "/pass_rate")
        elif counted.get(key) != value or isinstance(value, bool):
            ctx.lose(at("/summary", key), "1.0.0 has no counts beside the expectations")
        else:
            ctx.dropped(at("/summary", key), "the expectations give the same count")
    if "pass_rate" in record and "pass_rate" in summary:
        if record["pass_rate"] != summary["pass_rate"]:
            ctx.lose("/pass_rate", "replaced by /summary/pass_rate")
        else:
            ctx.dropped("/pass_rate", "the same as /summary/pass_rate")
    out: dict[str, Any] = {}
    for key, value in record.items():
        if key == "expectations":
            out["expectations"] = items
            if "pass_rate" in summary:
                out["pass_rate"] = clone(summary["pass_rate"])
        elif key in ("summary", "pass_rate"):
            continue
        elif key == "claims" and isinstance(value, list):
            out["claims"] = [_down_claim(c, f"/claims/{i}", ctx) for i, c in enumerate(value)]
        elif key in ("execution_metrics", "timing", "user_notes_summary", "eval_feedback"):
            ctx.kept(f"/{key}", "1.0.0 has no such field")
            out[key] = clone(value)
        else:
            out[key] = clone(value)
    if "pass_rate" not in out:
        raise _refuse(direction, "/summary has no pass_rate, which 1.0.0 requires")
    return out


def _down_claim(claim: Any, where: str, ctx: StepContext) -> str:
    if isinstance(claim, str):
        return claim
    if not isinstance(claim, dict) or not isinstance(claim.get("claim"), str):
        raise _refuse(f"{TO} -> {FROM}", f"{where} has no claim text")
    for key in claim:
        if key != "claim":
            ctx.lose(at(where, key), "1.0.0 claims are plain texts")
    ctx.moved(f"{where}/claim", where)
    return str(claim["claim"])
