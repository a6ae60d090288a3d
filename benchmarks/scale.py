"""Scaling out: `--jobs 2` and a Dask cluster of two workers against `--jobs 1`, and the ceiling.

    python benchmarks/scale.py                    # the 200,000-line instance file, best of 3
    python benchmarks/scale.py --quick            # small file, one run: a smoke run
    python benchmarks/scale.py --compare DIR      # also `--jobs 2` migrate with the evalreg of DIR

`benchmarks/run.py` runs these measurements too. On the 200,000-line instance file, validate
(0.2.0, a few invalid lines) and migrate (0.2.0 -> latest, every line written) each run with
`--jobs 1`, `--jobs 2`, and `--scheduler ADDRESS` on a Dask cluster of two single-threaded
workers started beforehand on 127.0.0.1 (as a cluster user has one running), taking turns with
the machine's ceiling: the same pure-Python work done by one process and by two. The gain of
`--jobs 2` over `--jobs 1` is then given as a share of that ceiling (target: 0.85 or more).
`--scheduler local`, which starts its cluster itself, is timed once. With `--compare DIR` the
migration with `--jobs 2` also runs with the evalreg package of another checkout (DIR on
PYTHONPATH), so that two designs are timed in the same conditions.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import generate  # noqa: E402
import run as bench  # noqa: E402

DASK = Path(sys.executable).with_name("dask")
SHARE_TARGET = 0.85


@contextlib.contextmanager
def cluster(workers: int = 2) -> Iterator[str]:
    """Start a Dask scheduler and `workers` one-thread workers on 127.0.0.1; yield its address."""
    folder = Path(tempfile.mkdtemp(prefix="evalreg-dask-"))
    address_file = folder / "scheduler.json"
    common = ["--no-dashboard", "--scheduler-file", str(address_file)]
    processes: list[subprocess.Popen[bytes]] = []
    log = (folder / "cluster.log").open("wb")
    try:
        scheduler = [str(DASK), "scheduler", "--host", "127.0.0.1", "--port", "0", *common]
        processes.append(subprocess.Popen(scheduler, stdout=log, stderr=log, cwd=folder))
        deadline = time.monotonic() + 60
        while not address_file.exists() or not address_file.read_text().strip():
            if time.monotonic() > deadline:
                raise RuntimeError(f"the scheduler did not start: see {folder / 'cluster.log'}")
            time.sleep(0.2)
        address = str(json.loads(address_file.read_text())["address"])
        worker = [str(DASK), "worker", "--nthreads", "1", "--host", "127.0.0.1", *common]
        for _ in range(workers):
            processes.append(subprocess.Popen(worker, stdout=log, stderr=log, cwd=folder))
        import distributed

        with distributed.Client(address, timeout=60) as client:
            client.wait_for_workers(workers, timeout=60)
        yield address
    finally:
        for process in reversed(processes):
            process.terminate()
        for process in reversed(processes):
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        log.close()
        shutil.rmtree(folder, ignore_errors=True)


Timed = Callable[..., list[bench.Run]]


def _job(
    label: str, source: Path, options: Sequence[str], target: Path, env: str = ""
) -> bench.Job:
    """Return the run of `evalreg validate` or `migrate` (into `target`) with `options`."""
    if label == "validate":
        command = [*bench.EVALREG, "validate", str(source), *options]
        return bench.Job(command, before=bench._warm(source))
    command = [*bench.EVALREG, "migrate", "--to", "latest", str(source), "--out", str(target)]
    prefix = ["env", f"PYTHONPATH={env}"] if env else []  # another checkout's evalreg
    command = [*prefix, *command, *options]
    return bench.Job(command, before=bench._warm(source, target))


def measure(
    paths: dict[str, Path],
    counts: dict[str, int],
    timed: Timed,
    repeat: int,
    report: bench.Report,
    out: Path,
    compare: Path | None = None,
) -> None:
    """Time validate and migrate of the instance files by one process, two, and two Dask workers.

    Adds rows, targets and notes to `report`.
    """
    spin = [*bench.FLOOR, "spin", "12"]
    with cluster(2) as address:
        dask = ["--scheduler", address]
        for key, label in (("lines", "validate"), ("migrate_lines", "migrate")):
            source, records = paths[key], counts[key]

            def job(options: Sequence[str], name: str, env: str = "") -> bench.Job:
                return _job(label, source, options, out / name, env)  # noqa: B023

            jobs = [
                bench.Job([*spin, "1"]),
                bench.Job([*spin, "2"]),
                job(["--jobs", "1"], "one"),
                job(["--jobs", "2"], "two"),
                job(dask, "dask"),
            ]
            if compare is not None and label == "migrate":
                jobs.append(job(["--jobs", "2"], "other", str(compare)))
            runs = timed(jobs, repeat)
            alone, together, one, two, on_dask = runs[:5]
            ceiling = alone.wall / together.wall
            gain = one.wall / two.wall
            size = bench._size(source)
            name = f"{label} instance JSONL"
            report.rows += [
                bench.Row(f"scale: {name}, --jobs 1", records, size, one),
                bench.Row(f"scale: {name}, --jobs 2", records, size, two),
                bench.Row(f"scale: {name}, Dask, 2 workers", records, size, on_dask),
                bench.Row(f"scale: machine, pure-Python work, 1 process ({label})", 12, 0, alone),
                bench.Row(
                    f"scale: machine, pure-Python work, 2 processes ({label})", 12, 0, together
                ),
            ]
            if len(runs) > 5:
                report.rows.append(
                    bench.Row(f"scale: {name}, --jobs 2, {compare}", records, size, runs[5])
                )
                report.notes.append(
                    f"{label} --jobs 2: this checkout {two.wall:.2f} s, "
                    f"{compare} {runs[5].wall:.2f} s"
                )
            same = (
                one.stdout == two.stdout == on_dask.stdout and one.code == two.code == on_dask.code
            )
            if label == "migrate":
                digests = {bench._tree_digest(out / n) for n in ("one", "two", "dask")}
                same = same and len(digests) == 1
            report.targets.append(
                bench.Target(
                    f"{name}: --jobs 2 and Dask output, files and exit status equal --jobs 1",
                    "identical" if same else "different",
                    "identical",
                    same,
                )
            )
            report.target(
                f"{name}: --jobs 2 gain ({gain:.2f}x) / machine ceiling ({ceiling:.2f}x)",
                gain / ceiling,
                SHARE_TARGET,
                "",
                below=False,
            )
            report.notes.append(
                f"{name}: --jobs 1 {one.wall:.2f} s, --jobs 2 {two.wall:.2f} s ({gain:.2f}x), "
                f"Dask with 2 workers {on_dask.wall:.2f} s ({one.wall / on_dask.wall:.2f}x); "
                f"machine ceiling {ceiling:.2f}x, so --jobs 2 reaches {gain / ceiling:.2f} of it"
            )
    # A local cluster started by the command itself: its start-up is part of the time.
    local = ["--scheduler", "local", "--jobs", "2"]
    [started] = timed([_job("validate", paths["lines"], local, out)])
    size = bench._size(paths["lines"])
    name = "scale: validate instance JSONL, --scheduler local (start-up included)"
    report.rows.append(bench.Row(name, counts["lines"], size, started))
    shutil.rmtree(out, ignore_errors=True)


def prepare(data: Path, lines: int) -> dict[str, Path]:
    """Generate the two instance files if they are missing or of another size."""
    paths = {
        "lines": data / f"scale-instance-{lines}.jsonl",
        "migrate_lines": data / f"scale-instance-migrate-{lines}.jsonl",
    }
    for key, invalid in (("lines", 20_000), ("migrate_lines", 0)):
        stamp = paths[key].with_suffix(".stamp")
        wanted = f"{lines} {invalid} {generate.SEED}"
        if paths[key].exists() and stamp.exists() and stamp.read_text() == wanted:
            continue
        print(f"generating {paths[key]} ({lines:,} lines) ...", flush=True)
        generate.write_jsonl(paths[key], lines, invalid_every=invalid)
        stamp.write_text(wanted)
    return paths


def main(argv: Sequence[str] | None = None) -> int:
    """Run the scaling measurements on their own; return 1 when a target is missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small file, one run each")
    parser.add_argument("--data", type=Path, default=HERE / "data", help="where the inputs go")
    parser.add_argument("--repeat", type=int, default=None, help="runs per figure (best kept)")
    parser.add_argument(
        "--idle", type=float, default=None, help="seconds to wait for an idle machine"
    )
    parser.add_argument("--compare", type=Path, default=None, help="another checkout to time")
    args = parser.parse_args(argv)
    lines = 3_000 if args.quick else 200_000
    repeat = args.repeat or (1 if args.quick else 3)
    idle = args.idle if args.idle is not None else 0.0 if args.quick else bench.IDLE_TIMEOUT
    paths = prepare(args.data, lines)
    report = bench.Report()

    def timed(jobs: Sequence[bench.Job], repeat: int = 1) -> list[bench.Run]:
        return bench.measure(jobs, repeat, idle=idle)

    counts = dict.fromkeys(paths, lines)
    measure(paths, counts, timed, repeat, report, args.data / "scale-out", args.compare)
    python = sys.version.split()[0]
    print(f"\n{sys.platform}, {os.cpu_count()} cores, Python {python}, best of {repeat}\n")
    print(bench.render(report))
    missed = [t for t in report.targets if t.met is False]
    return 0 if args.quick or not missed else 1


if __name__ == "__main__":
    sys.exit(main())
