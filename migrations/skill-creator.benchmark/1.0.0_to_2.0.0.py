"""Lay the benchmark out as scripts/aggregate_benchmark.py writes it and the viewer reads it.

2.0.0 is the skill-creator tool's benchmark (17 Feb to Jul 2026): runs with `configuration`,
`run_number` and their figures under `result`, statistics per configuration under
`run_summary` and the differences, as signed strings, under `run_summary.delta`. A file of the
1.0.0 era has no `run_summary`: the seed document writes runs with `config` and a top-level
`pass_rate`, `summaries` with `mean_pass_rate` and `stddev`, and `deltas` as numbers. The step
moves each of these to its 2.0.0 place (a run's `summary` object, which some files have, becomes
its `result`), numbers the runs of each case and configuration in file order where they have
no `run_number`, and computes the per-configuration statistics from the runs where the file
has no `summaries` (reported as kept). Files that group their results by configuration instead
(`with_skill`, `without_skill`, ... objects, or a `configurations` list, each with a list of
`evals` carrying a pass rate) get one run per entry, the other figures of each configuration
kept beside its statistics, and their `delta` numbers as signed strings. A top-level
`skill_name` or `timestamp` moves under `metadata`.

Downgrade: `configuration` back to `config`, `result.pass_rate` to the run, the means and
standard deviations of the pass rate to `summaries`, the pass-rate and token differences to
`deltas` as numbers; the other figures stay beside them as extra fields.
"""

from __future__ import annotations

import math
from typing import Any

from evalreg import StepContext
from evalreg.errors import MigrationError
from evalreg.stepkit import clone

FROM = "1.0.0"
TO = "2.0.0"
PARAMS = ()

_FAMILY = "skill-creator.benchmark"
_DELTAS = {"pass_rate_delta": "pass_rate", "tokens_delta": "tokens", "time_delta": "time_seconds"}
_CONFIGS = ("with_skill", "without_skill", "old_skill", "new_skill")
_RESULT = {
    "pass_rate": "pass_rate",
    "pass_count": "passed",
    "passed": "passed",
    "passed_count": "passed",
    "failed": "failed",
    "total": "total",
    "total_count": "total",
    "time_seconds": "time_seconds",
    "tokens": "tokens",
    "total_tokens": "tokens",
}


def _refuse(direction: str, message: str) -> MigrationError:
    return MigrationError(_FAMILY, direction, message)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _signed(value: Any) -> str:
    return ("+" if value >= 0 else "") + repr(value)


def _stats(values: list[float]) -> dict[str, float]:
    mean = sum(values) / len(values)
    spread = sum((v - mean) ** 2 for v in values) / (len(values) - 1) if len(values) > 1 else 0.0
    return {
        "mean": round(mean, 4),
        "stddev": round(math.sqrt(spread), 4),
        "min": round(min(values), 4),
        "max": round(max(values), 4),
    }


def _up_run(run: Any, where: str, ctx: StepContext) -> dict[str, Any]:
    direction = f"{FROM} -> {TO}"
    if not isinstance(run, dict):
        raise _refuse(direction, f"{where} is not an object")
    out: dict[str, Any] = {}
    result: dict[str, Any] = clone(run["result"]) if isinstance(run.get("result"), dict) else {}
    for key, value in run.items():
        if key == "config" and "configuration" not in run:
            ctx.moved(f"{where}/config", f"{where}/configuration")
            out["configuration"] = clone(value)
        elif key == "pass_rate" and "pass_rate" not in result:
            ctx.moved(f"{where}/pass_rate", f"{where}/result/pass_rate")
            result["pass_rate"] = clone(value)
        elif key == "summary" and isinstance(value, dict) and "pass_rate" not in result:
            ctx.moved(f"{where}/summary", f"{where}/result")
            result.update(clone(value))
        elif key != "result":
            out[key] = clone(value)
    if "configuration" not in out:
        raise _refuse(direction, f"{where} has no configuration (or config)")
    if "pass_rate" not in result:
        raise _refuse(direction, f"{where} has no pass rate")
    out["result"] = result
    return out


def _blocks(record: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """Return the per-configuration blocks of a file without runs: (pointer, name, block)."""
    found = [(f"/{k}", k, v) for k, v in record.items() if k in _CONFIGS and isinstance(v, dict)]
    for key in ("configurations", "configs"):
        listed = record.get(key)
        if isinstance(listed, dict):
            found += [(f"/{key}/{n}", n, b) for n, b in listed.items() if isinstance(b, dict)]
        elif isinstance(listed, list):
            for i, block in enumerate(listed):
                name = (
                    _pick(block, ("name", "configuration", "config"))
                    if isinstance(block, dict)
                    else None
                )
                if name is None or not isinstance(block[name], str):
                    raise _refuse(f"{FROM} -> {TO}", f"/{key}/{i} has no configuration name")
                found.append(
                    (f"/{key}/{i}", block[name], {k: v for k, v in block.items() if k != name})
                )
    return found


def _pick(item: dict[str, Any], names: tuple[str, ...]) -> str | None:
    return next((name for name in names if name in item), None)


def _runs_of_blocks(
    blocks: list[tuple[str, str, dict[str, Any]]], ctx: StepContext
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Return runs and per-configuration extras made from configuration blocks."""
    direction = f"{FROM} -> {TO}"
    runs: list[dict[str, Any]] = []
    extras: dict[str, Any] = {}
    for where, config, block in blocks:
        name = _pick(block, ("evals", "runs"))
        entries = block.get(name) if name else None
        if not isinstance(entries, list):
            raise _refuse(direction, f"{where} has no list of evals or runs")
        for i, entry in enumerate(entries):
            place = f"{where}/{name}/{i}"
            if not isinstance(entry, dict) or not _number(entry.get("pass_rate")):
                raise _refuse(direction, f"{place} has no pass rate")
            result: dict[str, Any] = {}
            run: dict[str, Any] = {}
            for key, value in entry.items():
                target = _RESULT.get(key)
                if target is not None and target not in result:
                    result[target] = clone(value)
                    ctx.moved(f"{place}/{key}", f"/runs/{len(runs)}/result/{target}")
                elif key == "id" and "eval_id" not in entry:
                    run["eval_id"] = clone(value)
                else:
                    run[key] = clone(value)
            if "eval_id" not in run:
                raise _refuse(direction, f"{place} has no eval_id")
            run["configuration"] = config
            run["result"] = result
            runs.append(run)
        rest = {k: clone(v) for k, v in block.items() if k != name}
        if rest:
            ctx.kept(where, f"kept in /run_summary/{config}")
            extras[config] = rest
        ctx.moved(where, f"/runs (configuration {config})")
    return runs, extras


def upgrade(record: dict[str, Any], ctx: StepContext) -> dict[str, Any]:
    """Return `record` at 2.0.0."""
    direction = f"{FROM} -> {TO}"
    if "run_summary" in record:
        raise _refuse(direction, "/run_summary is already there")
    runs = record.get("runs")
    extras: dict[str, Any] = {}
    blocks: list[tuple[str, str, dict[str, Any]]] = []
    if isinstance(runs, list):
        new_runs = [_up_run(run, f"/runs/{i}", ctx) for i, run in enumerate(runs)]
    elif "runs" not in record and (blocks := _blocks(record)):
        new_runs, extras = _runs_of_blocks(blocks, ctx)
    else:
        raise _refuse(direction, "the file has no list of runs, nor configuration blocks")
    seen: dict[tuple[str, str], int] = {}
    numbered = False
    for run in new_runs:
        key = (repr(run.get("eval_id")), repr(run["configuration"]))
        seen[key] = seen.get(key, 0) + 1
        if "run_number" not in run:
            run["run_number"] = seen[key]
            numbered = True
    if numbered:
        ctx.kept("/runs", "runs without run_number numbered in file order, from 1")

    summaries = record.get("summaries")
    run_summary: dict[str, Any] = {}
    if isinstance(summaries, dict):
        for config, stats in summaries.items():
            if not isinstance(stats, dict) or not _number(stats.get("mean_pass_rate")):
                raise _refuse(direction, f"/summaries/{config} has no mean_pass_rate")
            rate = {"mean": stats["mean_pass_rate"], "stddev": stats.get("stddev", 0)}
            if "stddev" not in stats:
                ctx.kept(f"/summaries/{config}", "no stddev: 0 written")
            rest = {k: clone(v) for k, v in stats.items() if k not in ("mean_pass_rate", "stddev")}
            ctx.moved(f"/summaries/{config}", f"/run_summary/{config}/pass_rate")
            run_summary[config] = {"pass_rate": rate, **rest}
    elif "summaries" in record:
        raise _refuse(direction, "/summaries is not an object")
    else:
        rates: dict[str, list[float]] = {}
        for run in new_runs:
            config, rate = run["configuration"], run["result"]["pass_rate"]
            if not isinstance(config, str) or not _number(rate):
                raise _refuse(direction, "a run's configuration or pass rate is not usable")
            rates.setdefault(config, []).append(rate)
        for config, values in rates.items():
            run_summary[config] = {"pass_rate": _stats(values), **extras.get(config, {})}
        ctx.kept("/runs", "run_summary computed from the runs' pass rates")

    deltas_key = "deltas" if "deltas" in record else "delta"
    deltas = record.get(deltas_key)
    if isinstance(deltas, dict):
        delta: dict[str, Any] = {}
        for key, value in deltas.items():
            name = _DELTAS.get(key, key if deltas_key == "delta" else None)
            if name in ("pass_rate", "time_seconds", "tokens") and _number(value):
                ctx.moved(f"/{deltas_key}/{key}", f"/run_summary/delta/{name}")
                delta[name] = _signed(value)
            elif key in ("pass_rate", "time_seconds", "tokens") and not isinstance(value, str):
                raise _refuse(direction, f"/{deltas_key}/{key} is not a number")
            else:
                ctx.kept(f"/{deltas_key}/{key}", "kept in /run_summary/delta")
                delta[key] = clone(value)
        run_summary["delta"] = delta

    used = {"summaries"} | {where.split("/")[1] for where, _, _ in blocks}
    if isinstance(deltas, dict):
        used.add(deltas_key)
    out: dict[str, Any] = {}
    metadata = record.get("metadata")
    if metadata is None:
        out["metadata"] = metadata = {}
    elif not isinstance(metadata, dict):
        raise _refuse(direction, "/metadata is not an object")
    for key, value in record.items():
        if key in used:
            continue
        if key in ("skill_name", "timestamp") and "metadata" not in record:
            ctx.moved(f"/{key}", f"/metadata/{key}")
            metadata[key] = clone(value)
        elif key == "metadata":
            out[key] = clone(value)
        else:
            out[key] = clone(value)
    out["runs"] = new_runs
    out["run_summary"] = run_summary
    return out


def _down_run(run: Any, where: str, ctx: StepContext) -> dict[str, Any]:
    direction = f"{TO} -> {FROM}"
    if not isinstance(run, dict) or not isinstance(run.get("result"), dict):
        raise _refuse(direction, f"{where} has no result object")
    rate = run["result"].get("pass_rate")
    if not _number(rate) or not 0 <= rate <= 1:
        raise _refuse(direction, f"{where}/result has no pass rate from 0 to 1")
    out: dict[str, Any] = {}
    for key, value in run.items():
        if key == "configuration":
            ctx.moved(f"{where}/configuration", f"{where}/config")
            out["config"] = clone(value)
        elif key == "result":
            ctx.moved(f"{where}/result/pass_rate", f"{where}/pass_rate")
            out["pass_rate"] = rate
            rest = {k: clone(v) for k, v in value.items() if k != "pass_rate"}
            if rest:
                ctx.kept(f"{where}/result", "1.0.0 runs have only the pass rate")
                out["result"] = rest
        else:
            out[key] = clone(value)
    if not isinstance(out.get("config"), str) or not out["config"]:
        raise _refuse(direction, f"{where} has no configuration name")
    return out


def downgrade(record: dict[str, Any], ctx: StepContext) -> dict[str, Any]:
    """Return `record` at 1.0.0."""
    direction = f"{TO} -> {FROM}"
    runs, run_summary = record.get("runs"), record.get("run_summary")
    if not isinstance(runs, list) or not isinstance(run_summary, dict):
        raise _refuse(direction, "the file has no runs list or no run_summary object")
    metadata = record.get("metadata")
    if not isinstance(metadata, dict) or not metadata.get("skill_name"):
        raise _refuse(direction, "1.0.0 requires a non-empty metadata.skill_name")
    summaries: dict[str, Any] = {}
    deltas: dict[str, Any] = {}
    for config, stats in run_summary.items():
        if config == "delta" and isinstance(stats, dict):
            for key, value in stats.items():
                name = next((old for old, new in _DELTAS.items() if new == key), None)
                try:
                    number = float(value) if name and isinstance(value, str) else None
                except ValueError:
                    number = None
                if name is not None and number is not None and math.isfinite(number):
                    ctx.moved(f"/run_summary/delta/{key}", f"/deltas/{name}")
                    deltas[name] = int(number) if number.is_integer() else number
                else:
                    ctx.kept(f"/run_summary/delta/{key}", "kept in /deltas")
                    deltas[key] = clone(value)
            continue
        rate = stats.get("pass_rate") if isinstance(stats, dict) else None
        if not isinstance(rate, dict) or not _number(rate.get("mean")):
            raise _refuse(direction, f"/run_summary/{config} has no pass_rate mean")
        if not 0 <= rate["mean"] <= 1:
            raise _refuse(direction, f"/run_summary/{config}/pass_rate/mean is not 0 to 1")
        ctx.moved(f"/run_summary/{config}/pass_rate", f"/summaries/{config}")
        summary: dict[str, Any] = {"mean_pass_rate": rate["mean"]}
        if "stddev" in rate:
            summary["stddev"] = clone(rate["stddev"])
        for key, value in stats.items():
            if key != "pass_rate":
                ctx.kept(f"/run_summary/{config}/{key}", "kept in /summaries")
                summary[key] = clone(value)
        summaries[config] = summary
    difference = deltas.get("pass_rate_delta", 0)
    if not _number(difference) or not -1 <= difference <= 1:
        raise _refuse(direction, "the pass-rate difference is not from -1 to 1")
    out: dict[str, Any] = {}
    for key, value in record.items():
        if key == "runs":
            out["runs"] = [_down_run(run, f"/runs/{i}", ctx) for i, run in enumerate(runs)]
        elif key == "run_summary":
            out["summaries"] = summaries
            if deltas:
                out["deltas"] = deltas
        else:
            out[key] = clone(value)
    return out
