"""Plant one fault of each kind in a copy of a real datastore tree and see who finds each.

    python benchmarks/eee_faults.py ROOT [--eee PATH/TO/every_eval_ever] [--files N] [--keep DIR]

A small part of the tree under ROOT (every aggregate with a samples companion, every aggregate
with LLM judges, and `--files` other aggregates spread over the tree) is copied to a temporary
folder (or `--keep DIR`), keeping each file's path under `data/`. Both validators run on the copy
(`conformance_eee.compare`), then one fault of each kind in `FAULTS` is planted, each in a
different file that neither side flagged in that fault's category before, and both run again.
The script prints, per fault, the file, the change, and whether Every Eval Ever's validator and
evalreg each reported that file in the fault's category; `planted.json` beside `data/` records
what was planted where.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import conformance_eee as conformance  # noqa: E402

FAULTS = (
    ("score-out-of-bounds", "score"),
    ("min-above-max", "score"),
    ("judge-without-deployment", "deployment"),
    ("companion-row-count", "companion"),
    ("path-depth", "layout"),
    ("duplicate-key", "strict-json"),
    ("nan", "strict-json"),
)
"""Each fault planted, and the category under which a validator should report it."""


@dataclass(frozen=True)
class Planted:
    """One fault, where it was planted and what was changed."""

    fault: str
    category: str
    path: str  # relative to the datastore root (the folder holding data/)
    change: str
    also: str | None = None  # another file the fault concerns (a companion)


# -- reading the tree ----------------------------------------------------------------------------


def load(path: Path) -> Any:
    """Read one JSON document (Python's reader: NaN and duplicate keys pass)."""
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def aggregates(data: Path) -> list[Path]:
    """List the aggregate files under `data`, sorted."""
    return [Path(p) for p in conformance.datastore_files(data) if p.endswith(".json")]


def companion_of(path: Path, record: Any) -> Path | None:
    """Return the samples file an aggregate points at, when it exists beside it."""
    detail = record.get("detailed_evaluation_results") if isinstance(record, dict) else None
    sibling = path.with_name(f"{path.stem}_samples.jsonl")
    return sibling if isinstance(detail, dict) and sibling.is_file() else None


def has_judges(record: Any) -> bool:
    """Tell whether some result of an aggregate is scored by LLM judges."""
    return any(judges_of(result) for result in results_of(record))


def results_of(record: Any) -> list[dict[str, Any]]:
    """Return an aggregate's results that are objects."""
    results = record.get("evaluation_results") if isinstance(record, dict) else None
    return [r for r in results if isinstance(r, dict)] if isinstance(results, list) else []


def judges_of(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Return the judges of one result, if any."""
    scoring = (result.get("metric_config") or {}).get("llm_scoring")
    judges = scoring.get("judges") if isinstance(scoring, dict) else None
    return [j for j in judges if isinstance(j, dict)] if isinstance(judges, list) else []


def bounded(result: dict[str, Any]) -> bool:
    """Tell whether a result has finite numeric bounds, min < max, and a numeric score."""
    metric = result.get("metric_config") or {}
    low, high = metric.get("min_score"), metric.get("max_score")
    score = (result.get("score_details") or {}).get("score")
    numbers = [n for n in (low, high, score) if isinstance(n, (int, float))]
    return (
        len(numbers) == 3
        and not any(isinstance(n, bool) or not math.isfinite(n) for n in numbers)
        and numbers[0] < numbers[1]
    )


def at_least(record: Any, version: tuple[int, ...]) -> bool:
    """Tell whether an aggregate states a version at or after `version`."""
    stated = record.get("schema_version") if isinstance(record, dict) else None
    return conformance.version_key(stated if isinstance(stated, str) else None) >= version


# -- copying a small tree ------------------------------------------------------------------------


def pick(data: Path, others: int) -> list[Path]:
    """Choose the files to copy: companion pairs, judged aggregates, and `others` more."""
    chosen: list[Path] = []
    plain: list[Path] = []
    for path in aggregates(data):
        try:
            record = load(path)
        except (OSError, ValueError):
            continue
        sibling = companion_of(path, record)
        if sibling is not None:
            chosen += [path, sibling]
        elif has_judges(record):
            chosen.append(path)
        else:
            plain.append(path)
    step = max(1, len(plain) // max(1, others))
    return chosen + plain[::step][:others]


def copy_tree(data: Path, files: Iterable[Path], into: Path) -> Path:
    """Copy `files` from under `data` to `into/data`, keeping their paths; return the new data/."""
    target = into / "data"
    for path in files:
        dest = target / path.relative_to(data)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, dest)
    return target


# -- planting ------------------------------------------------------------------------------------


def write(path: Path, record: Any) -> None:
    """Write a record as indented JSON (NaN written as the bare word, as Python does)."""
    path.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def plant(data: Path, avoid: Mapping[str, set[str]] | None = None) -> list[Planted]:
    """Plant every fault of `FAULTS` in a different file under `data`.

    `avoid` maps absolute paths to categories already reported there; a fault never goes into
    a file already reported in its category, so that finding it means finding the fault.

    Raises:
        SystemExit: when the tree has no file fit for some fault.
    """
    avoid = avoid or {}
    root = data.parent
    used: set[Path] = set()
    records: dict[Path, Any] = {}
    for path in aggregates(data):
        try:
            records[path] = load(path)
        except (OSError, ValueError):
            continue
    paired = {path for path, record in records.items() if companion_of(path, record)}

    def choose(category: str, fits: Callable[[Path, Any], bool], pairs: bool = False) -> Path:
        for path, record in records.items():
            if path in used or (path in paired) != pairs:
                continue
            if category in avoid.get(os.path.abspath(path), set()):
                continue
            sibling = companion_of(path, record)
            if sibling is not None and category in avoid.get(os.path.abspath(sibling), set()):
                continue
            if fits(path, record):
                used.add(path)
                return path
        raise SystemExit(f"no file fit to plant a {category} fault in {data}")

    def rel(path: Path) -> str:
        return path.relative_to(root).as_posix()

    planted = []

    # The faults that need rare files (judges, companions) choose first.
    def judged(p: Path, r: Any) -> bool:
        return at_least(r, (0, 2, 3)) and has_judges(r)

    def recent(p: Path, r: Any) -> bool:
        return at_least(r, (0, 2, 3)) and bool(results_of(r))

    try:
        path = choose("deployment", judged)
        record = records[path]
        index, result = next((i, x) for i, x in enumerate(results_of(record)) if judges_of(x))
        details = judges_of(result)[0].setdefault("model_info", {}).get("additional_details")
        if isinstance(details, dict):
            details.pop("deployment_type", None)
            details.pop("model_availability", None)
        change = "deployment_type and model_availability removed from judges[0]"
    except SystemExit:
        path = choose("deployment", recent)
        record = records[path]
        index, result = 0, results_of(record)[0]
        result.setdefault("metric_config", {})["llm_scoring"] = {
            "judges": [
                {"model_info": {"name": "judge", "id": "acme/judge", "additional_details": {}}}
            ],
            "input_prompt": "Grade the answer.",
        }
        change = "added an LLM judge whose model_info has no deployment metadata"
    write(path, record)
    planted.append(
        Planted(
            "judge-without-deployment",
            "deployment",
            rel(path),
            f"evaluation_results[{index}].metric_config.llm_scoring: {change}",
        )
    )

    path = choose("companion", lambda p, r: True, pairs=True)
    record = records[path]
    samples = companion_of(path, record)
    assert samples is not None
    rows = sum(1 for line in samples.read_bytes().splitlines() if line.strip())
    record["detailed_evaluation_results"]["total_rows"] = rows + 1
    write(path, record)
    planted.append(
        Planted(
            "companion-row-count",
            "companion",
            rel(path),
            f"detailed_evaluation_results.total_rows = {rows + 1} ({rows} rows in the samples)",
            also=rel(samples),
        )
    )

    path = choose("score", lambda p, r: any(bounded(x) for x in results_of(r)))
    record = records[path]
    index, result = next((i, x) for i, x in enumerate(results_of(record)) if bounded(x))
    high = result["metric_config"]["max_score"]
    result["score_details"]["score"] = high + 1
    write(path, record)
    planted.append(
        Planted(
            "score-out-of-bounds",
            "score",
            rel(path),
            f"evaluation_results[{index}].score_details.score = {high + 1} (max_score {high})",
        )
    )

    path = choose("score", lambda p, r: any(bounded(x) for x in results_of(r)))
    record = records[path]
    index, result = next((i, x) for i, x in enumerate(results_of(record)) if bounded(x))
    metric = result["metric_config"]
    metric["min_score"] = metric["max_score"] + 1
    write(path, record)
    planted.append(
        Planted(
            "min-above-max",
            "score",
            rel(path),
            f"evaluation_results[{index}].metric_config.min_score = {metric['min_score']} "
            f"(max_score {metric['max_score']})",
        )
    )

    path = choose("layout", lambda p, r: True)
    deeper = path.parent / "extra" / path.name
    deeper.parent.mkdir()
    path.rename(deeper)
    planted.append(Planted("path-depth", "layout", rel(deeper), f"moved down from {rel(path)}"))

    path = choose("strict-json", lambda p, r: isinstance(r.get("model_info"), dict))
    text = json.dumps(records[path], indent=2, ensure_ascii=False)
    marker = '"model_info": {'
    text = text.replace(marker, marker + '\n    "name": "planted duplicate",', 1)
    path.write_text(text + "\n", encoding="utf-8")
    planted.append(
        Planted(
            "duplicate-key",
            "strict-json",
            rel(path),
            'model_info.name given twice (first "planted duplicate")',
        )
    )

    path = choose("strict-json", lambda p, r: bool(results_of(r)))
    record = records[path]
    results_of(record)[0].setdefault("score_details", {})["score"] = float("nan")
    write(path, record)
    planted.append(
        Planted("nan", "strict-json", rel(path), "evaluation_results[0].score_details.score = NaN")
    )
    order = [name for name, _ in FAULTS]
    return sorted(planted, key=lambda p: order.index(p.fault))


# -- the command ---------------------------------------------------------------------------------


def categories_by_file(views: Mapping[str, conformance.FileView]) -> dict[str, set[str]]:
    """Return, per file, every category either side reported."""
    return {path: set(view.eee) | set(view.evalreg) for path, view in views.items()}


def report(planted: list[Planted], root: Path, views: Mapping[str, conformance.FileView]) -> int:
    """Print, per fault, whether each side found it; return how many evalreg missed."""
    missed = 0
    print(f"\n{'fault':<26} {'category':<12} {'EEE':<6} {'evalreg':<8} file")
    for fault in planted:
        view = views.get(os.path.abspath(root / fault.path))
        eee = view is not None and fault.category in view.eee
        ours = view is not None and fault.category in view.evalreg
        missed += not ours
        print(
            f"{fault.fault:<26} {fault.category:<12} {'found' if eee else 'MISSED':<6} "
            f"{'found' if ours else 'MISSED':<8} {fault.path}"
        )
        print(f"{'':<26} {fault.change}")
        for side, label in (("eee", "EEE"), ("evalreg", "evalreg")):
            found = getattr(view, side) if view else {}
            for category, messages in sorted(found.items()):
                print(f"{'':<28}{label} [{category}] {messages[0][:150]}")
        if fault.also:
            other = views.get(os.path.abspath(root / fault.also))
            sides = [
                label
                for side, label in (("eee", "EEE"), ("evalreg", "evalreg"))
                if other is not None and fault.category in getattr(other, side)
            ]
            print(
                f"{'':<26} also {fault.also}: {fault.category} from {', '.join(sides) or 'neither'}"
            )
    return missed


def main(argv: list[str] | None = None) -> int:
    """Plant the faults in a copy of a real tree and report who finds each."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", type=Path, help="datastore root, or its data/ folder")
    parser.add_argument("--eee", help="path of the every_eval_ever executable")
    parser.add_argument("--files", type=int, default=40, help="plain aggregates copied")
    parser.add_argument("--keep", type=Path, help="build the copy here and keep it")
    parser.add_argument(
        "--evalreg-arg", action="append", default=[], metavar="ARG", help="for evalreg validate"
    )
    args = parser.parse_args(argv)

    eee = conformance.find_eee(args.eee)
    source = conformance.data_folder(args.root)
    scratch = None
    if args.keep:
        into = args.keep.resolve()
        if into.exists() and any(into.iterdir()):
            raise SystemExit(f"{into} is not empty")
        into.mkdir(parents=True, exist_ok=True)
    else:
        scratch = tempfile.TemporaryDirectory(prefix="eee-faults-")
        into = Path(scratch.name)
    try:
        data = copy_tree(source, pick(source, args.files), into)
        *_, before = conformance.compare(data, eee, args.evalreg_arg)
        planted = plant(data, categories_by_file(before))
        (into / "planted.json").write_text(json.dumps([asdict(p) for p in planted], indent=2))
        *_, after = conformance.compare(data, eee, args.evalreg_arg)
        print(f"Copied {len(before):,} files of {source} to {data}")
        missed = report(planted, into, after)
        print(f"\nevalreg found {len(planted) - missed} of {len(planted)} planted faults")
    finally:
        if scratch is not None:
            scratch.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
