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
from evalreg.stepkit import at, clone

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
    if "result" in run and not isinstance(run["result"], dict):
        ctx.lose(f"{where}/result", "2.0.0 runs hold their figures in a result object")
    for key, value in run.items():
        if key == "config" and "configuration" not in run:
            ctx.renamed(f"{where}/config", f"{where}/configuration")
            out["configuration"] = clone(value)
        elif key == "pass_rate" and "pass_rate" not in result:
            ctx.moved(f"{where}/pass_rate", f"{where}/result/pass_rate")
            result["pass_rate"] = clone(value)
        elif key == "summary" and isinstance(value, dict) and "pass_rate" not in result:
            for name, item in value.items():
                source = at(f"{where}/summary", name)
                if name in result and result[name] != item:
                    ctx.lose(source, f"{where}/result/{name} holds another value")
                    continue
                result[name] = clone(item)
                ctx.moved(source, at(f"{where}/result", name))
            if not value:
                ctx.dropped(f"{where}/summary", "an empty object")
        elif key != "result":
            out[key] = clone(value)
    if "configuration" not in out:
        raise _refuse(direction, f"{where} has no configuration (or config)")
    if "pass_rate" not in result:
        raise _refuse(direction, f"{where} has no pass rate")
    out["result"] = result
    return out


Block = tuple[str, str, dict[str, Any], str | None]
"""A configuration block: where it is, the configuration's name, the block (without its name
field) and where that name field is (None: the name is the block's key)."""


def _blocks(record: dict[str, Any], ctx: StepContext) -> list[Block]:
    """Return the per-configuration blocks of a file without runs."""
    found: list[Block] = [
        (at("", k), k, v, None) for k, v in record.items() if k in _CONFIGS and isinstance(v, dict)
    ]
    for key in ("configurations", "configs"):
        listed = record.get(key)
        if isinstance(listed, dict):
            found += [
                (at(f"/{key}", n), n, b, None) for n, b in listed.items() if isinstance(b, dict)
            ]
            for n, b in listed.items():
                if not isinstance(b, dict):
                    ctx.lose(at(f"/{key}", n), "a configuration block is an object")
        elif isinstance(listed, list):
            for i, block in enumerate(listed):
                name = (
                    _pick(block, ("name", "configuration", "config"))
                    if isinstance(block, dict)
                    else None
                )
                if name is None or not isinstance(block[name], str):
                    raise _refuse(f"{FROM} -> {TO}", f"/{key}/{i} has no configuration name")
                rest = {k: v for k, v in block.items() if k != name}
                found.append((f"/{key}/{i}", block[name], rest, at(f"/{key}/{i}", name)))
    return found


def _pick(item: dict[str, Any], names: tuple[str, ...]) -> str | None:
    return next((name for name in names if name in item), None)


def _runs_of_blocks(
    blocks: list[Block], ctx: StepContext
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Return runs and per-configuration extras made from configuration blocks."""
    direction = f"{FROM} -> {TO}"
    runs: list[dict[str, Any]] = []
    extras: dict[str, Any] = {}
    for where, config, block, named in blocks:
        name = _pick(block, ("evals", "runs"))
        entries = block.get(name) if name else None
        if not isinstance(entries, list):
            raise _refuse(direction, f"{where} has no list of evals or runs")
        for i, entry in enumerate(entries):
            place = f"{where}/{name}/{i}"
            to = f"/runs/{len(runs)}"
            if not isinstance(entry, dict) or not _number(entry.get("pass_rate")):
                raise _refuse(direction, f"{place} has no pass rate")
            result: dict[str, Any] = {}
            run: dict[str, Any] = {}
            for key, value in entry.items():
                target = _RESULT.get(key)
                if target is not None and target not in result:
                    result[target] = clone(value)
                    ctx.moved(at(place, key), f"{to}/result/{target}")
                elif key == "id" and "eval_id" not in entry:
                    run["eval_id"] = clone(value)
                    ctx.moved(f"{place}/id", f"{to}/eval_id")
                elif key == "configuration":
                    ctx.lose(f"{place}/configuration", f"the run is under {where}")
                elif key != "result":
                    run[key] = clone(value)
                    ctx.moved(at(place, key), at(to, key))
                else:
                    ctx.lose(f"{place}/result", "its figures are the entry's own")
            if "eval_id" not in run:
                raise _refuse(direction, f"{place} has no eval_id")
            run["configuration"] = config
            run["result"] = result
            if named is None:
                ctx.added(f"{to}/configuration", config, "derived", f"the block {where}")
            else:
                ctx.added(f"{to}/configuration", config, "derived", source=named)
            runs.append(run)
        if not entries:
            ctx.dropped(f"{where}/{name}", "an empty list")
        rest = {k: clone(v) for k, v in block.items() if k != name}
        if rest:
            extras[config] = rest
            for key in rest:
                ctx.moved(at(where, key), at("/run_summary", config, key), "kept beside its stats")
        if named is not None:
            ctx.dropped(named, "the name is each run's configuration")
    return runs, extras


def upgrade(record: dict[str, Any], ctx: StepContext) -> dict[str, Any]:
    """Return `record` at 2.0.0."""
    direction = f"{FROM} -> {TO}"
    if "run_summary" in record:
        raise _refuse(direction, "/run_summary is already there")
    runs = record.get("runs")
    extras: dict[str, Any] = {}
    blocks: list[Block] = []
    if isinstance(runs, list):
        new_runs = [_up_run(run, f"/runs/{i}", ctx) for i, run in enumerate(runs)]
    elif "runs" not in record and (blocks := _blocks(record, ctx)):
        new_runs, extras = _runs_of_blocks(blocks, ctx)
    else:
        raise _refuse(direction, "the file has no list of runs, nor configuration blocks")
    seen: dict[tuple[str, str], int] = {}
    for index, run in enumerate(new_runs):
        key = (repr(run.get("eval_id")), repr(run["configuration"]))
        seen[key] = seen.get(key, 0) + 1
        if "run_number" not in run:
            run["run_number"] = seen[key]
            ctx.added(f"/runs/{index}/run_number", seen[key], "derived", "numbered in file order")

    summaries = record.get("summaries")
    run_summary: dict[str, Any] = {}
    if isinstance(summaries, dict):
        for config, stats in summaries.items():
            if not isinstance(stats, dict) or not _number(stats.get("mean_pass_rate")):
                raise _refuse(direction, f"/summaries/{config} has no mean_pass_rate")
            where, to = at("/summaries", config), at("/run_summary", config)
            rate = {"mean": stats["mean_pass_rate"], "stddev": stats.get("stddev", 0)}
            ctx.moved(f"{where}/mean_pass_rate", f"{to}/pass_rate/mean")
            if "stddev" not in stats:
                ctx.default(f"{to}/pass_rate/stddev", 0, "the file states none")
            else:
                ctx.moved(f"{where}/stddev", f"{to}/pass_rate/stddev")
            rest = {}
            for k, v in stats.items():
                if k in ("mean_pass_rate", "stddev"):
                    continue
                if k == "pass_rate":
                    ctx.lose(at(where, k), "the configuration's pass rate is its mean_pass_rate")
                    continue
                rest[k] = clone(v)
                ctx.moved(at(where, k), at(to, k))
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
            stats = _stats(values)
            more = extras.get(config, {})
            if "pass_rate" in more:
                ctx.lose(at("/run_summary", config, "pass_rate"), "the stats computed take it")
            run_summary[config] = {**more, "pass_rate": stats}
            ctx.added(
                at("/run_summary", config, "pass_rate"), stats, "derived", "the runs' pass rates"
            )

    deltas_key = "deltas" if "deltas" in record else "delta"
    deltas = record.get(deltas_key)
    if isinstance(deltas, dict):
        delta: dict[str, Any] = {}
        for key, value in deltas.items():
            name = _DELTAS.get(key, key if deltas_key == "delta" else None)
            source = at(f"/{deltas_key}", key)
            if name in ("pass_rate", "time_seconds", "tokens") and _number(value):
                target = f"/run_summary/delta/{name}"
                if name in delta:
                    ctx.lose(source, f"{target} holds another difference")
                    continue
                delta[name] = _signed(value)
                ctx.moved(source, target)
                ctx.converted(target, value, delta[name], "a signed string")
            elif key in ("pass_rate", "time_seconds", "tokens") and not isinstance(value, str):
                raise _refuse(direction, f"/{deltas_key}/{key} is not a number")
            elif key in delta:
                ctx.lose(source, f"/run_summary/delta/{key} holds another difference")
            else:
                delta[key] = clone(value)
                ctx.moved(source, at("/run_summary/delta", key))
        run_summary["delta"] = delta

    used = {"summaries"} | {where.split("/")[1] for where, _, _, _ in blocks}
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
        else:
            out[key] = clone(value)
    if "metadata" not in record and not metadata:
        ctx.default("/metadata", {}, "the file states none")
    if isinstance(summaries, dict) and not summaries:
        ctx.dropped("/summaries", "an empty object")
    if isinstance(deltas, dict) and not deltas:
        ctx.moved(f"/{deltas_key}", "/run_summary/delta", "an empty object")
    if not run_summary:
        ctx.added("/run_summary", run_summary, "derived", "no run to sum up")
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
            if "config" in run:
                ctx.lose(f"{where}/configuration", "the run also has config")
                continue
            ctx.renamed(f"{where}/configuration", f"{where}/config")
            out["config"] = clone(value)
        elif key == "result":
            if "pass_rate" in run:
                ctx.lose(f"{where}/pass_rate", "replaced by the result's pass rate")
            ctx.moved(f"{where}/result/pass_rate", f"{where}/pass_rate")
            out["pass_rate"] = rate
            rest = {k: clone(v) for k, v in value.items() if k != "pass_rate"}
            if rest:
                out["result"] = rest
        elif key == "pass_rate" and "result" in run:
            continue
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
        where = at("/run_summary", config)
        if config == "delta" and isinstance(stats, dict):
            for key, value in stats.items():
                name = next((old for old, new in _DELTAS.items() if new == key), None)
                try:
                    number = float(value) if name and isinstance(value, str) else None
                except ValueError:
                    number = None
                if name is not None and number is not None and math.isfinite(number):
                    deltas[name] = int(number) if number.is_integer() else number
                    ctx.moved(at(where, key), f"/deltas/{name}")
                    ctx.converted(f"/deltas/{name}", value, deltas[name], "a number")
                elif key in deltas:
                    ctx.lose(at(where, key), f"/deltas/{key} holds another difference")
                else:
                    deltas[key] = clone(value)
                    ctx.moved(at(where, key), at("/deltas", key))
            if not stats:
                ctx.dropped(where, "an empty object")
            continue
        rate = stats.get("pass_rate") if isinstance(stats, dict) else None
        if not isinstance(rate, dict) or not _number(rate.get("mean")):
            raise _refuse(direction, f"/run_summary/{config} has no pass_rate mean")
        if not 0 <= rate["mean"] <= 1:
            raise _refuse(direction, f"/run_summary/{config}/pass_rate/mean is not 0 to 1")
        to = at("/summaries", config)
        summary: dict[str, Any] = {"mean_pass_rate": rate["mean"]}
        ctx.moved(f"{where}/pass_rate/mean", f"{to}/mean_pass_rate")
        if "stddev" in rate:
            summary["stddev"] = clone(rate["stddev"])
            ctx.moved(f"{where}/pass_rate/stddev", f"{to}/stddev")
        computed = _computed(runs, config)
        for key, value in rate.items():
            if key in ("mean", "stddev"):
                continue
            if computed is not None and computed.get(key) == value:
                ctx.dropped(at(where, "pass_rate", key), "the runs' pass rates give the same")
            else:
                ctx.lose(at(where, "pass_rate", key), "1.0.0 summaries hold a mean and stddev")
        for key, value in stats.items():
            if key != "pass_rate":
                summary[key] = clone(value)
                ctx.moved(at(where, key), at(to, key), "kept beside the mean")
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
            if not value:
                ctx.renamed("/run_summary", "/summaries", "an empty object")
            elif not summaries:
                ctx.added("/summaries", summaries, "derived", "no configuration to sum up")
            if deltas:
                out["deltas"] = deltas
        elif key in ("summaries", "deltas"):
            ctx.lose(at("", key), "1.0.0 takes them from run_summary")
        else:
            out[key] = clone(value)
    return out


def _computed(runs: list[Any], config: str) -> dict[str, float] | None:
    """Return the pass-rate statistics of the runs of `config`, as the upgrade computes them."""
    values = [
        run["result"]["pass_rate"]
        for run in runs
        if isinstance(run, dict)
        and run.get("configuration") == config
        and isinstance(run.get("result"), dict)
        and _number(run["result"].get("pass_rate"))
    ]
    return _stats(values) if values else None
