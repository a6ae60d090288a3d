"""Start-up: `import evalreg` and the command line import only what they use.

Each command runs in a fresh interpreter, which lists the modules it imported as it exits:
importing the package loads none of the engine, `--version` none of the
commands, and validating a file nothing of migration, diffs or publishing.
"""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
from pathlib import Path

import pytest

import evalreg

EXAMPLE = next(
    p
    for p in (Path(evalreg.__file__).parent / "examples" / "eee").rglob("*.json")
    if not p.name.endswith("_samples.json")
)


WATCH = """
import atexit, runpy, sys
atexit.register(lambda: sys.stderr.write("\\nMODULES " + " ".join(sorted(sys.modules))))
sys.argv = ["evalreg", *sys.argv[1:]]
if sys.argv[1:] == ["--import"]:
    import evalreg
else:
    runpy.run_module("evalreg", run_name="__main__")
"""


def imported(*args: str) -> tuple[set[str], str]:
    """Return the modules a fresh interpreter has imported once `evalreg ARGS` has run (or just
    `import evalreg`, for `--import`), and its standard output."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    done = subprocess.run(
        [sys.executable, "-c", WATCH, *args], capture_output=True, text=True, env=env, timeout=120
    )
    (listed,) = [line for line in done.stderr.splitlines() if line.startswith("MODULES ")]
    return set(listed.split()[1:]), done.stdout


HEAVY = {"yaml", "jsonschema_rs", "msgspec", "click", "deepdiff", "referencing", "jsonschema"}


def test_importing_the_package_loads_only_the_errors() -> None:
    modules, _ = imported("--import")
    assert {m for m in modules if m.startswith("evalreg")} == {"evalreg", "evalreg.errors"}
    assert not modules & HEAVY
    assert "typing" not in modules  # the standard library's slowest import a package can skip


def test_every_public_name_is_there_when_asked_for() -> None:
    for name in evalreg.__all__:
        assert getattr(evalreg, name) is not None, name
    assert set(evalreg.__all__) <= set(dir(evalreg))
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        evalreg.nothing  # noqa: B018
    from evalreg import Registry, StepContext  # as migration steps import them

    assert Registry.__module__ == "evalreg.engine.registry"
    assert StepContext.__module__ == "evalreg.engine.steps"


def test_the_version_needs_no_command_and_is_the_installed_one() -> None:
    modules, out = imported("--version")
    assert out.strip() == f"evalreg, version {importlib.metadata.version('evalreg')}"
    assert not {m for m in modules if m.startswith(("evalreg.cli.", "evalreg.engine"))} - {
        "evalreg.cli.app"
    }
    assert not modules & (HEAVY - {"click"})


def test_validating_one_file_imports_no_other_command() -> None:
    modules, out = imported("validate", str(EXAMPLE))
    assert "1 valid" in out
    unused = {
        "evalreg.cli.migrating",
        "evalreg.cli.publishing",
        "evalreg.cli.schemas",
        "evalreg.cli.detection",
        "evalreg.engine.migrate",
        "evalreg.engine.steps",
        "evalreg.stepkit",
        "evalreg.io.writers",
        "evalreg.diff",
        "evalreg.publish",
        "deepdiff",
        "referencing",
        "jsonschema",
        "gzip",
    }
    assert not modules & unused
    assert {"evalreg.cli.validating", "jsonschema_rs"} <= modules


def test_the_help_lists_every_command() -> None:
    _, out = imported("--help")
    for command in ("validate", "migrate", "detect", "status", "publish", "diff", "list", "init"):
        assert f"\n  {command} " in out
