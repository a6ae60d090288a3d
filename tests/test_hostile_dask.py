"""Dask clusters that fail a run: no workers, a scheduler that dies, a worker killed mid-write.

Each is one line and a non-zero exit (never a wait for ever, never a traceback), and the files a
killed worker was writing are removed by the run that made them.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("distributed", reason="the dask extra is not installed")

from .conftest import RegistryFactory

DASK = Path(sys.executable).with_name("dask")
MANIFEST = "name: acme.run\ntitle: Acme runs\nkind: json\nmarkers:\n  - pointer: /v\n"
SCHEMAS = {v: {"type": "object"} for v in ("1.0", "2.0")}
STEP = (
    '"""Copy the record; misbehave on the record numbered 5 of file f3."""\n\n'
    "import os\nimport pathlib\nimport time\n\n"
    'FROM = "1.0"\nTO = "2.0"\n\n\n'
    "def upgrade(record, ctx):\n"
    "    if record.get('n') == 5 and record.get('f') == 3:\n"
    "        {body}\n"
    "    return dict(record, v='2.0')\n"
)
# The first worker to reach it dies; Dask computes the unit again on another, which goes on.
DIE_ONCE = (
    "mark = pathlib.Path({mark!r})\n"
    "        if not mark.exists():\n"
    "            mark.touch()\n"
    "            os.kill(os.getpid(), 9)"
)
pytestmark = pytest.mark.cluster


class Cluster:
    """A scheduler (and `workers` workers) started as processes on 127.0.0.1."""

    def __init__(self, folder: Path, workers: int) -> None:
        self.folder = folder
        self.file = folder / "scheduler.json"
        self.log = (folder / "cluster.log").open("wb")
        common = ["--no-dashboard", "--scheduler-file", str(self.file)]
        self.scheduler = self._start("scheduler", "--host", "127.0.0.1", "--port", "0", *common)
        deadline = time.monotonic() + 60
        while not self.file.exists() or not self.file.read_text().strip():
            assert time.monotonic() < deadline, "the scheduler did not start"
            time.sleep(0.2)
        self.address = json.loads(self.file.read_text())["address"]
        self.workers = [
            self._start("worker", "--nthreads", "1", "--host", "127.0.0.1", *common)
            for _ in range(workers)
        ]
        if workers:
            import distributed

            with distributed.Client(self.address, timeout=60) as client:
                client.wait_for_workers(workers, timeout=60)

    def _start(self, *args: str) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [str(DASK), *args], stdout=self.log, stderr=self.log, cwd=self.folder
        )

    def stop(self) -> None:
        for process in [*self.workers, self.scheduler]:
            if process.poll() is None:
                process.kill()
            process.wait()
        self.log.close()


@pytest.fixture
def cluster(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Cluster]:
    started = Cluster(tmp_path, getattr(request, "param", 2))
    try:
        yield started
    finally:
        started.stop()


def evalreg(
    *args: str, env: dict[str, str] | None = None, prelude: str = ""
) -> subprocess.Popen[str]:
    code = f"import sys; {prelude}; from evalreg.cli import main; main(sys.argv[1:])"
    return subprocess.Popen(
        [sys.executable, "-c", code, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )


def data(root: Path) -> Path:
    for f in range(6):
        rows = [json.dumps({"v": "1.0", "f": f, "n": n}) for n in range(10)]
        (root / "in" / f"f{f}.jsonl").parent.mkdir(parents=True, exist_ok=True)
        (root / "in" / f"f{f}.jsonl").write_text("\n".join(rows) + "\n")
    return root / "in"


@pytest.mark.parametrize("cluster", [0], indirect=True)
def test_a_scheduler_without_workers_is_one_line_and_exit_1(
    cluster: Cluster, tmp_path: Path
) -> None:
    started = time.monotonic()
    child = evalreg(
        "validate",
        str(data(tmp_path)),
        "--scheduler",
        cluster.address,
        prelude="import evalreg.dask as ed; ed.WORKER_WAIT = 2",
    )
    out, err = child.communicate(timeout=120)
    assert time.monotonic() - started < 60
    assert child.returncode == 1 and out == ""
    assert err == (
        f"evalreg: error: the Dask scheduler {cluster.address!r} has no workers: no worker "
        "joined it within 2 s; start some\n"
    )


def test_a_scheduler_lost_mid_run_is_one_line_saying_what_is_done(
    cluster: Cluster, make_registry_dir: RegistryFactory, tmp_path: Path
) -> None:
    step = STEP.format(body="time.sleep(600)")
    root = make_registry_dir(
        {"acme.run": {"manifest": MANIFEST, "schemas": SCHEMAS, "steps": {"1.0_to_2.0.py": step}}}
    )
    out = tmp_path / "out"
    child = evalreg(
        "--registry",
        str(root),
        "migrate",
        str(data(tmp_path)),
        "--to",
        "2.0",
        "--out",
        str(out),
        "--scheduler",
        cluster.address,
        prelude="from evalreg.batch import parallel; parallel.UNIT_FILES = 1",
    )
    try:
        deadline = time.monotonic() + 120
        while not (out / "f2.jsonl").exists():
            assert time.monotonic() < deadline and child.poll() is None
            time.sleep(0.2)
        time.sleep(1)
        cluster.scheduler.send_signal(signal.SIGKILL)
        stdout, err = child.communicate(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 1
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    assert err.startswith(f"evalreg: error: lost the Dask scheduler {cluster.address!r} (")
    assert "the files reported above are done" in err
    assert f"{tmp_path / 'in' / 'f2.jsonl'}: written" in stdout
    assert "f3.jsonl: written" not in stdout


def test_a_worker_killed_while_writing_leaves_no_file_behind(
    cluster: Cluster, make_registry_dir: RegistryFactory, tmp_path: Path
) -> None:
    step = STEP.format(body=DIE_ONCE.format(mark=str(tmp_path / "died")))
    root = make_registry_dir(
        {"acme.run": {"manifest": MANIFEST, "schemas": SCHEMAS, "steps": {"1.0_to_2.0.py": step}}}
    )
    out = tmp_path / "out"
    child = evalreg(
        "--registry",
        str(root),
        "migrate",
        str(data(tmp_path)),
        "--to",
        "2.0",
        "--out",
        str(out),
        "--scheduler",
        cluster.address,
        prelude="from evalreg.batch import parallel; parallel.UNIT_FILES = 1",
    )
    _, err = child.communicate(timeout=300)
    assert (tmp_path / "died").exists()  # a worker did die, writing f3.jsonl
    assert child.returncode == 0, err
    assert err.strip().endswith(
        "6 files: 6 written, 0 unchanged, 0 failed; records: 60 migrated, 0 current, 0 failed"
    )
    assert sorted(p.name for p in out.iterdir()) == [f"f{f}.jsonl" for f in range(6)]
