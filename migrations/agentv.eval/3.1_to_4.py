"""Move test inputs under `vars`, the targets to the top level, suite checks to `default_test`.

Era 4 (2026-07-02 .. 2026-07-06) follows promptfoo's layout. A test's `input` and `input_files`
move under its `vars`, where AgentV reads them from then on, and `assertions` are `assert` again
(also inside composites and under `execution`). The suite-level `assertions`, which every test
got, become `default_test.assert`, which every test gets. The file-level `target` (a name or a
definition), `execution.target` and `execution.targets` move to the top level, where era 4 reads
them: one as `target`, several as the `targets` list, in that order, without repeats, where the
target was; what else `execution` holds stays. An empty target (valid at 3.1) names no
provider, and era 4 has no empty target name: it is lost, only with allow-loss, as is a check's
own `assert` that holds no checks (era 3.1 did not read it; era 4 reads a composite's inner
checks there). Tests reach the target through prompt templates, so a file without `prompts`
gets `prompts: ["{{ input }}"]` (the test's input as it is), placed before the target. The test
list is `tests` (`eval_cases` was dropped).

The suite-level `input` of era 3.1, shared by every test, has no counterpart: promptfoo's
`default_test.vars` would be overridden by each test's own `input`. It is kept as
`default_test.metadata.input` and reported as kept. A test's `note` and `dataset`, which era 4
tests do not have, are kept in its `metadata` the same way. Where `default_test` is a file
reference, the suite checks stay the suite-level `assert` and the suite input stays `input`,
both of which era 4 reads. `$schema` is kept as it is (AgentV's own label, `agentv-eval-v2`);
none is added. Criteria, expected outputs, ids and metadata are carried unchanged.

Downgrade: the moves back (a `target` stays, several `targets` become `execution.targets`).
Lost, only with allow-loss: settings of the objects in `targets` (era 3.1 lists names there),
prompts other than the default one, test variables other than input and input_files,
default_test variables and settings other than its checks and threshold, test descriptions,
options and thresholds, the keys era 4 introduced (scenarios, environment, extensions, graders,
defaults, ...), and an `execution.target` that is no string or `execution.targets` that are not
all strings (era 4 leaves `execution` free-form; 3.1 names targets there). A test without an id
has no 3.1 form (3.1 requires ids): the downgrade fails for it.
"""

from __future__ import annotations

from typing import Any

from evalreg import StepContext
from evalreg.errors import MigrationError
from evalreg.stepkit import at, clone, rename_key, rename_key_each

FROM = "3.1"
TO = "4"
PARAMS = ()

DEFAULT_PROMPTS = ["{{ input }}"]
_NONE = object()  # a key that is not there
_VARS = ("input", "input_files")
_KEPT_TEST = ("note", "dataset", "experiment")


def _targets(record: dict[str, Any], ctx: StepContext) -> tuple[str, Any] | None:
    """Return where and what the file's targets are at era 4: one as `target`, several as the
    `targets` list (in order and without repeats), each move reported; None: no target.

    An empty target names no provider (era 4 requires a non-empty name): it is lost, only
    with allow-loss, rather than carried as an empty target.
    """
    found: list[tuple[str, Any]] = []  # (where it was, the target)
    execution = record.get("execution")
    execution = execution if isinstance(execution, dict) else {}
    named = [("/target", record.get("target", _NONE))]
    named.append(("/execution/target", execution.get("target", _NONE)))
    targets = execution.get("targets", _NONE)
    if isinstance(targets, list):
        named += [(f"/execution/targets/{i}", target) for i, target in enumerate(targets)]
        if not targets:
            ctx.dropped("/execution/targets", "an empty list names no target")
    elif targets is not _NONE:
        ctx.lose("/execution/targets", "era 3.1 lists targets; this is no list")
    for pointer, target in named:
        if target is _NONE:
            continue
        if target == "":
            ctx.lose(pointer, "an empty target names no provider; era 4 has no empty target")
        elif target is None:
            ctx.dropped(pointer, "null names no target")
        elif any(target == value for _, value in found):
            ctx.dropped(pointer, "the same target is listed already")
        else:
            found.append((pointer, clone(target)))
    if not found:
        return None
    if len(found) == 1:
        pointer, target = found[0]
        if pointer != "/target":
            ctx.moved(pointer, "/target", "where era 4 reads it")
        return "target", target
    for index, (pointer, _) in enumerate(found):
        ctx.moved(pointer, f"/targets/{index}")
    return "targets", [target for _, target in found]


def _test(test: Any, where: str, to: str, ctx: StepContext) -> Any:
    if not isinstance(test, dict):
        return clone(test)
    out: dict[str, Any] = {}
    given = test.get("vars")
    variables: dict[str, Any] = dict(given) if isinstance(given, dict) else {}
    kept: dict[str, Any] = {}
    for key, value in test.items():
        at_key = at(where, key)
        if key in _VARS and isinstance(given, (dict, type(None))):
            if key in variables and variables[key] != value:
                out[key] = clone(value)  # vars already holds another one; era 4 reads both
            elif key in variables:
                ctx.dropped(at_key, f"the same as vars.{key}")
            else:
                variables[key] = clone(value)
                ctx.moved(at_key, at(to, "vars", key), "where era 4 reads it")
                out.setdefault("vars", None)
        elif key == "vars" and isinstance(value, dict):
            out.setdefault("vars", None)
        elif key == "assertions":
            out["assert"] = _renamed(value, at_key, f"{to}/assert", ctx)
            ctx.renamed(at_key, f"{to}/assert")
        elif key == "execution":
            out[key] = _renamed(value, at_key, at_key.replace(where, to, 1), ctx, each=False)
        elif key in _KEPT_TEST:
            kept[key] = clone(value)
        else:
            out[key] = clone(value)
    if "vars" in out:
        if given is None and "vars" in test:
            ctx.dropped(f"{where}/vars", "null; now the object holding the test's input")
        out["vars"] = {k: clone(v) for k, v in variables.items()}
    if kept:
        metadata = out.get("metadata", {})
        if not isinstance(metadata, dict):
            raise MigrationError(
                "agentv.eval", f"{FROM} -> {TO}", f"{where}/metadata: it is no object"
            )
        merged = dict(metadata)
        for name, value in kept.items():
            place = at(to, "metadata", name)
            if name in merged and merged[name] != value:
                ctx.lose(at(where, name), f"{place} already holds another value")
            else:
                merged[name] = value
                ctx.moved(at(where, name), place, f"era 4 tests have no {name}; kept")
        out["metadata"] = merged
    return out


def _renamed(value: Any, where: str, to: str, ctx: StepContext, *, each: bool = True) -> Any:
    """Return checks (`each`) or an object with `assertions` renamed `assert`, inner ones too."""
    rename = rename_key_each if each else rename_key
    value = _without_stray_assert(value, where, ctx, each=each)
    return rename(value, "assertions", "assert", nested=True, ctx=ctx, source=where, target=to)


def _is_check(value: Any) -> bool:
    """Return whether `value` is a check as era 4 reads one (its inner checks included)."""
    if isinstance(value, str):
        return True
    if not isinstance(value, dict):
        return False
    kind, weight = value.get("type", ""), value.get("weight", 0)
    inner = value.get("assert", [])
    return (
        ((isinstance(kind, str) and bool(kind)) or "include" in value)
        and isinstance(value.get("name", ""), str)
        and isinstance(weight, (int, float))
        and not isinstance(weight, bool)
        and weight >= 0
        and isinstance(value.get("required", True), (bool, int, float))
        and isinstance(inner, list)
        and all(_is_check(item) for item in inner)
    )


def _without_stray_assert(value: Any, where: str, ctx: StepContext, *, each: bool) -> Any:
    """Return checks (`each`) or an object holding them without an `assert` that era 3.1 did
    not read (its inner checks are `assertions`) and era 4, which reads inner checks there,
    cannot take: lost, only with allow-loss. `value` itself when nothing is taken out."""
    if each and isinstance(value, list):
        items = [
            _without_stray_assert(v, f"{where}/{i}", ctx, each=False) for i, v in enumerate(value)
        ]
        return items if any(a is not b for a, b in zip(items, value, strict=True)) else value
    if not isinstance(value, dict):
        return value
    out = value
    stray = value.get("assert", [])
    if not isinstance(stray, list) or not all(_is_check(item) for item in stray):
        ctx.lose(f"{where}/assert", "era 4 reads inner checks there, and these are none")
        out = {k: v for k, v in value.items() if k != "assert"}
    inner = out.get("assertions")
    if isinstance(inner, list):
        kept = _without_stray_assert(inner, f"{where}/assertions", ctx, each=True)
        if kept is not inner:
            out = {**out, "assertions": kept}
    return out


def _default_test(
    record: dict[str, Any], out: dict[str, Any], referenced: bool, ctx: StepContext
) -> dict[str, Any] | None:
    """Return the era-4 default_test: the file's own, with the suite checks and input.

    Where it cannot take them (a file reference, a default_test with checks or an input of
    its own), the suite checks go to the suite-level `assert` and the input stays `input`,
    both of which era 4 reads.
    """
    own = record.get("default_test")
    default: dict[str, Any] | None = clone(own) if isinstance(own, dict) else None
    if referenced:
        return None  # the suite checks were renamed in place, and the input stays
    checks = record.get("assertions", _NONE)
    if checks is not _NONE:
        if default is not None and "assert" in default:
            out["assert"] = _renamed(checks, "/assertions", "/assert", ctx)
            ctx.renamed("/assertions", "/assert")
        else:
            default = {} if default is None else default
            default["assert"] = _renamed(checks, "/assertions", "/default_test/assert", ctx)
            ctx.moved("/assertions", "/default_test/assert", "which every test gets")
    if "input" in record:
        metadata = None if default is None else default.get("metadata", {})
        if not isinstance(metadata, dict) or "input" in metadata:
            out["input"] = clone(record["input"])
        else:
            default = {} if default is None else default
            default["metadata"] = {**metadata, "input": clone(record["input"])}
            ctx.moved(
                "/input",
                "/default_test/metadata/input",
                "era 4 has no suite-level input shared by every test; kept in default_test",
            )
    return default


def upgrade(record: dict[str, Any], ctx: StepContext) -> dict[str, Any]:
    """Return `record` at era 4."""
    targets = _targets(record, ctx)
    referenced = isinstance(record.get("default_test"), str)
    out: dict[str, Any] = {}

    def place_targets() -> None:
        if "prompts" not in record and "prompts" not in out:
            out["prompts"] = list(DEFAULT_PROMPTS)
            ctx.default("/prompts", out["prompts"], "each test's input, sent as it is")
        if targets is not None and targets[0] not in out:
            out[targets[0]] = targets[1]

    for key, value in record.items():
        if key == "target":
            place_targets()
        elif key == "execution" and isinstance(value, dict):
            rest = {k: v for k, v in value.items() if k not in ("target", "targets")}
            if targets is not None:
                place_targets()
            if rest:
                out["execution"] = _renamed(rest, "/execution", "/execution", ctx, each=False)
            elif not value:
                ctx.dropped("/execution", "an empty object")
        elif key in ("assertions", "input", "default_test") and not referenced:
            out.setdefault("default_test", None)  # filled in below, in this place
        elif key == "assertions":  # default_test is a file reference: they stay suite checks
            out["assert"] = _renamed(value, "/assertions", "/assert", ctx)
            ctx.renamed("/assertions", "/assert")
        elif key in ("tests", "eval_cases"):
            name = "tests" if key == "tests" or "tests" not in record else key
            if name != key:
                ctx.renamed(f"/{key}", f"/{name}")
            place_targets()
            if isinstance(value, list):
                out[name] = [
                    _test(t, f"/{key}/{i}", f"/{name}/{i}", ctx) for i, t in enumerate(value)
                ]
            else:
                out[name] = clone(value)
        else:
            out[key] = clone(value)
    default = _default_test(record, out, referenced, ctx)
    if default is not None:
        out["default_test"] = default
    elif not referenced:
        out.pop("default_test", None)
    return out


# -- downgrade -----------------------------------------------------------------------------

_LATER_SUITE = (
    "prompts",
    "scenarios",
    "derived_metrics",
    "output_path",
    "env",
    "nunjucks_filters",
    "extensions",
    "graders",
    "defaults",
    "environment",
)
_LATER_TEST = (
    "description",
    "threshold",
    "options",
    "provider",
    "providers",
    "prompts",
    "assert_scoring_function",
    "environment",
    "provider_output",
)


def _provider(value: Any, where: str, ctx: StepContext) -> tuple[str, str] | None:
    """Return the name of one provider (at `where`) and where the name is, or None (lost)."""
    if isinstance(value, dict):
        name = value.get("id")
        if set(value) != {"id"}:
            if not isinstance(name, str) or not name:
                ctx.lose(where, "era 3.1 names a target; this provider has no id")
                return None
            for key in value:
                if key != "id":
                    ctx.lose(at(where, key), "era 3.1 names a target; settings have no place")
        if isinstance(name, str) and name:
            return name, f"{where}/id"
        ctx.lose(where, "era 3.1 names a target; this provider has no id")
        return None
    if isinstance(value, str) and value:
        return value, where
    ctx.lose(where, "era 3.1 names a target; this is no name")
    return None


def _down_execution(value: Any, where: str, ctx: StepContext) -> Any:
    """Return an execution for era 3.1, whose `target` and `targets` are names."""
    if not isinstance(value, dict):
        ctx.lose(where, "era 3.1 takes execution settings as an object")
        return None
    out: dict[str, Any] = {}
    checks = _Checks(f"{where}/assertions", ctx)
    for key, setting in value.items():
        if key == "target" and not isinstance(setting, str):
            ctx.lose(f"{where}/target", "era 3.1 names the target with a string")
        elif key == "targets" and not (
            isinstance(setting, list) and all(isinstance(item, str) for item in setting)
        ):
            ctx.lose(f"{where}/targets", "era 3.1 lists the targets by their names")
        elif key in ("assert", "assertions"):
            out.setdefault("assertions", None)
            checks.add(setting, f"{where}/{key}", key == "assert")
        else:
            out[key] = clone(setting)
    if "assertions" in out:
        checks.put(out)
    return out


class _Checks:
    """The checks of one list of 3.1 `assertions`, gathered from several era-4 places."""

    def __init__(self, to: str, ctx: StepContext) -> None:
        self.to, self.ctx = to, ctx
        self.items: list[Any] = []
        self.here = False
        """Whether an empty list was already where the checks go (and stays)."""

    def put(self, holder: dict[str, Any]) -> None:
        """Put the checks at `assertions` in `holder` (which holds a slot for them), or take
        the slot out when there are none to put."""
        if self.items or self.here:
            holder["assertions"] = self.items
        else:
            del holder["assertions"]

    def add(self, value: Any, where: str, renamed: bool) -> None:
        """Add the checks at `where` (`renamed`: written `assert`, inner ones too)."""
        if not isinstance(value, list):
            self.ctx.lose(where, "era 3.1 takes a list of checks")
            return
        if not value:
            if where == self.to:
                self.here = True
            else:
                self.ctx.dropped(where, "an empty list")
        start = len(self.items)
        for index, item in enumerate(value):
            target = f"{self.to}/{start + index}"
            if renamed:
                item = rename_key(
                    item,
                    "assert",
                    "assertions",
                    nested=True,
                    ctx=self.ctx,
                    source=f"{where}/{index}",
                    target=target,
                )
            else:
                item = clone(item)
            self.items.append(item)
            if f"{where}/{index}" != target:
                self.ctx.moved(f"{where}/{index}", target)


def _down_test(test: Any, where: str, to: str, ctx: StepContext) -> Any:
    if not isinstance(test, dict):
        return clone(test)
    if "include" in test:
        return clone(test)
    if "id" not in test:
        raise MigrationError(
            "agentv.eval",
            f"{TO} -> {FROM}",
            f"{where}: the test has no id, which era 3.1 requires; give it one, or keep the "
            "file at era 4",
        )
    out: dict[str, Any] = {}
    checks = _Checks(f"{to}/assertions", ctx)
    for key, value in test.items():
        at_key = at(where, key)
        if key == "vars" and isinstance(value, dict):
            if not value:
                ctx.dropped(at_key, "an empty object")
            for name, setting in value.items():
                if name in _VARS and name not in test:
                    out[name] = clone(setting)
                    ctx.moved(at(at_key, name), at(to, name), "where era 3.1 reads it")
                else:
                    ctx.lose(at(at_key, name), "era 3.1 has no test variables")
        elif key in ("assert", "assertions"):
            out.setdefault("assertions", None)
            checks.add(value, at_key, key == "assert")
        elif key in _LATER_TEST:
            ctx.lose(at_key, f"era 3.1 tests have no {key}")
        elif key == "execution":
            execution = _down_execution(value, at_key, ctx)
            if execution is not None:
                out[key] = execution
        elif key == "metadata" and isinstance(value, dict):
            rest = {}
            for name, kept in value.items():
                if name in _KEPT_TEST and name not in test:
                    out[name] = clone(kept)
                    ctx.moved(at(at_key, name), at(to, name), "back to its place")
                else:
                    rest[name] = clone(kept)
            if rest or not value:
                out[key] = rest
        else:
            out[key] = clone(value)
    if "assertions" in out:
        checks.put(out)
    return out


def _down_default(value: Any, out: dict[str, Any], checks: _Checks, ctx: StepContext) -> None:
    if not isinstance(value, dict):
        ctx.lose("/default_test", "era 3.1 has no default_test file references")
        return
    if not value:
        ctx.dropped("/default_test", "an empty object")
    kept: dict[str, Any] = {}
    for key, setting in value.items():
        where = f"/default_test/{key}"
        if key in ("assert", "assertions"):
            out.setdefault("assertions", None)
            checks.add(setting, where, key == "assert")
        elif key == "threshold":
            kept[key] = clone(setting)
        elif key == "metadata" and isinstance(setting, dict):
            if not setting:
                ctx.dropped(where, "an empty object")
            for name, item in setting.items():
                if name == "input" and "input" not in out:
                    out["input"] = clone(item)
                    ctx.moved(f"{where}/input", "/input", "the suite's input, back to its place")
                else:
                    ctx.lose(at(where, name), "era 3.1 has no default metadata")
        else:
            ctx.lose(at("/default_test", key), f"era 3.1 has no default {key}")
    if kept:
        out["default_test"] = kept


def downgrade(record: dict[str, Any], ctx: StepContext) -> dict[str, Any]:
    """Return `record` at era 3.1, losing (only with allow-loss) what 3.1 cannot hold."""
    if not any(key in record for key in ("tests", "eval_cases")):
        raise MigrationError(
            "agentv.eval",
            f"{TO} -> {FROM}",
            "/scenarios: the file's tests are all in scenarios, which era 3.1 does not have; "
            "keep the file at era 4",
        )
    out: dict[str, Any] = {}
    checks = _Checks("/assertions", ctx)
    names: list[tuple[str, str]] = []  # each provider's name and where it is
    for key, value in record.items():
        at_key = at("", key)
        if key == "prompts":
            if value != DEFAULT_PROMPTS:
                ctx.lose(
                    "/prompts", "era 3.1 sends each test's input as it is; no prompt templates"
                )
            else:
                ctx.dropped("/prompts", "the default: each test's input as it is")
        elif key in ("providers", "targets"):
            if key == "targets" and isinstance(value, str):
                ctx.lose("/targets", "era 3.1 has no file of targets")
                continue
            items = value if isinstance(value, list) else [value]
            places = (
                [f"/{key}/{i}" for i in range(len(items))] if isinstance(value, list) else [at_key]
            )
            for item, place in zip(items, places, strict=True):
                found = _provider(item, place, ctx)
                if found is not None:
                    names.append(found)
            out.setdefault("\0targets", None)  # where the target goes
        elif key == "default_test":
            _down_default(value, out, checks, ctx)
        elif key == "execution":
            execution = _down_execution(value, "/execution", ctx)
            if execution is not None:
                out["execution"] = execution
        elif key in ("assert", "assertions"):
            out.setdefault("assertions", None)
            checks.add(value, at_key, key == "assert")
        elif key == "tags" and isinstance(value, dict):
            ctx.lose("/tags", "era 3.1 tags are a list")
        elif key in _LATER_SUITE:
            ctx.lose(at_key, f"era 3.1 has no {key}")
        elif key in ("tests", "eval_cases") and isinstance(value, list):
            out[key] = [
                _down_test(t, f"/{key}/{i}", f"/{key}/{i}", ctx) for i, t in enumerate(value)
            ]
        else:
            out[key] = clone(value)
    if "assertions" in out:
        checks.put(out)
    _place_targets(out, record, names, ctx)
    return out


def _place_targets(
    out: dict[str, Any], record: dict[str, Any], names: list[tuple[str, str]], ctx: StepContext
) -> None:
    """Put the providers' names where era 3.1 reads them: one as `target`, several in
    `execution.targets` (after its own), at the place of the first provider list."""
    slot = "\0targets"
    if len(names) == 1 and "target" not in record:
        name, place = names[0]
        _replace(out, slot, "target", name)
        ctx.moved(place, "/target", "the one provider")
        return
    out.pop(slot, None)
    if not names:
        return
    execution = out.setdefault("execution", {})
    if not isinstance(execution, dict):
        for _, place in names:
            ctx.lose(place, "execution is no object, so the providers have no place")
        return
    targets = execution.setdefault("targets", [])
    for name, place in names:
        ctx.moved(place, f"/execution/targets/{len(targets)}")
        targets.append(name)


def _replace(out: dict[str, Any], slot: str, key: str, value: Any) -> None:
    """Put `value` at `key` in the place of `slot` in `out` (changed in place)."""
    items = [(key, value) if k == slot else (k, v) for k, v in out.items()]
    out.clear()
    out.update(items)
