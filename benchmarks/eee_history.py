"""Collect every version of every Every Eval Ever datastore file from a clone's history, and
validate them.

    python benchmarks/eee_history.py GIT_DIR OUT [--validate]

GIT_DIR is a clone (or bare mirror) of every_eval_ever; OUT a scratch folder outside any
repository. Every distinct blob of `data/**/*.json` and `data/**/*_samples.jsonl` in any commit
is written once, at its datastore path under `OUT/v<N>/`, where N counts the distinct versions
of that path in order of first appearance (so each copy keeps the layout its path had).
Commits or blobs the clone cannot read are skipped and counted.

With `--validate`, `evalreg validate` runs over OUT three ways (as is, `--statistics`, and with
a baseline written by `--write-baseline`), and the number of lines each prints is reported,
with the per-rule summary.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

DATA = re.compile(r"^data/.*(?:\.json|_samples\.jsonl)$")


def git(git_dir: str, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", "--git-dir", git_dir, *args], capture_output=True, check=False)


def versions(git_dir: str) -> tuple[dict[str, list[str]], int]:
    """Return each datastore path's distinct blobs in order of first appearance, and how many
    commits could not be read."""
    listed = git(git_dir, "rev-list", "--all", "--reverse", "--date-order").stdout.split()
    found: dict[str, list[str]] = {}
    unreadable = 0
    for commit in listed:
        tree = git(git_dir, "ls-tree", "-r", "-z", commit.decode())
        if tree.returncode:
            unreadable += 1
            continue
        for entry in tree.stdout.split(b"\0"):
            if not entry:
                continue
            meta, raw = entry.split(b"\t", 1)
            path = raw.decode("utf-8", "surrogateescape")
            if DATA.match(path):
                blobs = found.setdefault(path, [])
                blob = meta.split()[2].decode()
                if blob not in blobs:
                    blobs.append(blob)
    return found, unreadable


def collect(git_dir: str, out: Path) -> tuple[int, int, int]:
    """Write every version of every datastore file under `out`; return (paths, files, missing)."""
    found, _ = versions(git_dir)
    reader = subprocess.Popen(
        ["git", "--git-dir", git_dir, "cat-file", "--batch"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert reader.stdin is not None and reader.stdout is not None
    written = missing = 0
    for path, blobs in found.items():
        for index, blob in enumerate(blobs, 1):
            reader.stdin.write(blob.encode() + b"\n")
            reader.stdin.flush()
            header = reader.stdout.readline().split()
            if header[1] == b"missing":
                missing += 1
                continue
            data = reader.stdout.read(int(header[2]))
            reader.stdout.read(1)
            target = out / f"v{index}" / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            written += 1
    reader.stdin.close()
    reader.wait()
    return len(found), written, missing


def lines_of(*args: str) -> tuple[int, list[str]]:
    done = subprocess.run(
        [sys.executable, "-m", "evalreg", "validate", "--no-progress", *args],
        capture_output=True,
        text=True,
        check=False,
    )
    output = (done.stdout + done.stderr).splitlines()
    return len(output), output


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("git_dir")
    parser.add_argument("out", type=Path)
    parser.add_argument("--validate", action="store_true")
    args = parser.parse_args()
    paths, files, missing = collect(args.git_dir, args.out)
    print(f"{paths:,} paths, {files:,} files written ({missing:,} blobs missing)")
    if not args.validate:
        return
    every, _ = lines_of(str(args.out))
    verbose, _ = lines_of("--verbose", str(args.out))
    count, statistics = lines_of("--statistics", str(args.out))
    baseline = args.out.parent / f"{args.out.name}-baseline.json"
    lines_of("--write-baseline", str(baseline), str(args.out))
    known, last = lines_of("--baseline", str(baseline), str(args.out))
    print(f"validate: {every:,} lines ({verbose:,} with --verbose), --statistics: {count:,}, ")
    print(f"with the baseline of every finding: {known:,} ({last[-1]})")
    print("\n".join(statistics))


if __name__ == "__main__":
    main()
