"""Move the top-level source_data into every result and give other 0.1.0 values their 0.2.0 places.

0.1.0 held one `source_data` for the whole run; 0.2.0 holds one per result, tagged with a
`source_type`. Each fact is carried as follows:

- `source_data` as a list of URLs becomes, in every result,
  `{"source_type": "url", "url": [...], "dataset_name": ...}`; the dataset name is the
  parameter `dataset_name`, else the result's `evaluation_name`. An empty list names no URL
  (0.2.0 requires at least one), so it becomes `{"source_type": "other", "dataset_name": ...}`.
- `source_data` as an object (a Hugging Face dataset) becomes
  `{"source_type": "hf_dataset", ...its fields}` in every result.
- A result that already states its own `source_data` keeps it. With no results at all the
  top-level value has nowhere to go and is lost (`ctx.lose`).
- `model_info.inference_engine` as a string becomes `{"name": ...}`.
- `generation_config` accepted any object in 0.1.0: keys other than `generation_args` and
  `additional_details` move into `generation_config.additional_details`, where 0.2.0 keeps
  free-form details; a string (or other non-object) `additional_details` moves to
  `additional_details.notes`; a `generation_args` that is not an object moves to
  `additional_details.generation_args`. A key that would overwrite a different value is lost.
- `score_details` had no `"type": "object"`: a bare number becomes `{"score": number}`; any other
  non-object (null, text, a list) holds no score 0.2.0 can keep, so that result is lost
  (`ctx.lose`: the record fails unless loss is allowed, and then the result is dropped).
- `detailed_evaluation_results_url` (per result) has no declared place in 0.2.0 but result
  items accept extra fields, so it stays where it is (`ctx.kept`).
- `detailed_evaluation_results_per_samples` (top level, closed in 0.2.0): a string (path or URL)
  becomes `detailed_evaluation_results.file_path`, with `format` "jsonl"/"json" when the path
  ends so; an inline array of samples is kept as `detailed_evaluation_results.samples`
  (0.2.0 accepts extra keys there; `ctx.kept`).
- `model_info.additional_details` and `score_details.details` accept any values in both versions
  and are left as they are.
- Any other top-level key is not allowed by 0.2.0 and is lost (`ctx.lose`).

Only the objects and arrays on the way to a changed value are copied; the rest is shared.
"""

from __future__ import annotations

from operator import is_
from typing import Any
from urllib.parse import urlsplit

from evalreg import Param, StepContext
from evalreg.stepkit import at, carry, clone, insert_after, to_pointer

FROM = "0.1.0"
TO = "0.2.0"
PARAMS = (
    Param(
        "dataset_name",
        help="Dataset name for URL sources (default: each result's evaluation_name).",
        default=None,
    ),
)

_TOP_LEVEL = frozenset(
    (
        "schema_version",
        "evaluation_id",
        "evaluation_timestamp",
        "retrieved_timestamp",
        "source_metadata",
        "model_info",
        "evaluation_results",
        "detailed_evaluation_results",
    )
)
_NOTES = "notes"


def _result_source(
    source: Any, result: dict[str, Any], where: str, ctx: StepContext
) -> dict[str, Any]:
    """Return the 0.2.0 `source_data` of one result (at `where`) from the 0.1.0 top-level value.

    Every result gets its own copy, so no two results of the output share an object.
    """
    at_source = where + "/source_data"
    if isinstance(source, list):
        out: dict[str, Any] = {"source_type": "url" if source else "other"}
        if source:
            out["url"] = clone(source)
            ctx.moved("/source_data", at_source + "/url")
        else:
            ctx.dropped("/source_data", "an empty list names no URL")
        ctx.added(at_source + "/source_type", out["source_type"], "derived", "a list of URLs")
        name = ctx.params.get("dataset_name")
        if name is not None:
            ctx.param(at_source + "/dataset_name", "dataset_name", name)
        else:
            name = result.get("evaluation_name")
            ctx.added(at_source + "/dataset_name", name, source=where + "/evaluation_name")
        out["dataset_name"] = name
        return out
    ctx.moved("/source_data", at_source)
    ctx.added(at_source + "/source_type", "hf_dataset", "derived", "a Hugging Face dataset")
    return {"source_type": "hf_dataset", **clone(source)}


def _format_of(path: str) -> str | None:
    """Return the 0.2.0 `format` named by a file path or URL, if it names one."""
    suffix = urlsplit(path).path.lower()
    if suffix.endswith(".jsonl"):
        return "jsonl"
    if suffix.endswith(".json"):
        return "json"
    return None


def _put(
    details: dict[str, Any], key: str, value: Any, src: str, dst: str, ctx: StepContext
) -> None:
    """Move `value` into `details[key]` unless that would overwrite a different value."""
    clash = f"{dst} already holds a different value"
    carry(details, key, value, ctx, source=src, target=dst, clash=clash)


def _generation_config(
    config: dict[str, Any], source_at: str, where: str, ctx: StepContext
) -> dict[str, Any]:
    """Return a 0.2.0 generation_config: free-form keys gathered in additional_details."""
    out: dict[str, Any] = {}
    details_at = where + "/additional_details"
    old_details = config.get("additional_details")
    details: dict[str, Any] = dict(old_details) if isinstance(old_details, dict) else {}
    if "additional_details" in config and not isinstance(old_details, dict):
        src = source_at + "/additional_details"
        _put(details, _NOTES, old_details, src, at(details_at, _NOTES), ctx)
    for key, value in config.items():
        if key == "additional_details":
            continue
        if key == "generation_args" and isinstance(value, dict):
            out[key] = value
            continue
        _put(details, key, value, at(source_at, key), at(details_at, key), ctx)
    if details or "additional_details" in config:
        out["additional_details"] = details
    return out


def _result(
    result: dict[str, Any],
    source_at: str,
    where: str,
    source: dict[str, Any] | None,
    ctx: StepContext,
) -> dict[str, Any] | None:
    """Return one result at 0.2.0, with `source` (if any) as its source_data; None if lost.

    `source_at`: where the result is in the input; `where`: in the output.
    """
    changes: dict[str, Any] = {}
    score_details = result.get("score_details")
    if isinstance(score_details, (int, float)) and not isinstance(score_details, bool):
        changes["score_details"] = {"score": score_details}
        ctx.moved(source_at + "/score_details", where + "/score_details/score")
    elif not isinstance(score_details, dict):
        # 0.1.0 did not say score_details is an object, so null, text or a list passed;
        # 0.2.0 needs an object with a numeric score, and there is none to carry.
        kind = type(score_details).__name__
        ctx.lose(source_at, f"score_details is {kind}, so the result has no score 0.2.0 can hold")
        return None
    config = result.get("generation_config")
    if isinstance(config, dict):
        at_config = (source_at + "/generation_config", where + "/generation_config")
        changes["generation_config"] = _generation_config(config, *at_config, ctx)
    if "detailed_evaluation_results_url" in result:
        ctx.kept(
            where + "/detailed_evaluation_results_url",
            "0.2.0 declares no per-result link to detailed results; kept as an extra field",
        )
    out = result | changes if changes else result  # each changed key keeps its place
    if source is not None:
        out = insert_after(out, "evaluation_name", "source_data", source)
    return out


def _holds_score(result: dict[str, Any]) -> bool:
    """Return whether a 0.1.0 result has a score_details 0.2.0 can hold (an object, a number)."""
    score_details = result.get("score_details")
    return isinstance(score_details, dict) or (
        isinstance(score_details, (int, float)) and not isinstance(score_details, bool)
    )


def upgrade(record: dict[str, Any], ctx: StepContext) -> dict[str, Any]:
    """Return `record` at 0.2.0 without changing it."""
    out = dict(record)
    out["schema_version"] = TO

    model_info = out.get("model_info")
    if isinstance(model_info, dict) and isinstance(model_info.get("inference_engine"), str):
        engine = {"name": model_info["inference_engine"]}
        out["model_info"] = model_info | {"inference_engine": engine}
        ctx.moved("/model_info/inference_engine", "/model_info/inference_engine/name")

    results = out.get("evaluation_results")
    results = results if isinstance(results, list) else []
    has_source = "source_data" in out
    source = out.pop("source_data", None)
    carried = False
    upgraded: list[Any] = []
    for index, result in enumerate(results):
        if isinstance(result, dict):
            source_at = f"/evaluation_results/{index}"
            where = f"/evaluation_results/{len(upgraded)}"  # past the results lost, if any
            if not _holds_score(result):
                _result(result, source_at, where, None, ctx)  # reports the loss
                continue
            value = None
            if has_source and "source_data" not in result:
                value = _result_source(source, result, where, ctx)
                carried = True
            result = _result(result, source_at, where, value, ctx)
            if result is None:
                continue
        upgraded.append(result)
    if len(upgraded) != len(results) or not all(map(is_, upgraded, results)):
        out["evaluation_results"] = upgraded
    if has_source and not carried:
        reason = "every result states its own source_data" if results else "there is no result"
        ctx.lose("/source_data", f"0.2.0 keeps source_data per result and {reason}")

    if "detailed_evaluation_results_per_samples" in out:
        per_samples = out.pop("detailed_evaluation_results_per_samples")
        src = "/detailed_evaluation_results_per_samples"
        if "detailed_evaluation_results" in out:
            ctx.lose(src, "the record already has detailed_evaluation_results")
        elif isinstance(per_samples, str):
            detailed: dict[str, Any] = {}
            fmt = _format_of(per_samples)
            if fmt is not None:
                detailed["format"] = fmt
                ctx.added(
                    "/detailed_evaluation_results/format", fmt, "derived", "from the file name"
                )
            detailed["file_path"] = per_samples
            out["detailed_evaluation_results"] = detailed
            ctx.moved(src, "/detailed_evaluation_results/file_path")
        elif isinstance(per_samples, list):
            out["detailed_evaluation_results"] = {"samples": per_samples}
            ctx.moved(
                src,
                "/detailed_evaluation_results/samples",
                "0.2.0 has no place for inline per-sample results; kept as an extra field",
            )
        else:
            ctx.lose(src, "neither a file path nor a list of samples")

    for key in [k for k in out if k not in _TOP_LEVEL]:
        ctx.lose(to_pointer([key]), f"0.2.0 allows no top-level field {key!r}")
        del out[key]
    return out
