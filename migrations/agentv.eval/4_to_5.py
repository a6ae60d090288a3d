"""Name what the tests run with `providers`, and leave the names AgentV retired in era 4's week.

On 2026-07-07 AgentV replaced `target` and `targets` with `providers`: the file-level `target`,
`targets`, `execution.target(s)` and an `experiment`'s target(s) become the `providers` list, in
that order, without repeats, where the first of them was. A target name stays a name; a target
definition becomes a provider object, its backend (`provider`) now `id` and its name (`id`, or
`name`) now `label`, its `model` under `config`. A target object that only refers to another
(`extends`, `use_target`, overrides without a backend) has no provider form and is kept in the
metadata, as is a file of targets not given as a `file://` reference. `defaults.target` is
`defaults.provider`.

The names AgentV had retired during era 4's week, which era 5 refuses, take their new places:
the suite checks (`assertions`, and those under `execution` or `experiment`) are `assert`; the
run controls of `execution`, `experiment` and `policy`, and the top-level `repeat`, `runs` and
`budget_usd`, go where AgentV's messages say: `threshold` and `timeout_seconds` to the top level,
`budget_usd`, `workers` (as `max_concurrency`) and `repeat`, `runs` or `trials` (as `repeat`,
`pass_at_k` now `pass_any`) to `evaluate_options`; the test list is `tests`. A test's `input`,
`input_files` and `expected_output` move under its `vars`, its `assertions` and `evaluators`
into `assert` (its `rubrics` as one `rubrics` check), a test execution's `assertions` and
`evaluators` into its `assert`, and a turn's `assertions` are `assert`. A file whose test inputs
moved and that has no `prompts` gets `prompts: ["{{ input }}"]` (the input as it is). The suite
`input` goes to `default_test.metadata.input`, as at era 4. What era 5 has no place for
(`workspace`, `graders`, `imports`, `preprocessors`, `model`, `early_exit`, `on_run_complete`,
the suite `input` where `default_test` is a file, the other settings of `execution`,
`experiment` and `policy`, a test's `workspace` and `provider_output`, a test execution's
targets, workers and trials) is kept under the same name in the `metadata` of its suite or test
and reported as kept; so is a value whose new place already holds another one. `$schema` is kept
as it is (AgentV's own label, `agentv-eval-v2`); none is added. A file whose tests are all in
`imports` has no era-5 form: the step fails for it.

Downgrade: `providers` back to `target` (one) or `targets` (several), each object with its
`label` as the target's `id` and its `id` as the target's `provider` (promptfoo's map of ids to
settings gives one target per id), `defaults.provider` back to `defaults.target`, a test's
`vars.expected_output` back to its `expected_output` (where the eras before read it), and the
values kept in the metadata back to their places. Everything else era 5 holds, era 4 holds too.
Lost, only with allow-loss: an `id` inside promptfoo's map of providers, which AgentV ignores.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

from evalreg import StepContext
from evalreg.errors import MigrationError
from evalreg.stepkit import at, clone, rename_key, rename_key_each

FROM = "4"
TO = "5"
PARAMS = ()

DEFAULT_PROMPTS = ["{{ input }}"]
_NONE = object()  # a key that is not there
_SLOT = object()  # a place in the output, filled in at the end
_MODES = ("host", "profile", "sandbox")
_Check = Callable[[Any], bool]


def _number(value: Any, low: float = 0, high: float | None = None) -> bool:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and value >= low
    return ok and (high is None or value <= high)


def _whole(value: Any, high: int | None = None) -> bool:
    ok = isinstance(value, int) and not isinstance(value, bool) and value >= 1
    return ok and (high is None or value <= high)


def _prompts(value: Any) -> bool:
    if isinstance(value, (str, dict)):
        return True
    return (
        isinstance(value, list) and bool(value) and all(isinstance(v, (str, dict)) for v in value)
    )


_SETTINGS: dict[str, _Check] = {
    # a provider's settings besides its id and label, each with the values era 5 takes
    "config": lambda v: isinstance(v, dict),
    "runtime": lambda v: (
        (isinstance(v, str) and v in _MODES) or (isinstance(v, dict) and v.get("mode") in _MODES)
    ),
    "prompts": _prompts,
    "transform": lambda v: isinstance(v, (str, dict)),
    "delay": _number,
    "env": lambda v: isinstance(v, dict) and all(isinstance(x, str) for x in v.values()),
    "inputs": lambda v: isinstance(v, dict),
    "environment": lambda v: isinstance(v, (dict, str)),
    "hooks": lambda v: isinstance(v, dict),
}
_EXECUTION: dict[str, _Check] = {
    # what a test's execution holds at era 5, and the values it takes
    "skip_defaults": lambda v: isinstance(v, bool),
    "cache": lambda v: isinstance(v, bool),
    "budget_usd": _number,
    "budgetUsd": _number,
    "fail_on_error": lambda v: isinstance(v, bool),
    "failOnError": lambda v: isinstance(v, bool),
    "threshold": lambda v: _number(v, 0, 1),
}
_RUN: dict[str, tuple[str, str, _Check]] = {
    # a run control: the object that takes it at era 5 ("": the suite), its name there, its values
    "threshold": ("", "threshold", lambda v: _number(v, 0, 1)),
    "timeout_seconds": ("", "timeout_seconds", _number),
    "budget_usd": ("evaluate_options", "budget_usd", _number),
    "workers": ("evaluate_options", "max_concurrency", lambda v: _whole(v, 50)),
    "max_concurrency": ("evaluate_options", "max_concurrency", lambda v: _whole(v, 50)),
    "repeat": ("evaluate_options", "repeat", lambda v: _whole(v) or isinstance(v, dict)),
    "runs": ("evaluate_options", "repeat", _whole),
    "trials": ("evaluate_options", "repeat", lambda v: _whole(v) or isinstance(v, dict)),
}
_CHECKS = ("assert", "assertions", "evaluators")
_CONTROLS = ("execution", "experiment", "policy")
_KEPT_SUITE = (
    "workspace",
    "graders",
    "imports",
    "preprocessors",
    "model",
    "early_exit",
    "on_run_complete",
)
_KEPT_TEST = ("workspace", "provider_output")
_VARS = ("input", "input_files", "expected_output")


class _Kept:
    """Values era 5 has no place for, kept under their names in a `metadata` object."""

    def __init__(self, ctx: StepContext) -> None:
        self.ctx = ctx
        self.items: list[tuple[tuple[str, ...], Any, list[str] | str]] = []
        """(where in the metadata, the value, where it was: a list's items each have theirs)"""

    def keep(self, tokens: tuple[str, ...], value: Any, source: str) -> None:
        """Keep `value` (at `source`) at `tokens` inside the metadata."""
        self.items.append((tokens, clone(value), source))

    def keep_items(self, tokens: tuple[str, ...], items: list[tuple[str, Any]]) -> None:
        """Keep the list of `items` (each with where it was) at `tokens` inside the metadata."""
        self.items.append((tokens, [clone(v) for _, v in items], [w for w, _ in items]))

    def into(self, metadata: Any, where: str) -> Any:
        """Return the holder's metadata (`_NONE`: it has none) with the kept values in it; the
        metadata is at `where` in the output. `_NONE`: there is no metadata."""
        if not self.items:
            return metadata if metadata is _NONE else clone(metadata)
        if metadata is _NONE:
            merged: dict[str, Any] = {}
        elif isinstance(metadata, dict):
            merged = clone(metadata)
        else:
            raise MigrationError("agentv.eval", f"{FROM} -> {TO}", f"{where}: it is no object")
        for tokens, value, source in self.items:
            node: Any = merged
            for token in tokens[:-1]:
                node = node.get(token, {}) if isinstance(node, dict) else None
            place, last = at(where, *tokens), tokens[-1]
            sources = [source] if isinstance(source, str) else source
            if not isinstance(node, dict) or (last in node and node[last] != value):
                for item in sources:
                    self.ctx.lose(item, f"{place} already holds another value")
                continue
            if last in node:
                for item in sources:
                    self.ctx.dropped(item, f"{place} holds the same value")
                continue
            node = merged
            for token in tokens[:-1]:
                node = node.setdefault(token, {})
            node[last] = value
            if isinstance(source, str):
                self.ctx.moved(source, place, "era 5 has no place for it; kept")
            else:
                for index, item in enumerate(source):
                    self.ctx.moved(item, at(place, index), "era 5 has no place for it; kept")
        return merged


class _Checks:
    """Lists of checks gathered into one `assert` list, each move reported."""

    def __init__(self, ctx: StepContext) -> None:
        self.ctx = ctx
        self.parts: list[tuple[str, Any, str]] = []
        """(where, the list or rubrics, its kind: `assert`, `renamed` or `rubrics`)"""

    def add(self, where: str, value: Any, kind: str) -> bool:
        """Add the checks at `where`; False: they are no list (nothing added)."""
        if not isinstance(value, list):
            return False
        self.parts.append((where, value, kind))
        return True

    def put(self, holder: dict[str, Any], to: str) -> None:
        """Put the checks at `assert` in `holder`, which is at `to` in the output."""
        target = at(to, "assert")
        lists = [p for p in self.parts if p[2] != "rubrics"]
        filled = [p for p in self.parts if p[1] or p[2] == "rubrics"]
        whole = filled[0] if len(filled) == 1 else None
        if not filled and lists:
            whole = lists[0]
        items: list[Any] = []
        for where, value, kind in self.parts:
            if kind == "rubrics":
                place = at(target, len(items))
                items.append({"type": "rubrics", "criteria": clone(value)})
                self.ctx.moved(where, at(place, "criteria"), "the test's rubrics, as one check")
                self.ctx.added(at(place, "type"), "rubrics", "derived", "the rubrics, as one check")
                continue
            one = whole is not None and whole[0] == where
            if one and where != target:
                if where.rsplit("/", 1)[0] == to:
                    self.ctx.renamed(where, target)
                else:
                    self.ctx.moved(where, target)
            elif not one and not value:
                self.ctx.dropped(where, "an empty list")
            for index, item in enumerate(value):
                place = at(target, len(items))
                if kind == "renamed":
                    item = _check(item, at(where, index), place, self.ctx)
                else:
                    item = clone(item)
                if not one and at(where, index) != place:
                    self.ctx.moved(at(where, index), place)
                items.append(item)
        holder["assert"] = items


def _is_check(value: Any) -> bool:
    """Return whether `value` is a check as eras 4 and 5 read one (its inner checks included)."""
    if isinstance(value, str):
        return True
    if not isinstance(value, dict):
        return False
    kind, weight = value.get("type", ""), value.get("weight", 0)
    inner = value.get("assert", [])
    return (
        ((isinstance(kind, str) and bool(kind)) or "include" in value)
        and isinstance(value.get("name", ""), str)
        and _number(weight)
        and isinstance(value.get("required", True), (bool, int, float))
        and isinstance(inner, list)
        and all(_is_check(item) for item in inner)
    )


def _check(item: Any, where: str, to: str, ctx: StepContext) -> Any:
    """Return a check of a list under an old name with its inner checks under era 5's name:
    `assertions` (era 3.1's) is `assert` where the check has no `assert` and they are checks."""
    inner = item.get("assertions") if isinstance(item, dict) else None
    if not isinstance(inner, list) or "assert" in item or not all(map(_is_check, inner)):
        return clone(item)
    out: dict[str, Any] = {}
    for key, value in item.items():
        if key == "assertions":
            out["assert"] = [
                _check(v, at(where, key, i), at(to, "assert", i), ctx) for i, v in enumerate(value)
            ]
            ctx.renamed(at(where, key), at(to, "assert"))
        else:
            out[key] = clone(value)
    return out


def _kind(key: str) -> str:
    """Return the kind of a list of checks under `key`: named `assert`, or under an old name
    (`assertions`, `evaluators`), or a test's `rubrics`."""
    return key if key in ("assert", "rubrics") else "renamed"


# -- providers -----------------------------------------------------------------------------


def _provider(value: Any, where: str, to: str, ctx: StepContext) -> Any:
    """Return the era-5 provider of a target (at `where`, going to `to`), each change
    reported; `_NONE`: it has no provider form."""
    if isinstance(value, str):
        if not value:
            return _NONE
        ctx.moved(where, to)
        return value
    if not isinstance(value, dict):
        return _NONE
    names = [k for k in ("id", "name") if k in value]
    if "provider" not in value:  # a target named by itself, or one that refers to another
        if len(value) == 1 and names and isinstance(value[names[0]], str) and value[names[0]]:
            ctx.moved(at(where, names[0]), to, "a target named by itself")
            return value[names[0]]
        return _NONE
    backend, config, model = value["provider"], value.get("config", {}), value.get("model", _NONE)
    label = value[names[0]] if len(names) == 1 else _NONE
    if (
        not isinstance(backend, str)
        or not backend
        or len(names) > 1
        or (names and (not isinstance(label, str) or not label))
        or (model is not _NONE and (not isinstance(config, dict) or "model" in config))
        or any(k not in ("id", "name", "provider", "model", *_SETTINGS) for k in value)
        or any(k in _SETTINGS and not _SETTINGS[k](v) for k, v in value.items())
    ):
        return _NONE
    out: dict[str, Any] = {"id": backend}
    ctx.renamed(at(where, "provider"), at(to, "id"), "the backend")
    if names:
        out["label"] = label
        ctx.renamed(at(where, names[0]), at(to, "label"), "the name the provider is known by")
    for key, item in value.items():
        if key in _SETTINGS:
            out[key] = clone(item)
            ctx.moved(at(where, key), at(to, key))
    if model is not _NONE:
        out["config"] = {**out.get("config", {}), "model": clone(model)}
        ctx.moved(at(where, "model"), at(to, "config", "model"), "a setting of the backend")
    return out


def _providers(
    targets: list[tuple[str, Any, tuple[str, ...]]], kept: _Kept, ctx: StepContext
) -> Any:
    """Return the `providers` of the targets found (each with where it was and where it is
    kept when it has no provider form), or `_NONE`."""
    if len(targets) == 1 and isinstance(targets[0][1], str) and targets[0][0] == "/targets":
        ctx.renamed("/targets", "/providers", "the file of the providers")
        return targets[0][1]
    out: list[Any] = []
    seen: list[Any] = []
    unplaced: dict[tuple[str, ...], list[tuple[str, Any]]] = {}
    for where, target, tokens in targets:
        if any(target == other for other in seen):
            ctx.dropped(where, "the same target is listed already")
            continue
        provider = _provider(target, where, f"/providers/{len(out)}", ctx)
        if provider is _NONE:
            unplaced.setdefault(tokens, []).append((where, target))
            continue
        seen.append(target)
        out.append(provider)
    for tokens, items in unplaced.items():
        if items[0][0] == at("", *tokens):  # a target in a place of its own
            kept.keep(tokens, items[0][1], items[0][0])
        else:  # items of a list
            kept.keep_items(tokens, items)
    return out if out else _NONE


# -- the suite -----------------------------------------------------------------------------


class _Suite:
    """What the suite's keys give other places: providers, checks, run controls, metadata."""

    def __init__(self, ctx: StepContext) -> None:
        self.ctx = ctx
        self.kept = _Kept(ctx)
        self.checks = _Checks(ctx)
        self.targets: list[tuple[str, Any, tuple[str, ...]]] = []
        """(where, a target, where it is kept when it has no provider form)"""
        self.controls: list[tuple[str, str, Any, tuple[str, ...], str]] = []
        """(the object that takes it, its name there, its value, where it is kept if not, where
        it was) of each run control."""

    def target_list(self, key: str, value: Any, tokens: tuple[str, ...]) -> bool:
        """Take a list of targets (at `/key`, kept at `tokens`); False: no list."""
        where = at("", *tokens)
        if isinstance(value, list):
            if not value:
                self.ctx.dropped(where, "an empty list names no provider")
            self.targets += [(at(where, i), t, tokens) for i, t in enumerate(value)]
            return True
        if key == "targets" and isinstance(value, str) and value.startswith("file://"):
            self.targets.append((where, value, tokens))
            return True
        return False

    def settings(self, name: str, holder: dict[str, Any]) -> None:
        """Take the settings of `execution`, `experiment` or `policy` where era 5 has them."""
        if not holder:
            self.ctx.dropped(f"/{name}", "an empty object")
        for key, value in holder.items():
            where = at(f"/{name}", key)
            if key == "target":
                self.targets.append((where, value, (name, key)))
            elif (key == "targets" and self.target_list(key, value, (name, key))) or (
                key in _CHECKS and self.checks.add(where, value, _kind(key))
            ):
                continue
            elif key in _RUN and _RUN[key][2](value):
                self.controls.append((*_RUN[key][:2], value, (name, key), where))
            else:
                self.kept.keep((name, key), value, where)

    def place(self, out: dict[str, Any]) -> None:
        """Put the run controls in `out` (the suite at era 5) where nothing else is."""
        options = out.get("evaluate_options", _NONE)
        options = {} if options is _NONE or options is _SLOT else options
        for holder, key, value, tokens, where in self.controls:
            into = options if holder else out
            place = at(f"/{holder}" if holder else "", key)
            if not isinstance(into, dict) or (key in into and into[key] is not _SLOT):
                if isinstance(into, dict) and into[key] == value:
                    self.ctx.dropped(where, f"{place} holds the same value")
                else:
                    self.kept.keep(tokens, value, where)
                continue
            if tokens[-1] == "trials" and isinstance(value, dict):
                value = clone(value)
                if value.get("strategy") == "pass_at_k":
                    value["strategy"] = "pass_any"
                    self.ctx.converted(
                        at(place, "strategy"), "pass_at_k", "pass_any", "its name at era 5"
                    )
            into[key] = clone(value)
            self.ctx.moved(where, place, "where era 5 reads it")
        if isinstance(options, dict) and options:
            out["evaluate_options"] = options
        elif out.get("evaluate_options") is _SLOT:
            del out["evaluate_options"]


def _default_test(value: Any, input_: Any, ctx: StepContext) -> Any:
    """Return the era-5 default_test (`value`, `_NONE` if there is none) with the suite input
    (`_NONE`: none) in its metadata."""
    if not isinstance(value, dict) and value is not _NONE:
        return clone(value)
    given: dict[str, Any] = value if isinstance(value, dict) else {}
    out: dict[str, Any] = {}
    kept = _Kept(ctx)
    checks = _Checks(ctx)
    variables = given.get("vars", _NONE)
    holds = variables is _NONE or isinstance(variables, dict)
    moved: list[tuple[str, Any]] = []
    for key, item in given.items():
        where = at("/default_test", key)
        if key in ("assert", "assertions") and checks.add(where, item, _kind(key)):
            out.setdefault("assert", _SLOT)
        elif (
            key == "expected_output" and holds and isinstance(variables, dict) and key in variables
        ):
            if variables[key] == item:
                ctx.dropped(where, f"the same as vars.{key}")
            else:
                kept.keep((key,), item, where)
        elif key == "expected_output" and holds:
            moved.append((where, item))
            out.setdefault("vars", _SLOT)
        elif key in ("expected_output", "provider_output"):
            kept.keep((key,), item, where)
        elif key in ("vars", "metadata"):
            out.setdefault(key, _SLOT)
        else:
            out[key] = clone(item)
    if out.get("assert") is _SLOT:
        checks.put(out, "/default_test")
    if out.get("vars") is _SLOT:
        merged = clone(variables) if isinstance(variables, dict) else {}
        for where, item in moved:
            merged["expected_output"] = clone(item)
            ctx.moved(where, "/default_test/vars/expected_output", "where era 5 reads it")
        out["vars"] = merged
    if input_ is not _NONE:
        kept.keep(("input",), input_, "/input")
        out.setdefault("metadata", _SLOT)
    metadata = kept.into(given.get("metadata", _NONE), "/default_test/metadata")
    if metadata is _NONE:
        out.pop("metadata", None)
    else:
        out["metadata"] = metadata
    return out


def _takes_input(value: Any, input_: Any) -> bool:
    """Return whether default_test `value` (`_NONE`: none) can keep the suite input."""
    if value is _NONE:
        return True
    own = value.get("metadata", {}) if isinstance(value, dict) else None
    return isinstance(own, dict) and own.get("input", input_) == input_


# -- tests ---------------------------------------------------------------------------------


def _test(test: Any, where: str, to: str, ctx: StepContext) -> tuple[Any, bool]:
    """Return a test at era 5, and whether its input moved under its vars."""
    if not isinstance(test, dict) or "include" in test:
        return clone(test), False
    out: dict[str, Any] = {}
    kept = _Kept(ctx)
    checks = _Checks(ctx)
    given = test.get("vars", _NONE)
    holds = given is _NONE or given is None or isinstance(given, dict)
    variables: dict[str, Any] = clone(given) if isinstance(given, dict) else {}
    moved_input = False
    for key, value in test.items():
        at_key = at(where, key)
        if key in _VARS and holds:
            if key in variables and variables[key] != value:
                kept.keep((key,), value, at_key)
            elif key in variables:
                ctx.dropped(at_key, f"the same as vars.{key}")
            else:
                variables[key] = clone(value)
                ctx.moved(at_key, at(to, "vars", key), "where era 5 reads it")
                moved_input = moved_input or key == "input"
                out.setdefault("vars", _SLOT)
        elif key == "vars" and holds:
            out.setdefault("vars", _SLOT)
        elif key in (*_CHECKS, "rubrics") and checks.add(at_key, value, _kind(key)):
            out.setdefault("assert", _SLOT)
        elif key in _KEPT_TEST or key in _VARS:
            kept.keep((key,), value, at_key)
        elif key == "execution" and isinstance(value, dict):
            execution = _execution(value, at_key, at(to, key), kept, ctx)
            if execution is not _NONE:
                out[key] = execution
        elif key == "turns":
            out[key] = rename_key_each(
                value,
                "assertions",
                "assert",
                nested=True,
                ctx=ctx,
                source=at_key,
                target=at(to, key),
            )
        elif key == "metadata":
            out.setdefault("metadata", _SLOT)
        else:
            out[key] = clone(value)
    if out.get("assert") is _SLOT:
        checks.put(out, to)
    if out.get("vars") is _SLOT:
        if given is None:
            ctx.dropped(f"{where}/vars", "null; now the object holding the test's input")
        out["vars"] = variables
    metadata = kept.into(test.get("metadata", _NONE), at(to, "metadata"))
    if metadata is not _NONE:
        out["metadata"] = metadata
    return out, moved_input


def _execution(value: dict[str, Any], where: str, to: str, kept: _Kept, ctx: StepContext) -> Any:
    """Return a test's execution at era 5 (`_NONE`: nothing is left of it)."""
    out: dict[str, Any] = {}
    checks = _Checks(ctx)
    for key, item in value.items():
        if key in _CHECKS and checks.add(at(where, key), item, _kind(key)):
            out.setdefault("assert", _SLOT)
        elif key in _EXECUTION and _EXECUTION[key](item):
            out[key] = clone(item)
        else:
            kept.keep(("execution", key), item, at(where, key))
    if out.get("assert") is _SLOT:
        checks.put(out, to)
    return out if out or not value else _NONE


def _tests(record: dict[str, Any], out: dict[str, Any], kept: _Kept, ctx: StepContext) -> bool:
    """Put the tests at `tests` (era 5's one name), each at era 5; return whether some test
    input moved under its vars."""
    parts = [(k, record[k]) for k in ("tests", "eval_cases") if k in record]
    if len(parts) == 2 and not all(isinstance(v, list) for _, v in parts):
        kept.keep(("eval_cases",), record["eval_cases"], "/eval_cases")
        parts = parts[:1]
    if not parts:
        return False
    if len(parts) == 1 and parts[0][0] != "tests":
        ctx.renamed(f"/{parts[0][0]}", "/tests")
    if len(parts) == 1 and not isinstance(parts[0][1], list):
        out["tests"] = clone(parts[0][1])
        return False
    items: list[Any] = []
    moved = False
    for key, value in parts:
        for index, test in enumerate(value):
            where, to = f"/{key}/{index}", f"/tests/{len(items)}"
            if len(parts) == 2 and key != "tests":
                ctx.moved(where, to)
            item, took = _test(test, where, to, ctx)
            items.append(item)
            moved = moved or took
    out["tests"] = items
    return moved


# -- upgrade -------------------------------------------------------------------------------


def upgrade(record: dict[str, Any], ctx: StepContext) -> dict[str, Any]:
    """Return `record` at era 5."""
    if "tests" not in record and "eval_cases" not in record and "scenarios" not in record:
        raise MigrationError(
            "agentv.eval",
            f"{FROM} -> {TO}",
            "/imports: the file's tests are all imported, which era 5 does not do; run the "
            "imported files directly, or keep the file at era 4",
        )
    suite = _Suite(ctx)
    out: dict[str, Any] = {}
    input_ = record.get("input", _NONE)
    if input_ is not _NONE and not _takes_input(record.get("default_test", _NONE), input_):
        input_ = _NONE  # kept in the suite's metadata below
    for key, value in record.items():
        where = at("", key)
        if key == "target":
            suite.targets.append((where, value, (key,)))
            out.setdefault("providers", _SLOT)
        elif key in ("targets", "providers"):
            if not suite.target_list(key, value, (key,)):
                suite.kept.keep((key,), value, where)
            out.setdefault("providers", _SLOT)
        elif key in _CONTROLS and isinstance(value, dict):
            before = len(suite.targets)
            suite.settings(key, value)
            if len(suite.targets) > before:
                out.setdefault("providers", _SLOT)
            out.setdefault("assert", _SLOT)
            out.setdefault("evaluate_options", _SLOT)
        elif key == "experiment" and isinstance(value, str) and value:
            out[key] = value
        elif key in ("repeat", "runs", "budget_usd") and _RUN[key][2](value):
            suite.controls.append((*_RUN[key][:2], value, (key,), where))
            out.setdefault("evaluate_options", _SLOT)
        elif key in ("assert", "assertions") and suite.checks.add(where, value, _kind(key)):
            out.setdefault("assert", _SLOT)
        elif key == "defaults" and isinstance(value, dict) and "target" in value:
            if isinstance(value["target"], str) and value["target"]:
                out[key] = rename_key(value, "target", "provider", ctx=ctx, source=where)
            else:
                ctx.lose(f"{where}/target", "era 5 names the default provider by its label or id")
                out[key] = {k: clone(v) for k, v in value.items() if k != "target"}
        elif (key == "input" and input_ is not _NONE) or key == "default_test":
            out.setdefault("default_test", _SLOT)
        elif key in ("tests", "eval_cases"):
            out.setdefault("tests", _SLOT)
        elif key == "metadata":
            out.setdefault("metadata", _SLOT)
        elif key in (*_KEPT_SUITE, *_CONTROLS, "input", "repeat", "runs", "budget_usd"):
            suite.kept.keep((key,), value, where)
        else:
            out[key] = clone(value)
    moved_input = _tests(record, out, suite.kept, ctx)
    if out.get("providers") is _SLOT:
        providers = _providers(suite.targets, suite.kept, ctx)
        if providers is _NONE:
            del out["providers"]
        else:
            out["providers"] = providers
    if out.get("assert") is _SLOT:
        if suite.checks.parts:
            suite.checks.put(out, "")
        else:
            del out["assert"]
    if out.get("default_test") is _SLOT:
        out["default_test"] = _default_test(record.get("default_test", _NONE), input_, ctx)
    suite.place(out)
    metadata = suite.kept.into(record.get("metadata", _NONE), "/metadata")
    if metadata is not _NONE:
        out["metadata"] = metadata
    if moved_input and "prompts" not in record:
        placed: dict[str, Any] = {}
        for key, value in out.items():
            if key in ("providers", "tests") and "prompts" not in placed:
                placed["prompts"] = list(DEFAULT_PROMPTS)
            placed[key] = value
        ctx.default("/prompts", placed["prompts"], "each test's input, sent as it is")
        return placed
    return out


# -- downgrade -----------------------------------------------------------------------------

_RESTORED_SUITE = (
    *_KEPT_SUITE,
    *_CONTROLS,
    "input",
    "repeat",
    "runs",
    "budget_usd",
    "target",
    "targets",
    "eval_cases",
)
_RESTORED_TEST = (*_KEPT_TEST, *_VARS, "execution")


@lru_cache(maxsize=1)
def _era4() -> dict[str, Any]:
    path = Path(__file__).resolve().parents[2] / "schemas" / "agentv.eval" / f"{FROM}.schema.json"
    schema: dict[str, Any] = json.loads(path.read_bytes())
    return schema


@lru_cache(maxsize=64)
def _era4_check(*tokens: str) -> Any:
    import jsonschema

    schema = _era4()
    node: Any = schema
    for token in tokens:
        node = node.get(token) if isinstance(node, dict) else None
    if not isinstance(node, dict):
        return None
    return jsonschema.Draft7Validator({**node, "definitions": schema["definitions"]})


def _fits(value: Any, *tokens: str) -> bool:
    """Return whether `value` is valid at era 4 in the place of its schema named by `tokens`."""
    check = _era4_check(*tokens)
    return check is not None and bool(check.is_valid(value))


def _targets(value: Any, ctx: StepContext) -> tuple[str, Any]:
    """Return era 4's name and value of the providers: one `target`, or several `targets`."""
    if isinstance(value, str):
        if value.startswith("file://"):
            ctx.renamed("/providers", "/targets", "the file of the targets")
            return "targets", value
        ctx.renamed("/providers", "/target")
        return "target", value
    listed = value if isinstance(value, list) else [value]
    places = (
        [f"/providers/{i}" for i in range(len(listed))]
        if isinstance(value, list)
        else ["/providers"]
    )
    flat: list[tuple[str, Any, str | None]] = []  # (where, a provider, its id if a map's key)
    for where, provider in zip(places, listed, strict=True):
        if isinstance(provider, dict) and not isinstance(provider.get("id"), str):
            flat += [(at(where, k), v, k) for k, v in provider.items()]
        else:
            flat.append((where, provider, None))
    if len(flat) == 1:
        where, provider, key = flat[0]
        return "target", _target(provider, where, "/target", key, ctx)
    return "targets", [
        _target(provider, where, f"/targets/{i}", key, ctx)
        for i, (where, provider, key) in enumerate(flat)
    ]


def _target(value: Any, where: str, to: str, key: str | None, ctx: StepContext) -> Any:
    """Return the era-4 target of one provider (`key`: its id, when it is a map's key)."""
    if not isinstance(value, dict):
        ctx.moved(where, to)
        return clone(value)
    backend = value.get("id") if key is None else key
    label = value.get("label", _NONE)
    out: dict[str, Any] = {}
    if label is _NONE:
        out["id"] = backend
        source = at(where, "id") if key is None else None
        ctx.added(at(to, "id"), backend, "derived", "a provider is known by its id", source=source)
    else:
        out["id"] = clone(label)
        ctx.renamed(at(where, "label"), at(to, "id"), "the name the target is known by")
    out["provider"] = backend
    if key is None:
        ctx.renamed(at(where, "id"), at(to, "provider"), "the backend")
    else:
        ctx.moved(where, to, "a provider of the map, by its id")
        ctx.added(at(to, "provider"), backend, "derived", "the provider map's key")
    for name, item in value.items():
        if name == "id" and key is not None:
            ctx.lose(at(where, name), "AgentV ignores an id inside a provider map")
        elif name not in ("id", "label"):
            out[name] = clone(item)
            ctx.moved(at(where, name), at(to, name))
    return out


def _restore(
    holder: dict[str, Any],
    out: dict[str, Any],
    where: str,
    names: tuple[str, ...],
    ctx: StepContext,
    *schema: str,
) -> None:
    """Put the values kept in `holder`'s metadata under `names` back in `out` (the holder at
    era 4, at `where`): those `out` lacks and era 4 takes there (an `execution` joins the one
    `out` has). `out` holds the metadata, which keeps the rest."""
    metadata = holder.get("metadata")
    if not isinstance(metadata, dict):
        return
    back: dict[str, Any] = {}
    for name, value in metadata.items():
        if name not in names:
            continue
        if name == "execution" and isinstance(out.get(name), dict) and isinstance(value, dict):
            joined = {**out[name], **value}
            if not set(value) & set(out[name]) and _fits(joined, *schema, "properties", name):
                back[name] = joined
        elif name not in out and _fits(value, *schema, "properties", name):
            back[name] = value
    if not back:
        return
    rest = {k: v for k, v in out["metadata"].items() if k not in back}
    if rest or not metadata:
        out["metadata"] = rest
    else:
        del out["metadata"]
    for name, value in back.items():
        source = at(where, "metadata", name)
        if name == "execution" and name in out:
            for key in metadata[name]:
                ctx.moved(at(source, key), at(where, name, key), "back to its place")
        else:
            ctx.moved(source, at(where, name), "back to its place")
        out[name] = clone(value)


def downgrade(record: dict[str, Any], ctx: StepContext) -> dict[str, Any]:
    """Return `record` at era 4."""
    out: dict[str, Any] = {}
    for key, value in record.items():
        if key == "providers":
            name, targets = _targets(value, ctx)
            out[name] = targets
        elif key == "defaults" and isinstance(value, dict) and "provider" in value:
            out[key] = rename_key(value, "provider", "target", ctx=ctx, source="/defaults")
        elif key == "tests" and isinstance(value, list):
            out[key] = [_down_test(t, f"/tests/{i}", ctx) for i, t in enumerate(value)]
        else:
            out[key] = clone(value)
    _restore(record, out, "", _RESTORED_SUITE, ctx)
    return out


def _down_test(test: Any, where: str, ctx: StepContext) -> Any:
    if not isinstance(test, dict):
        return clone(test)
    out = {key: clone(value) for key, value in test.items()}
    _restore(test, out, where, _RESTORED_TEST, ctx, "definitions", "test")
    variables = out.get("vars")
    if not isinstance(variables, dict) or "expected_output" not in variables:
        return out
    expected = variables["expected_output"]
    if "expected_output" in out or not _fits(
        expected, "definitions", "test", "properties", "expected_output"
    ):
        return out  # it stays a variable, which era 4 reads too
    placed: dict[str, Any] = {}
    for key, value in out.items():
        if key != "vars":
            placed[key] = value
            continue
        rest = {k: v for k, v in value.items() if k != "expected_output"}
        if rest:
            placed[key] = rest
        placed["expected_output"] = expected
    ctx.moved(
        at(where, "vars", "expected_output"),
        at(where, "expected_output"),
        "the test's reference answer, where the eras before read it",
    )
    return placed
