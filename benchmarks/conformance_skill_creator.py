"""Measure how evalreg handles real skill-creator workspace files.

Usage: python benchmarks/conformance_skill_creator.py FOLDER [--details FILE]

Walks FOLDER for the files a skill-creator workspace holds (evals.json, eval_metadata.json,
grading.json, timing.json, benchmark.json, feedback.json, history.json, metrics.json,
analysis.json, comparison*.json) and prints, per kind of file:

- files: how many there are;
- right family: the share evalreg detects as the family that file name belongs to;
- valid: the share valid at the version evalreg detected;
- valid or migrated: the share valid at the detected version, or that migrate to the family's
  latest version (without --set values and without allowing loss) and are valid there.

A file that is not JSON, or whose document is not an object, counts against every share of its
kind. It also prints the number of `.json` files detected as a family whose files are YAML
(which must be 0), and, with --details, writes one line per file to FILE: the path, the
expected and detected family and version, and the outcome, for looking into the misses.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import evalreg
from evalreg.io.readers import read_items

KINDS = {
    "evals.json": "skill-creator.evals",
    "eval_metadata.json": "skill-creator.eval-metadata",
    "grading.json": "skill-creator.grading",
    "timing.json": "skill-creator.timing",
    "benchmark.json": "skill-creator.benchmark",
    "feedback.json": "skill-creator.feedback",
    "history.json": "skill-creator.history",
    "metrics.json": "skill-creator.metrics",
    "analysis.json": "skill-creator.analysis",
    "comparison*.json": "skill-creator.comparison",
}
_COMPARISON = re.compile(r"^comparison([-_].*)?\.json$")


def kind_of(name: str) -> str | None:
    """Return the kind (the file name pattern) of a workspace file, or None."""
    if name in KINDS:
        return name
    return "comparison*.json" if _COMPARISON.match(name) else None


def measure(registry: evalreg.Registry, path: Path) -> dict[str, Any]:
    """Return what evalreg makes of one file."""
    items = list(read_items(str(path)))
    outcome: dict[str, Any] = {"path": str(path), "family": None, "version": None}
    if len(items) != 1 or not items[0].ok or not isinstance(items[0].record, dict):
        outcome["outcome"] = items[0].error if items and items[0].error else "not one object"
        return outcome
    record = items[0].record
    detection = registry.detect(record, filename=path.name)
    outcome["family"], outcome["version"] = detection.family, detection.version
    outcome["yaml_family"] = bool(
        detection.family and registry.manifest(detection.family).kind == "yaml"
    )
    if not detection.ok:
        outcome["outcome"] = detection.summary()
        return outcome
    assert detection.family is not None and detection.version is not None
    issues = registry.validate(record, detection.family, detection.version)
    outcome["valid"] = not issues
    if issues:
        result = registry.migrate(record, to="latest", family=detection.family, filename=path.name)
        outcome["migrated"] = result.status == "migrated"
        outcome["outcome"] = (
            f"migrated to {result.target}" if result.status == "migrated" else str(result.error)
        )
        if not outcome["migrated"] and detection.version == result.target:
            outcome["outcome"] = f"invalid at the latest: {issues[0]}"
    else:
        outcome["outcome"] = "valid"
    return outcome


def percent(part: int, whole: int) -> str:
    """Return `part` of `whole` as a percentage with one decimal."""
    return f"{100 * part / whole:5.1f}%" if whole else "    -"


def main(argv: list[str] | None = None) -> int:
    """Print the conformance figures of a folder of real files; return the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--details", type=Path, help="write one line per file here")
    args = parser.parse_args(argv)
    registry = evalreg.load_registry()
    rows: dict[str, list[dict[str, Any]]] = defaultdict(list)
    json_as_yaml = 0
    json_files = 0
    for path in sorted(args.folder.rglob("*")):
        if not path.is_file():
            continue
        kind = kind_of(path.name)
        if path.suffix == ".json" and kind is not None:
            json_files += 1
        if kind is None:
            continue
        outcome = measure(registry, path)
        outcome["expected"] = KINDS[kind]
        json_as_yaml += bool(outcome.get("yaml_family"))
        rows[kind].append(outcome)

    header = (
        f"{'kind':<20} {'files':>6} {'right family':>13} {'valid':>7} {'valid or migrated':>18}"
    )
    print(header)
    print("-" * len(header))
    totals: Counter[str] = Counter()
    for kind in KINDS:
        found = rows.get(kind, [])
        right = sum(1 for o in found if o["family"] == o["expected"])
        valid = sum(1 for o in found if o["family"] == o["expected"] and o.get("valid"))
        usable = sum(
            1
            for o in found
            if o["family"] == o["expected"] and (o.get("valid") or o.get("migrated"))
        )
        totals.update(files=len(found), right=right, valid=valid, usable=usable)
        print(
            f"{kind:<20} {len(found):>6} {percent(right, len(found)):>13} "
            f"{percent(valid, len(found)):>7} {percent(usable, len(found)):>18}"
        )
    print("-" * len(header))
    files = totals["files"]
    print(
        f"{'all':<20} {files:>6} {percent(totals['right'], files):>13} "
        f"{percent(totals['valid'], files):>7} {percent(totals['usable'], files):>18}"
    )
    repos = {Path(o["path"]).relative_to(args.folder).parts[0] for r in rows.values() for o in r}
    print(f"\n{files} files of these kinds in {len(repos)} top-level folders")
    print(f".json files detected as a YAML family: {json_as_yaml} (of {json_files} .json files)")
    if args.details:
        with args.details.open("w", encoding="utf-8") as out:
            for kind in KINDS:
                for o in rows.get(kind, []):
                    line = {k: o.get(k) for k in ("path", "expected", "family", "version")}
                    line["outcome"] = o.get("outcome")
                    out.write(json.dumps(line, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
