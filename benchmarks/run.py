"""Measure evalreg against the parse floor and other validators, and check every speed target.

    python benchmarks/run.py                  # full sizes: about 4 GB of data, some minutes
    python benchmarks/run.py --quick          # small sizes, no waiting: a smoke run
    python benchmarks/run.py --clock cpu      # ratios of CPU time, for a machine others share
    python benchmarks/run.py --only validate,startup      # some sections (see SECTIONS)
    python benchmarks/run.py --eee PATH/TO/every_eval_ever --eee-data DATASTORE

`benchmarks/scale.py` adds `--jobs 2` and a Dask cluster of two workers against `--jobs 1` on the
instance file, beside the machine's two-process ceiling.

The inputs are generated deterministically (`benchmarks/generate.py`) into `benchmarks/data/`
(git-ignored, kept between runs; `--data DIR` puts them elsewhere). Every figure is a whole
process, the best of `--repeat` runs, the runs compared taking turns; each is timed by wall clock
and by CPU time (user + system of the process and every process it waited for), and the ratios
and targets use the clock `--clock` names (wall by default; `cpu` where other work shares the
machine, since waiting for a core costs wall time but no CPU time). The floors are processes too
(`benchmarks/floor.py`): reading and `orjson.loads`-ing the same input, plus `orjson.dumps` and
writing for migrations. Beside them, what the same work costs at the least with evalreg's own
checks and steps: the check floor (also re-encoding and jsonschema-rs) for validate, the route
floor (also the family's steps and jsonschema-rs at the target) for migrate. Before each run the
benchmark waits for other processes to leave the machine idle (`others`: the share of the CPU
they took anyway; not with `--clock cpu`). Commands run as they would for a user: with Python's
bytecode cache on and standard output buffered (`PYTHONDONTWRITEBYTECODE` and
`PYTHONUNBUFFERED` are dropped from their environment), after one warm-up run that fills the
cache. RSS is the peak of the largest process; PSS (memory runs only) the peak summed over the
process and its workers, shared pages split among them. The exit code is 1 when a target is
missed (never with `--quick`).

With `--eee` (Every Eval Ever's `every_eval_ever` program, which needs Python 3.12 and so lives
in a virtual environment of its own) and `--eee-data` (a datastore: a folder holding `data/`),
its `validate` and `check-duplicates` run on the datastore's files against `evalreg validate`
with its rules (the same checks), as `benchmarks/conformance_eee.py` runs them.
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
INSTANCE_SCHEMA = ROOT / "schemas" / "eee.instance" / "0.2.0.schema.json"


@dataclass(frozen=True)
class Sizes:
    """How much data each measurement reads."""

    aggregates: int
    """Aggregate files (0.2.0) validated, one invalid in 2,000."""
    lines: int
    """Instance-level lines (0.2.0) validated, one invalid in 20,000 and one cut short."""
    migrate_aggregates: int
    """Aggregate files (0.2.0) migrated to the latest version."""
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


CLOCKS = ("wall", "cpu")


@dataclass
class Settings:
    """What the whole run measures by."""

    clock: str = "wall"
    """`wall` or `cpu`: which time the ratios and targets use."""


SETTINGS = Settings()


@dataclass
class Run:
    """The best of some runs of one command."""

    wall: float = float("inf")
    cpu: float = float("inf")
    """User + system seconds of the process and of every process it waited for (best run)."""
    others: float = 0.0
    """The share of the machine's CPU used by other processes during the best run."""
    pss: int = 0
    """Peak of the PSS summed over the process and its workers, bytes (0 without /proc)."""
    rss: int = 0
    """Peak RSS of the largest of those processes, bytes."""
    stdout: bytes = b""
    code: int = 0

    @property
    def seconds(self) -> float:
        """Return the time of the best run by the clock of the whole run (`SETTINGS.clock`)."""
        return self.cpu if SETTINGS.clock == "cpu" else self.wall


def _children_cpu() -> float:
    """Return the CPU seconds used so far by the waited-for descendants of this process."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return children.ru_utime + children.ru_stime


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
            ours, children = _ours(), _children_cpu()
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
            cpu = _children_cpu() - children
            pss, rss = sampler.stop()
            busy2, total2 = _cpu_times()
            others = max(0.0, (busy2 - busy) - (_ours() - ours)) / max(total2 - total, 1e-9)
            if wall < run.wall:
                run.wall, run.others = wall, others
            run.cpu = min(run.cpu, cpu)
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
        "migrate_aggregates": data / "aggregate-migrate-0.2.0",
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
            lambda p: generate.write_aggregates(p, sizes.migrate_aggregates, "0.2.0"),
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
        """Return the time over the floor's (by the clock of the run)."""
        return self.run.seconds / self.floor.seconds if self.floor else float("nan")


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


SECTIONS = (
    "validate",
    "check-jsonschema",
    "migrate",
    "dry-run",
    "jobs",
    "scale",
    "memory",
    "startup",
    "eee",
)
"""The parts of the benchmark, in the order they run (`--only` picks some)."""


@dataclass
class Bench:
    """One benchmark run: its inputs, its settings, and what it measured so far."""

    paths: dict[str, Path]
    sizes: Sizes
    repeat: int
    cores: int
    idle: float
    out: Path
    report: Report = field(default_factory=Report)
    validated: list[tuple[Row, Row]] = field(default_factory=list)
    """Validate rows (1 job, all cores) per input, for the --jobs comparison."""
    migrated: list[tuple[Row, Row, bool]] = field(default_factory=list)
    """Migrate rows (1 job, all cores) per input, and whether their outputs were identical."""

    def timed(self, jobs: Sequence[Job], repeat: int = 1, *, memory: bool = False) -> list[Run]:
        """Run and time `jobs` (see `measure`)."""
        return measure(jobs, repeat, memory=memory, idle=self.idle)

    def size(self, key: str) -> int:
        """Return the bytes of one input."""
        return _size(self.paths[key])

    @property
    def many(self) -> str:
        """Return the option that uses every core."""
        return f"--jobs {self.cores}"


def validate_section(bench: Bench) -> None:
    """Validate with rules (1 job, all cores) and without, against the parse floor."""
    paths, sizes, report = bench.paths, bench.sizes, bench.report
    for key, records, label, schema in (
        ("aggregates", sizes.aggregates, "validate aggregate dir", AGGREGATE_SCHEMA),
        ("lines", sizes.lines, "validate instance JSONL", INSTANCE_SCHEMA),
    ):
        target, warm = str(paths[key]), _warm(paths[key])
        floor, least, one, all_cores, bare = bench.timed(
            [
                Job([*FLOOR, "parse", target], before=warm),
                Job([*FLOOR, "check", str(schema), target], before=warm),
                Job([*EVALREG, "validate", "--jobs", "1", target], before=warm),
                Job([*EVALREG, "validate", "--jobs", str(bench.cores), target], before=warm),
                Job([*EVALREG, "validate", "--no-rules", "--jobs", "1", target], before=warm),
            ],
            bench.repeat,
        )
        rows = (
            Row(f"{label}, --jobs 1", records, bench.size(key), one, floor),
            Row(f"{label}, {bench.many}", records, bench.size(key), all_cores, floor),
        )
        no_rules = Row(f"{label}, --no-rules, --jobs 1", records, bench.size(key), bare, floor)
        checked = Row(f"{label}, the check floor", records, bench.size(key), least, floor)
        bench.validated.append(rows)
        report.rows += [*rows, no_rules, checked]
        report.notes.append(
            f"{label}: the check floor (parse, re-encode, jsonschema-rs; floor.py check) is "
            f"{checked.ratio:.2f}x the parse floor; against it, validate --no-rules is "
            f"{bare.seconds / least.seconds:.2f}x and validate with rules "
            f"{one.seconds / least.seconds:.2f}x"
        )
        report.target(f"{label}, 1 job / parse floor", rows[0].ratio, 2, "x", below=True)
        report.target(
            f"{label}, --no-rules, 1 job / parse floor", no_rules.ratio, 1.7, "x", below=True
        )


def check_jsonschema_section(bench: Bench) -> None:
    """check-jsonschema on the aggregate files with the same schema (it cannot read JSONL)."""
    paths, report = bench.paths, bench.report
    files = sorted(
        str(p.relative_to(paths["aggregates"])) for p in paths["aggregates"].rglob("*.json")
    )
    name = "check-jsonschema / evalreg validate (1 job), aggregate dir"
    try:
        import check_jsonschema  # noqa: F401
    except ImportError:
        report.targets.append(Target(name, "not installed", ">= 10x", None))
        return
    aggregates = str(paths["aggregates"])
    command = [*CHECK_JSONSCHEMA, "--schemafile", str(AGGREGATE_SCHEMA), *files]
    warm = _warm(paths["aggregates"])
    check, ours = bench.timed(
        [
            Job(command, cwd=paths["aggregates"], before=warm),
            Job([*EVALREG, "validate", "--jobs", "1", aggregates], before=warm),
        ],
        bench.repeat,
    )
    report.rows.append(
        Row("check-jsonschema aggregate dir", len(files), bench.size("aggregates"), check)
    )
    report.target(name, check.seconds / ours.seconds, 10, "x", below=False)


def migrate_section(bench: Bench) -> None:
    """Migrate to the latest version (1 job, all cores) against read, parse, dump and write."""
    paths, sizes, report, out = bench.paths, bench.sizes, bench.report, bench.out
    for key, records, label, family in (
        (
            "migrate_aggregates",
            sizes.migrate_aggregates,
            "migrate aggregate 0.2.0 -> latest",
            "eee.aggregate",
        ),
        ("migrate_lines", sizes.migrate_lines, "migrate instance 0.2.0 -> latest", "eee.instance"),
    ):
        source, written, routed = str(paths[key]), out / "floor", out / "route"
        command = [*EVALREG, "migrate", "--to", "latest", source, "--out"]
        steps, latest, schema = _route_of(family)
        floor, least, one, all_cores = bench.timed(
            [
                Job([*FLOOR, "rewrite", source, str(written)], before=_warm(paths[key], written)),
                Job(
                    [
                        *FLOOR,
                        "route",
                        str(steps),
                        "0.2.0",
                        latest,
                        str(schema),
                        source,
                        str(routed),
                    ],
                    before=_warm(paths[key], routed),
                ),
                Job(
                    [*command, str(out / "one"), "--jobs", "1"],
                    before=_warm(paths[key], out / "one"),
                ),
                Job(
                    [*command, str(out / "all"), "--jobs", str(bench.cores)],
                    before=_warm(paths[key], out / "all"),
                ),
            ],
            bench.repeat,
        )
        same = _tree_digest(out / "one") == _tree_digest(out / "all")
        rows = (
            Row(f"{label}, --jobs 1", records, bench.size(key), one, floor),
            Row(f"{label}, {bench.many}", records, bench.size(key), all_cores, floor),
        )
        bench.migrated.append((*rows, same))
        route = Row(f"{label}, the route floor", records, bench.size(key), least, floor)
        report.rows += [*rows, route]
        report.notes.append(
            f"{label}: the route floor (parse, re-encode, the family's own steps, jsonschema-rs "
            f"at the target, serialise, a plain write; floor.py route) is {route.ratio:.2f}x the "
            f"rewrite floor; against it, migrate --jobs 1 is {one.seconds / least.seconds:.2f}x"
        )
        for row, name in ((rows[0], "1 job"), (rows[1], "all cores")):
            report.target(f"{label}, {name} / rewrite floor", row.ratio, 2.5, "x", below=True)


def _route_of(family: str) -> tuple[Path, str, Path]:
    """Return the folder of a family's steps, its latest version and that version's schema."""
    versions = [p.name.removesuffix(".schema.json") for p in (ROOT / "schemas" / family).iterdir()]
    latest = max(versions, key=lambda v: tuple(int(n) for n in v.split(".")))
    return ROOT / "migrations" / family, latest, ROOT / "schemas" / family / f"{latest}.schema.json"


DRY_RUN_LIMIT = 1.2
"""A dry run may cost this much of the run it plans (`migrate --out`), at most."""


def dry_run_section(bench: Bench) -> None:
    """`migrate --dry-run` against `migrate --out` on the same files (1 job, taking turns)."""
    paths, sizes, report, out = bench.paths, bench.sizes, bench.report, bench.out
    for key, records, label in (
        ("migrate_aggregates", sizes.migrate_aggregates, "migrate aggregate --dry-run"),
        ("migrate_lines", sizes.migrate_lines, "migrate instance --dry-run"),
    ):
        source = str(paths[key])
        command = [*EVALREG, "migrate", "--to", "latest", source, "--jobs", "1"]
        written, dry = bench.timed(
            [
                Job([*command, "--out", str(out / "one")], before=_warm(paths[key], out / "one")),
                Job([*command, "--dry-run"], before=_warm(paths[key])),
            ],
            bench.repeat,
        )
        row = Row(f"{label} (against --out)", records, bench.size(key), dry, written)
        report.rows.append(row)
        report.target(f"{label} / migrate --out", row.ratio, DRY_RUN_LIMIT, "x", below=True)


def jobs_section(bench: Bench) -> None:
    """--jobs: throughput against one job and the machine's ceiling, and identical output."""
    report, cores, many = bench.report, bench.cores, bench.many
    pairs = [*bench.validated, *((one, all_cores) for one, all_cores, _ in bench.migrated)]
    if not pairs:
        return
    if cores < 2:
        report.targets.append(Target("--jobs 2 / --jobs 1 throughput", "one core", ">= 1.7x", None))
    elif SETTINGS.clock == "cpu":
        # A gain in throughput is a gain in wall time: CPU time cannot show it.
        report.targets.append(Target(f"{many} / --jobs 1 throughput", "wall only", ">= 1.7x", None))
    else:
        # The machine's own ceiling: equal, independent pieces of pure-Python work, done by one
        # process and by one per core (a core may run faster while the others are idle).
        units = str(6 * cores)
        alone, together = bench.timed(
            [Job([*FLOOR, "spin", units, "1"]), Job([*FLOOR, "spin", units, str(cores)])],
            bench.repeat,
        )
        for name, run in (("1 process", alone), (f"{cores} processes", together)):
            report.rows.append(Row(f"machine: pure-Python work, {name}", int(units), 0, run))
        ceiling = alone.wall / together.wall
        report.notes.append(
            f"machine ceiling for {many}: independent pure-Python work runs "
            f"{ceiling:.2f}x as fast in {cores} processes as in one (wall clock)"
        )
        shares = []
        for one, all_cores in pairs:
            name = one.name.replace(", --jobs 1", "")
            gain = one.run.wall / all_cores.run.wall
            report.target(f"{name}: {many} / --jobs 1 throughput", gain, 1.7, "x", below=False)
            shares.append(f"{name} {gain / ceiling:.2f}")
        report.notes.append("each --jobs gain over that ceiling: " + "; ".join(shares))
    same = all(same for *_, same in bench.migrated) and all(
        a.run.stdout == b.run.stdout for a, b in pairs
    )
    problems = sum(one.run.stdout.count(b"\n") - 1 for one, _ in bench.validated)
    report.targets.append(
        Target(
            f"{many} output, files and {problems} problems identical to --jobs 1",
            "identical" if same else "different",
            "identical",
            same,
        )
    )


def scale_section(bench: Bench) -> None:
    """Scaling out: --jobs 2 and a Dask cluster of two workers on the instance files."""
    try:
        import distributed  # noqa: F401
    except ImportError:
        bench.report.targets.append(
            Target("Dask with 2 workers", "not installed", "dask extra", None)
        )
        return
    import scale

    inputs = {key: bench.paths[key] for key in ("lines", "migrate_lines")}
    counts = {"lines": bench.sizes.lines, "migrate_lines": bench.sizes.migrate_lines}
    scale.measure(inputs, counts, bench.timed, bench.repeat, bench.report, bench.out / "scale")


def memory_section(bench: Bench) -> None:
    """Peak memory of validate and migrate of a large JSONL file, default jobs."""
    sizes, report, out = bench.sizes, bench.report, bench.out
    label = f"{sizes.memory_lines:,} lines ({bench.size('memory_lines') / 1e9:.1f} GB)"
    source = str(bench.paths["memory_lines"])
    validate, migrate = bench.timed(
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
        size = bench.size("memory_lines")
        report.rows.append(Row(f"{name} {label}, all cores", sizes.memory_lines, size, run))
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


STARTUP_LIMITS = {"version": 0.08, "import": 0.08, "validate": 0.15}
"""Seconds each start-up may take: `evalreg --version`, `import evalreg`, validating one file."""


def startup_section(bench: Bench) -> None:
    """Start-up: `evalreg --version`, `import evalreg`, and one file validated as a hook would.

    The floor is a process that starts Python, reads the same file and parses it with orjson.
    """
    one = bench.paths["one"]
    jobs = {
        "floor": Job([*FLOOR, "parse", str(one.parent)]),
        "version": Job([*EVALREG, "--version"]),
        "import": Job([PYTHON, "-c", "import evalreg"]),
        "validate": Job([*EVALREG, "validate", str(one)]),
    }
    runs = dict(zip(jobs, bench.timed(list(jobs.values()), max(bench.repeat, 5)), strict=True))
    floor = runs["floor"]
    names = {
        "version": "start-up: evalreg --version",
        "import": 'start-up: python -c "import evalreg"',
        "validate": "start-up: evalreg validate one file",
    }
    bench.report.rows.append(Row("start-up floor: python, read and parse one file", 1, 0, floor))
    for key, name in names.items():
        run = runs[key]
        bench.report.rows.append(Row(name, 1, bench.size("one"), run, floor))
        bench.report.target(
            f"{name} ({SETTINGS.clock})", run.seconds, STARTUP_LIMITS[key], " s", below=True
        )


def eee_section(bench: Bench, eee: str | None, datastore: Path | None) -> None:
    """Every Eval Ever's validator and duplicate check against `evalreg validate` with its rules.

    Both read the same files of a real datastore, as whole processes. evalreg is judged with
    `--jobs 1`: Every Eval Ever's validator runs in one process, so both use one core; all cores
    are shown too.
    """
    name = "every_eval_ever validate + check-duplicates / evalreg validate --jobs 1"
    if eee is None or datastore is None:
        bench.report.targets.append(Target(name, "not given", ">= 5x", None))
        bench.report.notes.append(
            "the Every Eval Ever comparison needs --eee PATH/TO/every_eval_ever and "
            "--eee-data DATASTORE"
        )
        return
    import conformance_eee

    data = conformance_eee.data_folder(datastore)
    files = conformance_eee.datastore_files(data)
    theirs = Run()
    for _ in range(bench.repeat):
        wait_until_idle(bench.idle)
        side = conformance_eee.run_eee(eee, files)
        theirs.wall, theirs.cpu = min(theirs.wall, side.seconds), min(theirs.cpu, side.cpu)
    one, all_cores = bench.timed(
        [
            Job(conformance_eee.evalreg_command(data, 1, [])),
            Job(conformance_eee.evalreg_command(data, bench.cores, [])),
        ],
        bench.repeat,
    )
    size = sum(os.path.getsize(f) for f in files)
    bench.report.rows += [
        Row("every_eval_ever validate + check-duplicates", len(files), size, theirs),
        Row("evalreg validate (EEE datastore), --jobs 1", len(files), size, one),
        Row(f"evalreg validate (EEE datastore), {bench.many}", len(files), size, all_cores),
    ]
    bench.report.target(name, theirs.seconds / one.seconds, 5, "x", below=False)
    bench.report.notes.append(
        f"every_eval_ever on {len(files):,} files of {datastore}: "
        f"{theirs.seconds / all_cores.seconds:.1f}x the time of evalreg with {bench.many}"
    )


def benchmark(
    data: Path,
    sizes: Sizes,
    repeat: int,
    cores: int,
    idle: float,
    only: Sequence[str] = SECTIONS,
    eee: tuple[str | None, Path | None] = (None, None),
) -> Report:
    """Run the measurements of the sections `only`; return the rows and the targets."""
    bench = Bench(prepare_data(data, sizes), sizes, repeat, cores, idle, data / "out")
    print("measuring ...", flush=True)
    # warm up: the bytecode cache of evalreg and its dependencies, the files in the page cache
    warm = [*EVALREG, "validate", str(bench.paths["one"])]
    subprocess.run(warm, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    sections: dict[str, Callable[[Bench], None]] = {
        "validate": validate_section,
        "check-jsonschema": check_jsonschema_section,
        "migrate": migrate_section,
        "dry-run": dry_run_section,
        "jobs": jobs_section,
        "scale": scale_section,
        "memory": memory_section,
        "startup": startup_section,
        "eee": lambda bench: eee_section(bench, *eee),
    }
    for name in SECTIONS:
        if name in only:
            sections[name](bench)
    shutil.rmtree(bench.out, ignore_errors=True)
    return bench.report


def render(report: Report) -> str:
    """Return the two tables as text."""
    lines = [
        f"{'run':<50} {'records':>9} {'MB':>8} {'wall s':>7} {'CPU s':>7} {'records/s':>10} "
        f"{'MB/s':>6} {'floor s':>7} {'ratio':>7} {'RSS MB':>6} {'PSS MB':>6} {'others':>6}",
    ]
    for row in report.rows:
        floor = f"{row.floor.seconds:7.2f}" if row.floor else f"{'':7}"
        ratio = f"{row.ratio:6.2f}x" if row.floor else f"{'':7}"
        pss = f"{row.run.pss / 1e6:6.0f}" if row.run.pss else f"{'':6}"
        seconds = max(row.run.seconds, 1e-9)
        lines.append(
            f"{row.name:<50} {row.records:>9,} {row.size / 1e6:8.1f} {row.run.wall:7.2f} "
            f"{row.run.cpu:7.2f} {row.records / seconds:10,.0f} {row.size / 1e6 / seconds:6.1f} "
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
    parser.add_argument(
        "--data",
        type=Path,
        default=None,
        help="where the inputs go (default benchmarks/data, benchmarks/data-quick with --quick: "
        "a smoke run leaves the full inputs as they are)",
    )
    parser.add_argument("--repeat", type=int, default=None, help="runs per figure (best kept)")
    parser.add_argument(
        "--idle",
        type=float,
        default=None,
        help=f"seconds to wait for an idle machine before each run (default {IDLE_TIMEOUT:g}; "
        "0 with --quick or --clock cpu)",
    )
    parser.add_argument(
        "--clock",
        choices=CLOCKS,
        default="wall",
        help="the time ratios and targets use: wall (a quiet machine) or cpu (user + system "
        "of whole processes, for a machine others share)",
    )
    parser.add_argument(
        "--only",
        default=",".join(SECTIONS),
        help=f"comma-separated sections to run (default all: {','.join(SECTIONS)})",
    )
    parser.add_argument("--eee", help="Every Eval Ever's every_eval_ever program")
    parser.add_argument(
        "--eee-data", type=Path, help="a datastore (a folder holding data/) for the --eee run"
    )
    args = parser.parse_args(argv)
    only = [name.strip() for name in args.only.split(",") if name.strip()]
    unknown = sorted(set(only) - set(SECTIONS))
    if unknown:
        parser.error(f"unknown sections: {', '.join(unknown)} (known: {', '.join(SECTIONS)})")
    SETTINGS.clock = args.clock
    sizes = QUICK if args.quick else FULL
    repeat = args.repeat or (1 if args.quick else 3)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    quiet = args.quick or args.clock == "cpu"
    idle = args.idle if args.idle is not None else 0.0 if quiet else IDLE_TIMEOUT
    data = args.data or HERE / ("data-quick" if args.quick else "data")
    report = benchmark(data, sizes, repeat, cores or 1, idle, only, (args.eee, args.eee_data))
    print(
        f"\n{sys.platform}, {cores} cores, Python {sys.version.split()[0]}, best of {repeat}, "
        f"ratios by {'CPU time (user + system)' if args.clock == 'cpu' else 'wall clock'}\n"
    )
    print(render(report))
    missed = [t for t in report.targets if t.met is False]
    return 0 if args.quick or not missed else 1


if __name__ == "__main__":
    sys.exit(main())
