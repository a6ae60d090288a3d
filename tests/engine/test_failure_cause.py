"""A failed migration names its cause: the first step whose result went wrong, or the input."""

from __future__ import annotations

from typing import Any

import pytest

import evalreg
from evalreg.engine import migrate as engine_migrate
from tests.conftest import DEMO_MANIFEST, RegistryFactory


def _schema(unit: str = "string") -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["schema_version", "name"],
        "properties": {
            "schema_version": {"type": "string"},
            "name": {"type": "string"},
            "score": {"type": "number"},
            "unit": {"type": unit},
        },
        "additionalProperties": False,
    }


def _step(source: str, target: str, body: str) -> dict[str, str]:
    code = f'''
        """Move a record from {source} to {target}."""
        FROM = "{source}"
        TO = "{target}"

        def upgrade(record, ctx):
            {body}
    '''
    return {f"{source}_to_{target}.py": code}


def demo_registry(make_registry_dir: RegistryFactory, steps: dict[str, str]) -> evalreg.Registry:
    """Return a registry of `demo.score` at versions 1, 2 and 3 (`_schema`) with `steps`."""
    root = make_registry_dir(
        {
            "demo.score": {
                "manifest": DEMO_MANIFEST,
                "schemas": {"1": _schema(), "2": _schema(), "3": _schema()},
                "steps": steps,
            }
        }
    )
    return evalreg.load_registry([root], builtin=False, verify=False)


@pytest.fixture
def demo(make_registry_dir: RegistryFactory) -> evalreg.Registry:
    """1 -> 2 puts a number where 2 wants a text; 2 -> 3 passes it on, or reads it as text."""
    steps = {
        **_step("1", "2", 'ctx.added("/unit", 5); return {**record, "unit": 5}'),
        **_step(
            "2",
            "3",
            'return {**record, "unit": record["unit"].upper()} '
            'if record.get("name") == "read" else dict(record)',
        ),
    }
    return demo_registry(make_registry_dir, steps)


def test_the_step_whose_result_went_wrong_is_named_not_the_last(demo: evalreg.Registry) -> None:
    result = demo.migrate({"schema_version": "1", "name": "x"}, "3")
    assert result.status == "failed" and result.failed_step == "1 -> 2"
    assert (result.error or "").startswith("not valid at 2 after this step: /unit: 5 is not of")
    assert "(then at step 2 -> 3: the result is not valid at 3: /unit: 5" in (result.error or "")
    assert [issue.pointer for issue in result.issues] == ["/unit"]


def test_a_step_that_breaks_on_an_earlier_steps_result_names_that_step(
    demo: evalreg.Registry,
) -> None:
    result = demo.migrate({"schema_version": "1", "name": "read"}, "3")
    assert result.failed_step == "1 -> 2"
    assert "(then at step 2 -> 3: AttributeError: 'int' object has no attribute 'upper')" in (
        result.error or ""
    )


def test_a_record_not_valid_at_its_own_version_is_named_so(demo: evalreg.Registry) -> None:
    result = demo.migrate({"schema_version": "1", "name": "x", "extra": 1}, "3")
    assert result.failed_step == "1 -> 2"
    assert (result.error or "").startswith(
        "the record is not valid at its own version 1 to begin with: /: Additional properties"
    )


def test_the_happy_path_validates_once(
    demo: evalreg.Registry, monkeypatch: pytest.MonkeyPatch, make_registry_dir: RegistryFactory
) -> None:
    calls: list[str] = []
    real = engine_migrate.validator

    def counting(registry: Any, family: str, version: str) -> Any:
        calls.append(version)
        return real(registry, family, version)

    monkeypatch.setattr(engine_migrate, "validator", counting)
    root = make_registry_dir(
        {
            "demo.score": {
                "manifest": DEMO_MANIFEST,
                "schemas": {"1": _schema(), "2": _schema(), "3": _schema()},
                "steps": {
                    **_step("1", "2", "return dict(record)"),
                    **_step("2", "3", "return dict(record)"),
                },
            }
        }
    )
    fine = evalreg.load_registry([root], builtin=False, verify=False)
    assert fine.migrate({"schema_version": "1", "name": "x"}, "3").ok
    assert calls == ["3"]
    calls.clear()
    assert not demo.migrate({"schema_version": "1", "name": "x"}, "3").ok
    assert calls == ["3", "1", "2"]  # the failure alone runs the route again, step by step


def test_validate_each_stops_at_the_same_step(demo: evalreg.Registry) -> None:
    each = demo.migrate({"schema_version": "1", "name": "x"}, "3", validate="each")
    final = demo.migrate({"schema_version": "1", "name": "x"}, "3")
    assert each.failed_step == final.failed_step == "1 -> 2"
    assert (final.error or "").startswith(each.error or "-")
