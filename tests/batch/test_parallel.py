"""Work on all cores: units of work, line ranges, and output identical to one process.

The size thresholds are lowered so that small test inputs are cut into many units and ranges.
"""

from __future__ import annotations

import gzip
import importlib.util
import itertools
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import evalreg
from evalreg import Registry
from evalreg.batch import parallel
from evalreg.batch.check import RecordCheck, ValidRun
from evalreg.batch.check import validate_paths as run_validate
from evalreg.batch.migrate import migrate_paths
from evalreg.batch.migrate_file import FileMigration, MigrateOptions, RecordMigration
from evalreg.batch.summary import Summary
from evalreg.cli import main
from evalreg.io.readers import line_ranges, read_range
from tests.conftest import EXAMPLES

INSTANCE = next((EXAMPLES / "eee.instance" / "valid").glob("*.jsonl"))
AGGREGATES = sorted((EXAMPLES / "eee.aggregate" / "valid").glob("*.json"))
DEMO = Path(__file__).parents[2] / "evalreg" / "examples"
OLD_AGGREGATE = next((DEMO / "eee" / "data" / "hellaswag").rglob("*.json"))


@pytest.fixture
def small_units(monkeypatch: pytest.MonkeyPatch) -> None:
    """Use a pool for any input, and cut JSONL files into ranges of a few lines."""
    monkeypatch.setattr(parallel, "POOL_MIN_BYTES", 0)
    monkeypatch.setattr(parallel, "RANGE_MIN_BYTES", 4000)
    monkeypatch.setattr(parallel, "RANGE_MAX_BYTES", 4000)
    monkeypatch.setattr(parallel, "UNIT_FILES", 2)


def _instances() -> list[dict[str, Any]]:
    return [json.loads(line) for line in INSTANCE.read_text().splitlines() if line.strip()]


def _jsonl(path: Path, count: int, *, broken: bool = True, alike: int = 1) -> Path:
    """Write `count` instance lines with invalid, blank and unreadable lines here and there.

    `alike`: how many lines in a row come from the same instance record (whose migrations
    report the same notes, values and all).
    """
    records = _instances()
    lines = []
    for index in range(count):
        record = dict(records[index // alike % len(records)], sample_id=f"s{index}")
        if broken and index % 7 == 3:
            record["interaction_type"] = "chat"
        lines.append(json.dumps(record))
        if broken and index % 11 == 5:
            lines.append("")
        if broken and index % 13 == 6:
            lines.append('{"schema_version": "0.2.0", "sample_id": ')
    if broken:
        lines.append('{"schema_version": "0.2.0", "sample_id": "cut sh')  # no newline: cut short
    path.write_text("\n".join(lines) + ("" if broken else "\n"))
    return path


def _tree(root: Path) -> Path:
    """Write a small datastore: aggregate files, JSONL (plain and gzip), YAML, a bad JSON file."""
    for index, source in enumerate(AGGREGATES * 3):
        target = root / "data" / f"m{index % 4}" / f"{index:03d}.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(source.read_bytes())
    _jsonl(root / "data" / "samples.jsonl", 120)
    (root / "data" / "more.jsonl.gz").write_bytes(gzip.compress(INSTANCE.read_bytes()))
    (root / "data" / "broken.json").write_text('{"schema_version": ')
    (root / "data" / "empty.jsonl").write_text("")
    agentv = next((EXAMPLES / "agentv.eval" / "valid").glob("*.yaml"))
    (root / "data" / agentv.name).write_bytes(agentv.read_bytes())
    return root / "data"


# -- ranges and units ----------------------------------------------------------------------------


@pytest.mark.parametrize("chunk", [1, 7, 100, 10_000])
def test_line_ranges_cover_the_file_and_begin_at_lines(tmp_path: Path, chunk: int) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(b"".join(b"%d %s\n" % (i, b"x" * (i % 37)) for i in range(300)) + b"end")
    data = path.read_bytes()
    ranges = line_ranges(str(path), len(data), chunk)
    assert ranges[0][0] == 0 and ranges[-1][1] == len(data)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(ranges))
    assert all(start == 0 or data[start - 1 : start] == b"\n" for start, _ in ranges)
    lines = [line for start, end in ranges for line in read_range(str(path), start, end)]
    assert lines == data.splitlines(keepends=True)


def test_plan_keeps_small_inputs_in_one_process(tmp_path: Path) -> None:
    paths = [str(_jsonl(tmp_path / "a.jsonl", 10)), str(tmp_path / "missing.json")]
    assert parallel.plan(iter(paths), 1) == (paths, None)
    assert parallel.plan(iter(paths), 2) == (paths, None)  # smaller than POOL_MIN_BYTES


def test_plan_groups_small_files_and_cuts_plain_jsonl(small_units: None, tmp_path: Path) -> None:
    root = _tree(tmp_path)
    files = sorted(str(p) for p in root.rglob("*") if p.is_file())
    ahead, planned = parallel.plan(iter(files), 2)
    assert ahead == [] and planned is not None
    units = list(planned)
    parts = [part for unit in units for part in unit]
    assert [p.path for p in parts if p.whole] == [
        f for f in files if not f.endswith("samples.jsonl")
    ]
    ranges = [p for p in parts if not p.whole]
    assert len(ranges) > 3 and all(len(u) == 1 for u in units if not u[0].whole)
    assert [p.last for p in ranges] == [False] * (len(ranges) - 1) + [True]
    assert all(len(unit) <= 2 for unit in units)


# -- validate --------------------------------------------------------------------------------------


def _problems(found: Iterator[RecordCheck | ValidRun]) -> tuple[list[RecordCheck], dict[str, int]]:
    summary = Summary()
    problems = []
    for check in found:
        summary.add(check)
        if isinstance(check, RecordCheck):
            problems.append(check)
    return problems, summary.as_dict()


def test_validate_with_two_jobs_reports_what_one_job_reports(
    small_units: None, registry: Registry, tmp_path: Path
) -> None:
    root = _tree(tmp_path)
    one = _problems(run_validate(registry, [str(root)], jobs=1))
    two = _problems(run_validate(registry, [str(root)], jobs=2))
    assert two == one
    problems, counts = one
    lines = {c.line for c in problems if c.path.endswith("samples.jsonl")}
    assert len(lines) > 20 and max(lines) > 120  # across many ranges, blank lines counted
    assert any(c.error and c.error.startswith("truncated last line") for c in problems)
    assert counts["files"] == 17 and counts["unreadable"] > 5


def test_line_numbers_are_exact_across_range_boundaries(
    small_units: None, registry: Registry, tmp_path: Path
) -> None:
    path = _jsonl(tmp_path / "samples.jsonl", 200)
    expected = [
        number
        for number, line in enumerate(path.read_text().split("\n"), 1)
        if line and ('"chat"' in line or not line.endswith("}"))
    ]
    problems, _ = _problems(run_validate(registry, [str(path)], jobs=2))
    assert [c.line for c in problems] == expected
    assert len(line_ranges(str(path), path.stat().st_size, 4000)) > 10


@pytest.mark.parametrize(
    "fmt", ["text", *(pytest.param(f, marks=pytest.mark.slow) for f in ("json", "github"))]
)
def test_validate_command_output_is_the_same_with_any_number_of_jobs(
    small_units: None, tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    root = _tree(tmp_path)
    outputs = []
    for jobs in ("1", "2", "3"):
        with pytest.raises(SystemExit) as info:
            main(["validate", str(root), "--format", fmt, "--jobs", jobs, "--max-errors", "40"])
        outputs.append((info.value.code, *capsys.readouterr()))
    assert outputs[0][0] == 1 and outputs[0][1].count("\n") > 20
    assert outputs[1] == outputs[0] and outputs[2] == outputs[0]


# -- migrate ---------------------------------------------------------------------------------------


def _files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def _migrate(
    root: Path, *args: str, capsys: pytest.CaptureFixture[str], where: Path | None = None
) -> tuple[Any, ...]:
    """Run `evalreg migrate`; return its exit code and output, with `where` shown as WHERE."""
    with pytest.raises(SystemExit) as info:
        main(["migrate", str(root), "--to", "latest", *args])
    out, err = capsys.readouterr()
    if where is not None:
        out, err = out.replace(str(where), "WHERE"), err.replace(str(where), "WHERE")
    return info.value.code, out, err


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_migrate_with_two_jobs_writes_and_reports_what_one_job_does(
    small_units: None, tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    source = tmp_path / "in"
    source.mkdir()
    _jsonl(source / "clean.jsonl", 150, broken=False)
    _jsonl(source / "failing.jsonl", 150)
    for index, aggregate in enumerate(AGGREGATES):
        (source / f"run{index}.json").write_bytes(aggregate.read_bytes())
    results = []
    for jobs in ("1", "2"):
        out = tmp_path / f"out{jobs}"
        args = ("--out", str(out), "--jobs", jobs, "--format", fmt)
        results.append((_migrate(source, *args, capsys=capsys, where=out), _files(out)))
    assert results[1] == results[0]
    (code, stdout, _), written = results[0]
    assert code == 1 and "clean.jsonl" in written and "failing.jsonl" not in written
    assert not [name for name in os.listdir(tmp_path / "out2") if name.endswith(".part")]
    if fmt == "json":
        assert stdout.count("\n") > 300  # a row per record
    else:
        assert "renamed /interactions -> /messages [150 records; first: " in stdout


def test_migrate_in_place_with_two_jobs_keeps_a_backup(
    small_units: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trees = []
    for jobs in ("1", "2"):
        root = tmp_path / jobs
        root.mkdir()
        original = _jsonl(root / "samples.jsonl", 150, broken=False).read_bytes()
        args = ("--in-place", "--jobs", jobs)
        first = _migrate(root, *args, "--backup", ".bak", capsys=capsys, where=root)
        again = _migrate(root, *args, capsys=capsys, where=root)  # already current
        assert (root / "samples.jsonl.bak").read_bytes() == original
        trees.append((first, again, _files(root)))
    assert trees[1] == trees[0]
    assert trees[0][0][0] == 0 and "written" in trees[0][0][1]
    assert "unchanged" in trees[0][1][2] or trees[0][1][0] == 0


@pytest.mark.parametrize("listing", ["--diff", "--verbose"])
def test_dry_run_with_two_jobs_reports_every_change(
    small_units: None, tmp_path: Path, capsys: pytest.CaptureFixture[str], listing: str
) -> None:
    path = _jsonl(tmp_path / "samples.jsonl", 60, broken=False)
    args = ("--dry-run", listing)
    outputs = [_migrate(path, *args, "--jobs", j, capsys=capsys) for j in ("1", "2")]
    assert outputs[1] == outputs[0]
    if listing == "--diff":
        assert outputs[0][1].count(": 0.2.0 -> 0.3.0\n") == 60
        assert outputs[0][1].count('  ~ /schema_version: "0.2.0" -> "0.3.0"\n') == 60
    else:
        assert outputs[0][1].count("renamed /interactions -> /messages\n") == 60
    assert _files(tmp_path) == {"samples.jsonl": path.read_bytes()}


def test_migrate_paths_results_carry_no_record_across_processes(
    small_units: None, registry: Registry, tmp_path: Path
) -> None:
    path = _jsonl(tmp_path / "samples.jsonl", 60, broken=False)
    options = MigrateOptions(to="latest", out=str(tmp_path / "out"))
    events = list(migrate_paths(registry, [str(path)], options, jobs=2))
    *records, done = events
    assert isinstance(done, FileMigration) and (done.status, done.migrated) == ("written", 60)
    assert all(isinstance(e, RecordMigration) and e.result is not None for e in records)
    assert all(e.result.record is None for e in records)  # type: ignore[union-attr]


def _outcome(event: RecordMigration, line: int | None, lean: bool = False) -> tuple[Any, ...]:
    """Return what a test compares of a record's outcome (`lean`: notes as grouped ones are)."""
    result = event.result
    if result is None:
        return (event.path, line, event.status, event.error)
    notes = tuple(n.lean() for n in result.notes) if lean else result.notes
    return (event.path, line, event.status, result.steps, notes, result.error)


def test_records_that_succeeded_alike_come_back_from_workers_as_runs(
    small_units: None, registry: Registry, tmp_path: Path
) -> None:
    # failing, blank and unreadable lines too
    path = _jsonl(tmp_path / "samples.jsonl", 150, alike=10)
    options = MigrateOptions(to="latest", out=str(tmp_path / "out"))
    one = list(migrate_paths(registry, [str(path)], options, jobs=1))
    two = list(migrate_paths(registry, [str(path)], options, jobs=2))
    assert all(e.count == 1 for e in one if isinstance(e, RecordMigration))
    runs = [e for e in two if isinstance(e, RecordMigration)]
    singles = [e for e in one if isinstance(e, RecordMigration)]
    assert max(e.count for e in runs) > 1 and len(runs) < len(singles)
    assert all(e.status in ("migrated", "current") for e in runs if e.count > 1)
    expanded = [
        _outcome(e, None if e.line is None else e.line + i) for e in runs for i in range(e.count)
    ]
    assert expanded == [_outcome(e, e.line) for e in singles]
    assert [e for e in two if isinstance(e, FileMigration)] == [
        e for e in one if isinstance(e, FileMigration)
    ]


def test_grouped_outcomes_count_every_record_once_at_its_first_line(
    small_units: None, registry: Registry, tmp_path: Path
) -> None:
    path = _jsonl(tmp_path / "samples.jsonl", 150)
    options = MigrateOptions(to="latest", out=str(tmp_path / "out"))
    one = [e for e in migrate_paths(registry, [str(path)], options, jobs=1) if _is_record(e)]
    grouped = replace(options, out=str(tmp_path / "out2"))
    two = [
        e
        for e in migrate_paths(registry, [str(path)], grouped, jobs=2, notes="grouped")
        if _is_record(e)
    ]
    assert len(two) < len(one) * 0.6  # a few groups per part, and the failures one by one
    failed = [_outcome(e, e.line) for e in one if e.status not in ("migrated", "current")]
    assert [_outcome(e, e.line) for e in two if e.count == 1 and e.status == "failed"] == [
        f for f in failed if f[2] == "failed"
    ]
    # every record that succeeded is counted once, in a group at the first line of its outcome
    tally: dict[tuple[Any, ...], list[int]] = {}
    for event in one:
        if event.status in ("migrated", "current"):
            tally.setdefault(_outcome(event, None, lean=True), []).append(event.line or 0)
    groups: dict[tuple[Any, ...], list[tuple[int, int]]] = {}
    for event in two:
        if event.status in ("migrated", "current"):
            groups.setdefault(_outcome(event, None), []).append((event.line or 0, event.count))
    assert sum(count for found in groups.values() for _, count in found) == sum(
        len(lines) for lines in tally.values()
    )
    assert {key: min(lines) for key, lines in tally.items()} == {
        key: min(line for line, _ in found) for key, found in groups.items()
    }


def _is_record(event: Any) -> bool:
    return isinstance(event, RecordMigration)


# -- the benchmark -------------------------------------------------------------------------------


@pytest.mark.slow
def test_the_benchmark_prints_every_target(tmp_path: Path) -> None:
    script = Path(__file__).parents[2] / "benchmarks" / "run.py"
    done = subprocess.run(
        [sys.executable, str(script), "--quick", "--data", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    for target in (
        "validate aggregate dir, 1 job / parse floor",
        "validate instance JSONL, 1 job / parse floor",
        "check-jsonschema / evalreg",
        "migrate aggregate 0.2.0 -> latest, all cores / rewrite floor",
        "migrate instance 0.2.0 -> latest, 1 job / rewrite floor",
        "--jobs 1 throughput",
        "identical to --jobs 1",
        "peak memory (PSS, all processes), migrate",
        "start-up: evalreg validate one file",
        "--no-rules, 1 job / parse floor",
        "start-up: evalreg --version",
        "machine ceiling for --jobs",
    ):
        assert target in done.stdout


@pytest.mark.parametrize("kind", ["aggregates", "lines"])
def test_the_route_floor_writes_what_migrate_writes(tmp_path: Path, kind: str) -> None:
    # The route floor stands for the least work of the same migration: the same bytes out.
    root = Path(__file__).parents[2]
    spec = importlib.util.spec_from_file_location(
        "benchmark_generate", root / "benchmarks/generate.py"
    )
    assert spec is not None and spec.loader is not None
    generate = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generate)
    if kind == "aggregates":
        source, family = tmp_path / "in", "eee.aggregate"
        generate.write_aggregates(source, 6, "0.2.0")
    else:
        source, family = tmp_path / "in.jsonl", "eee.instance"
        generate.write_jsonl(source, 30)
    latest = evalreg.default_registry().versions(family)[-1]
    floor = [sys.executable, str(root / "benchmarks" / "floor.py"), "route"]
    migrate = [sys.executable, "-m", "evalreg", "migrate", "--to", latest]
    steps, schema = (
        root / "migrations" / family,
        root / "schemas" / family / f"{latest}.schema.json",
    )
    for command in (
        [*floor, str(steps), "0.2.0", latest, str(schema), str(source), str(tmp_path / "floor")],
        [*migrate, str(source), "--out", str(tmp_path / "evalreg")],
    ):
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr

    def written(top: Path) -> dict[Path, bytes]:
        return {p.relative_to(top): p.read_bytes() for p in top.rglob("*") if p.is_file()}

    floor_files = written(tmp_path / "floor")
    assert len(floor_files) == (6 if kind == "aggregates" else 1)
    assert floor_files == written(tmp_path / "evalreg")


def test_the_benchmark_makes_again_only_the_inputs_whose_size_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = Path(__file__).parents[2] / "benchmarks" / "run.py"
    spec = importlib.util.spec_from_file_location("benchmark_run", script)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "benchmark_run", bench)  # its dataclasses look it up there
    monkeypatch.setattr(sys, "path", list(sys.path))  # it adds benchmarks/ to import `generate`
    spec.loader.exec_module(bench)
    sizes = bench.Sizes(3, 5, 2, 4, 6)
    paths = bench.prepare_data(tmp_path, sizes)
    assert len(list(paths["aggregates"].rglob("*.json"))) == 3
    assert paths["memory_lines"].read_bytes().count(b"\n") == 6
    before = {key: path.stat().st_mtime_ns for key, path in paths.items()}
    bench.prepare_data(tmp_path, replace(sizes, migrate_lines=7))
    after = {key: path.stat().st_mtime_ns for key, path in paths.items()}
    assert {key for key in paths if after[key] != before[key]} == {"migrate_lines"}
    assert paths["migrate_lines"].read_bytes().count(b"\n") == 7


def test_workers_started_afresh_load_the_same_registry(
    small_units: None, registry: Registry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _jsonl(tmp_path / "samples.jsonl", 60)
    expected = _problems(run_validate(registry, [str(path)], jobs=1))
    monkeypatch.setattr(parallel, "START_METHOD", "spawn")
    assert _problems(run_validate(registry, [str(path)], jobs=2)) == expected


def test_a_file_given_twice_is_migrated_to_each_of_its_outputs(
    small_units: None, registry: Registry, tmp_path: Path
) -> None:
    source = tmp_path / "in"
    (source / "sub").mkdir(parents=True)
    path = _jsonl(source / "sub" / "samples.jsonl", 60, broken=False)
    written = []
    for jobs in (1, 2):
        out = tmp_path / f"out{jobs}"
        options = MigrateOptions(to="latest", out=str(out))
        events = list(migrate_paths(registry, [str(source), str(path)], options, jobs=jobs))
        assert [e.status for e in events if not isinstance(e, RecordMigration)] == ["written"] * 2
        written.append(_files(out))
    assert written[0] == written[1]
    assert sorted(written[0]) == ["samples.jsonl", "sub/samples.jsonl"]


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize("flush", ["file system", "each file"])
def test_outputs_elsewhere_are_flushed_without_a_system_wide_sync(
    small_units: None,
    registry: Registry,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    jobs: int,
    flush: str,
) -> None:
    from evalreg.io import writers

    log = tmp_path / "flushes"  # written by the workers too

    def noted(kind: str, fd: int) -> None:
        with open(log, "a") as stream:
            stream.write(f"{kind} {os.fstat(fd).st_ino} {os.fstat(fd).st_dev}\n")

    def no_sync() -> None:
        raise AssertionError("a system-wide sync")

    fsynced: list[int] = []
    monkeypatch.setattr(parallel, "START_METHOD", "fork")  # workers see the patches below
    syncfs = (lambda fd: noted("fs", fd)) if flush == "file system" else None
    monkeypatch.setattr(writers, "_syncfs", [syncfs])  # as on Linux, or where there is none
    monkeypatch.setattr(writers, "_datasync", lambda fd: noted("file", fd))

    def folder_flushed(folder: Path) -> None:
        with open(log, "a") as stream:
            stream.write(f"folder {folder} -\n")

    monkeypatch.setattr(writers, "_fsync_directory", folder_flushed)
    monkeypatch.setattr(writers.os, "sync", no_sync)
    monkeypatch.setattr(writers.os, "fsync", fsynced.append)
    source = _aggregates(tmp_path / "in")
    out = tmp_path / "out"
    options = MigrateOptions(to="latest", out=str(out))
    events = list(migrate_paths(registry, [str(source)], options, jobs=jobs))
    assert [e.status for e in events if not isinstance(e, RecordMigration)] == ["written"] * 6
    written = sorted((tmp_path / "out").rglob("*.json"))
    assert sorted(p.name for p in written) == [f"run{i}.json" for i in range(6)]
    lines = [line.split() for line in log.read_text().splitlines()]
    if flush == "file system":  # once, at the end, the outputs' file system
        assert fsynced == [] and [(kind, device) for kind, _, device in lines] == [
            ("fs", str(out.stat().st_dev))
        ]
    else:  # each output once, then the folders
        files = sorted(int(inode) for kind, inode, _ in lines if kind == "file")
        assert files == sorted(p.stat().st_ino for p in written)
        folders = {folder for kind, folder, _ in lines if kind == "folder"}
        assert {str(p.parent) for p in written} <= folders


def test_files_rewritten_in_place_are_synced_each_and_folders_once_per_run(
    small_units: None, registry: Registry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalreg.io import writers

    flushed: list[Path] = []
    fsynced: list[int] = []
    monkeypatch.setattr(writers, "_fsync_directory", flushed.append)
    monkeypatch.setattr(writers.os, "fsync", fsynced.append)
    source = _aggregates(tmp_path / "in")
    options = MigrateOptions(to="latest", in_place=True)
    events = list(migrate_paths(registry, [str(source)], options, jobs=1))
    assert [e.status for e in events if not isinstance(e, RecordMigration)] == ["written"] * 6
    assert len(fsynced) == 6  # each file replaces the only copy of its records
    assert sorted(flushed) == [source / "m0", source / "m1"]


def _aggregates(source: Path) -> Path:
    """Write six old aggregate files into two folders of `source`; return it."""
    for index in range(6):
        target = source / f"m{index % 2}" / f"run{index}.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(OLD_AGGREGATE.read_bytes())
    return source


def test_workers_ignore_ctrl_c_and_end_at_once_on_sigterm() -> None:
    code = (
        "import signal; from evalreg.batch.signals import prepare_workers, quiet_worker; "
        "prepare_workers(); quiet_worker(); "
        "print(signal.getsignal(signal.SIGINT) is signal.SIG_IGN, "
        "signal.getsignal(signal.SIGTERM) is signal.SIG_DFL, "
        "signal.getsignal(signal.SIGHUP) is signal.SIG_DFL)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["True", "True", "True"]


def test_a_file_in_ranges_locked_by_another_run_is_reported_busy(
    small_units: None, registry: Registry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import fcntl

    from evalreg.batch import inplace

    monkeypatch.setattr(inplace, "LOCK_WAIT", 0.1)
    path = _jsonl(tmp_path / "s.jsonl", 40, broken=False)
    original = path.read_bytes()
    options = MigrateOptions(to="latest", in_place=True, backup=".bak")
    with open(path, "rb") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        *_, outcome = migrate_paths(registry, [str(path)], options, jobs=2)
    assert isinstance(outcome, FileMigration) and outcome.status == "failed"
    assert "busy: another process is migrating it" in outcome.message
    assert path.read_bytes() == original and os.listdir(tmp_path) == ["s.jsonl"]
