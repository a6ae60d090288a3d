"""State how each model is deployed and available, and hold detailed results to the 0.2.3 layout.

0.2.3 changes 0.2.2 as follows, and each fact is carried so:

- `model_info.additional_details` is required and must hold `deployment_type`
  (self_deployed | externally_managed | unknown) and `model_availability`
  (open_weights | closed_weights | unknown). 0.2.2 records do not say, so the evaluated model
  gets the parameters `deployment_type` and `model_availability` (both "unknown" unless given);
  judges' `model_info` (the same definition) get "unknown". A value a record already has and
  that the enum allows is kept; one the enum does not allow cannot be carried (`ctx.lose`) and
  is replaced.
- `metric_config`'s `if` clauses now require `score_type`: records without one are no longer
  held to the `levels` branch. This only accepts more records; nothing to change.
- `min_score` / `max_score` may be a number, "Infinity", "-Infinity" or null: an infinite float
  (read from non-standard JSON) becomes the string "Infinity" / "-Infinity", which is how
  0.2.3 writes it in plain JSON.
- `detailed_evaluation_results` requires `format` "jsonl" and a `file_path` of the form
  `data/<a>/<b>/<c>/<uuid4>_samples.jsonl`. A missing `format` is set to "jsonl" when the path
  has that form. Format "json", a missing path or a path of another form cannot be carried:
  the whole reference is lost (`ctx.lose`, dropped with --allow-loss), unless the parameter
  `detailed_results_file_path` names the JSONL file in the 0.2.3 layout; then the record's own
  path and format are kept in `detailed_evaluation_results.additional_details` as
  `original_file_path` / `original_format`.
"""

from __future__ import annotations

import math
import re
from typing import Any

from evalreg import Param, StepContext
from evalreg.stepkit import at, carry, writable

FROM = "0.2.2"
TO = "0.2.3"
PARAMS = (
    Param(
        "deployment_type",
        help="Deployment of the evaluated model: self_deployed, externally_managed or unknown.",
        default="unknown",
        placeholder=True,
    ),
    Param(
        "model_availability",
        help="Availability of the evaluated model: open_weights, closed_weights or unknown.",
        default="unknown",
        placeholder=True,
    ),
    Param(
        "detailed_results_file_path",
        help=(
            "Path of the per-sample results as 0.2.3 wants it "
            "(data/<a>/<b>/<c>/<uuid4>_samples.jsonl); default: the record's own file_path."
        ),
        default=None,
    ),
)

_ENUMS = {
    "deployment_type": ("self_deployed", "externally_managed", "unknown"),
    "model_availability": ("open_weights", "closed_weights", "unknown"),
}
_UUID4 = "[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-4[0-9A-Fa-f]{3}-[89ABab][0-9A-Fa-f]{3}-[0-9A-Fa-f]{12}"
_FILE_PATH = re.compile("^data/[^/]+/[^/]+/[^/]+/" + _UUID4 + r"_samples\.jsonl$")
_DETAILED = "/detailed_evaluation_results"


def _choice(ctx: StepContext, name: str) -> str:
    """Return the parameter `name`, checked against its enum."""
    value = ctx.params.get(name)
    value = "unknown" if value is None else value
    if value not in _ENUMS[name]:
        raise ValueError(f"parameter {name}={value!r} must be one of {', '.join(_ENUMS[name])}")
    return str(value)


def _model_info(
    model_info: Any, where: str, chosen: dict[str, str] | None, ctx: StepContext
) -> None:
    """Give one model_info the additional_details 0.2.3 requires.

    `chosen`: the parameters' values for the evaluated model; None for a judge, which gets the
    placeholder "unknown".
    """
    if not isinstance(model_info, dict):
        return
    details = model_info.get("additional_details")
    if "additional_details" in model_info and not isinstance(details, dict):
        ctx.lose(where + "/additional_details", "0.2.3 requires an object here")
    details = model_info["additional_details"] = dict(details) if isinstance(details, dict) else {}
    for key, allowed in _ENUMS.items():
        if key in details and details[key] in allowed:
            continue
        value = "unknown" if chosen is None else chosen[key]
        place = f"{where}/additional_details/{key}"  # keys of `_ENUMS`: nothing to escape
        if key in details:
            ctx.lose(
                place, f"{details[key]!r} is not one of {', '.join(allowed)}; replaced by {value!r}"
            )
        details[key] = value
        if chosen is None:
            ctx.placeholder(place, value, "0.2.2 records do not say how a judge is deployed")
        else:
            ctx.param(place, key, value)


def _bound(value: Any) -> Any:
    """Return an infinite float as the string 0.2.3 uses for it; anything else unchanged."""
    if isinstance(value, float) and math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return value


def _metric_config(config: Any, where: str, ctx: StepContext) -> None:
    """Bring one metric_config (bounds, judges) to 0.2.3."""
    if not isinstance(config, dict):
        return
    for key in ("min_score", "max_score"):
        if key in config:
            value = _bound(config[key])
            if value is not config[key]:
                ctx.converted(at(where, key), config[key], value, "how 0.2.3 writes infinity")
                config[key] = value
    scoring = config.get("llm_scoring")
    judges = scoring.get("judges") if isinstance(scoring, dict) else None
    for index, judge in enumerate(judges if isinstance(judges, list) else []):
        if isinstance(judge, dict):
            place = at(where, "llm_scoring", "judges", index, "model_info")
            _model_info(judge.get("model_info"), place, None, ctx)


def _detailed_results(out: dict[str, Any], ctx: StepContext) -> None:
    """Hold detailed_evaluation_results to the 0.2.3 format and path layout, or lose it."""
    if _DETAILED[1:] not in out:
        return
    detailed = out[_DETAILED[1:]]
    new_path = ctx.params.get("detailed_results_file_path")
    if not isinstance(detailed, dict):
        ctx.lose(_DETAILED, "0.2.3 requires an object here")
        del out[_DETAILED[1:]]
        return
    if new_path is not None:
        if not _FILE_PATH.match(str(new_path)):
            raise ValueError(
                f"parameter detailed_results_file_path={new_path!r} must have the form "
                "data/<a>/<b>/<c>/<uuid4>_samples.jsonl"
            )
        _relocate(detailed, str(new_path), ctx)
        return
    fmt = detailed.get("format")
    path = detailed.get("file_path")
    problem = None
    if fmt is not None and fmt != "jsonl":
        problem = f"format {fmt!r} is not allowed in 0.2.3 (only 'jsonl')"
    elif not isinstance(path, str):
        problem = "0.2.3 requires file_path and the record has none"
    elif not _FILE_PATH.match(path):
        problem = f"file_path {path!r} is not of the form data/<a>/<b>/<c>/<uuid4>_samples.jsonl"
    if problem is None:
        if fmt is None:
            out[_DETAILED[1:]] = {"format": "jsonl", **detailed}
            ctx.added(_DETAILED + "/format", "jsonl", "derived", "from the file path")
        return
    ctx.lose(
        _DETAILED,
        problem + "; the reference to the per-sample results cannot be carried "
        "(set detailed_results_file_path to the JSONL file in the 0.2.3 layout to keep it)",
    )
    del out[_DETAILED[1:]]


def _relocate(detailed: dict[str, Any], new_path: str, ctx: StepContext) -> None:
    """Point `detailed` at `new_path`, keeping a different old path and format as details."""
    details = detailed.get("additional_details")
    replaced = "additional_details" in detailed and not isinstance(details, dict)
    if replaced:
        ctx.lose(_DETAILED + "/additional_details", "0.2.3 requires an object here")
    details = dict(details) if isinstance(details, dict) else {}
    for key, keep_as, new in (
        ("file_path", "original_file_path", new_path),
        ("format", "original_format", "jsonl"),
    ):
        old = detailed.get(key)
        detailed[key] = new
        if old == new:
            continue
        if key == "file_path":
            ctx.param(at(_DETAILED, key), "detailed_results_file_path", new)
        else:
            ctx.added(at(_DETAILED, key), new, "derived", "the only format 0.2.3 allows")
        if old is None:
            continue
        dst = at(_DETAILED, "additional_details", keep_as)
        carry(details, keep_as, str(old), ctx, source=at(_DETAILED, key), target=dst, original=old)
    if details or "additional_details" in detailed:
        detailed["additional_details"] = details
        if replaced and not details:
            ctx.added(_DETAILED + "/additional_details", {}, "derived", "in place of the lost one")


def upgrade(record: dict[str, Any], ctx: StepContext) -> dict[str, Any]:
    """Return `record` at 0.2.3 (changed in place where the engine hands it over)."""
    chosen = {name: _choice(ctx, name) for name in _ENUMS}
    out = writable(record, ctx)
    out["schema_version"] = TO
    _model_info(out.get("model_info"), "/model_info", chosen, ctx)
    results = out.get("evaluation_results")
    for index, result in enumerate(results if isinstance(results, list) else []):
        if isinstance(result, dict):
            where = f"/evaluation_results/{index}/metric_config"
            _metric_config(result.get("metric_config"), where, ctx)
    _detailed_results(out, ctx)
    return out
