"""Tables from real and generated data: `evalreg export` against the readers and the targets.

    python benchmarks/tables.py                      # everything (some minutes, ~4 GB of data)
    python benchmarks/tables.py --quick              # small generated sizes, one run each
    python benchmarks/tables.py --skip-real          # generated data only
    python benchmarks/tables.py --eee PATH           # Every Eval Ever's git directory

Real data: every distinct version of `data/**/*.json` and `*_samples.jsonl` in any commit of
Every Eval Ever's history (`--eee`, default the mirror at /work/.mirror/...) is written into a
scratch folder (`--scratch`, outside the repository, never committed), one folder per blob.
Files whose first record states a version evalreg does not know (EEE's 0.0.1 drafts) or that
hold no record are set aside and counted. Then, for each family, in the same run:

- `evalreg export --to latest --format parquet` writes one file; the exit code, the rows, and
  the records named as failed are printed, and rows + failed must be every record read;
- the file is read back by pyarrow (its schema must equal `arrow_schema(family, "0.3.0")`,
  metadata included), pandas, polars, DuckDB and `datasets.load_dataset("parquet")` (its
  features must be those of that schema);
- `datasets.load_dataset("json")` on the same raw files: what it does (it fails, or loses);
- round trip: `from_arrow` of an export with `--provenance` equals, record for record (JSON
  values, exact numbers), what `evalreg migrate --to latest --out` writes for the same files;
- aggregates: `--explode /evaluation_results` rows equal the evaluation results of the files.

Generated data (`benchmarks/generate.py`, into `--data`, as `run.py` makes it): export of the
200,000-line instance file against `migrate --out` of it, by CPU time (user + system of the
process and its workers, best of `--repeat`, taking turns), with one job and with every core
(target: 1.5x); and export of the 1,000,000-line file with every core: peak memory (PSS summed
over the processes, as `run.py` samples it; target: 300 MB). Exit code 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import generate  # noqa: E402
import run as bench  # noqa: E402

EVALREG = [sys.executable, "-m", "evalreg"]
MIRROR = Path("/work/.mirror/evaleval+every_eval_ever/repo")
GLOBS = ("data/*.json", "data/**/*.json", "*_samples.jsonl", "**/*_samples.jsonl")
FAMILIES = {"eee.aggregate": ("*.json",), "eee.instance": ("*.jsonl",)}
SPEED_TARGET, MEMORY_TARGET = 1.5, 300.0


@dataclass
class Result:
    """A line of the report: what was measured, and whether it meets its target."""

    name: str
    measured: str
    ok: bool | None = None


# -- the history -----------------------------------------------------------------------------


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", f"--git-dir={repo}", *args], capture_output=True, text=True, check=True
    ).stdout


def collect(repo: Path, scratch: Path) -> dict[str, int]:
    """Write every distinct blob of the history's data files under `scratch`; count them.

    Each blob goes to `scratch/<sha[:2]>/<sha>/<its first path>`. Files evalreg has no version
    for are moved to `scratch/../set-aside/`.
    """
    import evalreg

    log = _git(
        repo,
        "log",
        "--all",
        "-m",
        "--no-renames",
        "--format=C %H",
        "--raw",
        "--no-abbrev",
        "--",
        *GLOBS,
    )
    first: dict[str, str] = {}
    for line in log.splitlines():
        if line.startswith(":"):
            meta, path = line.split("\t", 1)
            sha, status = meta.split()[3], meta.split()[4]
            if not status.startswith("D") and sha.strip("0"):
                first.setdefault(sha, path)
    known = {v for f in FAMILIES for v in evalreg.default_registry().versions(f)}
    aside = scratch.parent / "set-aside"
    counts = {"blobs": len(first), "kept": 0, "unknown version": 0, "no record": 0, "missing": 0}
    process = subprocess.Popen(
        ["git", f"--git-dir={repo}", "cat-file", "--batch"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert process.stdin is not None and process.stdout is not None
    for sha, path in sorted(first.items(), key=lambda item: item[1]):
        process.stdin.write(sha.encode() + b"\n")
        process.stdin.flush()
        header = process.stdout.readline().split()
        if header[1] == b"missing":
            counts["missing"] += 1
            continue
        data = process.stdout.read(int(header[2]))
        process.stdout.read(1)
        version = _stated(data, path)
        if version is None:
            counts["no record"] += 1
            target = aside / sha / path
        elif version.removeprefix("instance_level_eval_") not in known:
            counts["unknown version"] += 1
            target = aside / sha / path
        else:
            counts["kept"] += 1
            target = scratch / sha[:2] / sha / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    process.stdin.close()
    process.wait()
    return counts


def _stated(data: bytes, path: str) -> str | None:
    """Return the `schema_version` of a file's first record (None: no record, or none said)."""
    try:
        if path.endswith(".jsonl"):
            line = next((x for x in data.splitlines() if x.strip()), b"")
            record = json.loads(line)
        else:
            record = json.loads(data)
    except ValueError:
        return None
    version = record.get("schema_version") if isinstance(record, dict) else None
    return version if isinstance(version, str) else None


# -- the real data -------------------------------------------------------------------------------


def _evalreg(*args: str) -> tuple[int, str, str]:
    done = subprocess.run([*EVALREG, *args], capture_output=True, text=True, check=False)
    return done.returncode, done.stdout, done.stderr


def _records(scratch: Path, family: str) -> tuple[int, int]:
    """Return how many records the family's files under `scratch` hold, and how many of
    them are unreadable (as `evalreg.load` reads them)."""
    import evalreg

    loaded = evalreg.load(scratch, include=FAMILIES[family], errors="collect")
    read = sum(1 for _ in loaded)
    return read + len(loaded.problems), len(loaded.problems)


def real_data(scratch: Path, out: Path, results: list[Result]) -> None:
    """Export the real history, read it back everywhere, and check the round trip."""
    import evalreg

    out.mkdir(parents=True, exist_ok=True)
    for family, include in FAMILIES.items():
        target = out / f"{family}.parquet"
        started = time.perf_counter()
        code, stdout, stderr = _evalreg(
            "export",
            str(scratch),
            "--family",
            family,
            "--to",
            "latest",
            "--format",
            "parquet",
            "--out",
            str(target),
        )
        seconds = time.perf_counter() - started
        failed = [line for line in stdout.splitlines() if line]
        total, _ = _records(scratch, family)
        print(f"\n{family}: {stderr.strip()} (exit {code}, {seconds:.0f} s)")
        for line in failed[:8]:
            print("   ", line[:220])
        import pyarrow.parquet as pq

        table = pq.read_table(target)
        results.append(
            Result(
                f"{family}: every record a row or named as failed ({total:,} records)",
                f"{table.num_rows:,} rows + {len(failed):,} failed",
                table.num_rows + len(failed) == total,
            )
        )
        results.append(Result(f"{family}: export exit code", str(code), None))
        schema = evalreg.arrow_schema(family, "0.3.0")
        results.append(
            Result(
                f"{family}: pyarrow reads the schema of arrow_schema({family!r}, '0.3.0')",
                "equal" if table.schema.equals(schema, check_metadata=True) else "different",
                table.schema.equals(schema, check_metadata=True),
            )
        )
        results += readers(target, schema, table.num_rows, out / "hf-cache")
        results.append(hf_json(scratch, include, out / "hf-cache"))
        results.append(round_trip(scratch, family, out))
        if family == "eee.aggregate":
            results.append(exploded(scratch, out))


def readers(target: Path, schema: Any, rows: int, cache: Path) -> list[Result]:
    """Read an exported file with pandas, polars, DuckDB and datasets."""
    import datasets
    import duckdb
    import pandas as pd
    import polars as pl

    found = []
    frame = pd.read_parquet(target)
    found.append(Result("  pandas.read_parquet", f"{len(frame):,} rows", len(frame) == rows))
    polars = pl.read_parquet(target)
    found.append(Result("  polars.read_parquet", f"{polars.height:,} rows", polars.height == rows))
    [(count,)] = duckdb.sql(f"select count(*) from read_parquet('{target}')").fetchall()
    found.append(Result("  DuckDB read_parquet", f"{count:,} rows", count == rows))
    dataset = datasets.load_dataset(
        "parquet", data_files=str(target), split="train", cache_dir=str(cache)
    )
    same = dataset.features == datasets.Features.from_arrow_schema(schema)
    found.append(
        Result(
            '  datasets.load_dataset("parquet"), features of the schema',
            f"{dataset.num_rows:,} rows, features {'equal' if same else 'different'}",
            same and dataset.num_rows == rows,
        )
    )
    return found


def hf_json(scratch: Path, include: Sequence[str], cache: Path) -> Result:
    """Load the raw files with `datasets.load_dataset("json")`: what happens."""
    import datasets

    from evalreg.batch.walk import iter_files

    files = list(iter_files([str(scratch)], include))
    try:
        loaded = datasets.load_dataset(
            "json", data_files=files, split="train", cache_dir=str(cache / "json")
        )
    except Exception as err:  # what a user of datasets meets
        reason = " ".join(str(err.__cause__ or err).split())[:160]
        return Result(
            f'  datasets.load_dataset("json") on the same {len(files):,} raw files',
            f"fails: {type(err.__cause__ or err).__name__}: {reason}",
            None,
        )
    columns = len(loaded.column_names)
    return Result(
        f'  datasets.load_dataset("json") on the same {len(files):,} raw files',
        f"loads {loaded.num_rows:,} rows, {columns} columns inferred, not migrated",
        None,
    )


def round_trip(scratch: Path, family: str, out: Path) -> Result:
    """Compare `from_arrow` of a provenance export with `migrate --out`, record for record."""
    import pyarrow.parquet as pq

    import evalreg
    from evalreg.batch.walk import iter_files
    from evalreg.io.readers import read_items
    from evalreg.tables.rows import json_equal

    target = out / f"{family}-provenance.parquet"
    _evalreg("export", str(scratch), "--family", family, "--provenance", "--out", str(target))
    migrated = out / f"{family}-migrated"
    shutil.rmtree(migrated, ignore_errors=True)
    _evalreg(
        "migrate",
        str(scratch),
        "--include",
        *FAMILIES[family],
        "--family",
        family,
        "--to",
        "latest",
        "--out",
        str(migrated),
    )
    written: dict[tuple[str, int | None], Any] = {}
    for path in iter_files([str(migrated)], FAMILIES[family]):
        source = str(scratch / Path(path).relative_to(migrated))
        for item in read_items(path):
            written[source, item.line] = item.record
    table = pq.read_table(target)
    sources, lines = table.column("_source").to_pylist(), table.column("_line").to_pylist()
    compared = equal = 0
    for record, source, line in zip(evalreg.from_arrow(table), sources, lines, strict=True):
        expected = written.get((source, line))
        if expected is None:
            continue  # its file held a record that failed: migrate wrote none of it
        compared += 1
        equal += json_equal(record, expected)
    share = equal / compared if compared else 0.0
    return Result(
        f"  round trip: from_arrow equals migrate --to latest ({compared:,} records compared)",
        f"{equal:,} equal ({share:.1%})",
        compared > 0 and equal == compared,
    )


def exploded(scratch: Path, out: Path) -> Result:
    """Check that `--explode /evaluation_results` gives a row per evaluation result."""
    import pyarrow.parquet as pq

    import evalreg

    target = out / "eee.aggregate-results.parquet"
    _evalreg(
        "export",
        str(scratch),
        "--family",
        "eee.aggregate",
        "--explode",
        "/evaluation_results",
        "--out",
        str(target),
    )
    rows = pq.read_metadata(target).num_rows
    loaded = evalreg.load(
        scratch, to="latest", family="eee.aggregate", include=["*.json"], errors="skip"
    )
    results = sum(len(record["evaluation_results"]) for record in loaded)
    return Result(
        "  --explode /evaluation_results: rows = evaluation results of the records",
        f"{rows:,} rows, {results:,} results",
        rows == results,
    )


# -- generated data: speed and memory -----------------------------------------------------------


def cpu_run(command: Sequence[str], clear: Path | None = None) -> float:
    """Run a command; return the CPU seconds (user + system) of it and its workers."""
    if clear is not None:
        shutil.rmtree(clear, ignore_errors=True)
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode not in (0,):
        raise RuntimeError(f"{' '.join(command)} exited {process.returncode}")
    return usage.ru_utime + usage.ru_stime


def speed(data: Path, lines: int, repeat: int, results: list[Result]) -> None:
    """Export against migrate --out of the same instance file, by CPU time, taking turns."""
    source = data / f"tables-instance-{lines}.jsonl"
    if not source.exists():
        generate.write_jsonl(source, lines)
    out = data / "tables-out"
    out.mkdir(parents=True, exist_ok=True)
    for jobs in ("1", str(os.cpu_count() or 1)):
        migrate_cmd = [
            *EVALREG,
            "migrate",
            str(source),
            "--to",
            "latest",
            "--jobs",
            jobs,
            "--out",
            str(out / "migrated"),
        ]
        export_cmd = [
            *EVALREG,
            "export",
            str(source),
            "--family",
            "eee.instance",
            "--jobs",
            jobs,
            "--out",
            str(out / "export.parquet"),
        ]
        best = {"migrate": float("inf"), "export": float("inf")}
        for _ in range(repeat):
            best["migrate"] = min(best["migrate"], cpu_run(migrate_cmd, out / "migrated"))
            best["export"] = min(best["export"], cpu_run(export_cmd))
        ratio = best["export"] / best["migrate"]
        results.append(
            Result(
                f"export / migrate --out, {lines:,} lines, --jobs {jobs} (CPU s, best of {repeat})",
                f"{best['export']:.1f} / {best['migrate']:.1f} = {ratio:.2f}x",
                ratio <= SPEED_TARGET,
            )
        )


def memory(data: Path, lines: int, results: list[Result]) -> None:
    """Export a large instance file with every core; sample its peak memory."""
    source = data / f"tables-instance-{lines}.jsonl"
    if not source.exists():
        print(f"generating {source} ...", flush=True)
        generate.write_jsonl(source, lines)
    target = data / "tables-out" / "memory.parquet"
    target.parent.mkdir(parents=True, exist_ok=True)
    command = [*EVALREG, "export", str(source), "--family", "eee.instance", "--out", str(target)]
    [run] = bench.measure([bench.Job(command)], memory=True, idle=0.0)
    pss, rss = run.pss / 1e6, run.rss / 1e6
    results.append(
        Result(
            f"peak memory, export of {lines:,} lines, every core (PSS of all processes)",
            f"{pss:.0f} MB (largest process RSS {rss:.0f} MB)",
            pss < MEMORY_TARGET and run.code == 0,
        )
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the measurements; return 1 when a target is missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--skip-real", action="store_true")
    parser.add_argument("--eee", type=Path, default=MIRROR)
    parser.add_argument("--scratch", type=Path, default=Path("/tmp/evalreg-tables"))
    parser.add_argument("--data", type=Path, default=HERE / "data")
    parser.add_argument("--repeat", type=int, default=None)
    args = parser.parse_args(argv)
    repeat = args.repeat or (1 if args.quick else 3)
    results: list[Result] = []
    if not args.skip_real:
        history = args.scratch / "history"
        if not history.exists():
            print(f"collecting Every Eval Ever's history into {history} ...", flush=True)
            counts = collect(args.eee, history)
            (args.scratch / "counts.json").write_text(json.dumps(counts))
        counts = json.loads((args.scratch / "counts.json").read_text())
        print(
            f"history: {counts['blobs']:,} distinct files; {counts['kept']:,} kept; set aside: "
            f"{counts['unknown version']:,} at a version evalreg does not know (0.0.1), "
            f"{counts['no record']:,} without a record"
        )
        real_data(history, args.scratch / "out", results)
    args.data.mkdir(parents=True, exist_ok=True)
    speed(args.data, 2_000 if args.quick else 200_000, repeat, results)
    memory(args.data, 5_000 if args.quick else 1_000_000, results)
    print(f"\n{'measurement':<92} {'result':>40}  target")
    for result in results:
        verdict = "" if result.ok is None else "PASS" if result.ok else "FAIL"
        print(f"{result.name:<92} {result.measured:>40}  {verdict}")
    missed = [r for r in results if r.ok is False]
    return 0 if args.quick or not missed else 1


if __name__ == "__main__":
    sys.exit(main())
