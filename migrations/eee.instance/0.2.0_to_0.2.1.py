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

Where the engine hands the record over (`ctx.owned`), it is changed in place; otherwise only
the objects and arrays on the way to a changed value are copied, and the rest is shared.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from evalreg import StepContext
from evalreg.stepkit import as_text, carry, strings_only, to_pointer, to_text

FROM = "0.2.0"
TO = "0.2.1"
PARAMS = ()

_DECLARED = frozenset(
    (
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
)
_PERFORMANCE = frozenset(
    ("latency_ms", "time_to_first_token_ms", "generation_time_ms", "additional_details")
)
_OLD_LOCATOR = re.compile(r"^interactions(?=$|[\[.])")


def _each(
    items: list[Any],
    upgrade: Callable[[Any, str, int, StepContext], Any],
    where: str,
    ctx: StepContext,
) -> list[Any]:
    """Return `items` with `upgrade(item, where, index, ctx)` applied to each (`items` itself if
    no item changed, or if the record is the step's own); the item's pointer is made
    (`where/index`) only where it changes."""
    upgraded = items
    for index, item in enumerate(items):
        new = upgrade(item, where, index, ctx)
        if new is not item:
            if upgraded is items and not ctx.owned:
                upgraded = list(items)
            upgraded[index] = new
    return upgraded


def _own(holder: dict[str, Any], ctx: StepContext) -> dict[str, Any]:
    """Return `holder` to change: itself where the record is the step's own, else a copy."""
    return holder if ctx.owned else dict(holder)


def _as_lists(holder: dict[str, Any], ctx: StepContext, where: str, *keys: str) -> dict[str, Any]:
    """Return `holder` with a string at any of `keys` wrapped in a one-element array."""
    out = holder
    for key in keys:
        value = holder.get(key)
        if isinstance(value, str):
            if out is holder:
                out = _own(holder, ctx)
            out[key] = wrapped = [value]
            ctx.converted(f"{where}/{key}", value, wrapped, "a list of one")
    return out


def _calls(calls: list[Any], where: str, ctx: StepContext) -> list[Any]:
    """Return `tool_calls` at 0.2.1 (string arguments): `calls` itself where no item changed
    (or where the record is the step's own)."""
    upgraded = calls
    for index, call in enumerate(calls):
        arguments = call.get("arguments") if isinstance(call, dict) else None
        if not isinstance(arguments, dict):
            continue
        text = strings_only(arguments, ctx, f"{where}/{index}/arguments")
        if text is not arguments:
            if upgraded is calls and not ctx.owned:
                upgraded = list(calls)
            upgraded[index] = call | {"arguments": text}
    return upgraded


def _message(message: Any, where: str, index: int, ctx: StepContext) -> Any:
    """Return one item of `messages` at 0.2.1 (tool_call_id arrays, string arguments)."""
    if not isinstance(message, dict):
        return message
    out = message
    call_id = message.get("tool_call_id")
    if isinstance(call_id, str):
        out = _own(message, ctx)
        out["tool_call_id"] = wrapped = [call_id]
        ctx.converted(f"{where}/{index}/tool_call_id", call_id, wrapped)
    calls = message.get("tool_calls")
    if isinstance(calls, list) and calls:
        upgraded = _calls(calls, f"{where}/{index}/tool_calls", ctx)
        if upgraded is not calls:
            out = out if out is not message else _own(message, ctx)
            out["tool_calls"] = upgraded
    return out


def _attribution(item: Any, where: str, index: int, ctx: StepContext) -> Any:
    """Return one item of `answer_attribution` with a source that points into `messages`."""
    source = item.get("source") if isinstance(item, dict) else None
    if isinstance(source, str) and source[:12] == "interactions" and _OLD_LOCATOR.match(source):
        new = _OLD_LOCATOR.sub("messages", source)
        ctx.converted(f"{where}/{index}/source", source, new, "the locator follows the rename")
        out = _own(item, ctx)
        out["source"] = new
        return out
    return item


def _metadata(out: dict[str, Any], ctx: StepContext) -> None:
    """Make metadata strings-only and move fields 0.2.1 does not declare into it (in `out`)."""
    extra = [] if out.keys() <= _DECLARED else [key for key in out if key not in _DECLARED]
    metadata = out.get("metadata")
    if isinstance(metadata, dict):
        out["metadata"] = metadata = strings_only(metadata, ctx, "/metadata")
    if not extra:
        return
    if metadata is None:
        if "metadata" in out:  # null, which 0.2.1 does not allow
            ctx.dropped("/metadata", "null, to be replaced by the fields moved into it")
        out["metadata"] = metadata = {}
    elif isinstance(metadata, dict):
        # The extras go into it, and it may still be the input's own object.
        out["metadata"] = metadata = dict(metadata)
    for key in extra:
        original = out.pop(key)
        value = as_text(original)
        src, dst = to_pointer([key]), to_pointer(("metadata", key))
        if not isinstance(metadata, dict):
            ctx.lose(src, "0.2.1 allows no such top-level field and metadata is no object")
            continue
        clash = f"0.2.1 allows no such top-level field and {dst} holds another value"
        carry(metadata, key, value, ctx, source=src, target=dst, clash=clash, original=original)


def _performance(performance: Any, ctx: StepContext) -> Any:
    """Return performance with additional_details strings-only; report the extras kept."""
    if not isinstance(performance, dict):
        return performance
    details = performance.get("additional_details")
    if isinstance(details, dict):
        text = strings_only(details, ctx, "/performance/additional_details")
        if text is not details:
            performance = performance | {"additional_details": text}
    if performance.keys() <= _PERFORMANCE:
        return performance
    for key in performance:
        if key not in _PERFORMANCE:
            where = to_pointer(("performance", key))
            ctx.kept(where, "performance accepts extra fields in 0.2.1 too")
    return performance


def _renamed(out: dict[str, Any]) -> None:
    """Rename `interactions` `messages` in `out` (the step's own object), in the same place."""
    keys = list(out)
    after = keys[keys.index("interactions") + 1 :]
    out["messages"] = out.pop("interactions")
    for key in after:  # taken out and put back after it: fewer than the whole object
        out[key] = out.pop(key)


def upgrade(record: dict[str, Any], ctx: StepContext) -> dict[str, Any]:
    """Return `record` at 0.2.1 (changed in place where the engine hands it over)."""
    out = record if ctx.owned else dict(record)
    out["schema_version"] = TO
    _metadata(out, ctx)
    if "interactions" in out:
        _renamed(out)  # `messages` is no key of `out`: 0.2.0 does not declare it (see `_metadata`)
        ctx.renamed("/interactions", "/messages")
    if isinstance(out.get("messages"), list):
        out["messages"] = _each(out["messages"], _message, "/messages", ctx)
    if "evaluation_result_id" in out:
        out["evaluation_result_id"] = to_text(
            out["evaluation_result_id"], ctx, "/evaluation_result_id"
        )
    sample_id = out.get("sample_id")
    if isinstance(sample_id, int) and not isinstance(sample_id, bool):
        out["sample_id"] = str(sample_id)
        ctx.converted("/sample_id", sample_id, out["sample_id"])
    if isinstance(out.get("input"), dict):
        out["input"] = _as_lists(out["input"], ctx, "/input", "reference")
    if isinstance(out.get("output"), dict):
        out["output"] = _as_lists(out["output"], ctx, "/output", "raw", "reasoning_trace")
    if isinstance(out.get("answer_attribution"), list):
        out["answer_attribution"] = _each(
            out["answer_attribution"], _attribution, "/answer_attribution", ctx
        )
    evaluation = out.get("evaluation")
    if isinstance(evaluation, dict) and isinstance(evaluation.get("score"), bool):
        score = evaluation["score"]
        out["evaluation"] = evaluation | {"score": 1.0 if score else 0.0}
        ctx.converted("/evaluation/score", score, out["evaluation"]["score"])
    if "performance" in out:
        out["performance"] = _performance(out["performance"], ctx)
    return out
