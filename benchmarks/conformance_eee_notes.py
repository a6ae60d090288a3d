"""Measure what migrating real Every Eval Ever files reports: every note, in text and JSON.

    python benchmarks/conformance_eee_notes.py collect PATH/TO/every_eval_ever[.git] DIR
    python benchmarks/conformance_eee_notes.py measure DIR [--to latest] [--list N]

`collect` writes every distinct content of every `data/**/*.json` file and every `*.jsonl` file
of the repository's history (all commits, all refs) under DIR, one folder per stated
`schema_version` (`DIR/0.2.0/data/<benchmark>/<org>/<blob>_<name>`), read with git at run time;
nothing of it ships with evalreg. Keep DIR outside the repository.

`measure` migrates every file under DIR's folders of versions evalreg knows to the latest
version in real runs (`evalreg migrate --out`, once in text and once with `--format json`, per
folder), and in this process audits every record's migration step by step
(`evalreg.engine.audits`): each step's notes
against its own input and output. Per stated version it prints the files and records, the
share migrated, the share whose every change is in the notes, and the notes by kind (added
values by origin: placeholder, default, parameter, derived). It checks that the JSON rows hold
exactly the notes the steps made, that the text output names each distinct note the JSON rows
hold, and that the text summary counts the placeholders the JSON summary counts; then it lists
the distinct notes of the run (the text output's own lines) and the first records whose
changes are not all reported.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import evalreg
from evalreg.engine.audits import audit_migration
from evalreg.io.readers import read_items

# -- collecting the files of the history ---------------------------------------------------------


def _history_blobs(repo: Path) -> dict[str, str]:
    """Return every distinct blob of the data files of any commit: sha -> first path seen."""
    log = subprocess.run(
        ["git", f"--git-dir={repo}", "log", "--all", "-m", "--no-renames", "--format=C %H",
         "--raw", "--no-abbrev", "--", "data/", "*.jsonl"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    found: dict[str, str] = {}
    for line in log.splitlines():
        if not line.startswith(":"):
            continue
        meta, path = line.split("\t", 1)
        sha, status = meta.split()[3], meta.split()[4]
        wanted = (path.startswith("data/") and path.endswith(".json")) or path.endswith(".jsonl")
        if wanted and not status.startswith("D") and sha.strip("0"):
            found.setdefault(sha, path)
    return found


def _contents(repo: Path, shas: Sequence[str]) -> Iterator[tuple[str, bytes]]:
    """Yield each blob's bytes, read through one `git cat-file --batch`."""
    proc = subprocess.Popen(
        ["git", f"--git-dir={repo}", "cat-file", "--batch"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        for sha in shas:
            proc.stdin.write(sha.encode() + b"\n")
            proc.stdin.flush()
            size = int(proc.stdout.readline().split()[2])
            data = proc.stdout.read(size)
            proc.stdout.read(1)
            yield sha, data
    finally:
        proc.stdin.close()
        proc.wait()


_VERSION = re.compile(rb'"schema_version"\s*:\s*"([^"]{1,40})"')


def collect(repo: Path, target: Path) -> Counter[str]:
    """Write every distinct data file of the history under `target`; return counts by version."""
    blobs = _history_blobs(repo)
    counts: Counter[str] = Counter()
    for sha, data in _contents(repo, sorted(blobs)):
        path = blobs[sha]
        found = _VERSION.search(data[:200_000])
        version = found.group(1).decode("ascii", "replace") if found else "none"
        version = re.sub(r"[^A-Za-z0-9._-]", "_", version)
        inner = path[len("data/") :] if path.startswith("data/") else path.replace("/", "__")
        folder = target / version / "data" / os.path.dirname(inner)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{sha[:10]}_{os.path.basename(inner)}").write_bytes(data)
        counts[f"{version} {'jsonl' if path.endswith('.jsonl') else 'json'}"] += 1
    return counts


# -- measuring -----------------------------------------------------------------------------------


def _files(root: Path) -> list[Path]:
    return sorted(
        p for p in root.rglob("*") if p.suffix in (".json", ".jsonl") and not p.name.startswith(".")
    )


def _migrate(root: Path, to: str, fmt: str) -> tuple[str, str, float]:
    """Run `evalreg migrate --out` over `root`; return its output, diagnostics and seconds."""
    with tempfile.TemporaryDirectory() as out:
        command = [sys.executable, "-m", "evalreg", "migrate", str(root), "--to", to]
        command += ["--out", out, "--format", fmt, "--jobs", "1"]
        started = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        return done.stdout, done.stderr, time.perf_counter() - started


def _kind(note: dict[str, Any]) -> str:
    """Return a note's kind, an added value's by its origin (`added:placeholder`, ...)."""
    return f"added:{note['origin']}" if note["kind"] == "added" else str(note["kind"])


def known_folders(root: Path, registry: evalreg.Registry) -> list[Path]:
    """Return the version folders under `root` whose version an EEE family of evalreg knows."""
    known = set(registry.versions("eee.aggregate")) | set(registry.versions("eee.instance"))
    return sorted(
        folder
        for folder in root.iterdir()
        if folder.is_dir() and folder.name.removeprefix("instance_level_eval_") in known
    )


def measure(root: Path, to: str, listed: int) -> int:
    """Migrate every file of each known version under `root` in real runs and audit every
    record; print the figures."""
    registry = evalreg.load_registry()
    per_version: dict[str, Counter[str]] = defaultdict(Counter)
    kinds: dict[str, Counter[str]] = defaultdict(Counter)
    unreported: list[str] = []
    mismatched: list[str] = []
    seconds = Counter[str]()
    records: list[dict[str, Any]] = []
    distinct_text: list[str] = []
    text_placeholders = json_placeholders = 0
    summaries = []
    for folder in known_folders(root, registry):
        version = folder.name
        text, text_err, took = _migrate(folder, to, "text")
        seconds["text"] += took
        rows, _, took = _migrate(folder, to, "json")
        seconds["json"] += took
        parsed = [json.loads(line) for line in rows.splitlines() if line.startswith("{")]
        found = [r for r in parsed if "status" in r and "path" in r]
        records += found
        summary = next(r["summary"] for r in parsed if "summary" in r)
        json_placeholders += summary["placeholders"]["notes"]
        summary_line = text_err.strip().splitlines()[-1] if text_err.strip() else ""
        summaries.append(f"{version}: {summary_line}")
        counted = re.search(r"([\d,]+) placeholders? in", summary_line)
        text_placeholders += int(counted.group(1).replace(",", "")) if counted else 0
        distinct_text += [line for line in text.splitlines() if line.endswith("]") and " [" in line]
        by_file = {(os.path.realpath(r["path"]), r["line"]): r for r in found}
        for path in _files(folder):
            tally = per_version[version]
            tally["files"] += 1
            for item in read_items(str(path)):
                tally["records"] += 1
                if not item.ok:
                    tally["unreadable"] += 1
                    continue
                started = time.perf_counter()
                audited = audit_migration(registry, item.record, to, filename=str(path))
                seconds["audit"] += time.perf_counter() - started
                row = by_file.get((os.path.realpath(path), item.line), {})
                if audited.result.status != "migrated" or row.get("status") != "migrated":
                    continue
                tally["migrated"] += 1
                made = [n.as_json() for step in audited.steps for n in step.notes]
                if made != row.get("notes"):
                    mismatched.append(f"{path}:{item.line or 1}")
                kinds[version].update(_kind(n) for n in made)
                if audited.ok:
                    tally["every change reported"] += 1
                else:
                    unreported.append(f"{path}:{item.line or 1}: {audited.problems()[0]}")

    header = ["version", "files", "records", "migrated", "every change reported", "notes by kind"]
    table = [header]
    for version in sorted(per_version):
        tally = per_version[version]
        migrated = tally["migrated"]
        share = f"{100 * tally['every change reported'] / migrated:.1f}%" if migrated else "-"
        notes = ", ".join(f"{k} {n:,}" for k, n in sorted(kinds[version].items())) or "-"
        failed = tally["records"] - migrated
        table.append(
            [version, f"{tally['files']:,}", f"{tally['records']:,}",
             f"{migrated:,} ({failed:,} not)", share, notes]
        )  # fmt: skip
    widths = [max(len(row[i]) for row in table) for i in range(len(header) - 1)]
    print(f"Migrating the real files under {root} to {to} (real runs, --out, by stated version):")
    for row in table:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False))
              + "  " + row[-1])  # fmt: skip

    json_notes = [n for r in records if r.get("status") == "migrated" for n in r["notes"]]
    placeholders = sum(bool(n.get("placeholder")) for n in json_notes)
    described = {_general(n) for n in json_notes}
    named = {line.rsplit(" [", 1)[0] for line in distinct_text}
    print()
    print(
        f"JSON rows: {len(records):,} records, {len(json_notes):,} notes of migrated records "
        f"({placeholders:,} placeholders)"
    )
    print(f"records whose JSON notes differ from the notes the steps made: {len(mismatched)}")
    print(
        f"distinct notes in the JSON rows: {len(described):,}; in the text output: "
        f"{len(set(named)):,}; missing from the text: {len(described - named)}"
    )
    print(
        f"placeholders counted by the text summaries: {text_placeholders:,}, by the JSON "
        f"summaries: {json_placeholders:,}"
    )
    print("text summaries:")
    for line in summaries:
        print(f"  {line}")
    print(
        f"time: text runs {seconds['text']:.1f} s, JSON runs {seconds['json']:.1f} s, audit in "
        f"this process {seconds['audit']:.1f} s"
    )
    print(f"\nthe text output's {len(distinct_text)} distinct notes (by version folder):")
    for line in distinct_text[:listed]:
        print("  " + line[:300])
    if unreported:
        print(f"\nrecords with changes not in their notes ({len(unreported)}), the first:")
        for line in unreported[:listed]:
            print("  " + line[:300])
    fine = not unreported and not mismatched and not (described - named)
    return 0 if fine and text_placeholders == json_placeholders else 1


def _general(note: dict[str, Any]) -> str:
    """Return a JSON note as the text output describes it (indices as `*`, no values)."""
    from evalreg.engine.notes import Note

    fields = dict(note)
    source = fields.pop("from", None)
    kind = fields.pop("kind")
    fields.pop("placeholder", None)
    after = fields.pop("after", None)
    value = fields.pop("value", after)
    return Note(
        kind,
        fields["pointer"],
        fields.get("detail", ""),
        fields.get("step", ""),
        source,
        value,
        fields.get("before"),
        fields.get("origin"),
        fields.get("from_type"),
        fields.get("to_type"),
    ).describe(generalise=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    gather = commands.add_parser("collect", help="write the history's data files under DIR")
    gather.add_argument("repo", type=Path, help="a clone or bare mirror of every_eval_ever")
    gather.add_argument("dir", type=Path)
    run = commands.add_parser("measure", help="migrate the files under DIR and audit the notes")
    run.add_argument("dir", type=Path)
    run.add_argument("--to", default="latest")
    run.add_argument("--list", type=int, default=40, metavar="N", help="lines listed")
    args = parser.parse_args(argv)
    if args.command == "collect":
        for key, count in sorted(collect(args.repo, args.dir).items()):
            print(f"{key}: {count:,} files")
        return 0
    return measure(args.dir, args.to, args.list)


if __name__ == "__main__":
    sys.exit(main())
