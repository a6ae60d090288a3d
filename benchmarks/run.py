"""Measure evalreg against the parse floor and check-jsonschema, and check every speed target.

    python benchmarks/run.py            # full sizes: about 4 GB of data, some minutes
    python benchmarks/run.py --quick    # small sizes, no waiting: a smoke run, figures mean little
    python benchmarks/run.py --dry-run-only   # only migrate --dry-run against migrate --out

`benchmarks/scale.py` adds `--jobs 2` and a Dask cluster of two workers against `--jobs 1` on the
instance file, beside the machine's two-process ceiling.

The inputs are generated deterministically (`benchmarks/generate.py`) into `benchmarks/data/`
(git-ignored, kept between runs; `--data DIR` puts them elsewhere). Every figure is a whole
process timed by wall clock, the best of `--repeat` runs, the runs compared taking turns. The
floors are processes too (`benchmarks/floor.py`): reading and `orjson.loads`-ing the same input,
plus `orjson.dumps` and writing for migrations. Before each run the benchmark waits for other
processes to leave the machine idle (`others`: the share of the CPU they took anyway). Commands
run as they would for a user: with Python's bytecode cache on and standard output buffered
(`PYTHONDONTWRITEBYTECODE` and `PYTHONUNBUFFERED` are dropped from their environment), after
one warm-up run that fills the cache. RSS is
the peak of the largest process; PSS (memory runs only) the peak summed over the process and its
workers, shared pages split among them. The exit code is 1 when a target is missed (never with
`--quick`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import generate  # noqa: E402

ROOT = HERE.parent
PYTHON = sys.executable
EVALREG = [PYTHON, "-m", "evalreg"]
FLOOR = [PYTHON, str(HERE / "floor.py")]
CHECK_JSONSCHEMA = [PYTHON, "-m", "check_jsonschema"]
ENV = {
    k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED")
}
"""The environment of every command timed: that of a usual installation."""
AGGREGATE_SCHEMA = ROOT / "schemas" / "eee.aggregate" / "0.2.0.schema.json"


@dataclass(frozen=True)
class Sizes:
    """How much data each measurement reads."""

    aggregates: int
    """Aggregate files (0.2.0) validated, one invalid in 2,000."""
    lines: int
    """Instance-level lines (0.2.0) validated, one invalid in 20,000 and one cut short."""
    migrate_aggregates: int
    """Aggregate files (0.1.0) migrated to 0.2.0."""
    migrate_lines: int
    """Instance-level lines (0.2.0) migrated to the latest version."""
    memory_lines: int
    """Lines of the file validated and migrated for peak memory."""


FULL = Sizes(20_000, 200_000, 20_000, 200_000, 1_000_000)
"""Migrations read as much as validation: throughput on large inputs, with start-up (measured on
its own) a small part of every run."""
QUICK = Sizes(200, 2_000, 50, 300, 3_000)


# -- running processes ---------------------------------------------------------------------------


def _tree(pid: int) -> list[int]:
    """Return `pid` and its descendants (Linux: /proc/PID/task/*/children)."""
    found, queue = [], [pid]
    while queue:
        current = queue.pop()
        found.append(current)
        try:
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children") as stream:
                    queue += [int(child) for child in stream.read().split()]
        except OSError:
            continue
    return found


def _rss(pid: int) -> int:
    """Return the RSS of a process, bytes (cheap to read: kernel counters)."""
    try:
        with open(f"/proc/{pid}/statm") as stream:
            return int(stream.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _memory(pid: int) -> tuple[int, int]:
    """Return the RSS and the PSS of a process, bytes (PSS: shared pages split among sharers)."""
    rss = pss = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup") as stream:
            for line in stream:
                if line.startswith(("Rss:", "Pss:")):
                    value = int(line.split()[1]) * 1024
                    rss, pss = (value, pss) if line.startswith("Rss:") else (rss, value)
    except (OSError, ValueError, IndexError):
        pass
    return rss, pss


def _cpu_times() -> tuple[float, float]:
    """Return the machine's busy and total CPU seconds so far (Linux: /proc/stat)."""
    try:
        with open("/proc/stat") as stream:
            fields = [int(v) for v in stream.readline().split()[1:]]
    except (OSError, ValueError):
        return 0.0, 0.0
    ticks = os.sysconf("SC_CLK_TCK")
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return (sum(fields[:8]) - idle) / ticks, sum(fields[:8]) / ticks


def _ours() -> float:
    """Return the CPU seconds used by this process and its waited-for descendants."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def wait_until_idle(timeout: float) -> None:
    """Wait (up to `timeout` seconds) until other processes leave the machine nearly idle."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        busy, total = _cpu_times()
        time.sleep(0.5)
        busy2, total2 = _cpu_times()
        if total2 <= total or (busy2 - busy) / (total2 - total) < 0.1:
            return


@dataclass
class Run:
    """The best of some runs of one command."""

    wall: float = float("inf")
    others: float = 0.0
    """The share of the machine's CPU used by other processes during the best run."""
    pss: int = 0
    """Peak of the PSS summed over the process and its workers, bytes (0 without /proc)."""
    rss: int = 0
    """Peak RSS of the largest of those processes, bytes."""
    stdout: bytes = b""
    code: int = 0


@dataclass(frozen=True)
class Job:
    """A command to time, where to run it, and what to do before each run."""

    command: Sequence[str]
    cwd: Path | None = None
    before: Callable[[], None] | None = None


IDLE_TIMEOUT = 120.0
"""How long to wait, before each run, for other processes to leave the machine idle."""


def measure(
    jobs: Sequence[Job], repeat: int = 1, *, memory: bool = False, idle: float = IDLE_TIMEOUT
) -> list[Run]:
    """Run every job `repeat` times, taking turns; keep each one's best time and peak memory.

    Before each run, wait (up to `idle` seconds) for other processes to leave the machine idle;
    taking turns spreads
    what they do anyway over the jobs compared. Memory is sampled as RSS every 50 ms; with
    `memory`, PSS too (every 200 ms: reading it slows the process down).
    """
    best = [Run() for _ in jobs]
    for _ in range(repeat):
        for job, run in zip(jobs, best, strict=True):
            if job.before is not None:
                job.before()
            wait_until_idle(idle)
            busy, total = _cpu_times()
            ours = _ours()
            start = time.perf_counter()
            process = subprocess.Popen(
                job.command,
                cwd=job.cwd,
                env=ENV,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
            )
            sampler = _Sampler(process.pid, memory)
            stdout, _ = process.communicate()
            wall = time.perf_counter() - start
            pss, rss = sampler.stop()
            busy2, total2 = _cpu_times()
            others = max(0.0, (busy2 - busy) - (_ours() - ours)) / max(total2 - total, 1e-9)
            if wall < run.wall:
                run.wall, run.others = wall, others
            run.pss, run.rss = max(run.pss, pss), max(run.rss, rss)
            run.stdout, run.code = stdout, process.returncode
    return best


class _Sampler(threading.Thread):
    """Sample the memory of a process tree until stopped; keep the peaks."""

    def __init__(self, pid: int, pss: bool) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.with_pss = pss
        self.pss = self.rss = 0
        self.done = threading.Event()
        self.start()

    def run(self) -> None:
        while not self.done.wait(0.2 if self.with_pss else 0.05):
            pids = _tree(self.pid)
            if self.with_pss:
                found = [_memory(pid) for pid in pids]
                self.pss = max(self.pss, sum(pss for _, pss in found))
                self.rss = max([self.rss, *(rss for rss, _ in found)])
            else:
                self.rss = max([self.rss, *(_rss(pid) for pid in pids)])

    def stop(self) -> tuple[int, int]:
        """Stop sampling; return the peak summed PSS and the peak RSS of one process."""
        self.done.set()
        self.join()
        return self.pss, self.rss


def _tree_digest(path: Path) -> str:
    """Return a digest of every file under `path` (names and bytes)."""
    digest = hashlib.sha256()
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    for file in files:
        digest.update(str(file.relative_to(path.parent if path.is_file() else path)).encode())
        digest.update(hashlib.sha256(file.read_bytes()).digest())
    return digest.hexdigest()


def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*.json"))


# -- data --------------------------------------------------------------------------------------


def prepare_data(data: Path, sizes: Sizes) -> dict[str, Path]:
    """Generate the inputs that are missing or out of date; return the paths of all of them.

    Each input is kept between runs and made again only when its size or the generator changed
    (`stamp.json` says what each was made with): the largest takes minutes to write.
    """
    paths = {
        "aggregates": data / "aggregate-0.2.0",
        "lines": data / "instance-0.2.0.jsonl",
        "migrate_aggregates": data / "aggregate-0.1.0",
        "migrate_lines": data / "instance-migrate-0.2.0.jsonl",
        "memory_lines": data / "instance-memory-0.2.0.jsonl",
        "one": data / "one" / "run.json",
    }
    makers: dict[str, tuple[int, Callable[[Path], object]]] = {
        "aggregates": (
            sizes.aggregates,
            lambda p: generate.write_aggregates(p, sizes.aggregates, "0.2.0", invalid_every=2000),
        ),
        "lines": (
            sizes.lines,
            lambda p: generate.write_jsonl(p, sizes.lines, invalid_every=20_000),
        ),
        "migrate_aggregates": (
            sizes.migrate_aggregates,
            lambda p: generate.write_aggregates(p, sizes.migrate_aggregates, "0.1.0"),
        ),
        "migrate_lines": (
            sizes.migrate_lines,
            lambda p: generate.write_jsonl(p, sizes.migrate_lines),
        ),
        "memory_lines": (sizes.memory_lines, lambda p: generate.write_jsonl(p, sizes.memory_lines)),
        "one": (1, _write_one),
    }
    generator = hashlib.sha256((HERE / "generate.py").read_bytes()).hexdigest()
    stamp = data / "stamp.json"
    try:
        made = json.loads(stamp.read_text())
    except (OSError, ValueError):
        made = {}
    if (
        not isinstance(made, dict)
        or made.get("generator") != generator
        or not isinstance(made.get("inputs"), dict)
    ):
        made = {"generator": generator, "inputs": {}}
    for key, (count, make) in makers.items():
        if made["inputs"].get(key) == count and paths[key].exists():
            continue
        print(f"generating {paths[key]} ({count:,} records) ...", flush=True)
        target = paths[key] if key != "one" else paths[key].parent
        if target.is_dir():
            shutil.rmtree(target)
        elif target.exists():
            target.unlink()
        target.parent.mkdir(parents=True, exist_ok=True)
        make(target)
        made["inputs"][key] = count
        stamp.write_text(json.dumps(made))  # after each: an interrupted run keeps what is done
    return paths


def _write_one(folder: Path) -> None:
    """Write the single aggregate file of the start-up measurement as `folder/run.json`."""
    generate.write_aggregates(folder, 1, "0.2.0")
    next(folder.rglob("*.json")).rename(folder / "run.json")


# -- the measurements --------------------------------------------------------------------------


@dataclass
class Row:
    """One line of the throughput table."""

    name: str
    records: int
    size: int
    run: Run
    floor: Run | None = None

    @property
    def ratio(self) -> float:
        """Return the wall time over the floor's."""
        return self.run.wall / self.floor.wall if self.floor else float("nan")


@dataclass
class Target:
    """One target of the issue, measured."""

    name: str
    measured: str
    limit: str
    met: bool | None
    """None where it cannot be measured here (the reason is in `measured`)."""


@dataclass
class Report:
    """Everything measured."""

    rows: list[Row] = field(default_factory=list)
    targets: list[Target] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """What the reader needs to weigh the figures (printed under the targets)."""

    def target(self, name: str, value: float, limit: float, unit: str, *, below: bool) -> None:
        """Record a target met when `value` is below (or above) `limit`."""
        met = value < limit if below else value >= limit
        sign = "<" if below else ">="
        self.targets.append(Target(name, f"{value:.2f}{unit}", f"{sign} {limit:g}{unit}", met))


def _warm(path: Path, clear: Path | None = None) -> Callable[[], None]:
    """Return what to do before a run: read `path` into the page cache, remove `clear`.

    Every run starts with its input just read (as on a machine that just wrote or read it), so
    that the figures compare work done rather than how much of the input the operating system
    kept cached since the previous run (some machines reclaim the page cache within seconds).
    """

    def before() -> None:
        if clear is not None:
            shutil.rmtree(clear, ignore_errors=True)
        for file in [path] if path.is_file() else sorted(path.rglob("*.json")):
            with open(file, "rb") as stream:
                while stream.read(1 << 20):
                    pass

    return before


def benchmark(data: Path, sizes: Sizes, repeat: int, cores: int, idle: float) -> Report:
    """Run every measurement; return the rows and the targets."""

    def timed(jobs: Sequence[Job], repeat: int = 1, *, memory: bool = False) -> list[Run]:
        return measure(jobs, repeat, memory=memory, idle=idle)

    paths = prepare_data(data, sizes)
    report = Report()
    out = data / "out"
    many = f"--jobs {cores}"

    def size(key: str) -> int:
        return _size(paths[key])

    print("measuring ...", flush=True)
    # warm up: the bytecode cache of evalreg and its dependencies, the files in the page cache
    warm = [*EVALREG, "validate", str(paths["one"])]
    subprocess.run(warm, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    # validate: the parse floor, one job, all cores, taking turns
    rows = []
    for key, records, label in (
        ("aggregates", sizes.aggregates, "validate aggregate dir"),
        ("lines", sizes.lines, "validate instance JSONL"),
    ):
        target, warm = str(paths[key]), _warm(paths[key])
        floor, one, all_cores = timed(
            [
                Job([*FLOOR, "parse", target], before=warm),
                Job([*EVALREG, "validate", "--jobs", "1", target], before=warm),
                Job([*EVALREG, "validate", "--jobs", str(cores), target], before=warm),
            ],
            repeat,
        )
        rows.append(
            (
                Row(f"{label}, --jobs 1", records, size(key), one, floor),
                Row(f"{label}, {many}", records, size(key), all_cores, floor),
            )
        )
        report.rows += rows[-1]
    (agg1, agg_n), (lines1, lines_n) = rows
    report.target("validate aggregate dir, 1 job / parse floor", agg1.ratio, 2, "x", below=True)
    report.target("validate instance JSONL, 1 job / parse floor", lines1.ratio, 2, "x", below=True)

    # check-jsonschema on the same files with the same schema (it cannot read JSONL)
    files = sorted(
        str(p.relative_to(paths["aggregates"])) for p in paths["aggregates"].rglob("*.json")
    )
    try:
        import check_jsonschema  # noqa: F401
    except ImportError:
        report.targets.append(
            Target("check-jsonschema / evalreg, aggregate dir", "not installed", ">= 10x", None)
        )
    else:
        command = [*CHECK_JSONSCHEMA, "--schemafile", str(AGGREGATE_SCHEMA), *files]
        [check] = timed([Job(command, cwd=paths["aggregates"], before=_warm(paths["aggregates"]))])
        report.rows.append(
            Row("check-jsonschema aggregate dir", len(files), agg1.size, check, agg1.floor)
        )
        report.target(
            "check-jsonschema / evalreg validate (1 job), aggregate dir",
            check.wall / agg1.run.wall,
            10,
            "x",
            below=False,
        )

    # migrate: against reading, parsing, serialising and writing the same records
    rows = []
    for key, records, to, label in (
        (
            "migrate_aggregates",
            sizes.migrate_aggregates,
            "0.2.0",
            "migrate aggregate 0.1.0 -> 0.2.0",
        ),
        ("migrate_lines", sizes.migrate_lines, "latest", "migrate instance 0.2.0 -> latest"),
    ):
        source, written = str(paths[key]), out / "floor"
        command = [*EVALREG, "migrate", "--to", to, source, "--out"]
        floor, one, all_cores = timed(
            [
                Job([*FLOOR, "rewrite", source, str(written)], before=_warm(paths[key], written)),
                Job(
                    [*command, str(out / "one"), "--jobs", "1"],
                    before=_warm(paths[key], out / "one"),
                ),
                Job(
                    [*command, str(out / "all"), "--jobs", str(cores)],
                    before=_warm(paths[key], out / "all"),
                ),
            ],
            repeat,
        )
        same = _tree_digest(out / "one") == _tree_digest(out / "all")
        rows.append(
            (
                Row(f"{label}, --jobs 1", records, size(key), one, floor),
                Row(f"{label}, {many}", records, size(key), all_cores, floor),
                same,
            )
        )
        report.rows += rows[-1][:2]
    (magg1, magg_n, same_agg), (mlines1, mlines_n, same_lines) = rows
    for row in (magg_n, mlines_n, magg1, mlines1):
        name = row.name.replace(", --jobs 1", ", 1 job").replace(f", {many}", ", all cores")
        report.target(f"{name} / rewrite floor", row.ratio, 3, "x", below=True)

    # the dry run against the run, on the same files
    dry_run_costs(
        [
            (label, paths[key], to)
            for key, to, label in (
                ("migrate_aggregates", "0.2.0", "migrate aggregate 0.1.0 -> 0.2.0"),
                ("migrate_lines", "latest", "migrate instance 0.2.0 -> latest"),
            )
        ],
        repeat,
        report,
        out,
    )

    # --jobs: throughput and identical output
    pairs = [(agg1, agg_n), (lines1, lines_n), (magg1, magg_n), (mlines1, mlines_n)]
    if cores < 2:
        report.targets.append(Target("--jobs 2 / --jobs 1 throughput", "one core", ">= 1.7x", None))
    else:
        # The machine's own ceiling: equal, independent pieces of pure-Python work, done by one
        # process and by one per core (a core may run faster while the others are idle).
        units = str(6 * cores)
        alone, together = timed(
            [Job([*FLOOR, "spin", units, "1"]), Job([*FLOOR, "spin", units, str(cores)])], repeat
        )
        for name, run in (("1 process", alone), (f"{cores} processes", together)):
            report.rows.append(Row(f"machine: pure-Python work, {name}", int(units), 0, run))
        ceiling = alone.wall / together.wall
        report.notes.append(
            f"machine ceiling for {many}: independent pure-Python work runs "
            f"{ceiling:.2f}x as fast in {cores} processes as in one"
        )
        shares = []
        for one, all_cores in pairs:
            name = one.name.replace(", --jobs 1", "")
            gain = one.run.wall / all_cores.run.wall
            report.target(f"{name}: {many} / --jobs 1 throughput", gain, 1.7, "x", below=False)
            shares.append(f"{name} {gain / ceiling:.2f}")
        report.notes.append("each --jobs gain over that ceiling: " + "; ".join(shares))
    same = same_agg and same_lines and all(a.run.stdout == b.run.stdout for a, b in pairs)
    problems = sum(row.run.stdout.count(b"\n") - 1 for row in (agg1, lines1))
    report.targets.append(
        Target(
            f"{many} output, files and {problems} problems identical to --jobs 1",
            "identical" if same else "different",
            "identical",
            same,
        )
    )

    # scaling out: --jobs 2 and a Dask cluster of two workers on the instance files
    try:
        import distributed  # noqa: F401
    except ImportError:
        report.targets.append(Target("Dask with 2 workers", "not installed", "dask extra", None))
    else:
        import scale

        inputs = {key: paths[key] for key in ("lines", "migrate_lines")}
        counts = {"lines": sizes.lines, "migrate_lines": sizes.migrate_lines}
        scale.measure(inputs, counts, timed, repeat, report, out / "scale")

    # memory: a large JSONL file, default jobs
    label = f"{sizes.memory_lines:,} lines ({size('memory_lines') / 1e9:.1f} GB)"
    source = str(paths["memory_lines"])
    validate, migrate = timed(
        [
            Job([*EVALREG, "validate", source]),
            Job(
                [*EVALREG, "migrate", "--to", "latest", "--out", str(out / "memory"), source],
                before=lambda: shutil.rmtree(out / "memory", ignore_errors=True),
            ),
        ],
        memory=True,
    )
    for name, run in (("validate", validate), ("migrate", migrate)):
        report.rows.append(
            Row(f"{name} {label}, all cores", sizes.memory_lines, size("memory_lines"), run)
        )
        report.target(
            f"peak memory (PSS, all processes), {name} {label}",
            run.pss / 1e6,
            150,
            " MB",
            below=True,
        )
        report.target(
            f"peak RSS of any one process, {name} {label}", run.rss / 1e6, 150, " MB", below=True
        )

    # start-up: one file, as a pre-commit hook runs it
    [run] = timed([Job([*EVALREG, "validate", str(paths["one"])])], max(repeat, 5))
    report.rows.append(Row("validate one file (start-up)", 1, size("one"), run))
    report.target("start-up: validate one file, wall", run.wall, 0.4, " s", below=True)
    shutil.rmtree(out, ignore_errors=True)
    return report


# -- the dry run against the run ----------------------------------------------------------------


def _cpu_seconds(command: Sequence[str], before: Callable[[], None] | None) -> tuple[float, int]:
    """Run `command` once; return the CPU seconds (user + system) it took, and its exit code.

    CPU time, not wall time: on a machine shared with other work, a process's own CPU seconds
    change far less from run to run than its wall time.
    """
    if before is not None:
        before()
    process = subprocess.Popen(
        command, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_utime + usage.ru_stime, process.returncode


DRY_RUN_LIMIT = 1.2
"""A dry run may cost this much of the run it plans (`migrate --out`), at most."""


def dry_run_costs(
    inputs: Sequence[tuple[str, Path, str]], repeat: int, report: Report, out: Path
) -> None:
    """Time `migrate --dry-run` against `migrate --out` on the same files, by CPU time.

    `inputs`: a label, the files and the target version of each migration benchmark. Both run
    with `--jobs 1` (one process, whose CPU time is all of the work), taking turns, the best of
    `repeat` each.
    """
    for label, source, to in inputs:
        base = [*EVALREG, "migrate", "--to", to, str(source), "--jobs", "1"]
        written = out / "dry-run-real"
        best = {"dry": float("inf"), "out": float("inf")}
        codes = set()
        for _ in range(repeat):
            for kind, command, before in (
                ("out", [*base, "--out", str(written)], _warm(source, written)),
                ("dry", [*base, "--dry-run"], _warm(source)),
            ):
                seconds, code = _cpu_seconds(command, before)
                best[kind] = min(best[kind], seconds)
                codes.add(code)
        shutil.rmtree(written, ignore_errors=True)
        ratio = best["dry"] / best["out"]
        report.notes.append(
            f"{label}: --dry-run {best['dry']:.2f} s, --out {best['out']:.2f} s of CPU time "
            f"(user + system, one process, best of {repeat}; CPU time, as the machine may be "
            f"shared), exit codes {sorted(codes)}"
        )
        report.target(
            f"{label}, --dry-run / --out, CPU time", ratio, DRY_RUN_LIMIT, "x", below=True
        )


def dry_run_only(data: Path, sizes: Sizes, repeat: int) -> Report:
    """Generate the two migration inputs (if missing) and time only the dry run against the run."""
    folder = data / "dry-run"
    aggregates = folder / f"aggregate-0.1.0-{sizes.migrate_aggregates}"
    lines = folder / f"instance-0.2.0-{sizes.migrate_lines}.jsonl"
    if not aggregates.exists():
        print(f"generating {aggregates} ...", flush=True)
        generate.write_aggregates(aggregates, sizes.migrate_aggregates, "0.1.0")
    if not lines.exists():
        print(f"generating {lines} ...", flush=True)
        generate.write_jsonl(lines, sizes.migrate_lines)
    report = Report()
    print("measuring ...", flush=True)
    dry_run_costs(
        [
            (
                f"migrate {sizes.migrate_aggregates:,} aggregates 0.1.0 -> 0.2.0",
                aggregates,
                "0.2.0",
            ),
            (f"migrate {sizes.migrate_lines:,} instance lines 0.2.0 -> latest", lines, "latest"),
        ],
        repeat,
        report,
        folder / "out",
    )
    return report


def render(report: Report) -> str:
    """Return the two tables as text."""
    lines = [
        f"{'run':<50} {'records':>9} {'MB':>8} {'wall s':>7} {'records/s':>10} {'MB/s':>6} "
        f"{'floor s':>7} {'ratio':>7} {'RSS MB':>6} {'PSS MB':>6} {'others':>6}",
    ]
    for row in report.rows:
        floor = f"{row.floor.wall:7.2f}" if row.floor else f"{'':7}"
        ratio = f"{row.ratio:6.2f}x" if row.floor else f"{'':7}"
        pss = f"{row.run.pss / 1e6:6.0f}" if row.run.pss else f"{'':6}"
        lines.append(
            f"{row.name:<50} {row.records:>9,} {row.size / 1e6:8.1f} {row.run.wall:7.2f} "
            f"{row.records / row.run.wall:10,.0f} {row.size / 1e6 / row.run.wall:6.1f} "
            f"{floor} {ratio} {row.run.rss / 1e6:6.0f} {pss} {row.run.others:6.0%}"
        )
    lines += ["", f"{'target':<78} {'measured':>10} {'limit':>10}  result"]
    for target in report.targets:
        result = "n/a" if target.met is None else "PASS" if target.met else "FAIL"
        lines.append(f"{target.name:<78} {target.measured:>10} {target.limit:>10}  {result}")
    if report.notes:
        lines += ["", *report.notes]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; return 1 when a target is missed (0 with --quick)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small inputs, one run each")
    parser.add_argument("--data", type=Path, default=HERE / "data", help="where the inputs go")
    parser.add_argument("--repeat", type=int, default=None, help="runs per figure (best kept)")
    parser.add_argument(
        "--idle",
        type=float,
        default=None,
        help=f"seconds to wait for an idle machine before each run (default {IDLE_TIMEOUT:g})",
    )
    parser.add_argument(
        "--dry-run-only",
        action="store_true",
        help="time only migrate --dry-run against migrate --out (CPU time), on their own inputs",
    )
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else FULL
    repeat = args.repeat or (1 if args.quick else 3)
    if args.dry_run_only:
        report = dry_run_only(args.data, sizes, repeat)
        print(f"\n{sys.platform}, Python {sys.version.split()[0]}, best of {repeat}\n")
        print(render(report))
        return 0 if args.quick or all(t.met is not False for t in report.targets) else 1
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    idle = args.idle if args.idle is not None else 0.0 if args.quick else IDLE_TIMEOUT
    report = benchmark(args.data, sizes, repeat, cores or 1, idle)
    print(f"\n{sys.platform}, {cores} cores, Python {sys.version.split()[0]}, best of {repeat}\n")
    print(render(report))
    missed = [t for t in report.targets if t.met is False]
    return 0 if args.quick or not missed else 1


if __name__ == "__main__":
    sys.exit(main())
