"""Replay AgentV's published eval-schema history through `evalreg sync --history`.

    python benchmarks/replay_agentv.py [PATH/TO/agentv[.git]] [--scratch DIR]

PATH is a local clone or bare mirror of github.com/EntityProcess/agentv (default: the mirror at
/work/.mirror/EntityProcess+agentv/repo). The script reads its history with git at run time and
ships none of it:

1. A scratch registry directory whose `agentv.eval` holds one version, `1`: the first eval-file
   schema AgentV published, released; its manifest names the checkout as `upstream:` with the
   schema's paths over the history (as benchmarks/conformance_agentv.py finds them).
2. `sync --history` (`sync_history` + `write_proposal`, what the command runs) proposes a draft
   per change. Checked: every draft differs from the version before it in more than annotations,
   and every upstream version that got no draft differs from the one in force in annotations
   at most (compared as schemas with every annotation set aside).
3. The real eval files (every YAML file of the history that holds cases, distinct contents):
   each is of the era in force at its date (the newest draft published at or before it). Each
   file valid at its era goes through the generated step to the next era, with no hand edit;
   the share whose result is valid at the next era, per step and overall.
"""

from __future__ import annotations

import argparse
import bisect
import json
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import conformance_agentv as conformance
import jsonschema

import evalreg
from evalreg.diff._moves import bare_schema
from evalreg.engine.steps import StepContext
from evalreg.publish.upstream import sync_history, upstream_of, write_proposal
from evalreg.publish.upstream.source import history
from evalreg.registry.lock import release

DEFAULT_REPO = Path("/work/.mirror/EntityProcess+agentv/repo")
FAMILY = "agentv.eval"


def scratch_registry(repo: Path, scratch: Path) -> Path:
    directory = scratch / "registry"
    shutil.rmtree(directory, ignore_errors=True)
    (directory / "registry").mkdir(parents=True)
    paths = json.dumps(
        [f"*{glob}" if not glob.startswith("*") else glob for glob in conformance.SCHEMA_GLOBS]
    )
    manifest = (
        f"name: {FAMILY}\ntitle: AgentV eval files (replayed)\nkind: yaml\n"
        f"upstream:\n  git: {repo}\n  path: {paths}\n"
    )
    (directory / "registry" / f"{FAMILY}.yaml").write_text(manifest)
    registry = evalreg.load_registry([directory], builtin=False)
    upstream = upstream_of(registry.manifest(FAMILY))
    assert upstream is not None
    first = next(history(upstream))
    (directory / "schemas" / FAMILY).mkdir(parents=True)
    (directory / "schemas" / FAMILY / "1.schema.json").write_text(
        json.dumps(first.document, indent=2)
    )
    release(evalreg.load_registry([directory], builtin=False), FAMILY, "1")
    return directory


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repo", nargs="?", type=Path, default=DEFAULT_REPO)
    parser.add_argument(
        "--scratch", type=Path, default=Path(tempfile.gettempdir()) / "evalreg-replay-agentv"
    )
    args = parser.parse_args()
    repo = conformance.git_dir(args.repo)
    started = time.process_time()
    directory = scratch_registry(repo, args.scratch)
    registry = evalreg.load_registry([directory], builtin=False)
    upstream = upstream_of(registry.manifest(FAMILY))
    assert upstream is not None
    published = list(history(upstream))
    proposals = list(sync_history(registry, FAMILY, upstream))
    for proposal in proposals:
        write_proposal(registry, proposal, directory)
    registry = evalreg.load_registry([directory], builtin=False, drafts=True)
    versions = registry.versions(FAMILY)

    # 2. drafts only where more than annotations changed
    in_force = shape(registry.entry(FAMILY, "1").document)
    drafted = {p.upstream.commit + p.upstream.where for p in proposals}
    wrong = 0
    for item in published[1:]:
        bare = shape(item.document)
        got_draft = (item.commit or "") + item.where in drafted
        if got_draft:
            wrong += bare == in_force
            in_force = bare
        else:
            wrong += bare != in_force
    todos = sum(len(p.step.todos) for p in proposals if p.step)
    finished = sum(1 for p in proposals if p.step and p.step.finished)
    classes = Counter(p.diff.compatibility for p in proposals)
    print(
        f"{len(published)} distinct upstream schema versions on the main history; "
        f"{len(proposals)} drafts ({', '.join(f'{k} {v}' for k, v in classes.most_common())}); "
        f"{len(published) - 1 - len(proposals)} versions changed only annotations (no draft); "
        f"drafts against that rule: {wrong}"
    )
    print(
        f"generated steps: {finished} with no TODO, {len(proposals) - finished} with {todos} TODOs"
    )

    # 3. real eval files
    dates = [0] + [_time(repo, p.upstream.commit or "") for p in proposals]
    candidates = conformance.blobs(repo, conformance.EVAL_GLOBS)
    data = dict(conformance.contents(repo, [b.sha for b in candidates]))
    steps = registry.steps(FAMILY)
    checks: dict[str, Any] = {}

    def valid(version: str, record: Any) -> bool:
        # python jsonschema, as AgentV's own tools are lenient: some of its schemas do not
        # pass their metaschema (draft-04 `exclusiveMinimum: true` under draft-07)
        if version not in checks:
            document = registry.entry(FAMILY, version).document
            checks[version] = jsonschema.validators.validator_for(document)(document)
        return bool(checks[version].is_valid(record))

    per_step: dict[tuple[str, str], Counter[str]] = {}
    eras: Counter[str] = Counter()
    for blob in candidates:
        records = conformance.read_records(data[blob.sha], os.path.basename(blob.path))
        if not conformance.is_eval_file(blob.path, records):
            continue
        assert records is not None
        index = bisect.bisect_right(dates, blob.time) - 1
        era = versions[index]
        eras["files"] += 1
        record = records[0]
        if not valid(era, record):
            eras["not valid at their era"] += 1
            continue
        if index + 1 >= len(versions):
            eras["at the newest era"] += 1
            continue
        target = versions[index + 1]
        [step] = steps.plan(era, target)
        counts = per_step.setdefault((era, target), Counter())
        try:
            out = step.function(record, StepContext({}, allow_loss=False, step=step.name))
        except Exception as err:  # a refusal: a TODO, a loss, a parameter
            counts["refused: " + _reason(err)] += 1
            continue
        ok = valid(target, out)
        counts["valid at the next era" if ok else "NOT VALID at the next era"] += 1
    total: Counter[str] = Counter()
    print(
        f"\n{eras['files']} real eval files: {eras['not valid at their era']} not valid under "
        f"AgentV's schema of their date, {eras['at the newest era']} at the newest era; the rest "
        "go one step:"
    )
    for (era, target), counts in per_step.items():
        total += counts
        judged = sum(counts.values())
        shown = ", ".join(f"{k} {v} ({100 * v / judged:.0f}%)" for k, v in counts.most_common())
        print(f"  {era} -> {target}: {judged} files: {shown}")
    judged = sum(total.values())
    valid = total["valid at the next era"]
    share = 100 * valid / max(judged, 1)
    print(f"overall: {valid} of {judged} files ({share:.1f}%) valid at the next era, no hand edit")
    print(f"CPU time {time.process_time() - started:.1f} s")
    return 0


def shape(document: dict[str, Any]) -> Any:
    """Return a schema without its annotations and its `$id` (a draft gets an id of its own)."""
    bare = bare_schema(document)
    bare.pop("$id", None)
    return bare


def _time(repo: Path, commit: str) -> int:
    return int(conformance._git(repo, "show", "-s", "--format=%ct", commit).strip())


def _reason(err: Exception) -> str:
    text = str(err)
    if "TODO" in text:
        return "TODO"
    if "--allow-loss" in text:
        return "loss"
    if "--set" in text:
        return "parameter"
    return type(err).__name__


if __name__ == "__main__":
    sys.exit(main())
