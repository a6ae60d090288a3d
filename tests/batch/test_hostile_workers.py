"""Workers of a `--jobs` pool that die: the run says what they held, goes on, and exits non-zero.

A worker killed by a signal (the out-of-memory killer sends SIGKILL), ended by `os._exit()`, or
that ignores SIGTERM, never hangs the run: the unit it was working on is reported with the
reason, the others are handed to a new worker, the files it was writing are removed, and
SIGTERM ends the whole run promptly.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evalreg.batch import migrate, parallel
from evalreg.cli import main
from tests.conftest import RegistryFactory

MANIFEST = "name: acme.run\ntitle: Acme runs\nkind: json\nmarkers:\n  - pointer: /v\n"
SCHEMAS = {v: {"type": "object"} for v in ("1.0", "2.0")}
STEP = (
    '"""Copy the record; misbehave on the record numbered {n}."""\n\n'
    "import os\nimport signal\nimport sys\nimport time\n\n"
    'FROM = "1.0"\nTO = "2.0"\n\n\n'
    "def upgrade(record, ctx):\n"
    "    if record.get('n') == {n}:\n"
    "        {body}\n"
    "    return dict(record, v='2.0')\n"
)
RULE = (
    '"""Misbehave on the record numbered {n}."""\n\nimport os\n\nID = "acme.odd"\n\n\n'
    "def check(record, ctx):\n"
    "    if record.get('n') == {n}:\n"
    "        {body}\n"
)
KILL = "os.kill(os.getpid(), signal.SIGKILL)"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as info:
        main(list(args))
    out, err = capsys.readouterr()
    return int(info.value.code or 0), out, err


@pytest.fixture
def small_units(monkeypatch: pytest.MonkeyPatch) -> None:
    """Use a pool for any input; cut JSONL files into ranges of about 2,000 bytes."""
    monkeypatch.setattr(parallel, "POOL_MIN_BYTES", 0)
    monkeypatch.setattr(parallel, "RANGE_MIN_BYTES", 2000)
    monkeypatch.setattr(parallel, "RANGE_MAX_BYTES", 2000)
    monkeypatch.setattr(migrate, "RANGE_OUT_BYTES", 2000)
    monkeypatch.setattr(parallel, "UNIT_FILES", 1)


def lines(path: Path, count: int, first: int = 0) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = [json.dumps({"v": "1.0", "n": first + i, "pad": "x" * 40}) for i in range(count)]
    path.write_text("\n".join(rows) + "\n")
    return path


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """A large JSONL file (records 0-499, cut into ranges) and five small ones (1000-1049)."""
    root = tmp_path / "in"
    lines(root / "big.jsonl", 500)
    for index in range(5):
        lines(root / "small" / f"s{index}.jsonl", 10, 1000 + 10 * index)
    return root


def leftovers(root: Path) -> list[Path]:
    return [p for p in root.rglob(".*") if p.is_file()]


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        pytest.param(KILL, "killed by signal 9 (SIGKILL; out of memory?)", id="sigkill"),
        pytest.param("os._exit(3)", "exited with code 3", id="exit", marks=pytest.mark.slow),
        pytest.param(
            "os.kill(os.getpid(), signal.SIGUSR1)",
            "killed by signal 10 (SIGUSR1)",
            id="sigusr1",
            marks=pytest.mark.slow,
        ),
    ],
)
def test_a_worker_that_dies_in_a_range_fails_its_file_and_the_run_goes_on(
    small_units: None,
    make_registry_dir: RegistryFactory,
    data: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    body: str,
    reason: str,
) -> None:
    step = STEP.format(n=250, body=body)
    root = make_registry_dir(
        {"acme.run": {"manifest": MANIFEST, "schemas": SCHEMAS, "steps": {"1.0_to_2.0.py": step}}}
    )
    out = tmp_path / "out"
    args = (
        "--registry",
        str(root),
        "migrate",
        str(data),
        "--to",
        "2.0",
        "--out",
        str(out),
        "--jobs",
        "2",
    )
    started = time.monotonic()
    code, stdout, err = run(capsys, *args)
    assert time.monotonic() - started < 60
    assert code == 1
    lost = [line for line in stdout.splitlines() if "not migrated" in line]
    assert len(lost) == 1 and reason in lost[0]
    where, _, message = lost[0].partition(": failed: ")
    first = int(where.rsplit(":", 1)[1])  # the range's first line, in the whole file
    assert 1 < first <= 251 and message.split(" lines from here")[0].isdigit()
    assert f"{data / 'big.jsonl'}: failed: " in stdout
    assert not (out / "big.jsonl").exists()
    assert sorted(p.name for p in (out / "small").iterdir()) == [f"s{i}.jsonl" for i in range(5)]
    assert err.strip().startswith("6 files: 5 written, 0 unchanged, 1 failed; records: ")
    assert not leftovers(out)


def test_sys_exit_in_a_step_in_a_worker_fails_its_record_only(
    small_units: None,
    make_registry_dir: RegistryFactory,
    data: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    step = STEP.format(n=250, body="sys.exit(0)")
    parts = {"manifest": MANIFEST, "schemas": SCHEMAS, "steps": {"1.0_to_2.0.py": step}}
    root = make_registry_dir({"acme.run": parts})
    out = tmp_path / "out"
    args = ("--registry", str(root), "migrate", str(data), "--to", "2.0", "--out", str(out))
    code, stdout, err = run(capsys, *args, "--jobs", "2")
    assert code == 1
    assert f"{data / 'big.jsonl'}:251: failed at step 1.0 -> 2.0: SystemExit: 0" in stdout
    assert err.strip().endswith("records: 549 migrated, 0 current, 1 failed")


def test_a_worker_killed_while_writing_a_whole_file_leaves_nothing(
    small_units: None,
    make_registry_dir: RegistryFactory,
    data: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    step = STEP.format(n=1025, body=KILL)  # the sixth record of s2.jsonl, written as it goes
    root = make_registry_dir(
        {"acme.run": {"manifest": MANIFEST, "schemas": SCHEMAS, "steps": {"1.0_to_2.0.py": step}}}
    )
    out = tmp_path / "out"
    code, stdout, err = run(
        capsys,
        "--registry",
        str(root),
        "migrate",
        str(data),
        "--to",
        "2.0",
        "--out",
        str(out),
        "-j",
        "2",
    )
    assert code == 1
    failed = f"{data / 'small' / 's2.jsonl'}: failed: 0 migrated, 0 current, 0 failed"
    assert f"{failed} (left as it was: worker process " in stdout
    assert "killed by signal 9 (SIGKILL; out of memory?) while migrating it)" in stdout
    assert sorted(p.name for p in (out / "small").iterdir()) == [
        "s0.jsonl",
        "s1.jsonl",
        "s3.jsonl",
        "s4.jsonl",
    ]
    assert (out / "big.jsonl").exists() and not leftovers(out)
    assert "records: 550 migrated" not in err and "1 failed;" in err


def test_validate_reports_what_a_dead_worker_did_not_check(
    small_units: None,
    make_registry_dir: RegistryFactory,
    data: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    rule = RULE.format(n=1042, body="os.kill(os.getpid(), 9)")
    root = make_registry_dir(
        {"acme.run": {"manifest": MANIFEST, "schemas": SCHEMAS, "rules": {"odd.py": rule}}}
    )
    code, stdout, _ = run(capsys, "--registry", str(root), "validate", str(data), "--jobs", "2")
    assert code == 1
    assert f"{data / 'small' / 's4.jsonl'}: not checked: worker process " in stdout
    assert "killed by signal 9" in stdout
    assert stdout.strip().splitlines()[-1].startswith("6 files, ")


def test_workers_that_die_as_they_start_stop_the_run_with_one_line(
    small_units: None,
    data: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(parallel, "START_METHOD", "fork")
    monkeypatch.setattr(parallel, "_start_worker", lambda directories: os._exit(7))
    code, stdout, err = run(capsys, "validate", str(data), "--jobs", "2")
    assert code == 2 and stdout == ""
    assert err.startswith("evalreg: error: worker processes die as they start (worker process ")
    assert err.endswith("exited with code 7); try --jobs 1\n")


STUBBORN = (
    "signal.signal(signal.SIGTERM, signal.SIG_IGN); signal.signal(signal.SIGINT, signal.SIG_IGN); "
    "time.sleep(600)"
)


@pytest.mark.parametrize("who", ["worker", pytest.param("group", marks=pytest.mark.slow)])
def test_sigterm_ends_a_run_promptly_whatever_its_workers_do(
    make_registry_dir: RegistryFactory, data: Path, tmp_path: Path, who: str
) -> None:
    """Workers that ignore SIGTERM and sleep: the run still ends within seconds of SIGTERM."""
    stuck = tmp_path / "stuck"  # made by the worker as it starts ignoring SIGTERM
    step = STEP.format(n=1025, body=f"open({str(stuck)!r}, 'w').close(); {STUBBORN}")
    root = make_registry_dir(
        {"acme.run": {"manifest": MANIFEST, "schemas": SCHEMAS, "steps": {"1.0_to_2.0.py": step}}}
    )
    code = (
        "import sys; from evalreg.batch import parallel, migrate; "
        "parallel.POOL_MIN_BYTES = 0; parallel.UNIT_FILES = 1; "
        "from evalreg.cli import main; main(sys.argv[1:])"
    )
    args = [
        "--registry",
        str(root),
        "migrate",
        str(data),
        "--to",
        "2.0",
        "--out",
        str(tmp_path / "o"),
        "-j",
        "2",
    ]
    child = subprocess.Popen(
        [sys.executable, "-c", code, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not stuck.exists():
            assert time.monotonic() < deadline and child.poll() is None
            time.sleep(0.1)
        time.sleep(0.5)
        stopped = time.monotonic()
        if who == "worker":  # else the process group: as a terminal or a job runner would
            child.send_signal(signal.SIGTERM)
        else:
            os.killpg(child.pid, signal.SIGTERM)
        _, err = child.communicate(timeout=30)
        assert time.monotonic() - stopped < 10
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
    assert child.returncode == 143
    assert err.strip().splitlines()[-1] == (
        "evalreg: stopped by SIGTERM; files being written were left as they were"
    )
    assert not leftovers(tmp_path / "o")


@pytest.mark.slow
def test_the_reliability_benchmark_of_hostile_cases_passes_at_a_small_scale(tmp_path: Path) -> None:
    script = Path(__file__).parents[2] / "benchmarks" / "reliability_hostile.py"
    done = subprocess.run(
        [sys.executable, str(script), "--scale", "0.02", "--tries", "2", "--dir", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("PASS") == 8 and "FAIL" not in done.stdout


def test_a_worker_never_runs_the_parents_sigterm_handler(tmp_path: Path) -> None:
    """SIGTERM to a worker that has just started ends it: it must not go on as a copy of the
    run (the run's handler raises in the main thread, and the copy would clean up and report)."""
    mark = tmp_path / "handled"
    code = f"""
import multiprocessing, os, signal, sys, time
from evalreg.batch.pool import _Worker

def handler(signum, frame):
    open({str(mark)!r}, "a").write(f"{{os.getpid()}}\\n")
    raise SystemExit(0)

signal.signal(signal.SIGTERM, handler)
worker = _Worker(multiprocessing.get_context("fork"), time.sleep, (5,))
os.kill(worker.process.pid, signal.SIGTERM)
worker.process.join(10)
print(worker.process.exitcode)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "-15", done.stdout + done.stderr
    assert not mark.exists()
