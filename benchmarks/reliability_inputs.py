"""Measure evalreg on large hostile inputs: time and peak memory per case, and each bound.

Cases: `validate` on one-line JSONL files of growing size (the time must grow linearly), a
gzip bomb (refused within the stated bounds, in bounded memory), and a one-line JSON document
(peak memory beyond the start-up, as a multiple of its size). Each case runs `evalreg` in a
child process; its CPU time and peak resident memory come from `os.wait4`. Prints one line per
case and a PASS or FAIL per bound; exits 1 if any bound fails.

    python benchmarks/reliability_inputs.py [--scale 1.0] [--dir DIR]

`--scale 1` writes lines of 100, 200 and 400 MB and a 1 GB document (disk space: twice that);
smaller scales for a quick run.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MB = 1 << 20


def _child(args: list[str]) -> tuple[float, float, int, str]:
    """Run evalreg; return wall seconds, CPU seconds, peak memory (bytes) and its output."""
    with tempfile.TemporaryFile() as output:
        start = time.perf_counter()
        child = subprocess.Popen(
            [sys.executable, "-m", "evalreg", *args], stdout=output, stderr=subprocess.STDOUT
        )
        _, _, usage = os.wait4(child.pid, 0)  # this child's own figures
        child.returncode = 0  # reaped above
        wall = time.perf_counter() - start
        output.seek(0)
        text = output.read().decode("utf-8", "replace")
    cpu = usage.ru_utime + usage.ru_stime
    peak = usage.ru_maxrss * (1 if sys.platform == "darwin" else 1024)
    return wall, cpu, peak, text


def _long_line(path: Path, size: int) -> None:
    """Write one JSONL line of about `size` bytes: an object with one long string."""
    with open(path, "wb") as stream:
        stream.write(b'{"text": "')
        piece = b"x" * MB
        for _ in range(size // MB):
            stream.write(piece)
        stream.write(b'"}\n')


def _bomb(path: Path, size: int) -> None:
    """Write gzip data of `size` decompressed bytes that are all blanks: about 1,000 to 1."""
    with gzip.open(path, "wb", compresslevel=9) as stream:
        piece = b" " * (16 * MB)
        for _ in range(size // len(piece)):
            stream.write(piece)


def _document(path: Path, size: int) -> None:
    """Write a one-line JSON document of about `size` bytes: an object with many small items."""
    with open(path, "wb") as stream:
        stream.write(b'{"items": [')
        item = json.dumps({"id": "abcdefgh", "score": 0.5, "ok": True}).encode()
        count = size // (len(item) + 1)
        chunk = b",".join([item] * 1000)
        for _ in range(count // 1000 - 1):
            stream.write(chunk + b",")
        stream.write(chunk + b"]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="1: 100 MB lines and up")
    parser.add_argument("--dir", help="where the inputs go (default: a temporary folder)")
    options = parser.parse_args()
    folder = Path(options.dir or tempfile.mkdtemp(prefix="evalreg-reliability-"))
    folder.mkdir(parents=True, exist_ok=True)
    results: list[bool] = []

    def bound(name: str, ok: bool, detail: str) -> None:
        results.append(ok)
        print(f"  {'PASS' if ok else 'FAIL'} {name}: {detail}")

    # 1. Long JSONL lines: time linear in the length of the line (start-up time taken off).
    tiny = folder / "tiny.jsonl"
    tiny.write_bytes(b'{"text": "x"}\n')
    idle = [_child(["validate", "--no-rules", str(tiny)]) for _ in range(3)]
    startup, base_peak = min(run[1] for run in idle), min(run[2] for run in idle)
    tiny.unlink()
    sizes = [int(options.scale * n) * MB for n in (100, 200, 400)]
    per_mb: list[float] = []
    for size in sizes:
        path = folder / f"line-{size // MB}.jsonl"
        _long_line(path, size)
        wall, cpu, peak, _ = min(_child(["validate", "--no-rules", str(path)]) for _ in range(2))
        per_mb.append(max(cpu - startup, 0.001) / (size / MB))
        print(f"validate one line of {size // MB} MB: {wall:.2f} s, {cpu:.2f} s CPU, ", end="")
        print(f"peak {peak / MB:,.0f} MB")
        path.unlink()
    growth = per_mb[-1] / per_mb[0]
    detail = f"CPU per MB (less {startup:.2f} s start-up) grows {growth:.2f} times from "
    bound("linear time", growth < 1.6, detail + f"{sizes[0] // MB} to {sizes[-1] // MB} MB")

    # 2. A gzip bomb: refused, one line naming the file, memory bounded.
    from evalreg.io.streams import GZIP_RATIO_FREE, MAX_GZIP_RATIO

    bomb = folder / "bomb.jsonl.gz"
    _bomb(bomb, max(int(options.scale * 4096), 64) * MB)
    wall, cpu, peak, out = _child(["validate", str(bomb)])
    allowed = max(GZIP_RATIO_FREE, MAX_GZIP_RATIO * bomb.stat().st_size)
    print(f"validate a gzip bomb of {bomb.stat().st_size / MB:.1f} MB: {wall:.2f} s, ", end="")
    print(f"{cpu:.2f} s CPU, peak {peak / MB:,.0f} MB")
    bound(
        "bomb refused",
        "gzip data decompresses to more than" in out and str(bomb) in out,
        out.splitlines()[0][:150],
    )
    bound(
        "bomb memory",
        peak < 4 * allowed + 200 * MB,
        f"peak {peak / MB:,.0f} MB, at most {allowed / MB:,.0f} MB decompressed",
    )
    bomb.unlink()

    # 3. A one-line JSON document: peak memory as a multiple of its size.
    size = int(options.scale * 1024) * MB
    document = folder / "document.json"
    _document(document, size)
    actual = document.stat().st_size
    wall, cpu, peak, _ = _child(["validate", "--no-rules", str(document)])
    factor = (peak - base_peak) / actual  # what reading it takes, beyond the interpreter's own
    print(f"validate a one-line JSON document of {actual / MB:,.0f} MB: {wall:.2f} s, ", end="")
    print(f"{cpu:.2f} s CPU, peak {peak / MB:,.0f} MB ({factor:.1f} times its size)")
    bound(
        "document memory",
        factor < 10,
        f"{factor:.1f} times the size of the document (stated: about 9)",
    )
    document.unlink()
    if not options.dir:
        os.rmdir(folder)
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
