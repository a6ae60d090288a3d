"""Add the required eval_library and turn free-form detail objects into strings-only objects.

0.2.1 changes the seed 0.2.0 as follows, and each fact is carried so:

- `eval_library` is required: it is built from the parameters `eval_library_name` and
  `eval_library_version` (both "unknown" unless given), since 0.2.0 records do not say which
  library produced them. A record that somehow has one keeps it; missing parts are filled in.
- Every `additional_details` object, `score_details.details`, `eval_plan.config` and
  `available_tools[].parameters` holds only strings: a string stays as it is, a number,
  boolean or null becomes its JSON text (`5` -> "5", `true` -> "true", `null` -> "null"),
  an object or array becomes compact JSON, so every value reads back with `json.loads`.
  The same applies to `additional_details` that 0.2.0 allowed as extra keys and 0.2.1 now
  declares (source_metadata, metric_config, judge_config, detailed_evaluation_results).
- `generation_args` is closed: its unknown keys move into `generation_config.additional_details`
  as strings (`ctx.moved`); one whose key already holds a different value there is lost.
- `eval_plan.steps` items are strings: an object (or any other non-string) item becomes
  compact JSON.
- `source_data.sample_ids` items are strings: integers become their decimal text.
- `detailed_evaluation_results` must be an object: a bare string is read as its `file_path`;
  any other non-object value cannot be carried and is lost.
- New optional string fields (`evaluation_result_id`, `metric_id`, `metric_name`, `metric_kind`,
  `metric_unit`) that a 0.2.0 record already had as extra fields become strings the same way;
  an existing `metric_parameters` keeps strings, numbers, booleans and null and turns nested
  values into compact JSON.
"""

from __future__ import annotations

from typing import Any

from evalreg import Param, StepContext
from evalreg.stepkit import as_text, at, carry, insert_after, strings_only, to_text, writable

FROM = "0.2.0"
TO = "0.2.1"
PARAMS = (
    Param(
        "eval_library_name",
        help="Name of the library that ran the evaluation (0.2.0 does not record it).",
        default="unknown",
        placeholder=True,
    ),
    Param(
        "eval_library_version",
        help="Version of that library (0.2.0 does not record it).",
        default="unknown",
        placeholder=True,
    ),
)

_GENERATION_ARGS = frozenset(
    {
        "temperature",
        "top_p",
        "top_k",
        "max_tokens",
        "execution_command",
        "reasoning",
        "prompt_template",
        "agentic_eval_config",
        "eval_plan",
        "eval_limits",
        "sandbox",
        "max_attempts",
        "incorrect_attempt_feedback",
    }
)
_STRING_FIELDS = ("metric_id", "metric_name", "metric_kind", "metric_unit")


def _strings_only(holder: dict[str, Any], key: str, ctx: StepContext, where: str) -> None:
    """Turn the values of the object at `holder[key]` into strings, if it is an object.

    `where`: the pointer of `holder`; each value converted is reported.
    """
    value = holder.get(key)
    if isinstance(value, dict):
        holder[key] = strings_only(value, ctx, at(where, key))


def _scalar(value: Any, ctx: StepContext, where: str) -> Any:
    """Return `value` if it is a JSON scalar, else its compact JSON text (reported)."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return to_text(value, ctx, where)


def _model_info(model_info: Any, ctx: StepContext, where: str) -> None:
    """Make a model_info's additional_details strings-only."""
    if isinstance(model_info, dict):
        _strings_only(model_info, "additional_details", ctx, where)


def _source_data(source: Any, ctx: StepContext, where: str) -> None:
    """Make a source_data's additional_details and sample_ids strings."""
    if not isinstance(source, dict):
        return
    _strings_only(source, "additional_details", ctx, where)
    sample_ids = source.get("sample_ids")
    if isinstance(sample_ids, list):
        ids = where + "/sample_ids"
        source["sample_ids"] = [
            item if isinstance(item, str) else to_text(item, ctx, f"{ids}/{i}")
            for i, item in enumerate(sample_ids)
        ]


def _metric_config(config: Any, ctx: StepContext, where: str) -> None:
    """Bring a metric_config, its llm_scoring and judges to 0.2.1."""
    if not isinstance(config, dict):
        return
    for name in _STRING_FIELDS:
        if name in config:
            config[name] = to_text(config[name], ctx, at(where, name))
    parameters = config.get("metric_parameters")
    if isinstance(parameters, dict):
        at_parameters = where + "/metric_parameters"
        config["metric_parameters"] = {
            k: _scalar(v, ctx, at(at_parameters, k)) for k, v in parameters.items()
        }
    _strings_only(config, "additional_details", ctx, where)
    scoring = config.get("llm_scoring")
    if isinstance(scoring, dict):
        at_scoring = where + "/llm_scoring"
        _strings_only(scoring, "additional_details", ctx, at_scoring)
        judges = scoring.get("judges")
        for index, judge in enumerate(judges if isinstance(judges, list) else []):
            if isinstance(judge, dict):
                at_judge = f"{at_scoring}/judges/{index}"
                _model_info(judge.get("model_info"), ctx, at_judge + "/model_info")
                _strings_only(judge, "additional_details", ctx, at_judge)


def _generation_config(config: Any, where: str, ctx: StepContext) -> None:
    """Bring a generation_config to 0.2.1, moving unknown generation_args."""
    if not isinstance(config, dict):
        return
    _strings_only(config, "additional_details", ctx, where)
    args = config.get("generation_args")
    if not isinstance(args, dict):
        return
    at_args = where + "/generation_args"
    agentic = args.get("agentic_eval_config")
    if isinstance(agentic, dict):
        at_agentic = at_args + "/agentic_eval_config"
        _strings_only(agentic, "additional_details", ctx, at_agentic)
        tools = agentic.get("available_tools")
        for index, tool in enumerate(tools if isinstance(tools, list) else []):
            if isinstance(tool, dict):
                _strings_only(tool, "parameters", ctx, f"{at_agentic}/available_tools/{index}")
    plan = args.get("eval_plan")
    if isinstance(plan, dict):
        at_plan = at_args + "/eval_plan"
        _strings_only(plan, "config", ctx, at_plan)
        if isinstance(plan.get("steps"), list):
            plan["steps"] = [
                to_text(step, ctx, f"{at_plan}/steps/{i}") for i, step in enumerate(plan["steps"])
            ]
    extra = [key for key in args if key not in _GENERATION_ARGS]
    if not extra:
        return
    if "additional_details" not in config:
        config["additional_details"] = {}
        ctx.added(where + "/additional_details", {}, "derived", "to hold generation_args")
    details = config["additional_details"]
    for key in extra:
        src = at(at_args, key)
        dst = at(where, "additional_details", key)
        value = args.pop(key)
        if not isinstance(details, dict):
            ctx.lose(src, "generation_args is closed in 0.2.1 and additional_details is no object")
            continue
        clash = f"generation_args is closed in 0.2.1 and {dst} holds another value"
        text = as_text(value)
        carry(details, key, text, ctx, source=src, target=dst, clash=clash, original=value)


def _detailed_results(out: dict[str, Any], ctx: StepContext) -> None:
    """Make detailed_evaluation_results an object with strings-only details."""
    if "detailed_evaluation_results" not in out:
        return
    detailed = out["detailed_evaluation_results"]
    if isinstance(detailed, str):
        out["detailed_evaluation_results"] = {"file_path": detailed}
        ctx.moved("/detailed_evaluation_results", "/detailed_evaluation_results/file_path")
    elif isinstance(detailed, dict):
        _strings_only(detailed, "additional_details", ctx, "/detailed_evaluation_results")
    else:
        ctx.lose("/detailed_evaluation_results", "0.2.1 requires an object here")
        del out["detailed_evaluation_results"]


def _with_eval_library(out: dict[str, Any], ctx: StepContext) -> dict[str, Any]:
    """Return `out` with an `eval_library` placed after `model_info`."""
    library = out.get("eval_library")
    if "eval_library" in out and not isinstance(library, dict):
        ctx.lose("/eval_library", "0.2.1 requires an object here")
    library = dict(library) if isinstance(library, dict) else {}
    for key, param in (("name", "eval_library_name"), ("version", "eval_library_version")):
        if not isinstance(library.get(key), str):
            if key in library:
                ctx.lose(f"/eval_library/{key}", "0.2.1 requires a string here")
            value = ctx.params.get(param)
            library[key] = "unknown" if value is None else str(value)
            ctx.param(f"/eval_library/{key}", param, library[key])
    _strings_only(library, "additional_details", ctx, "/eval_library")
    return insert_after(out, "model_info", "eval_library", library)


def upgrade(record: dict[str, Any], ctx: StepContext) -> dict[str, Any]:
    """Return `record` at 0.2.1 (changed in place where the engine hands it over)."""
    out = writable(record, ctx)
    out["schema_version"] = TO
    metadata = out.get("source_metadata")
    if isinstance(metadata, dict):
        _strings_only(metadata, "additional_details", ctx, "/source_metadata")
    _model_info(out.get("model_info"), ctx, "/model_info")
    results = out.get("evaluation_results")
    for index, result in enumerate(results if isinstance(results, list) else []):
        if not isinstance(result, dict):
            continue
        where = f"/evaluation_results/{index}"
        if "evaluation_result_id" in result:
            result["evaluation_result_id"] = to_text(
                result["evaluation_result_id"], ctx, where + "/evaluation_result_id"
            )
        _source_data(result.get("source_data"), ctx, where + "/source_data")
        _metric_config(result.get("metric_config"), ctx, where + "/metric_config")
        score_details = result.get("score_details")
        if isinstance(score_details, dict):
            _strings_only(score_details, "details", ctx, where + "/score_details")
        _generation_config(result.get("generation_config"), where + "/generation_config", ctx)
    _detailed_results(out, ctx)
    return _with_eval_library(out, ctx)
