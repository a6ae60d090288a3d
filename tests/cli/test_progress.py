"""The progress display: on standard error when forced or on a terminal, never in a pipe."""

from __future__ import annotations

import io
import os
import pty
import re
import select
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

import pytest

from evalreg.cli import main
from evalreg.cli import progress as progress_module
from evalreg.cli.progress import Progress, wanted

DEMO = Path(__file__).parents[2] / "evalreg" / "examples"


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def plain(text: str) -> str:
    """Return `text` without terminal control sequences."""
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as info:
        main(list(args))
    out, err = capsys.readouterr()
    return int(info.value.code or 0), out, err


@pytest.mark.parametrize("command", ["detect", "validate", "status"])
def test_forced_progress_shows_on_standard_error(
    capsys: pytest.CaptureFixture[str], command: str
) -> None:
    _code, out, err = run(capsys, command, str(DEMO), "--progress")
    err = plain(err)
    assert f"{command} " in err and "17/17 files" in err and "22 records" in err
    assert "records/s" in err
    assert "\x1b[" not in out and "records/s" not in out
    _, without, _ = run(capsys, command, str(DEMO), "--no-progress")
    assert out == without


def test_forced_progress_of_a_migration(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _out, err = run(
        capsys, "migrate", str(DEMO / "eee"), "--to", "0.2.0", "--out", str(tmp_path), "--progress"
    )
    assert code == 0
    err = plain(err)
    assert "migrate " in err and "3/3 files" in err and "4 records" in err
    # The display is gone before the summary line.
    assert (
        err.rstrip()
        .splitlines()[-1]
        .strip("\r")
        .startswith(
            "3 files: 3 written, 0 unchanged, 0 failed; records: 1 migrated, 3 current, 0 failed"
        )
    )


def test_nothing_in_a_pipe() -> None:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    done = subprocess.run(
        [sys.executable, "-m", "evalreg", "validate", str(DEMO)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 1
    assert "\x1b" not in done.stderr + done.stdout
    assert "records/s" not in done.stderr
    assert done.stdout.strip().endswith("21 valid, 1 invalid, 0 unreadable")


def test_when_progress_may_show(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.setattr(sys, "stderr", _Terminal())
    assert wanted(None)
    assert not wanted(False)
    monkeypatch.setenv("CI", "true")
    assert not wanted(None)
    assert wanted(True)
    monkeypatch.delenv("CI")
    monkeypatch.setenv("TERM", "dumb")
    assert not wanted(None)
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    monkeypatch.setenv("TERM", "xterm")
    assert not wanted(None)


def test_a_run_that_shows_no_progress_is_not_wrapped() -> None:
    items = [("a", 1)]
    assert Progress("x", list, forced=False).wrap(items, lambda item: item) is items


def test_the_display_waits_for_a_long_run(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = iter([0.0, 0.5, 0.9, 1.5, 1.6, 2.0, 2.5, 3.0, 3.5, 4.0])
    monkeypatch.setattr(progress_module.time, "monotonic", lambda: next(clock))
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.setattr(sys, "stderr", _Terminal())
    shown = Progress("validate", lambda: [10, 10, 10])
    assert shown.enabled and shown.delay == progress_module.DELAY
    counted = iter(shown.wrap(["a", "b", "c"], lambda path: (path, 5)))
    next(counted)  # 0.5 s: nothing yet
    assert shown.task is None
    next(counted)  # 0.9 s: still nothing
    assert shown.task is None
    next(counted)  # 1.5 s: the display shows, file c begun, a and b done
    assert shown.task is not None
    assert shown.task.completed == 20 and shown.task.total == 30
    assert shown.task.fields["files"] == "3/3" and shown.task.fields["records"] == "15"
    assert list(counted) == []
    assert shown.task is None


@pytest.fixture
def terminal() -> Iterator[tuple[IO[str], Callable[..., str]]]:
    """A pseudo-terminal: a stream writing to it, and all it has shown so far."""
    main_fd, shown_fd = pty.openpty()
    stream = os.fdopen(shown_fd, "w", buffering=1)
    received: list[bytes] = []

    def read(wait: float = 0.05) -> str:
        """Return all shown so far, after `wait` seconds with nothing more to read."""
        stream.flush()
        while select.select([main_fd], [], [], wait)[0]:
            received.append(os.read(main_fd, 65536))
        return b"".join(received).decode()

    yield stream, read
    stream.close()
    os.close(main_fd)


def test_lines_printed_on_the_terminal_go_above_the_display(
    monkeypatch: pytest.MonkeyPatch, terminal: tuple[IO[str], Callable[..., str]]
) -> None:
    """Standard output and error on the display's terminal: printed through its console."""
    stream, read = terminal
    error = os.fdopen(os.dup(stream.fileno()), "w", buffering=1)  # the same terminal
    with error:
        _print_under_the_display(monkeypatch, stream, error, read)


def _print_under_the_display(
    monkeypatch: pytest.MonkeyPatch, stream: IO[str], error: IO[str], read: Callable[..., str]
) -> None:
    monkeypatch.setattr(sys, "stdout", stream)
    monkeypatch.setattr(sys, "stderr", error)
    shown = Progress("detect", lambda: [1] * 50, forced=True)
    for index in shown.wrap(range(50), lambda i: (f"file{i}", 1)):
        print(f"line {index}")
        if index % 10 == 5:
            print(f"warning {index}", file=sys.stderr)
        if index == 10:
            assert sys.stdout is not stream and sys.stderr is not error  # held while it shows
        read(0.005)  # as the run goes: a terminal's buffer is small (the last read waits)
    assert sys.stdout is stream and sys.stderr is error
    seen = plain(read())
    lines = seen.replace("\r", "\n").split("\n")
    printed = [line for line in lines if line.startswith(("line", "warning"))]
    expected = [f"line {i}" for i in range(50)]
    for index in (45, 35, 25, 15, 5):
        expected.insert(index + 1, f"warning {index}")
    assert printed == expected
    assert "50/50 files" in seen


def test_standard_output_elsewhere_is_left_alone(
    monkeypatch: pytest.MonkeyPatch, terminal: tuple[IO[str], Callable[..., str]]
) -> None:
    """Output to a file or another terminal never shows the display: it is written as it comes."""
    stream, read = terminal
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", stream)
    shown = Progress("detect", lambda: [1] * 20, forced=True)
    for index in shown.wrap(range(20), lambda i: (f"file{i}", 1)):
        print(f"line {index}")
        assert sys.stdout is out
        assert out.getvalue().endswith(f"line {index}\n")
        read(0.005)
    assert out.getvalue() == "".join(f"line {i}\n" for i in range(20))
    assert "line" not in plain(read())
