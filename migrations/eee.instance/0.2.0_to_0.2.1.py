"""Rename interactions to messages and give every value the stricter 0.2.1 type.

0.2.1 changes the seed 0.2.0 as follows, and each fact is carried so:

- The top level is closed (`additionalProperties: false`): a field 0.2.0 accepted as an extra
  moves into `metadata` as a string (`ctx.moved`); one whose key `metadata` already holds
  with another value is lost (`ctx.lose`).
- `interactions` is renamed `messages` (same items). An `answer_attribution[].source` that
  points into it (`interactions[2].content`) is renamed the same way (`messages[2].content`),
  so the locator still names the field it meant.
- `tool_call_id`: a single string becomes a one-element array.
- `tool_calls[].arguments`, `metadata` and `performance.additional_details` hold only strings:
  a string stays as it is, a number, boolean or null becomes its JSON text, an object or array
  becomes compact JSON, so every value reads back with `json.loads`.
- `sample_id` is a string: an integer becomes its decimal text (any size).
- `input.reference`, `output.raw` and `output.reasoning_trace`: a string becomes a
  one-element array (null stays null for the reasoning trace).
- `evaluation.score` is a number: `true` / `false` become 1.0 / 0.0.
- `evaluation_result_id` is new; a 0.2.0 extra field of that name becomes a string.
- `performance` keeps its other extra fields where they are (`ctx.kept`).
- `sample_hash`, `input.formatted`, `input.choices`, `num_turns`, `tool_calls_count` and the
  `token_usage` counts only accept more in 0.2.1 (null); nothing to change.
"""

from __future__ import annotations

import re
from typing import Any

from evalreg.migrate import StepContext
from evalreg.stepkit import as_text, carry, clone, to_pointer

FROM = "0.2.0"
TO = "0.2.1"
PARAMS = ()

_DECLARED = (
    "schema_version",
    "evaluation_id",
    "model_id",
    "evaluation_name",
    "evaluation_result_id",
    "sample_id",
    "sample_hash",
    "interaction_type",
    "input",
    "output",
    "interactions",
    "answer_attribution",
    "evaluation",
    "token_usage",
    "performance",
    "error",
    "metadata",
)
_PERFORMANCE = ("latency_ms", "time_to_first_token_ms", "generation_time_ms", "additional_details")
_OLD_LOCATOR = re.compile(r"^interactions(?=$|[\[.])")


def _strings(mapping: dict[str, Any]) -> dict[str, str]:
    """Return `mapping` with every value as text."""
    return {key: as_text(value) for key, value in mapping.items()}


def _as_list(holder: dict[str, Any], key: str) -> None:
    """Wrap a string at `holder[key]` in a one-element array."""
    if isinstance(holder.get(key), str):
        holder[key] = [holder[key]]


def _messages(messages: Any) -> None:
    """Bring the items of `messages` to 0.2.1 (tool_call_id arrays, string arguments)."""
    for message in messages if isinstance(messages, list) else []:
        if not isinstance(message, dict):
            continue
        _as_list(message, "tool_call_id")
        calls = message.get("tool_calls")
        for call in calls if isinstance(calls, list) else []:
            if isinstance(call, dict) and isinstance(call.get("arguments"), dict):
                call["arguments"] = _strings(call["arguments"])


def _metadata(out: dict[str, Any], ctx: StepContext) -> None:
    """Make metadata strings-only and move fields 0.2.1 does not declare into it."""
    extra = [key for key in out if key not in _DECLARED]
    metadata = out.get("metadata")
    if isinstance(metadata, dict):
        out["metadata"] = metadata = _strings(metadata)
    if not extra:
        return
    if metadata is None:
        out["metadata"] = metadata = {}
    for key in extra:
        value = as_text(out.pop(key))
        src, dst = to_pointer([key]), to_pointer(("metadata", key))
        if not isinstance(metadata, dict):
            ctx.lose(src, "0.2.1 allows no such top-level field and metadata is no object")
        else:
            clash = f"0.2.1 allows no such top-level field and {dst} holds another value"
            carry(metadata, key, value, ctx, source=src, target=dst, clash=clash)


def _performance(performance: Any, ctx: StepContext) -> None:
    """Make performance.additional_details strings-only; report the extras kept."""
    if not isinstance(performance, dict):
        return
    if isinstance(performance.get("additional_details"), dict):
        performance["additional_details"] = _strings(performance["additional_details"])
    for key in performance:
        if key not in _PERFORMANCE:
            where = to_pointer(("performance", key))
            ctx.kept(where, "performance accepts extra fields in 0.2.1 too")


def _renamed(out: dict[str, Any]) -> dict[str, Any]:
    """Return `out` with `interactions` renamed `messages`, in the same place."""
    return {("messages" if key == "interactions" else key): value for key, value in out.items()}


def upgrade(record: dict[str, Any], ctx: StepContext) -> dict[str, Any]:
    """Return `record` at 0.2.1 without changing it."""
    out = clone(record)
    out["schema_version"] = TO
    _metadata(out, ctx)
    if "interactions" in out:
        out = _renamed(out)
        ctx.moved("/interactions", "/messages")
    _messages(out.get("messages"))
    if "evaluation_result_id" in out:
        out["evaluation_result_id"] = as_text(out["evaluation_result_id"])
    sample_id = out.get("sample_id")
    if isinstance(sample_id, int) and not isinstance(sample_id, bool):
        out["sample_id"] = str(sample_id)
    if isinstance(out.get("input"), dict):
        _as_list(out["input"], "reference")
    if isinstance(out.get("output"), dict):
        _as_list(out["output"], "raw")
        _as_list(out["output"], "reasoning_trace")
    attributions = out.get("answer_attribution")
    for item in attributions if isinstance(attributions, list) else []:
        if isinstance(item, dict) and isinstance(item.get("source"), str):
            item["source"] = _OLD_LOCATOR.sub("messages", item["source"])
    evaluation = out.get("evaluation")
    if isinstance(evaluation, dict) and isinstance(evaluation.get("score"), bool):
        evaluation["score"] = 1.0 if evaluation["score"] else 0.0
    _performance(out.get("performance"), ctx)
    return out
