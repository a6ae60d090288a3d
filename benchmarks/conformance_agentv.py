"""Measure evalreg's AgentV eras on every real eval file of the AgentV repository's history.

    python benchmarks/conformance_agentv.py PATH/TO/agentv[.git]
    python benchmarks/conformance_agentv.py REPO --yaml          # also the YAML round trip
    python benchmarks/conformance_agentv.py REPO --refused       # list what is still refused
    python benchmarks/conformance_agentv.py REPO --dump DIR      # write the files out, by date

PATH is a local clone or bare mirror of github.com/EntityProcess/agentv. The script reads its
history with git at run time and ships none of it:

- every YAML blob of every commit (all refs) whose first document is a mapping holding a case
  list (`testcases`, `evalcases`, `eval_cases`, `cases`, `tests`) is one eval file, counted once
  per distinct content and dated by the earliest commit that holds it (experiment files,
  `*.exp.yaml`, which select eval files, are not eval files);
- every version of AgentV's published eval-file JSON Schema (`*eval-schema.json`,
  `*eval.schema.json`), dated the same way. A file's "upstream schema" is the newest one
  published at or before the file's date.

Per era that evalreg detects, it prints: how many files, their first, median and last dates,
the share detected at all, the share valid at the detected era, parity (of the files valid under
AgentV's own schema of their date, the share valid at the detected era), and the share that
migrates to the latest era and is valid there (without allow-loss); then the same files by the
upstream period of their date, and the overall figures. For the files that migrate, it prints
the `$schema` labels they carry after the migration (and how many carry a label that no file of
AgentV's history carries), the share whose every step reported every change it made (each
step's notes audited against its input and output) and the notes by kind. `--yaml` also
migrates every file with `evalreg migrate --out` and counts the comment lines and block scalars
(`|`, `>`) the written files kept, and the written files whose `$schema` no file of AgentV's
history carries. Everything else runs in this process through evalreg's library API; AgentV's
schemas are applied with python jsonschema.
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema

import evalreg
from evalreg.engine.audits import audit_migration

FAMILY = "agentv.eval"
CASE_KEYS = ("testcases", "evalcases", "eval_cases", "cases", "tests")
EVAL_GLOBS = ("*.yaml", "*.yml")
SCHEMA_GLOBS = ("*eval-schema.json", "*eval.schema.json")
EXPERIMENT_SUFFIXES = (".exp.yaml", ".exp.yml")


@dataclass(frozen=True)
class Blob:
    """One distinct file content of the history, with where and when it first appeared."""

    sha: str
    path: str
    commit: str
    time: int

    @property
    def date(self) -> str:
        return dt.datetime.fromtimestamp(self.time, dt.timezone.utc).strftime("%Y-%m-%d")


@dataclass
class Outcome:
    """What evalreg made of one real eval file."""

    blob: Blob
    era: str
    """The detected version of agentv.eval, or `-` when detection failed."""
    detection: str
    valid: bool
    problem: str
    upstream: bool | None
    """Valid under AgentV's own schema of the file's date (None: no schema published yet)."""
    upstream_problem: str
    migrated: bool
    migrate_problem: str
    label: str | None = None
    """The `$schema` the migrated file carries (None: none, or not migrated)."""
    reported: bool | None = None
    """Every change of every step is in the step's notes (None: not migrated)."""
    unreported: str = ""
    kinds: Counter[str] | None = None
    """The notes of the migration, by kind (a placeholder counted as such)."""


# -- reading the history ---------------------------------------------------------------------


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", f"--git-dir={repo}", *args], capture_output=True, text=True, check=True
    ).stdout


def git_dir(path: Path) -> Path:
    """Return the git directory of a clone or a bare mirror."""
    found = subprocess.run(
        ["git", "-C", str(path), "rev-parse", "--absolute-git-dir"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    return Path(found)


def blobs(repo: Path, globs: Sequence[str]) -> list[Blob]:
    """Return every distinct blob of files matching `globs` in any commit, earliest first."""
    log = _git(
        repo,
        "log",
        "--all",
        "-m",
        "--no-renames",
        "--format=C %H %ct",
        "--raw",
        "--no-abbrev",
        "--",
        *globs,
    )
    first: dict[str, Blob] = {}
    commit, when = "", 0
    for line in log.splitlines():
        if line.startswith("C "):
            _, commit, stamp = line.split()
            when = int(stamp)
        elif line.startswith(":"):
            meta, path = line.split("\t", 1)
            sha, status = meta.split()[3], meta.split()[4]
            if status.startswith("D") or not sha.strip("0"):
                continue
            known = first.get(sha)
            if known is None or (when, commit) < (known.time, known.commit):
                first[sha] = Blob(sha, path, commit, when)
    return sorted(first.values(), key=lambda b: (b.time, b.path, b.sha))


def contents(repo: Path, shas: Iterable[str]) -> Iterator[tuple[str, bytes]]:
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
            header = proc.stdout.readline().split()
            size = int(header[2])
            data = proc.stdout.read(size)
            proc.stdout.read(1)
            yield sha, data
    finally:
        proc.stdin.close()
        proc.wait()


def read_records(data: bytes, name: str) -> list[Any] | None:
    """Return the YAML documents of a file as evalreg reads them (None: unreadable)."""
    stream = io.BytesIO(data)
    stream.name = name  # type: ignore[misc]
    try:
        return list(evalreg.load(stream))
    except evalreg.ReadError:
        return None


def is_eval_file(path: str, records: Sequence[Any] | None) -> bool:
    """Return whether a YAML file is an AgentV eval file: its first document holds cases.

    Experiment files (`*.exp.yaml`) select eval files (`eval_cases: "*"`); they are not one.
    """
    if path.endswith(EXPERIMENT_SUFFIXES) or not records or not isinstance(records[0], dict):
        return False
    return any(key in records[0] for key in CASE_KEYS)


# -- AgentV's own schemas --------------------------------------------------------------------


@dataclass
class Upstream:
    """AgentV's published eval-file schemas, by date, with one compiled validator each."""

    times: list[int]
    schemas: list[tuple[Blob, Any]]

    @classmethod
    def read(cls, repo: Path) -> Upstream:
        found = blobs(repo, SCHEMA_GLOBS)
        data = dict(contents(repo, [b.sha for b in found]))
        schemas: list[tuple[Blob, Any]] = []
        for blob in found:
            try:
                document = json.loads(data[blob.sha])
            except ValueError:
                continue  # one early snapshot is not valid JSON; AgentV could not use it either
            cls_ = jsonschema.validators.validator_for(document)
            schemas.append((blob, cls_(document)))
        return cls([b.time for b, _ in schemas], schemas)

    def at(self, when: int) -> tuple[Blob, Any] | None:
        """Return the newest schema published at or before `when`."""
        lo, hi = 0, len(self.times)
        while lo < hi:
            mid = (lo + hi) // 2
            if self.times[mid] <= when:
                lo = mid + 1
            else:
                hi = mid
        return self.schemas[lo - 1] if lo else None


def _first_error(validator: Any, record: Any) -> str:
    error = jsonschema.exceptions.best_match(validator.iter_errors(record))
    if error is None:
        return ""
    where = "/" + "/".join(str(p) for p in error.absolute_path)
    return f"{where}: {error.message[:160]}"


# -- measuring -------------------------------------------------------------------------------

ERA_STARTS = {
    "1": "2025-11-09",
    "2": "2025-11-15",
    "2.1": "2025-11-22",
    "3": "2026-02-18",
    "3.1": "2026-03-30",
    "4": "2026-07-02",
    "5": "2026-07-07",
}
"""The first day of each era's upstream period (see each schema's description)."""


def measure(registry: evalreg.Registry, blob: Blob, record: Any) -> Outcome:
    """Detect, validate and migrate one eval file with evalreg."""
    name = os.path.basename(blob.path)
    detection = registry.detect(record, filename=name)
    era = detection.version if detection.ok and detection.family == FAMILY else "-"
    valid, problem = False, detection.summary() if era == "-" else ""
    migrated, migrate_problem = False, ""
    if era != "-":
        issues = registry.validate(record, FAMILY, era)
        valid = not issues
        problem = str(issues[0]) if issues else ""
        result = registry.migrate(record, "latest", family=FAMILY, filename=name)
        migrated = result.ok
        migrate_problem = "" if result.ok else f"{result.failed_step or ''}: {result.error}"
    outcome = Outcome(
        blob, era, detection.summary(), valid, problem, None, "", migrated, migrate_problem
    )
    if migrated and isinstance(result.record, dict):
        outcome.label = result.record.get("$schema")
        audited = audit_migration(registry, record, "latest", family=FAMILY, filename=name)
        outcome.reported = audited.ok
        outcome.unreported = "; ".join(audited.problems()[:3])
        outcome.kinds = Counter(
            "placeholder" if n.placeholder else n.kind for step in audited.steps for n in step.notes
        )
    return outcome


def judge(outcome: Outcome, record: Any, upstream: Upstream) -> None:
    """Record whether AgentV's own schema of the file's date accepts it."""
    found = upstream.at(outcome.blob.time)
    if found is not None:
        outcome.upstream_problem = _first_error(found[1], record)
        outcome.upstream = not outcome.upstream_problem


def _period(date: str) -> str:
    """Return the era whose upstream period holds `date` (the first for earlier dates)."""
    started = [(start, era) for era, start in ERA_STARTS.items() if start <= date]
    return max(started)[1] if started else min(ERA_STARTS.items(), key=lambda e: e[1])[0]


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:5.1f}% ({part}/{whole})" if whole else "    -"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    return [
        "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
        for r in [header, *rows]
    ]


def _row(label: str, group: Sequence[Outcome]) -> list[str]:
    dates = sorted(o.blob.date for o in group)
    judged = [o for o in group if o.upstream]
    return [
        label,
        str(len(group)),
        f"{dates[0]} .. {dates[len(dates) // 2]} .. {dates[-1]}" if dates else "-",
        _share(sum(o.era != "-" for o in group), len(group)),
        _share(sum(o.valid for o in group), len(group)),
        _share(sum(o.valid for o in judged), len(judged)),
        _share(sum(o.migrated for o in group), len(group)),
    ]


def report(outcomes: Sequence[Outcome], latest: str, versions: Sequence[str]) -> str:
    """Return the figures as text: per detected era, per upstream period, overall."""
    by_era: dict[str, list[Outcome]] = defaultdict(list)
    by_period: dict[str, list[Outcome]] = defaultdict(list)
    for outcome in outcomes:
        by_era[outcome.era].append(outcome)
        by_period[_period(outcome.blob.date)].append(outcome)
    header = [
        "era",
        "files",
        "first .. median .. last date",
        "detected",
        "valid",
        "parity",
        "to latest",
    ]
    rows = [_row(v, by_era[v]) for v in versions if by_era.get(v)]
    if by_era.get("-"):
        rows.append(_row("none", by_era["-"]))
    rows.append(_row("all", outcomes))
    lines = ["By the era evalreg detects:", *_table(header, rows)]
    rows = [
        [
            f"{v} (from {ERA_STARTS[v]})",
            str(len(by_period[v])),
            _share(sum(o.era == v for o in by_period[v]), len(by_period[v])),
            _share(sum(o.migrated for o in by_period[v]), len(by_period[v])),
        ]
        for v in versions
        if by_period.get(v)
    ]
    lines += [
        "",
        "By the upstream period of the file's date:",
        *_table(["period", "files", "detected at its era", "to latest"], rows),
    ]
    upstream = [o for o in outcomes if o.upstream is not None]
    upheld = [o for o in upstream if o.upstream]
    accepted = [o for o in outcomes if o.upstream is False and o.valid]
    newest = by_era.get(latest, [])
    lines += [
        "",
        "valid under AgentV's own schema of their date: "
        f"{_share(sum(bool(o.upstream) for o in upstream), len(upstream))}",
        "parity (of those, valid at the era evalreg detects): "
        f"{_share(sum(o.valid for o in upheld), len(upheld))}",
        f"valid at the detected era though AgentV's schema of their date refused them: "
        f"{len(accepted)}",
        f"detected at the newest era ({latest}), valid there: "
        f"{_share(sum(o.valid for o in newest), len(newest))}",
        f"migrated to {latest} and valid there: "
        f"{_share(sum(o.migrated for o in outcomes), len(outcomes))}",
    ]
    return "\n".join(lines)


def labels_and_notes(outcomes: Sequence[Outcome], used: set[str]) -> str:
    """Return what the migrated files say of themselves, and what their migrations reported.

    `used`: the `$schema` labels AgentV's own files carry anywhere in the history.
    """
    migrated = [o for o in outcomes if o.migrated]
    labels = Counter(o.label or "(none)" for o in migrated)
    foreign = [o for o in migrated if o.label is not None and o.label not in used]
    reported = [o for o in migrated if o.reported]
    kinds: Counter[str] = Counter()
    for o in migrated:
        kinds.update(o.kinds or {})
    by_era: dict[str, list[Outcome]] = defaultdict(list)
    for o in migrated:
        by_era[o.era].append(o)
    lines = [
        f"$schema labels of the {len(migrated)} files migrated to the latest era: "
        + ", ".join(f"{label} {n}" for label, n in labels.most_common()),
        f"labels AgentV's own files never carry: {len(foreign)}"
        + (f" ({', '.join(sorted({str(o.label) for o in foreign}))})" if foreign else ""),
        f"every change of every step in its notes: {_share(len(reported), len(migrated))}; "
        "by era: "
        + ", ".join(
            f"{era} {_share(sum(bool(o.reported) for o in group), len(group)).strip()}"
            for era, group in sorted(by_era.items())
        ),
        "notes by kind: " + ", ".join(f"{kind} {n:,}" for kind, n in sorted(kinds.items())),
    ]
    unreported = [o for o in migrated if not o.reported]
    lines += [f"    {o.blob.date} {o.blob.path}: {o.unreported[:200]}" for o in unreported[:5]]
    return "\n".join(lines)


def labels_in(records: Iterable[Any]) -> set[str]:
    """Return the `$schema` labels the records carry."""
    return {
        r["$schema"] for r in records if isinstance(r, dict) and isinstance(r.get("$schema"), str)
    }


def refused(outcomes: Sequence[Outcome]) -> str:
    """Return the files still refused, grouped by their first problem."""
    groups: dict[str, list[Outcome]] = defaultdict(list)
    for o in outcomes:
        if not o.migrated:
            reason = o.problem if o.era == "-" or not o.valid else o.migrate_problem
            groups[re.sub(r"/\d+(?=/|:|$)", "/*", reason)[:200]].append(o)
    lines = []
    for reason, group in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        verdicts = Counter("valid" if o.upstream else "invalid" for o in group)
        said = ", ".join(f"{n} {k}" for k, n in sorted(verdicts.items()))
        lines.append(f"{len(group):4d}  {reason}  [AgentV's schema of the day: {said}]")
        lines += [f"        {o.blob.date} {o.blob.commit[:9]} {o.blob.path}" for o in group[:3]]
    return "\n".join(lines)


_LABEL = re.compile(r"""^\$schema:\s*['"]?([^'"\s#]+)""", re.MULTILINE)
_BLOCK = re.compile(r"(?::|^\s*-)\s+[|>][-+0-9]*\s*(?:#.*)?$", re.MULTILINE)


def _comments_and_blocks(text: str) -> tuple[int, int]:
    comments = sum(1 for line in text.splitlines() if line.lstrip().startswith("#"))
    return comments, len(_BLOCK.findall(text))


def yaml_round_trip(files: Sequence[tuple[Blob, bytes]], used: set[str]) -> str:
    """Migrate every file with `evalreg migrate --out`; count what its layout kept and the
    written files that carry a `$schema` label AgentV's files (`used`) never carry."""
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp, "in"), Path(tmp, "out")
        for blob, data in files:
            target = src / blob.sha[:12] / os.path.basename(blob.path)
            target.parent.mkdir(parents=True)
            target.write_bytes(data)
        command = [sys.executable, "-m", "evalreg", "migrate", str(src), "--to", "latest"]
        command += ["--family", FAMILY, "--out", str(out)]
        subprocess.run(command, capture_output=True, check=False)
        kept = Counter[str]()
        for blob, data in files:
            written = out / blob.sha[:12] / os.path.basename(blob.path)
            if not written.exists():
                continue
            before = _comments_and_blocks(data.decode("utf-8", "replace"))
            after = _comments_and_blocks(written.read_text("utf-8", "replace"))
            label = _LABEL.search(written.read_text("utf-8", "replace"))
            kept["foreign labels"] += label is not None and label.group(1) not in used
            kept["files"] += 1
            kept["comments before"] += before[0]
            kept["comments after"] += min(after[0], before[0])
            kept["blocks before"] += before[1]
            kept["blocks after"] += min(after[1], before[1])
            kept["files keeping all"] += after[0] >= before[0] and after[1] >= before[1]
    return (
        f"YAML written by `evalreg migrate --to latest --out` ({kept['files']} files): comment "
        f"lines kept {_share(kept['comments after'], kept['comments before'])}, block scalars "
        f"kept {_share(kept['blocks after'], kept['blocks before'])}, files keeping both "
        f"{_share(kept['files keeping all'], kept['files'])}; written files with a $schema label "
        f"AgentV's files never carry: {kept['foreign labels']}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("repo", type=Path, help="a local clone or bare mirror of agentv")
    parser.add_argument("--dump", type=Path, help="write every eval file under DIR, by date")
    parser.add_argument("--refused", action="store_true", help="list the files still refused")
    parser.add_argument("--yaml", action="store_true", help="measure the YAML round trip")
    parser.add_argument("--json", type=Path, help="write every file's outcome to FILE")
    args = parser.parse_args(argv)

    started = time.perf_counter()
    repo = git_dir(args.repo)
    registry = evalreg.load_registry()
    upstream = Upstream.read(repo)
    candidates = blobs(repo, EVAL_GLOBS)
    data = dict(contents(repo, [b.sha for b in candidates]))
    files: list[tuple[Blob, bytes, Any]] = []
    for blob in candidates:
        records = read_records(data[blob.sha], os.path.basename(blob.path))
        if is_eval_file(blob.path, records):
            assert records is not None
            files.append((blob, data[blob.sha], records[0]))
    read = time.perf_counter()
    outcomes = [measure(registry, blob, record) for blob, _, record in files]
    measured = time.perf_counter()
    for outcome, (_, _, record) in zip(outcomes, files, strict=True):
        judge(outcome, record, upstream)
    judged = time.perf_counter()

    commits = len({b.commit for b, _, _ in files})
    print(
        f"{len(files)} eval files (distinct contents) first seen in {commits} commits, "
        f"{files[0][0].date} .. {files[-1][0].date}; {len(upstream.schemas)} versions of "
        "AgentV's published eval-file schema"
    )
    print()
    print(report(outcomes, registry.latest(FAMILY), registry.versions(FAMILY)))
    used = labels_in(record for _, _, record in files)
    print()
    print(labels_and_notes(outcomes, used))
    if args.yaml:
        print(yaml_round_trip([(b, d) for b, d, _ in files], used))
    print(
        f"\nreading the history {read - started:.1f} s; evalreg detect, validate, migrate, audit "
        f"{measured - read:.1f} s ({1000 * (measured - read) / len(files):.1f} ms a file); "
        f"AgentV's schemas (python jsonschema) {judged - measured:.1f} s"
    )
    if args.refused:
        print("\nstill refused, by first problem:")
        print(refused(outcomes))
    if args.dump:
        for blob, raw, _ in files:
            target = args.dump / f"{blob.date}_{blob.sha[:10]}" / os.path.basename(blob.path)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(raw)
        with open(args.dump / "index.tsv", "w", encoding="utf-8") as index:
            for blob, _, _ in files:
                index.write(f"{blob.date}\t{blob.sha}\t{blob.commit}\t{blob.path}\n")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            for o in outcomes:
                row = {
                    "sha": o.blob.sha,
                    "path": o.blob.path,
                    "commit": o.blob.commit,
                    "date": o.blob.date,
                    "era": o.era,
                    "detection": o.detection,
                    "valid": o.valid,
                    "problem": o.problem,
                    "upstream": o.upstream,
                    "upstream_problem": o.upstream_problem,
                    "migrated": o.migrated,
                    "migrate_problem": o.migrate_problem,
                }
                out.write(json.dumps(row) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
