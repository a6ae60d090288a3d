"""Compare evalreg's findings with Every Eval Ever's own validator on one datastore tree.

    python benchmarks/conformance_eee.py ROOT [--eee PATH/TO/every_eval_ever] [--list N]

ROOT is a datastore root (the folder holding `data/`) or its `data/` folder. Every `*.json` and
`*.jsonl` file under `data/` (hidden names skipped, as evalreg does) goes through both sides:

- Every Eval Ever: `every_eval_ever validate --format json FILES` in batches (it takes files, not
  folders) and `every_eval_ever check-duplicates` once over every aggregate it can read. The
  executable comes from `--eee`, else `$EEE_VALIDATOR`, else `every_eval_ever` on `PATH`. The
  package (0.3.0) needs Python >= 3.12, so it usually lives in a virtual environment of its own.
- evalreg: `python -m evalreg validate DATA --format json` with the interpreter running this script.

Each finding of either side is mapped to its file and a reason category (`CATEGORIES`), and the
script prints, per category and overall, the files each side flags, the files both flag, and the
share of files on which the two agree; then up to `--list` disagreements with both sides'
messages; then the time both take on the same files (best of `--repeat`) and their ratio.

Every Eval Ever judges every record by its current (0.3.0) models and rules; evalreg judges a
record at its own version. So the figures come twice: *raw*, and *by version*, where what cannot
be compared at a record's version is set aside (and counted): schema findings of records whose
version is not one of `SCHEMA_COMPARABLE`, and Every Eval Ever's findings of a category at versions
before the one that introduced its fields (`RULE_SINCE`).

`--json-out FILE` writes every file's findings from both sides, for a closer look.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CATEGORIES = (
    "strict-json",
    "layout",
    "companion",
    "score",
    "deployment",
    "interaction",
    "model-path",
    "duplicate",
    "schema",
    "other",
)
"""Reason categories, in the order they are printed."""

SCHEMA_COMPARABLE = frozenset({"0.2.3", "0.3.0"})
"""Versions whose JSON Schema matches the data model Every Eval Ever 0.3.0 validates against."""

RULE_SINCE = {"deployment": (0, 2, 3)}
"""Categories whose fields a record has only from a version on (deployment metadata: 0.2.3)."""

RULE_CATEGORY = (
    ("eee.strict", "strict-json"),
    ("eee.layout", "layout"),
    ("eee.companion", "companion"),
    ("eee.score", "score"),
    ("eee.deployment", "deployment"),
    ("eee.interaction", "interaction"),
    ("eee.model-path", "model-path"),
    ("eee.duplicate", "duplicate"),
)
"""evalreg rule id prefixes and the category each stands for."""

ARG_BYTES = 200_000
"""Most bytes of file names given to one `every_eval_ever validate` process."""


@dataclass(frozen=True)
class Finding:
    """One problem one side reported about one file."""

    path: str
    category: str
    severity: str  # "error" | "warning"
    message: str


@dataclass
class SideRun:
    """What one side reported over the whole tree, and how long it took."""

    findings: list[Finding]
    seconds: float
    cpu: float  # user + system seconds of the processes run
    notes: list[str] = field(default_factory=list)


# -- the files ---------------------------------------------------------------------------------


def data_folder(root: Path) -> Path:
    """Return the `data/` folder of a datastore root (or `root` itself when it is one)."""
    root = root.resolve()
    if root.name == "data":
        return root
    if (root / "data").is_dir():
        return root / "data"
    raise SystemExit(f"{root}: no data/ folder; give a datastore root or its data/ folder")


def datastore_files(data: Path) -> list[str]:
    """List every .json and .jsonl file under `data`, sorted, skipping hidden names."""
    found = []
    for folder, dirs, files in os.walk(data):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if not name.startswith(".") and name.endswith((".json", ".jsonl")):
                found.append(os.path.join(folder, name))
    return sorted(found)


def stated_version(path: str) -> str | None:
    """Return the `schema_version` a file's (first) record states, or None when unreadable."""
    try:
        with open(path, "rb") as handle:
            if path.endswith(".jsonl"):
                first = next((line for line in handle if line.strip()), b"")
                record = json.loads(first)
            else:
                record = json.load(handle)
    except (OSError, ValueError):
        return None
    version = record.get("schema_version") if isinstance(record, dict) else None
    return version if isinstance(version, str) else None


def version_key(version: str | None) -> tuple[int, ...]:
    """Order versions as numbers; an unknown or missing version sorts first."""
    if not version:
        return ()
    try:
        return tuple(int(part) for part in version.split("."))
    except ValueError:
        return ()


def batches(files: Sequence[str], limit: int = ARG_BYTES) -> Iterator[list[str]]:
    """Split `files` into command lines of at most `limit` bytes of names."""
    batch: list[str] = []
    size = 0
    for name in files:
        if batch and size + len(name) + 1 > limit:
            yield batch
            batch, size = [], 0
        batch.append(name)
        size += len(name) + 1
    if batch:
        yield batch


# -- Every Eval Ever's findings ------------------------------------------------------------------

_LAYOUT = (
    "Unexpected path depth",
    "Path must be a clean",
    "Path does not start with 'data/'",
    "reserved datastore name",
    "must be portable filesystem names",
    "does not match '{UUID4}.json'",
)
_SCORE_WORDS = (
    "score_type",
    "min_score",
    "max_score",
    "metric bounds",
    "level_names",
    "has_unknown_level",
)


def eee_text(item: dict[str, object]) -> str:
    """Join a report item's location and message as Every Eval Ever prints them."""
    loc, msg = str(item.get("loc") or ""), str(item.get("msg") or "")
    return f"{loc}: {msg}" if loc else msg


def eee_category(item: dict[str, object]) -> str | None:
    """Map one error or warning of `every_eval_ever validate` to a category (None: no finding)."""
    kind = item.get("type")
    text = eee_text(item)
    if kind == "truncated":
        return None
    if kind == "json_parse_error":
        return "strict-json"
    if kind == "semantic_warning":
        return "model-path" if text.startswith("model_info") else "other"
    if kind == "semantic_rule_error":
        # A companion's bad path is reported under detailed_evaluation_results; a file's own
        # bad path names `uuid_samples.jsonl` in its message.
        if text.startswith("detailed_evaluation_results"):
            return "companion"
        if any(marker in text for marker in _LAYOUT):
            return "layout"
        if any(word in text for word in ("samples", "companion", "sibling aggregate")):
            return "companion"
        if "deployment_type" in text or "model_availability" in text:
            return "deployment"
        if text.startswith("evaluation_results["):
            return "score"
        return "other"
    if kind in ("semantic_check_error", "io_error", "unsupported_extension"):
        return "other"
    # The rest come from the pydantic models: schema problems, and the models' own validators
    # (`value_error`), whose messages name the fields they check.
    about = str(item.get("msg") or "") if kind == "value_error" else ""
    return _schema_category(str(item.get("loc") or ""), about)


def _names(word: str, text: str) -> bool:
    """Tell whether `text` names the field `word` (as a whole word: not a longer name)."""
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(word)}(?![A-Za-z0-9_])", text) is not None


def _schema_category(where: str, about: str = "") -> str:
    """Refine a schema problem by the field it is about, the same way for both sides.

    `where` locates the problem; `about` is text that names the field concerned (the property a
    `required` message names, or a model validator's message), never an echo of the value.
    """
    if _names("interaction_type", about):
        return "interaction"
    words = f"{where} {about}"
    if _names("deployment_type", words) or _names("model_availability", words):
        return "deployment"
    if _names("detailed_evaluation_results", words):
        return "companion"
    tokens = re.split(r"[/ >.\-]+", where.strip()) if where.strip() else [""]
    tail = tokens[-1]
    # The score itself and its uncertainty: Every Eval Ever's score check also reads them.
    if tail in (*_SCORE_WORDS, "score") or "uncertainty" in tokens:
        return "score"
    if any(_names(word, about) for word in _SCORE_WORDS):
        return "score"
    if tail == "model_info" and about == "additional_details":
        return "deployment"  # required from 0.2.3 on, for the deployment fields it holds
    return "schema"


def eee_report_findings(report: dict[str, Any]) -> list[Finding]:
    """Turn one file's report of `every_eval_ever validate --format json` into findings."""
    path = os.path.abspath(str(report["file"]))
    out = []
    for severity, key in (("error", "errors"), ("warning", "warnings")):
        for item in report.get(key) or []:
            category = eee_category(item)
            if category is not None:
                out.append(Finding(path, category, severity, eee_text(item)))
    return out


def _run_eee_batch(eee: str, batch: list[str], notes: list[str]) -> list[Finding]:
    """Validate one batch; where the validator dies, split the batch to find the file."""
    done = subprocess.run(
        [eee, "validate", "--format", "json", *batch], capture_output=True, text=True
    )
    try:
        reports = json.loads(done.stdout) if done.returncode in (0, 1, 2) else None
    except json.JSONDecodeError:
        reports = None
    if isinstance(reports, list):
        return [finding for report in reports for finding in eee_report_findings(report)]
    if len(batch) > 1:
        middle = len(batch) // 2
        return _run_eee_batch(eee, batch[:middle], notes) + _run_eee_batch(
            eee, batch[middle:], notes
        )
    last = (done.stderr.strip().splitlines() or ["no output"])[-1]
    notes.append(f"every_eval_ever validate died on {batch[0]}: {last}")
    category = "strict-json" if "UnicodeDecodeError" in last else "other"
    return [Finding(os.path.abspath(batch[0]), category, "error", f"validator died: {last}")]


def readable_by_duplicate_check(path: str) -> bool:
    """Tell whether `check-duplicates` can load a file (it stops at the first it cannot)."""
    try:
        with open(path, encoding="utf-8") as handle:
            json.load(handle)
    except (OSError, ValueError):
        return False
    return True


def run_eee_duplicates(eee: str, files: Sequence[str], notes: list[str]) -> list[Finding]:
    """Run `check-duplicates` over every aggregate it can read and return its duplicate groups.

    It takes folders, so it is given one of links to the files, with no limit on their number.
    """
    aggregates = [path for path in files if path.endswith(".json")]
    readable = [path for path in aggregates if readable_by_duplicate_check(path)]
    if len(readable) < len(aggregates):
        notes.append(
            f"check-duplicates: {len(aggregates) - len(readable)} aggregate(s) left out: "
            "it stops at the first file it cannot read"
        )
    with tempfile.TemporaryDirectory(prefix="eee-dups-") as scratch:
        back = {}
        for index, path in enumerate(readable):
            link = os.path.join(scratch, f"{index}.json")
            os.symlink(path, link)
            back[link] = path
        done = subprocess.run([eee, "check-duplicates", scratch], capture_output=True, text=True)
    if done.returncode not in (0, 1):
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        notes.append(f"check-duplicates failed: {last}")
        return []
    groups: list[list[str]] = []
    for line in done.stdout.splitlines():
        if line.startswith("Duplicate group"):
            groups.append([])
        elif groups and line.startswith("  - "):
            groups[-1].append(back.get(line[4:].strip(), line[4:].strip()))
    found = []
    for group in groups:
        for path in group:
            others = ", ".join(os.path.basename(other) for other in group if other != path)
            found.append(Finding(path, "duplicate", "error", f"duplicate of {others}"))
    return found


def _child_cpu() -> float:
    """Return the user and system seconds used so far by finished child processes."""
    times = os.times()
    return times.children_user + times.children_system


def run_eee(eee: str, files: Sequence[str]) -> SideRun:
    """Run Every Eval Ever's validator and duplicate check over `files`."""
    notes: list[str] = []
    start, cpu = time.perf_counter(), _child_cpu()
    findings = [f for batch in batches(files) for f in _run_eee_batch(eee, batch, notes)]
    findings += run_eee_duplicates(eee, files, notes)
    return SideRun(findings, time.perf_counter() - start, _child_cpu() - cpu, notes)


# -- evalreg's findings --------------------------------------------------------------------------


_REQUIRED = re.compile(r"^'([^']*)' is a required property")


def evalreg_category(problem: dict[str, object]) -> str:
    """Map one problem of `evalreg validate --format json` to a category."""
    if problem.get("kind") == "unreadable":
        return "strict-json"
    rule = problem.get("rule")
    if problem.get("keyword") == "rule" or rule:
        for prefix, category in RULE_CATEGORY:
            if str(rule or "").startswith(prefix):
                return category
        return "other"
    if problem.get("family") == "eee.instance" and str(problem.get("schema_path")).startswith(
        "/allOf/"
    ):
        return "interaction"  # the instance schemas state the interaction shape as conditions
    named = _REQUIRED.match(str(problem.get("message") or ""))
    return _schema_category(str(problem.get("pointer") or ""), named.group(1) if named else "")


def evalreg_findings(lines: Iterable[str]) -> list[Finding]:
    """Turn the output of `evalreg validate --format json` into findings."""
    out = []
    for line in lines:
        if not line.strip():
            continue
        problem = json.loads(line)
        if "summary" in problem:
            continue
        severity = problem.get("severity") or (
            "warning" if problem.get("kind") == "warning" else "error"
        )
        pointer = problem.get("pointer") or ""
        where = f"{problem['line']}: " if problem.get("line") else ""
        rule = f"[{problem['rule']}] " if problem.get("rule") else ""
        message = f"{where}{pointer}: {rule}{problem.get('message')}".lstrip(": ")
        out.append(
            Finding(
                os.path.abspath(str(problem["path"])),
                evalreg_category(problem),
                str(severity),
                message,
            )
        )
    return out


def evalreg_command(data: Path, jobs: int | None, extra: Sequence[str]) -> list[str]:
    """Build the evalreg command line that validates the whole tree."""
    command = [sys.executable, "-m", "evalreg", "validate", str(data), "--format", "json"]
    command += ["--include", "*.json", "--include", "*.jsonl", "--max-errors", "0"]
    if jobs:
        command += ["--jobs", str(jobs)]
    return command + list(extra)


def run_evalreg(data: Path, jobs: int | None = None, extra: Sequence[str] = ()) -> SideRun:
    """Run evalreg over the tree and return its findings."""
    start, cpu = time.perf_counter(), _child_cpu()
    done = subprocess.run(evalreg_command(data, jobs, extra), capture_output=True, text=True)
    seconds, cpu = time.perf_counter() - start, _child_cpu() - cpu
    if done.returncode not in (0, 1):
        raise SystemExit(f"evalreg validate failed ({done.returncode}): {done.stderr.strip()}")
    return SideRun(evalreg_findings(done.stdout.splitlines()), seconds, cpu)


# -- comparing -----------------------------------------------------------------------------------


@dataclass
class FileView:
    """One file as both sides see it."""

    path: str
    version: str | None
    eee: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    evalreg: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))


def gather(files: Sequence[str], eee: SideRun, evalreg: SideRun) -> dict[str, FileView]:
    """Group both sides' findings by file."""
    views = {path: FileView(path, stated_version(path)) for path in files}
    for side, run in (("eee", eee), ("evalreg", evalreg)):
        for finding in run.findings:
            view = views.setdefault(finding.path, FileView(finding.path, None))
            getattr(view, side)[finding.category].append(finding.message)
    return views


def comparable(view: FileView, side: str) -> set[str]:
    """Return the categories of one side that can be compared at the file's version."""
    categories = set(getattr(view, side))
    if view.version not in SCHEMA_COMPARABLE:
        categories.discard("schema")
    if side == "eee":
        for category, since in RULE_SINCE.items():
            if version_key(view.version) < since:
                categories.discard(category)
    return categories


@dataclass(frozen=True)
class Tally:
    """Agreement counts over a set of files, per category and overall."""

    files: int
    per_category: dict[str, tuple[int, int, int, int]]  # eee, evalreg, both, agree
    same: int
    both_clean: int
    eee_clean: int
    evalreg_clean: int


def tally(views: Iterable[FileView], by_version: bool) -> Tally:
    """Count, per category and overall, what each side flags and where they agree."""
    per: dict[str, list[int]] = {category: [0, 0, 0, 0] for category in CATEGORIES}
    files = same = both_clean = eee_clean = evalreg_clean = 0
    for view in views:
        files += 1
        ours = comparable(view, "eee") if by_version else set(view.eee)
        theirs = comparable(view, "evalreg") if by_version else set(view.evalreg)
        for category in CATEGORIES:
            a, b = category in ours, category in theirs
            per[category][0] += a
            per[category][1] += b
            per[category][2] += a and b
            per[category][3] += a == b
        same += ours == theirs
        both_clean += not ours and not theirs
        eee_clean += not ours
        evalreg_clean += not theirs
    return Tally(
        files,
        {k: (v[0], v[1], v[2], v[3]) for k, v in per.items()},
        same,
        both_clean,
        eee_clean,
        evalreg_clean,
    )


def share(part: int, whole: int) -> str:
    """Format a share as a percentage."""
    return f"{100 * part / whole:.1f}%" if whole else "-"


def print_tally(title: str, result: Tally) -> None:
    """Print one agreement table."""
    print(f"\n{title} ({result.files:,} files)")
    print(f"  {'category':<12} {'EEE':>7} {'evalreg':>8} {'both':>7} {'agree':>8}")
    for category in CATEGORIES:
        eee, ours, both, agree = result.per_category[category]
        if eee or ours:
            print(
                f"  {category:<12} {eee:>7,} {ours:>8,} {both:>7,} {share(agree, result.files):>8}"
            )
    print(
        f"  same categories on both sides: {result.same:,} files "
        f"({share(result.same, result.files)}); clean on both: {result.both_clean:,}; "
        f"clean for EEE: {result.eee_clean:,}, for evalreg: {result.evalreg_clean:,}"
    )


def print_versions(views: dict[str, FileView], root: Path) -> None:
    """Print how many files of each kind and version the tree holds, and who flags them."""
    rows: Counter[tuple[str, str]] = Counter()
    flagged: Counter[tuple[str, str, str]] = Counter()
    for view in views.values():
        key = (view.version or "?", "samples" if view.path.endswith(".jsonl") else "aggregate")
        rows[key] += 1
        flagged[(key[0], key[1], "eee")] += bool(view.eee)
        flagged[(key[0], key[1], "evalreg")] += bool(view.evalreg)
    print(f"\nTree {root}")
    print(f"  {'version':<9} {'kind':<10} {'files':>7} {'EEE flags':>10} {'evalreg flags':>14}")
    for (version, kind), count in sorted(rows.items(), key=lambda i: (version_key(i[0][0]), i)):
        print(
            f"  {version:<9} {kind:<10} {count:>7,} {flagged[(version, kind, 'eee')]:>10,} "
            f"{flagged[(version, kind, 'evalreg')]:>14,}"
        )


def disagreements(views: dict[str, FileView], by_version: bool) -> dict[str, list[FileView]]:
    """Group the files on which the sides disagree by the category they disagree on."""
    out: dict[str, list[FileView]] = defaultdict(list)
    for view in views.values():
        ours = comparable(view, "eee") if by_version else set(view.eee)
        theirs = comparable(view, "evalreg") if by_version else set(view.evalreg)
        for category in sorted(ours ^ theirs, key=CATEGORIES.index):
            out[category].append(view)
    return out


def print_disagreements(views: dict[str, FileView], data: Path, limit: int) -> None:
    """Print up to `limit` disagreements (by version), taking categories in turn."""
    groups = disagreements(views, by_version=True)
    total = sum(len(group) for group in groups.values())
    print(f"\nDisagreements by version: {total:,} (file, category) pairs; showing up to {limit}")
    for category in CATEGORIES:
        if groups.get(category):
            print(f"  {category}: {len(groups[category]):,} files")
    shown = 0
    queues = {category: list(groups[category]) for category in CATEGORIES if groups.get(category)}
    while shown < limit and any(queues.values()):
        for category, queue in queues.items():
            if not queue or shown >= limit:
                continue
            view = queue.pop(0)
            shown += 1
            where = os.path.relpath(view.path, data.parent)
            print(f"\n  [{category}] {where} (version {view.version or '?'})")
            for side, label in (("eee", "EEE"), ("evalreg", "evalreg")):
                messages = getattr(view, side).get(category) or []
                if not messages:
                    print(f"    {label}: (nothing)")
                for message in messages[:2]:
                    print(f"    {label}: {message[:240]}")
                if len(messages) > 2:
                    print(f"    {label}: ... and {len(messages) - 2} more")


# -- timing --------------------------------------------------------------------------------------


def best_of(repeat: int, run: Callable[[], SideRun], first: SideRun | None = None) -> SideRun:
    """Run `run()` until `repeat` runs are done (counting `first`); return the fastest."""
    runs = [first] if first is not None else []
    while len(runs) < repeat:
        runs.append(run())
    return min(runs, key=lambda r: r.seconds)


def print_timing(
    eee: str,
    files: Sequence[str],
    data: Path,
    repeat: int,
    first: tuple[SideRun, SideRun],
    extra: Sequence[str],
) -> None:
    """Time both sides on the same files and print the ratios, by wall clock and by CPU time."""
    theirs = best_of(repeat, lambda: run_eee(eee, files), first[0])
    ours = best_of(repeat, lambda: run_evalreg(data, extra=extra), first[1])
    one_job = best_of(repeat, lambda: run_evalreg(data, jobs=1, extra=extra))
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"\nTiming, best of {repeat}, {len(files):,} files, {os.cpu_count()} cores "
        f"(load average now {load})"
    )
    print(f"  {'':<46} {'wall s':>8} {'ratio':>7} {'CPU s':>8} {'ratio':>7}")
    for label, run in (
        ("every_eval_ever validate + check-duplicates", theirs),
        ("evalreg validate, all cores", ours),
        ("evalreg validate --jobs 1", one_job),
    ):
        print(
            f"  {label:<46} {run.seconds:>8.2f} {theirs.seconds / run.seconds:>6.1f}x "
            f"{run.cpu:>8.2f} {theirs.cpu / max(run.cpu, 1e-9):>6.1f}x"
        )
    print("  (ratio: Every Eval Ever's time over this line's; CPU: user + system, all processes)")


# -- the command ---------------------------------------------------------------------------------


def find_eee(option: str | None) -> str:
    """Find Every Eval Ever's command line program."""
    candidate = option or os.environ.get("EEE_VALIDATOR") or shutil.which("every_eval_ever")
    if not candidate or not os.access(candidate, os.X_OK):
        raise SystemExit(
            "every_eval_ever not found: give --eee PATH (for example a virtual environment's "
            "bin/every_eval_ever with `pip install every-eval-ever==0.3.0`, Python >= 3.12)"
        )
    return candidate


def compare(
    root: Path, eee: str, extra: Sequence[str] = ()
) -> tuple[Path, list[str], SideRun, SideRun, dict[str, FileView]]:
    """Run both sides once over the tree and return their findings by file."""
    data = data_folder(root)
    files = datastore_files(data)
    if not files:
        raise SystemExit(f"{data}: no .json or .jsonl files")
    ours = run_evalreg(data, extra=extra)
    theirs = run_eee(eee, files)
    return data, files, theirs, ours, gather(files, theirs, ours)


def main(argv: Sequence[str] | None = None) -> int:
    """Compare both validators on a datastore tree and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", type=Path, help="datastore root, or its data/ folder")
    parser.add_argument("--eee", help="path of the every_eval_ever executable")
    parser.add_argument("--list", type=int, default=20, metavar="N", help="disagreements shown")
    parser.add_argument("--repeat", type=int, default=3, metavar="N", help="timing runs (best of)")
    parser.add_argument("--no-timing", action="store_true", help="skip the timing runs")
    parser.add_argument(
        "--evalreg-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="extra argument for `evalreg validate` (repeatable), e.g. --evalreg-arg=--no-rules",
    )
    parser.add_argument("--json-out", type=Path, help="write every file's findings here")
    args = parser.parse_args(argv)

    eee = find_eee(args.eee)
    data, files, theirs, ours, views = compare(args.root, eee, args.evalreg_arg)
    print_versions(views, data)
    for note in theirs.notes:
        print(f"  note: {note}")
    print_tally("Raw: every finding of both sides", tally(views.values(), by_version=False))
    print_tally(
        "By version: what applies at each record's version",
        tally(views.values(), by_version=True),
    )
    set_aside: Counter[str] = Counter()
    for view in views.values():
        for side in ("eee", "evalreg"):
            for category in set(getattr(view, side)) - comparable(view, side):
                set_aside[f"{side} {category}"] += 1
    if set_aside:
        print(
            "  set aside by version (files): "
            + ", ".join(f"{key} {count:,}" for key, count in sorted(set_aside.items()))
        )
    print_disagreements(views, data, args.list)
    if args.json_out:
        args.json_out.write_text(
            json.dumps(
                [
                    {
                        "path": os.path.relpath(view.path, data.parent),
                        "version": view.version,
                        "eee": dict(view.eee),
                        "evalreg": dict(view.evalreg),
                    }
                    for view in views.values()
                ],
                indent=1,
            )
        )
    if not args.no_timing:
        print_timing(eee, files, data, args.repeat, (theirs, ours), args.evalreg_arg)
    return 0


if __name__ == "__main__":
    sys.exit(main())
