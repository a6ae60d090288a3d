"""evalreg on Dask: a real cluster (a scheduler and two workers, processes on 127.0.0.1) gives
the output of one process, byte for byte; bags of records keep their files and lines."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("distributed", reason="the dask extra is not installed")

import dask

import evalreg.dask as ed
from evalreg import Registry
from evalreg.batch.check import check_paths
from evalreg.cli import main
from evalreg.errors import ClusterError
from evalreg.io.readers import read_items

from .conftest import EXAMPLES

DEMO = Path(__file__).parent.parent / "evalreg" / "examples"
INSTANCE = next((EXAMPLES / "eee.instance" / "valid").glob("*.jsonl"))
AGGREGATES = sorted((EXAMPLES / "eee.aggregate" / "valid").glob("*.json"))
DASK = Path(sys.executable).with_name("dask")


def _lines(count: int) -> bytes:
    """Instance lines: invalid ones, blank ones, unreadable ones, and a last line cut short."""
    records = [json.loads(x) for x in INSTANCE.read_text().splitlines() if x.strip()]
    lines = []
    for index in range(count):
        record = dict(records[index % len(records)], sample_id=f"s{index}")
        if index % 997 == 3:
            record["interaction_type"] = "chat"
        lines.append(json.dumps(record))
        if index % 1999 == 5:
            lines.append("")
        if index % 2503 == 6:
            lines.append('{"schema_version": "0.2.0", "sample_id": ')
    return ("\n".join(lines) + '\n{"schema_version": "0.2.0", "sample_id": "cut sh').encode()


@pytest.fixture(scope="module")
def scheduler(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Start a Dask scheduler and two single-threaded workers; yield the scheduler's address."""
    folder = tmp_path_factory.mktemp("cluster")
    address_file = folder / "scheduler.json"
    common = ["--no-dashboard", "--scheduler-file", str(address_file)]
    processes: list[subprocess.Popen[bytes]] = []
    log = (folder / "cluster.log").open("wb")
    try:
        processes.append(
            subprocess.Popen(
                [str(DASK), "scheduler", "--host", "127.0.0.1", "--port", "0", *common],
                stdout=log,
                stderr=log,
                cwd=folder,
            )
        )
        deadline = time.monotonic() + 60
        while not address_file.exists() or not address_file.read_text().strip():
            assert time.monotonic() < deadline, "the scheduler did not start"
            time.sleep(0.2)
        address = json.loads(address_file.read_text())["address"]
        for _ in range(2):
            processes.append(
                subprocess.Popen(
                    [str(DASK), "worker", "--nthreads", "1", "--host", "127.0.0.1", *common],
                    stdout=log,
                    stderr=log,
                    cwd=folder,
                )
            )
        import distributed

        with distributed.Client(address, timeout=60) as client:
            client.wait_for_workers(2, timeout=60)
        yield address
    finally:
        for process in reversed(processes):
            process.send_signal(signal.SIGINT)
        for process in reversed(processes):
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        log.close()


def _evalreg(*args: str) -> tuple[int, bytes, bytes]:
    done = subprocess.run(
        [sys.executable, "-m", "evalreg", *args], capture_output=True, check=False, timeout=600
    )
    return done.returncode, done.stdout, done.stderr


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.fixture(scope="module")
def datastore(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Aggregate files (some invalid, some duplicates, one broken) and the bundled examples."""
    root = tmp_path_factory.mktemp("store") / "data"
    shutil.copytree(DEMO, root / "examples")
    for index in range(300):
        source = AGGREGATES[index % len(AGGREGATES)]
        record = json.loads(source.read_text())
        if index % 37 == 5:
            record.pop("schema_version", None)
        target = root / "runs" / f"m{index % 5}" / f"{index:04d}.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(record, indent=2))
    (root / "runs" / "broken.json").write_text('{"schema_version": ')
    return root


@pytest.fixture(scope="module")
def large(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A JSONL file of about 12 MB: cut into several ranges."""
    path = tmp_path_factory.mktemp("large") / "run_samples.jsonl"
    path.write_bytes(_lines(9_000))
    assert path.stat().st_size > 3 * (4 << 20)
    return path


@pytest.mark.cluster
@pytest.mark.parametrize("which", ["datastore", "large"])
def test_validate_on_a_cluster_prints_what_one_process_prints(
    scheduler: str, which: str, request: pytest.FixtureRequest
) -> None:
    path = str(request.getfixturevalue(which))
    for fmt in ("text", "json"):
        one = _evalreg("validate", path, "--jobs", "1", "--format", fmt)
        cluster = _evalreg("validate", path, "--scheduler", scheduler, "--format", fmt)
        assert cluster == one
        assert one[0] == 1 and one[1].count(b"\n") > 5
    assert all(_units_done(scheduler).values())  # both workers took part


def _units_done(scheduler: str) -> dict[str, int]:
    """Return how many registries each worker of the cluster has loaded for units of work."""
    import distributed

    with distributed.Client(scheduler, timeout=60) as client:
        return client.run(_loaded)  # type: ignore[no-any-return]


def _loaded() -> int:
    return len(ed._registries)


@pytest.mark.cluster
@pytest.mark.parametrize("which", ["datastore", "large"])
def test_migrate_on_a_cluster_writes_what_one_process_writes(
    scheduler: str, which: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    path = str(request.getfixturevalue(which))
    one = _evalreg("migrate", path, "--to", "latest", "--jobs", "1", "--out", str(tmp_path / "a"))
    cluster = _evalreg(
        "migrate", path, "--to", "latest", "--scheduler", scheduler, "--out", str(tmp_path / "b")
    )
    assert cluster == one and one[0] == 1  # some records fail: their files are not written
    written = _files(tmp_path / "a")
    assert _files(tmp_path / "b") == written
    if which == "datastore":
        assert len(written) > 250


@pytest.mark.cluster
def test_migrate_on_a_cluster_writes_a_large_file_from_the_ranges(
    scheduler: str, large: Path, tmp_path: Path
) -> None:
    clean = tmp_path / "clean_samples.jsonl"  # every line valid: the file is written
    lines = large.read_bytes().splitlines(keepends=True)[:-1]
    clean.write_bytes(b"".join(x for x in lines if x.strip().endswith(b"}") and b'"chat"' not in x))
    one = _evalreg(
        "migrate", str(clean), "--to", "latest", "--jobs", "1", "--out", str(tmp_path / "a")
    )
    cluster = _evalreg(
        "migrate",
        str(clean),
        "--to",
        "latest",
        "--scheduler",
        scheduler,
        "--out",
        str(tmp_path / "b"),
    )
    assert cluster == one and one[0] == 0
    written = _files(tmp_path / "a")
    assert _files(tmp_path / "b") == written
    assert len(written["clean_samples.jsonl"]) > 3 * (4 << 20)


@pytest.mark.cluster
def test_a_local_cluster_of_jobs_workers(datastore: Path) -> None:
    path = str(datastore / "examples")
    one = _evalreg("validate", path, "--jobs", "1")
    local = _evalreg("validate", path, "--scheduler", "local", "--jobs", "2")
    assert local == one and one[0] == 1


def test_an_unreachable_scheduler_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(ed, "CONNECT_TIMEOUT", 0.5)
    with pytest.raises(SystemExit) as info:
        main(["validate", str(DEMO), "--scheduler", "tcp://127.0.0.1:9"])
    _, err = capsys.readouterr()
    assert info.value.code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "evalreg: error: cannot use the Dask scheduler 'tcp://127.0.0.1:9': "
    )
    with pytest.raises(ClusterError), ed.connect("tcp://127.0.0.1:9"):
        pass


# -- bags ------------------------------------------------------------------------------------------


def _where(items: Any) -> list[tuple[str, int | None, bool]]:
    return [(i.path, i.line, i.ok) for i in items]


def test_a_bag_of_records_keeps_files_and_lines(tmp_path: Path, datastore: Path) -> None:
    path = tmp_path / "a_samples.jsonl"
    path.write_bytes(_lines(3_000))
    bag = ed.read_records([str(path), str(datastore / "examples")], blocksize=50_000)
    assert bag.npartitions > 30
    items = bag.compute(scheduler="sync")
    expected = [
        item for file in [str(path), *_walk(datastore / "examples")] for item in read_items(file)
    ]
    assert _where(items) == _where(expected)
    assert [i.record for i in items] == [i.record for i in expected]


def _walk(root: Path) -> list[str]:
    from evalreg.batch.walk import iter_files

    return list(iter_files([str(root)]))


def test_validate_detect_and_migrate_a_bag(registry: Registry, tmp_path: Path) -> None:
    path = tmp_path / "a_samples.jsonl"
    path.write_bytes(_lines(2_000))
    bag = ed.read_records(str(path), blocksize=40_000)
    checks = ed.validate(bag).compute(scheduler="sync")
    expected = list(check_paths(registry, [str(path)]))
    assert [(c.line, c.status, c.issues) for c in checks] == [
        (c.line, c.status, c.issues) for c in expected
    ]
    detected = ed.detect(bag).filter(lambda c: c.status != "detected").compute(scheduler="sync")
    assert [c.line for c in detected] == [c.line for c in expected if c.status == "unreadable"]
    migrated = ed.migrate(bag, "0.3.0").compute(scheduler="sync")
    records = [m.result.record for m in migrated if m.status == "migrated"]
    assert len(records) == sum(1 for c in expected if c.status == "valid")
    assert {r["schema_version"] for r in records} == {"0.3.0"}


@pytest.mark.cluster
def test_bags_compose_on_the_cluster(scheduler: str, registry: Registry, tmp_path: Path) -> None:
    import distributed

    path = tmp_path / "a_samples.jsonl"
    path.write_bytes(_lines(2_000))
    bag = ed.read_records(str(path), blocksize=40_000)
    with distributed.Client(scheduler, timeout=60):
        statuses = ed.validate(bag).map(lambda c: c.status).frequencies().compute()
        lines = dask.compute(
            ed.validate(bag).filter(lambda c: c.status != "valid").map(lambda c: c.line)
        )[0]
    expected = list(check_paths(registry, [str(path)]))
    assert dict(statuses) == {
        s: sum(1 for c in expected if c.status == s) for s in {c.status for c in expected}
    }
    assert list(lines) == [c.line for c in expected if c.status != "valid"]


def test_without_the_dask_extra_scheduler_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if it were not installed
    monkeypatch.delitem(sys.modules, "evalreg.dask")
    with pytest.raises(SystemExit) as info:
        main(["validate", str(DEMO), "--scheduler", "local"])
    out, err = capsys.readouterr()
    assert info.value.code == 2 and out == ""
    assert err.strip().splitlines() == [
        "evalreg: error: running on a Dask cluster needs the dask extra: "
        "pip install 'evalreg[dask]'"
    ]
