"""Measure evalreg against hostile servers, dying workers and tight memory, at scale.

Cases, each run as `evalreg` in a child process whose time and peak memory come from `os.wait4`:

1. A URL whose JSON body is larger than a document may be (2 GiB + 1 MiB, its length given):
   refused from its headers, in seconds and in little memory, and the next file is checked.
2. The same body without a length: refused once 2 GiB are read, the next file checked.
3. A local JSON document of 2 GiB under a 3 GiB memory cap: "out of memory", one line, and the
   next file checked (Linux; it was "Input data was truncated").
4. A `--jobs 2` migration of a large JSONL file whose worker is killed (`kill -9`) under load:
   the run ends by itself, exit code 1, the lost range named with "killed by signal 9", no
   temporary file left; five times.
5. The same, then SIGTERM to the run: it ends within `SIGTERM_BOUND` seconds, five times of five
   (`--tries` sets how many runs of 4 and 5).

Prints one line per case and a PASS or FAIL per bound; exits 1 if any bound fails.

    python benchmarks/reliability_hostile.py [--scale 1.0] [--dir DIR]

`--scale 1` is the full size (2 GiB bodies, a 530 MB JSONL file); smaller scales shrink the
inputs and, for cases 1 to 3, the bounds with them (set in the child), for a quick run.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from generate import write_jsonl  # noqa: E402

from tests.io.hostile_server import HostileServer  # noqa: E402

MB = 1 << 20
SIGTERM_BOUND = 5.0
"""Seconds within which SIGTERM must end a run whose worker was killed."""
TRIES = 5


def _child(
    args: list[str], *, prelude: str = "", memory: int | None = None, timeout: float = 1800
) -> tuple[float, float, int, int, str]:
    """Run evalreg; return wall seconds, CPU seconds, peak memory, exit code and its output."""

    def cap() -> None:
        if memory is not None:
            resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    code = "; ".join(x for x in ("import sys", prelude, "from evalreg.cli import main") if x)
    code += "; main(sys.argv[1:])"
    with tempfile.TemporaryFile() as output:
        start = time.perf_counter()
        child = subprocess.Popen(
            [sys.executable, "-c", code, *args],
            stdout=output,
            stderr=subprocess.STDOUT,
            preexec_fn=cap,
        )
        deadline = start + timeout
        while True:
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                child.kill()
            time.sleep(0.05)
        child.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - start
        output.seek(0)
        text = output.read().decode("utf-8", "replace")
    cpu = usage.ru_utime + usage.ru_stime
    return wall, cpu, usage.ru_maxrss * 1024, child.returncode, text


def _document(path: Path, size: int) -> None:
    """Write a JSON document of `size` bytes: an object with one long string."""
    with open(path, "wb") as stream:
        stream.write(b'{"schema_version": "0.2.0", "padding": "')
        piece = b"x" * MB
        left = size - 43
        while left > 0:
            stream.write(piece[: min(left, MB)])
            left -= MB
        stream.write(b'"}')


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="1: 2 GiB bodies and up")
    parser.add_argument("--dir", help="where the inputs go (default: a temporary folder)")
    parser.add_argument("--tries", type=int, default=TRIES, help="runs of cases 4 and 5 each")
    options = parser.parse_args()
    tries = options.tries
    folder = Path(options.dir or tempfile.mkdtemp(prefix="evalreg-hostile-"))
    folder.mkdir(parents=True, exist_ok=True)
    results: list[bool] = []

    def bound(name: str, ok: bool, detail: str) -> None:
        results.append(ok)
        print(f"  {'PASS' if ok else 'FAIL'} {name}: {detail}")

    limit = int((2 << 30) * options.scale)  # the document bound at this scale
    prelude = "import evalreg.io.streams as s; s.MAX_DOCUMENT_BYTES = " + str(limit)
    prelude = "" if options.scale >= 1 else prelude
    good = folder / "good.json"
    good.write_text(json.dumps({"schema_version": "0.2.0"}))

    # 1 and 2. A body larger than a document may be, with and without its length.
    with HostileServer() as server:
        size = limit + MB
        for case, path in (("with", f"/huge/{size}.json"), ("without", "/endless/run.json")):
            server.line = b" " * 4095 + b"\n"
            url = server.url + path
            wall, cpu, peak, code, out = _child(
                ["validate", "--no-rules", "-j", "1", url, str(good)], prelude=prelude
            )
            print(f"validate a {size / MB:,.0f} MB body {case} its length, then a file: ", end="")
            print(f"{wall:.2f} s, {cpu:.2f} s CPU, peak {peak / MB:,.0f} MB, exit {code}")
            refused = f"larger than {limit:,} bytes, the most evalreg reads from one URL" in out
            bound(f"body {case} length refused", refused and code == 1, out.splitlines()[0][:150])
            bound(f"body {case} length, next file", "2 files, " in out, out.splitlines()[-1])
            if case == "with":
                bound("refused from the headers", wall < 10 and peak < 300 * MB, f"{wall:.1f} s")
            else:
                bound("memory bounded", peak < limit * 1.5 + 300 * MB, f"{peak / MB:,.0f} MB")

    # 3. A document the memory cap cannot hold.
    if sys.platform.startswith("linux") and options.scale >= 1:
        document = folder / "document.json"
        _document(document, 2 << 30)
        wall, cpu, peak, code, out = _child(
            ["validate", "--no-rules", "-j", "1", str(document), str(good)], memory=3 << 30
        )
        print(f"validate a 2,048 MB document under a 3 GiB cap: {wall:.2f} s, exit {code}")
        bound(
            "out of memory, one line",
            code == 1
            and out.startswith(f"{document}: out of memory reading it (")
            and "2 files" in out,
            out.splitlines()[0][:150],
        )
        document.unlink()
    else:
        print("validate a 2,048 MB document under a 3 GiB cap: needs Linux and --scale 1")

    # 4 and 5. A worker killed under load, then SIGTERM.
    lines = max(int(200_000 * options.scale), 20_000)
    big = folder / "in" / "samples.jsonl"
    write_jsonl(big, lines)
    print(f"migrate --jobs 2 of {big.stat().st_size / MB:,.0f} MB, a worker killed:")
    ended = stopped = 0
    for attempt in range(2 * tries):
        term = attempt >= tries
        out_dir = folder / f"out{attempt}"
        args = ["migrate", str(big), "--to", "latest", "--out", str(out_dir), "--jobs", "2"]
        wall, code, text, killed = _kill_a_worker(args, term, folder)
        left = [p for p in out_dir.rglob(".*") if p.is_file()] if out_dir.exists() else []
        if term:
            ok = killed and code == 143 and wall < SIGTERM_BOUND and not left
            stopped += ok
            print(f"  try {attempt - tries + 1}: SIGTERM ended it in {wall:.2f} s, exit {code}")
        else:
            # Exit code 1 naming the lost range, or (a worker killed between two units, so
            # that nothing was lost) 0 with the file written: never 0 with work undone.
            lost = code == 1 and "killed by signal 9 (SIGKILL" in text
            whole = code == 0 and "1 files: 1 written" in text
            ok = killed and (lost or whole) and not left
            ended += ok
            print(f"  try {attempt + 1}: ended by itself in {wall:.1f} s, exit {code}", end="")
            print(" (the worker held no unit)" if whole else "")
    bound(
        "worker killed: the run ends, says so, leaves nothing", ended == tries, f"{ended}/{tries}"
    )
    bound(f"SIGTERM within {SIGTERM_BOUND:.0f} s", stopped == tries, f"{stopped}/{tries}")
    if not options.dir:
        import shutil

        shutil.rmtree(folder)
    return 0 if all(results) else 1


def _kill_a_worker(args: list[str], term: bool, folder: Path) -> tuple[float, int, str, bool]:
    """Run evalreg, kill -9 one of its workers once it works; with `term`, then SIGTERM it.

    Returns the seconds it took (after SIGTERM with `term`), its exit code, its output, and
    whether a worker was killed.
    """
    log = folder / "run.log"
    with open(log, "wb") as output:
        child = subprocess.Popen(
            [sys.executable, "-m", "evalreg", *args], stdout=output, stderr=subprocess.STDOUT
        )
        start = time.perf_counter()
        killed = False
        while child.poll() is None and time.perf_counter() - start < 120:
            workers = _children(child.pid)
            if len(workers) >= 2:
                time.sleep(0.2)
                try:
                    os.kill(workers[0], signal.SIGKILL)
                except ProcessLookupError:  # done already: too small an input
                    break
                killed = True
                break
            time.sleep(0.05)
        if term and killed:
            time.sleep(0.05)
            start = time.perf_counter()
            child.send_signal(signal.SIGTERM)
        try:
            child.wait(timeout=1800)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        wall = time.perf_counter() - start
    return wall, child.returncode, log.read_text(errors="replace"), killed


def _children(pid: int) -> list[int]:
    try:
        found = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True)
    except FileNotFoundError:  # no pgrep: read /proc
        found = None
    if found is not None:
        return [int(x) for x in found.stdout.split()]
    kids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    kids.append(int(entry.name))
            except (OSError, ValueError, IndexError):
                continue
    return sorted(kids)


if __name__ == "__main__":
    sys.exit(main())
