"""The exercise of steps: each step move run on records generated at its source (`exercise`).

Each generated record valid at the step's source must come out valid at its target, without
the step changing its input; Hypothesis shrinks a failure to the smallest record it fails on.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from evalreg.errors import EvalregError
from evalreg.publish.check.generate import GenerationError, record_strategy
from evalreg.publish.check.report import Finding, Run, Severity

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

    from evalreg.engine.registry import Registry
    from evalreg.engine.steps import Step, StepSet


class _StepFailed(Exception):
    def __init__(self, record: Any, message: str) -> None:
        super().__init__(message)
        self.record = record
        self.message = message


def _exercise(
    registry: Registry,
    move: Step,
    examples: int,
    seed: int | None,
    strategies: dict[tuple[str, str], SearchStrategy[Any]] | None = None,
) -> tuple[list[Finding], int]:
    """Run one step move on generated records; return its findings and how many records ran.

    A record the step refuses with an evalreg error (`MigrationError`, `DataLossError`: "this
    record cannot be migrated, because ...") is a deliberate outcome, not a failure: refusals
    are reported as a note, or as a warning when the step refuses every record.
    """
    import hypothesis
    from hypothesis import HealthCheck, Phase, Verbosity, given, settings
    from hypothesis.errors import Flaky, HypothesisException, Unsatisfiable

    from evalreg.engine.migrate import _set_marker
    from evalreg.engine.steps import StepContext

    family, source, target = move.module.family, move.source, move.target
    path = str(move.module.path)
    label = f"{'step' if move.direction == 'up' else 'downgrade'} {move.name}"

    def finding(severity: Severity, message: str, example: Any = None) -> Finding:
        return Finding(severity, "exercise", message, family, target, path, example)

    cache = {} if strategies is None else strategies
    try:
        if (family, source) not in cache:
            cache[family, source] = record_strategy(registry, family, source)
        strategy = cache[family, source]
    except GenerationError as err:
        return [finding("warning", f"{label} not exercised: cannot generate records: {err}")], 0
    source_validator = registry.validator(family, source)
    target_validator = registry.validator(family, target)
    params = {p.name: p.default for p in move.module.params}
    ran: list[int] = [0]
    refusals: list[str] = []

    def run(generated: Any) -> None:
        record = _set_marker(registry, family, generated, generated, source)
        if not source_validator.is_valid(record):
            record = generated
        if not source_validator.is_valid(record):
            hypothesis.reject()
        before = copy.deepcopy(record)
        ctx = StepContext(params, allow_loss=True, step=move.name)
        ran[0] += 1
        try:
            result = move.function(record, ctx)
        except EvalregError as err:
            refusals.append(f"{type(err).__name__}: {err}")
            return
        except Exception as err:  # a step is user code: any other failure is a finding
            raise _StepFailed(record, f"raised {type(err).__name__}: {err}") from err
        if record != before:
            raise _StepFailed(before, "changed its input record (copy what you change)")
        if not isinstance(result, dict):
            raise _StepFailed(record, f"returned {type(result).__name__}, not an object")
        result = _set_marker(registry, family, result, record, target)
        issues = target_validator.issues(result)
        if issues:
            more = f" (and {len(issues) - 1} more)" if len(issues) > 1 else ""
            raise _StepFailed(record, f"made a record not valid at {target}: {issues[0]}{more}")

    configured = settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=seed is None,
        verbosity=Verbosity.quiet,
        report_multiple_bugs=False,
        suppress_health_check=list(HealthCheck),
        phases=(Phase.explicit, Phase.generate, Phase.shrink),
    )
    test = given(strategy)(run)
    if seed is not None:
        test = hypothesis.seed(seed)(test)
    found: list[Finding] = []
    try:
        configured(test)()
    except _StepFailed as failed:
        message = (
            f"{label} ({path}) fails on a record valid at {source}: it {failed.message}; "
            "the smallest such record is shown"
        )
        found.append(finding("error", message, failed.record))
    except Unsatisfiable:
        message = f"{label} not exercised: no record generated at {source} was valid there"
        found.append(finding("warning", message))
    except Flaky as err:
        message = f"{label} fails only sometimes on the same record: {_first_line(err)}"
        found.append(finding("error", message))
    except HypothesisException as err:
        found.append(finding("warning", f"{label} not exercised: {_first_line(err)}"))
    except Exception as err:  # generating from an unusual schema can fail in many ways
        message = f"{label} not exercised: cannot generate records at {source}: "
        found.append(finding("warning", message + _first_line(err)))
    if refusals:
        every = len(refusals) >= ran[0]
        share = f"every one of the {len(refusals)}" if every else f"{len(refusals)} of the {ran[0]}"
        message = (
            f"{label} refused {share} generated records valid at {source}"
            f"{' (so it is not exercised)' if every else ''}, e.g. {refusals[0]}"
        )
        found.append(finding("warning" if every else "note", message))
    return found, ran[0]


def _first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0] if text else ''}"


def exercise_steps(run: Run, family: str, steps: StepSet) -> None:
    """Run every step move of a family on generated records, unless no examples are asked for."""
    if run.examples <= 0 or not steps.modules:
        return
    if not run.generation_available:
        return
    try:
        import hypothesis  # noqa: F401
        import hypothesis_jsonschema  # noqa: F401
    except ImportError:
        run.generation_available = False
        run.add(
            "error",
            "exercise",
            "steps cannot be exercised: hypothesis and hypothesis-jsonschema, which evalreg "
            "depends on, are not installed (reinstall evalreg with pip to get them)",
        )
        return
    for move in steps.moves():
        found, count = _exercise(run.registry, move, run.examples, run.seed, run.strategies)
        run.steps += 1
        run.records += count
        run.findings += found
