"""Kill `evalreg migrate --in-place --backup .bak` at random moments and check that nothing is lost.

    python benchmarks/reliability_writes.py [--kills N] [--aggregates N] [--lines N] [--jobs N]

A folder of generated Every Eval Ever files (`benchmarks/generate.py`: aggregate files at 0.1.0
and one large instance-level JSONL file at 0.2.0) is migrated in place to the latest version,
and the run is killed with SIGKILL at a random moment: every other time the main process alone
(as `kill -9 PID` does; its workers must then stop by themselves), else its whole process group.
After each kill, every file must hold either its original bytes or its complete migration (the
bytes `migrate --out` gives), and every backup its original bytes. Then the run is started again
to the end: it must exit 0, remove and report the temporary files the killed run left, and leave
every file migrated beside a backup of its original. Prints a line per kill, the totals, and
PASS or FAIL (exit code 1).
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import generate  # noqa: E402

ROOT = HERE.parent
EVALREG = [sys.executable, "-m", "evalreg"]
TEMPORARY = re.compile(r"\..+\.evalreg-(\d+)-[0-9a-f]+\.(?:tmp|part)")
SUFFIX = ".bak"


@dataclass
class Counts:
    """What one kill left, and what the run after it did."""

    original: int = 0
    migrated: int = 0
    backups: int = 0
    leftovers: int = 0
    removed: int = 0
    problems: int = 0


def _files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.name.startswith(".")
    }


def _migrate(folder: Path, jobs: int, *extra: str) -> list[str]:
    return [*EVALREG, "migrate", str(folder), "--to", "latest", "--jobs", str(jobs), *extra]


def _wait_group(group: int, timeout: float) -> bool:
    """Wait until no process of `group` is left; return whether they all went in time."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.02)
    return False


def _check(
    run: Path, originals: dict[str, bytes], expected: dict[str, bytes], complete: bool
) -> tuple[Counts, list[str]]:
    """Check a folder after a kill (or, `complete`, after the run that follows it)."""
    counts, problems = Counts(), []
    now = _files(run)
    for name, data in originals.items():
        current = now.pop(name, None)
        backup = now.pop(name + SUFFIX, None)
        if current == expected[name] and current != data:
            counts.migrated += 1
            if backup != data:
                problems.append(f"{name}: migrated, but its backup is not the original")
        elif current == data and not complete:
            counts.original += 1
            if backup is not None and backup != data:
                problems.append(f"{name}: original, beside a backup that differs from it")
        else:
            state = "missing" if current is None else "neither original nor migrated"
            problems.append(f"{name}: {state}")
        counts.backups += backup is not None
    problems += [f"{name}: unexpected file" for name in now]
    leftovers = [p for p in run.rglob(".*") if TEMPORARY.fullmatch(p.name)]
    counts.leftovers = len(leftovers)
    if complete and leftovers:
        problems.append(f"{len(leftovers)} temporary files left after the complete run")
    counts.problems = len(problems)
    return counts, problems


def main() -> int:
    """Run the kills; return the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=20, help="runs killed (default: 20)")
    parser.add_argument("--aggregates", type=int, default=300, help="aggregate files")
    parser.add_argument("--lines", type=int, default=20000, help="lines of the JSONL file")
    parser.add_argument("--jobs", type=int, default=2, help="--jobs of the runs")
    parser.add_argument("--seed", type=int, default=1, help="of the moments of the kills")
    parser.add_argument("--work", type=Path, help="folder for the data (default: a temporary one)")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    work = args.work or Path(tempfile.mkdtemp(prefix="evalreg-kills-"))
    pristine, expected_dir, run = work / "pristine", work / "expected", work / "run"
    for folder in (pristine, expected_dir, run):
        shutil.rmtree(folder, ignore_errors=True)
    generate.write_aggregates(pristine, args.aggregates, "0.1.0")
    generate.write_jsonl(pristine / "instances.jsonl", args.lines)
    done = subprocess.run(
        _migrate(pristine, args.jobs, "--out", str(expected_dir)), capture_output=True, cwd=ROOT
    )
    # The kills are spread over the time a whole run in place takes (each file synced).
    shutil.copytree(pristine, run)
    started = time.monotonic()
    whole = subprocess.run(
        _migrate(run, args.jobs, "--in-place", "--backup", SUFFIX), capture_output=True, cwd=ROOT
    )
    duration = time.monotonic() - started
    for failed in (done, whole):
        if failed.returncode != 0:
            print(failed.stderr.decode(), file=sys.stderr)
            return 1
    originals, expected = _files(pristine), _files(expected_dir)
    print(
        f"{len(originals)} files ({sum(map(len, originals.values())) / 1e6:.1f} MB), "
        f"a whole run takes {duration:.2f} s; {args.kills} kills, --jobs {args.jobs}"
    )
    totals = Counts()
    failures: list[str] = []
    finished_first = 0
    for kill in range(1, args.kills + 1):
        shutil.rmtree(run, ignore_errors=True)
        shutil.copytree(pristine, run)
        whole_group = kill % 2 == 0
        moment = rng.uniform(0.1, 1.0) * duration
        process = subprocess.Popen(
            _migrate(run, args.jobs, "--in-place", "--backup", SUFFIX),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=ROOT,
            start_new_session=True,
        )
        time.sleep(moment)
        if process.poll() is not None:
            finished_first += 1
        elif whole_group:
            os.killpg(process.pid, signal.SIGKILL)
        else:
            os.kill(process.pid, signal.SIGKILL)
        process.wait()
        if not _wait_group(process.pid, 10):
            failures.append(f"kill {kill}: workers still running 10 s after the kill")
            os.killpg(process.pid, signal.SIGKILL)
            _wait_group(process.pid, 10)
        counts, problems = _check(run, originals, expected, complete=False)
        resumed = subprocess.run(
            _migrate(run, args.jobs, "--in-place", "--backup", SUFFIX),
            capture_output=True,
            text=True,
            cwd=ROOT,
        )
        counts.removed = resumed.stderr.count("removed the temporary file of process")
        after, more = _check(run, originals, expected, complete=True)
        problems += more
        if resumed.returncode != 0:
            problems.append(f"the run after the kill exited {resumed.returncode}")
        if counts.removed != counts.leftovers:
            problems.append(f"{counts.leftovers} temporary files left, {counts.removed} reported")
        failures += [f"kill {kill}: {p}" for p in problems]
        who = "process group" if whole_group else "main process"
        print(
            f"kill {kill:>3} at {moment:5.2f} s ({who}): {counts.original} original, "
            f"{counts.migrated} migrated, {counts.backups} backups, {counts.leftovers} temporary "
            f"files; the next run: {after.migrated} migrated, {counts.removed} temporary files "
            f"removed; {'ok' if not problems else f'{len(problems)} problems'}"
        )
        for field in ("original", "migrated", "backups", "leftovers", "removed"):
            setattr(totals, field, getattr(totals, field) + getattr(counts, field))
    for failure in failures[:20]:
        print(f"  {failure}")
    print(
        f"totals: {totals.original} files found original and {totals.migrated} migrated after "
        f"{args.kills} kills ({finished_first} runs ended before their kill), "
        f"{totals.leftovers} temporary files left and {totals.removed} removed by the next run, "
        f"{len(failures)} problems"
    )
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)
    print("PASS" if not failures else "FAIL")
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
