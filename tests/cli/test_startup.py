"""Start-up: `import evalreg` and the command line import only what they use.

Each command runs in a fresh interpreter, which lists the modules it imported as it exits:
importing the package loads none of the engine, `--version` none of the
commands, and validating a file nothing of migration, diffs or publishing.
"""

from __future__ import annotations

import importlib.metadata
import io
import json
import os
import subprocess
import sys
from collections.abc import Callable
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


class _Ended(Exception):
    """Raised in place of `os._exit`, with its code."""


def _program(
    monkeypatch: pytest.MonkeyPatch,
    run: Callable[[], None],
    callbacks: int | None = 0,
    threads: int = 1,
) -> tuple[str, int | str | None]:
    """Run `program` with `run` as `main`, as if `callbacks` exit handlers were registered (None:
    an interpreter that cannot say) and `threads` threads ran; return how it ended ("ended" at
    once, or "exited" through `SystemExit`) and the code."""
    from evalreg.cli import app

    def ended(code: int) -> None:
        raise _Ended(code)

    monkeypatch.setattr(app, "main", run)
    monkeypatch.setattr(app.os, "_exit", ended)
    if callbacks is None:
        monkeypatch.delattr(app.atexit, "_ncallbacks")
    else:
        monkeypatch.setattr(app.atexit, "_ncallbacks", lambda: callbacks)
    monkeypatch.setattr(app.threading, "active_count", lambda: threads)
    try:
        app.program()
    except _Ended as err:
        return "ended", err.args[0]
    except SystemExit as err:
        return "exited", err.code
    raise AssertionError("program returned")


def _report(code: int | str | None) -> Callable[[], None]:
    def run() -> None:
        sys.stdout.write("the report\n")  # left in the buffer: `program` must flush it
        sys.exit(code)

    return run


def test_the_program_ends_at_once_with_the_code_and_the_output_flushed(
    monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    assert _program(monkeypatch, _report(1)) == ("ended", 1)
    assert capfd.readouterr().out == "the report\n"
    assert _program(monkeypatch, _report(None)) == ("ended", 0)


def test_the_program_exits_as_usual_when_something_is_left_to_finish(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # An exit handler registered (multiprocessing, logging, coverage register theirs):
    assert _program(monkeypatch, _report(2), callbacks=1) == ("exited", 2)
    # A message for an exit code, which Python prints:
    assert _program(monkeypatch, _report("bye")) == ("exited", "bye")
    # Another thread still running, which Python waits for:
    assert _program(monkeypatch, _report(0), threads=2) == ("exited", 0)
    # An interpreter that cannot say how many exit handlers wait:
    assert _program(monkeypatch, _report(0), callbacks=None) == ("exited", 0)


def test_the_program_exits_as_usual_when_standard_output_cannot_be_flushed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Full(io.StringIO):
        def flush(self) -> None:
            raise OSError(28, "No space left on device")

    monkeypatch.setattr(sys, "stdout", Full())
    assert _program(monkeypatch, _report(0)) == ("exited", 0)


def test_a_long_report_reaches_a_pipe_whole_before_the_process_ends(tmp_path: Path) -> None:
    """The process ends without Python's own flush at exit: every byte of a report larger than
    any buffer still reaches the reader, and the exit code is the run's."""
    for index in range(400):
        (tmp_path / f"run-{index:03}.json").write_text('{"schema_version": "9.9.9"}')
    env = {k: v for k, v in os.environ.items() if k != "COVERAGE_PROCESS_START"}
    done = subprocess.run(
        [sys.executable, "-m", "evalreg", "validate", "--format", "json", str(tmp_path)],
        capture_output=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 401  # one problem per file, then the summary
    assert all(json.loads(line) for line in lines)
    assert len(done.stdout) > 1 << 16
