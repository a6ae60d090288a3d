"""Standard output that cannot take the report: closed (`>&-`) or on a full disk (`/dev/full`).

Either ends the run with one line on standard error and exit code 2, never a traceback; with
standard output closed, nothing is done at all (a file opened next would take its descriptor).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

DEMO = Path(__file__).parents[2] / "evalreg" / "examples"
FULL = "/dev/full"


def evalreg(args: list[str], redirect: str) -> tuple[int, str]:
    """Run evalreg in a shell with standard output redirected (`>&-`, `>/dev/full`)."""
    command = [sys.executable, "-m", "evalreg", *args]
    done = subprocess.run(
        ["sh", "-c", f'exec "$@" {redirect}', "sh", *command],
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
        check=False,
    )
    return done.returncode, done.stderr


def test_closed_standard_output_does_nothing_and_says_so(tmp_path: Path) -> None:
    code, err = evalreg(
        ["migrate", str(DEMO / "eee"), "--to", "0.2.0", "--out", str(tmp_path / "o")], ">&-"
    )
    assert code == 2 and not (tmp_path / "o").exists()
    assert err == (
        "evalreg: error: standard output is closed: the report would be lost; nothing was done\n"
    )
    code, err = evalreg(["validate", str(DEMO)], ">&-")
    assert code == 2 and len(err.splitlines()) == 1 and "Traceback" not in err


needs_full = pytest.mark.skipif(not os.path.exists(FULL), reason="no /dev/full here")
LOST = (
    "evalreg: error: cannot write to standard output (No space left on device): the run stopped "
    "there; files written before it are complete\n"
)


@needs_full
@pytest.mark.parametrize(
    "args",
    [
        ["validate", str(DEMO)],
        ["validate", str(DEMO), "--format", "json"],
        ["list"],
        ["--help"],
        ["migrate", "--help"],
    ],
    ids=["validate", "validate-json", "list", "help", "migrate-help"],
)
def test_a_full_standard_output_is_one_line_and_exit_2(args: list[str]) -> None:
    code, err = evalreg(args, f">{FULL}")
    assert (code, err) == (2, LOST)


@needs_full
def test_migrate_to_a_full_standard_output_stops_with_complete_files(tmp_path: Path) -> None:
    out = tmp_path / "o"
    code, err = evalreg(
        ["migrate", str(DEMO / "eee"), "--to", "0.2.0", "--out", str(out)], f">{FULL}"
    )
    assert (code, err) == (2, LOST)
    assert not [p for p in out.rglob(".*") if p.is_file()]  # no temporary file left
