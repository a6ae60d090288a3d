"""Under a memory cap, a line too large to read is an error naming its file and line, not a crash.

A JSONL file with one 200 MB line under `prlimit --as=2GiB` is the case at full size; here the
same happens small: the size above which documents are read without writing them again
(`codec.LARGE_BYTES`) is lowered to 1 MB, the line is about 4 MB of numbers, and the address
space of the process is capped at what it uses once started plus a budget, from too little to
read the line at all to enough to read it and more.
"""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

CAPPED = """
import resource, sys
from evalreg.io import codec
codec.LARGE_BYTES = 1 << 20
from evalreg.cli import main
with open("/proc/self/statm") as statm:
    used = int(statm.read().split()[0]) * resource.getpagesize()
limit = used + (int(sys.argv[1]) << 20)
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
main(sys.argv[2:])
"""

BUDGETS_MB = (12, 18, 24, 32, 48, 96)


@pytest.fixture(scope="module")
def large_line(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rng = random.Random(7)
    record = {
        "schema_version": "0.2.0",
        "sample_id": "s",
        "scores": [rng.random() for _ in range(200_000)],
    }
    path = tmp_path_factory.mktemp("capped") / "large.jsonl"
    path.write_bytes(b'{"schema_version": "0.2.0"}\n' + orjson.dumps(record) + b"\n")
    return path


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="needs /proc (Linux)")
@pytest.mark.parametrize("command", ["detect", "validate"])
def test_a_line_too_large_for_the_memory_left_is_never_a_crash(
    large_line: Path, command: str
) -> None:
    outcomes = set()
    for budget in BUDGETS_MB:
        done = subprocess.run(
            [sys.executable, "-c", CAPPED, str(budget), command, str(large_line)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode >= 0, f"killed by signal {-done.returncode} with {budget} MB"
        assert done.returncode in (0, 1, 3), (budget, done.returncode, done.stderr)
        assert len(done.stderr.splitlines()) <= 1, done.stderr  # the summary, or one error
        shown = done.stdout + done.stderr
        if "do not fit in the memory available" in shown:
            (line,) = [x for x in shown.splitlines() if "do not fit" in x]
            assert line.startswith(f"{large_line}:2: ")  # the file and the line
            outcomes.add("refused")
        elif done.returncode in (0, 1) and "2 records" in shown:
            assert "0 unreadable" in shown
            outcomes.add("read")
    assert "read" in outcomes  # the budgets reach one where the line is read
