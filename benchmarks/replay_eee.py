"""Replay Every Eval Ever's published history through `evalreg sync` and its generated steps.

    python benchmarks/replay_eee.py [PATH/TO/every_eval_ever] [--scratch DIR] [--limit N]

PATH is a local clone or bare mirror of github.com/evaleval/every_eval_ever (default: the mirror
at /work/.mirror/evaleval+every_eval_ever/repo). The script reads its history with git at run
time and ships none of it:

1. For each family (`eee.aggregate`: `eval.schema.json`; `eee.instance`:
   `instance_level_eval.schema.json`), every version of the upstream schema document: of the
   documents published under one version string (upstream edited some in place), the one
   closest to the built-in schema of that version.
2. A scratch registry directory holding only the family's first version (the built-in schema,
   released), then `sync` (`propose` + `write_proposal`, what the command runs) fed each later
   upstream schema in turn. Each must propose exactly one draft, numbered as upstream numbers it,
   with the compatibility class of the built-in hand-made version's diff.
3. The real records of every version: every `*.json` under a `data/` folder and every `*.jsonl`
   in any commit (distinct contents), written to the scratch folder (outside the repository).
   Each record valid at its version goes through the one step to the next version twice: the
   built-in hand-written step, and the generated one, with no hand edit (its parameters get the
   hand-written step's defaults where the names agree). Per step: the share whose outputs are
   equal, refused naming a TODO, refused otherwise (a loss, a parameter), and, which must be 0,
   given a different valid output. A version with no real record gets those of the version
   before it, brought there by the built-in hand-written step (the line says so).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import evalreg
from evalreg.publish.upstream import propose, write_proposal
from evalreg.publish.upstream.source import Published
from evalreg.registry.lock import release
from evalreg.registry.versions import VERSION_IN_TEXT, parse_version

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_REPO = Path("/work/.mirror/evaleval+every_eval_ever/repo")
FAMILIES = {"eee.aggregate": "eval.schema.json", "eee.instance": "instance_level_eval.schema.json"}
FIRST = {"eee.aggregate": "0.1.0", "eee.instance": "0.2.0"}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", f"--git-dir={repo}", *args], capture_output=True, text=True, check=True
    ).stdout


def git_dir(path: Path) -> Path:
    found = subprocess.run(
        ["git", "-C", str(path), "rev-parse", "--absolute-git-dir"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    return Path(found)


def blobs(repo: Path, *specs: str) -> list[tuple[str, str, str, int]]:
    """Return (sha, path, commit, time) of every distinct blob of `specs`, earliest first."""
    log = git(
        repo, "log", "--all", "--no-renames", "--format=C %H %ct", "--raw", "--no-abbrev",
        "--", *specs,
    )  # fmt: skip
    first: dict[str, tuple[str, str, str, int]] = {}
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
            if sha not in first or when < first[sha][3]:
                first[sha] = (sha, path, commit, when)
    return sorted(first.values(), key=lambda b: (b[3], b[1]))


def contents(repo: Path, shas: list[str]) -> Iterator[tuple[str, bytes]]:
    with subprocess.Popen(
        ["git", f"--git-dir={repo}", "cat-file", "--batch"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    ) as process:
        assert process.stdin is not None and process.stdout is not None
        for sha in shas:
            process.stdin.write(f"{sha}\n".encode())
            process.stdin.flush()
            header = process.stdout.readline().split()
            if len(header) < 3:
                continue
            data = process.stdout.read(int(header[2]))
            process.stdout.read(1)
            yield sha, data
        process.stdin.close()


def upstream_versions(
    repo: Path, name: str, family: str, builtin: Any
) -> dict[str, dict[str, Any]]:
    """Return, for each version string of one schema file, the document the registry fixed.

    Upstream edited some documents after publishing them under the same version string; the
    registry fixes one document per version (see /work/shared/spec/eee-versions.md). Of the
    documents published under a version, the one closest to the built-in schema of that version
    (fewest changes beyond annotations) is taken; for a version the registry lacks, the first.
    """
    from evalreg.diff import diff_schemas
    from evalreg.publish.upstream.sync import meaningful

    candidates: dict[str, list[dict[str, Any]]] = defaultdict(list)
    listed = blobs(repo, name, f"*/{name}")
    for _, data in contents(repo, [b[0] for b in listed]):
        try:
            document = json.loads(data)
        except ValueError:
            continue
        stated = document.get("version") if isinstance(document, dict) else None
        match = VERSION_IN_TEXT.search(stated) if isinstance(stated, str) else None
        if match:
            candidates[match.group(0)].append(document)
    found: dict[str, dict[str, Any]] = {}
    known = builtin.versions(family)
    for version, documents in candidates.items():
        if version not in known:
            found[version] = documents[0]
            continue
        ours = builtin.entry(family, version).document

        def distance(document: dict[str, Any], ours: Any = ours) -> int:
            diff = diff_schemas(ours, document, registry=builtin.referencing_registry())
            return (
                sum(
                    1
                    for c in diff.changes
                    if c.kind not in ("description-changed", "annotation-changed")
                )
                if meaningful(diff)
                else 0
            )

        found[version] = min(documents, key=distance)
    return dict(sorted(found.items(), key=lambda item: parse_version(item[0])))


def collect_records(repo: Path, scratch: Path) -> list[Path]:
    """Write every distinct data file of the history into `scratch`; return their paths."""
    scratch.mkdir(parents=True, exist_ok=True)
    listed = [
        b for b in blobs(repo, "*.json", "*.jsonl") if b[1].endswith(".jsonl") or "data/" in b[1]
    ]
    paths = []
    for sha, data in contents(repo, [b[0] for b in listed]):
        path = scratch / (
            sha + (".jsonl" if data.lstrip()[:1] != b"[" and b"\n{" in data else ".json")
        )
        path.write_bytes(data)
        paths.append(path)
    return paths


def records(paths: list[Path]) -> Iterator[Any]:
    for path in paths:
        text = path.read_text(encoding="utf-8", errors="replace")
        try:
            yield json.loads(text)
            continue
        except ValueError:
            pass
        for line in text.splitlines():
            try:
                yield json.loads(line)
            except ValueError:
                continue


def replay_family(
    family: str, upstream: dict[str, dict[str, Any]], scratch: Path, builtin: Any
) -> tuple[Any, list[tuple[str, str]], list[str]]:
    """Sync each later upstream version into a registry holding only the first; return it."""
    directory = scratch / f"registry-{family}"
    shutil.rmtree(directory, ignore_errors=True)
    (directory / "registry").mkdir(parents=True)
    first = FIRST[family]
    shutil.copy(ROOT / "registry" / f"{family}.yaml", directory / "registry")
    (directory / "schemas" / family).mkdir(parents=True)
    shutil.copy(ROOT / "schemas" / family / f"{first}.schema.json", directory / "schemas" / family)
    release(evalreg.load_registry([directory], builtin=False), family, first)
    hops: list[tuple[str, str]] = []
    lines = []
    previous = first
    for version, document in upstream.items():
        if parse_version(version) <= parse_version(first):
            continue
        registry = evalreg.load_registry([directory], builtin=False, drafts=True)
        proposal = propose(registry, family, Published(document, f"upstream {version}"))
        hand = builtin.diff(family, previous, version).compatibility
        status = (
            "ok"
            if proposal.version == version and proposal.diff.compatibility == hand
            else "MISMATCH"
        )
        lines.append(
            f"  {family} {previous} -> {version}: draft {proposal.version} "
            f"({proposal.diff.compatibility}; hand-made {hand}) "
            f"{len(proposal.step.todos) if proposal.step else 0} TODOs  {status}"
        )
        if proposal.version is None:
            continue
        write_proposal(registry, proposal, directory)
        hops.append((previous, proposal.version))
        previous = proposal.version
    drafts = sorted(
        p.name
        for p in (directory / "schemas" / family).iterdir()
        if p.name != f"{first}.schema.json"
    )
    lines.append(f"  {family}: {len(drafts)} drafts written for {len(hops)} upstream versions")
    registry = evalreg.load_registry([directory], builtin=False, drafts=True)
    return registry, hops, lines


def classify(generated: Any, hand: Any) -> str:
    if not generated.ok:
        error = generated.error or ""
        if "TODO" in error:
            return "refused: TODO"
        if "--allow-loss" in error:
            return "refused: loss"
        if "--set" in error:
            return "refused: parameter"
        return "failed: " + error.split(":")[0][:40]
    if json.dumps(generated.record, sort_keys=True) == json.dumps(hand.record, sort_keys=True):
        return "equal"
    return "DIFFERENT VALID OUTPUT"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repo", nargs="?", type=Path, default=DEFAULT_REPO)
    parser.add_argument(
        "--scratch", type=Path, default=Path(tempfile.gettempdir()) / "evalreg-replay-eee"
    )
    parser.add_argument("--limit", type=int, default=3000, help="records per family and version")
    args = parser.parse_args()
    repo = git_dir(args.repo)
    builtin = evalreg.load_registry()
    started = time.process_time()
    print("1-2. sync fed each later upstream version in turn")
    generated: dict[str, tuple[Any, list[tuple[str, str]]]] = {}
    for family, name in FAMILIES.items():
        registry, hops, lines = replay_family(
            family, upstream_versions(repo, name, family, builtin), args.scratch, builtin
        )
        generated[family] = (registry, hops)
        print("\n".join(lines))
    print("\n3. the real records, one step at a time (hand-written vs generated)")
    paths = collect_records(repo, args.scratch / "records")
    print(f"  {len(paths)} distinct data files collected into {args.scratch / 'records'}")
    by_version: dict[tuple[str, str], list[Any]] = defaultdict(list)
    for record in records(paths):
        if not isinstance(record, dict):
            continue
        found = builtin.detect(record)
        if not found.ok or found.family not in FAMILIES:
            continue
        bucket = by_version[(found.family, found.version)]
        if len(bucket) < args.limit and builtin.validator(found.family, found.version).is_valid(
            record
        ):
            bucket.append(record)
    different = 0
    for family, (registry, hops) in generated.items():
        hand_steps = builtin.steps(family)
        carried: list[Any] = []
        for source, target in hops:
            sample = by_version.get((family, source), [])
            label = "records"
            if not sample and carried:
                # no real record of this version: the real records of an earlier one, brought
                # here by the built-in hand-written chain
                sample, label = carried, "records carried from earlier versions by hand steps"
            carried = [
                done.record
                for record in sample
                if (done := builtin.migrate(record, target, family)).ok
            ][: args.limit]
            defaults = hand_steps.defaults(source, target)
            gen_params = {p.name for p in registry.steps(family).params()}
            params = {k: v for k, v in defaults.items() if k in gen_params and v is not None}
            counts: Counter[str] = Counter()
            for record in sample:
                hand = builtin.migrate(record, target, family)
                if not hand.ok:
                    counts["hand-written step refuses"] += 1
                    continue
                gen = registry.migrate(record, target, family, params=params)
                counts[classify(gen, hand)] += 1
            different += counts["DIFFERENT VALID OUTPUT"]
            judged = sum(v for k, v in counts.items() if k != "hand-written step refuses")
            shares = ", ".join(
                f"{k} {v} ({100 * v / judged:.1f}%)"
                for k, v in counts.most_common()
                if judged and k != "hand-written step refuses"
            )
            extra = (
                f"; hand-written step refuses {counts['hand-written step refuses']}"
                if counts["hand-written step refuses"]
                else ""
            )
            given = f" [params given: {', '.join(sorted(params))}]" if params else ""
            head = f"  {family} {source} -> {target}: {len(sample)} {label}"
            print(f"{head}: {shares or 'none'}{extra}{given}")
    print(f"\nrecords given a different valid output: {different}")
    print(f"CPU time {time.process_time() - started:.1f} s")
    sys.exit(1 if different else 0)


if __name__ == "__main__":
    main()
