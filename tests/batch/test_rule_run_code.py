"""A run's rules as user code: contexts set per record, output and failures kept to their rule."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from evalreg import load_registry
from evalreg.batch.rules import RuleRun
from evalreg.engine.rules import family_rules
from evalreg.engine.selection import ALL_RULES
from tests.conftest import RegistryFactory

SCHEMA = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object"}
MANIFEST = """\
name: demo.run
title: Demo runs
kind: json
markers:
  - pointer: /version
rules:
  - id: demo.bounds
    message: the score is at most 1
    require: [{le: [/score, 1]}]
  - id: demo.named
    scope: file
    message: runs are named run-*.json
    path: 'run-[^/]*\\.jsonl?$'
"""
RULES = {
    "a_where.py": '''
        """A record says where it is."""
        ID = "demo.where"

        def check(record, ctx):
            ctx.report("", f"{ctx.family} {ctx.version} {ctx.path} {ctx.line}")
    ''',
    "b_loud.py": '''
        """A rule that prints, or reports and then fails, as the record says."""
        ID = "demo.loud"

        def check(record, ctx):
            if record.get("say"):
                print(record["say"])
            if record.get("stop"):
                raise KeyboardInterrupt
            if record.get("fail"):
                ctx.report("/fail", "about to fail")
                raise ValueError(record["fail"])
    ''',
    "c_count.py": '''
        """A collection rule whose code prints or fails where the record or path says."""
        ID = "demo.count"
        SCOPE = "collection"

        class Collector:
            def __init__(self, path):
                if "unmade" in path:
                    raise RuntimeError("no collector")
                self.path, self.lines = path, []

            def add(self, record, ctx):
                if record.get("say"):
                    print("adding")
                if record.get("fail"):
                    raise KeyError("add")
                self.lines.append((ctx.path, ctx.line))

            def summary(self):
                if "unsummed" in self.path:
                    print("summing")
                return self.lines

        def finish(summaries, ctx):
            for path, lines in summaries:
                ctx.report("", f"{lines}", path=path)
    ''',
}


@pytest.fixture
def run(make_registry_dir: RegistryFactory) -> RuleRun:
    root = make_registry_dir(
        {"demo.run": {"manifest": MANIFEST, "schemas": {"1": SCHEMA}, "rules": RULES}}
    )
    return RuleRun(load_registry([Path(root)], builtin=False), ALL_RULES)


def found(run: RuleRun, record: dict[str, Any], path: str, line: int | None) -> list[str]:
    return [
        f"{issue.pointer}: {issue.message} [{issue.rule}]"
        for issue in run.issues(record, path, line, "demo.run", "1")
    ]


def test_each_record_sees_its_own_file_and_line(run: RuleRun) -> None:
    assert found(run, {"score": 2}, "a/run-1.json", None) == [
        "/score: the score is at most 1 (/score = 2, 1 = 1; expected /score <= 1) [demo.bounds]",
        ": demo.run 1 a/run-1.json None [demo.where]",
    ]
    run.close("a/run-1.json")
    assert found(run, {}, "b/other.jsonl", 1) == [
        ": demo.run 1 b/other.jsonl 1 [demo.where]",
        ": runs are named run-*.json (the file is b/other.jsonl) [demo.named]",
    ]
    assert found(run, {}, "b/other.jsonl", 2) == [": demo.run 1 b/other.jsonl 2 [demo.where]"]
    assert found(run, {}, "c/run-3.json", None) == [": demo.run 1 c/run-3.json None [demo.where]"]
    run.close("b/other.jsonl")
    run.close("c/run-3.json")
    assert [(path, summary) for _, path, summary in run.summaries] == [
        ("a/run-1.json", [("a/run-1.json", None)]),
        ("b/other.jsonl", [("b/other.jsonl", 1), ("b/other.jsonl", 2)]),
        ("c/run-3.json", [("c/run-3.json", None)]),
    ]


def test_what_a_rule_prints_or_raises_is_its_own_finding(run: RuleRun) -> None:
    before = sys.stdout
    assert found(run, {"say": "hi", "fail": "no"}, "run-1.jsonl", 1)[1:] == [
        "/fail: about to fail [demo.loud]",
        ": the rule failed: ValueError: no [demo.loud]",  # what it printed first goes with it
        ": the rule failed: KeyError: 'add' [demo.count]",
    ]
    assert found(run, {"say": "hi"}, "run-1.jsonl", 2)[1:] == [
        ": the rule wrote to standard output: 'hi\\n' [demo.loud]",
        ": the rule wrote to standard output: 'adding\\n' [demo.count]",
    ]
    assert found(run, {}, "run-1.jsonl", 3) == [": demo.run 1 run-1.jsonl 3 [demo.where]"]
    assert sys.stdout is before


def test_a_failed_collector_is_reported_once_at_the_end(run: RuleRun) -> None:
    for line in (1, 2):
        found(run, {}, "unmade/run-1.jsonl", line)
    found(run, {}, "unsummed/run-2.json", None)
    closed = run.close("unmade/run-1.jsonl") + run.close("unsummed/run-2.json")
    assert [(path, getattr(s, "message", s)) for _, path, s in closed] == [
        ("unmade/run-1.jsonl", "the rule failed: RuntimeError: no collector"),
        ("unsummed/run-2.json", "the rule wrote to standard output: 'summing\\n'"),
    ]
    assert [str(one.issue) for one in run.finish()] == [
        "/: the rule failed: RuntimeError: no collector [demo.count]",
        "/: the rule wrote to standard output: 'summing\\n' [demo.count]",
    ]


def test_a_stop_in_a_rule_goes_on_up_with_standard_output_given_back(run: RuleRun) -> None:
    before = sys.stdout
    with pytest.raises(KeyboardInterrupt):
        run.issues({"say": "hi", "stop": True}, "run-1.json", None, "demo.run", "1")
    assert sys.stdout is before
    assert found(run, {}, "run-2.json", None) == [": demo.run 1 run-2.json None [demo.where]"]


def test_only_rules_that_read_the_file_are_given_its_groups(run: RuleRun) -> None:
    rules = {r.id: r for r in family_rules(run.registry, "demo.run")}
    assert not rules["demo.bounds"].groups and rules["demo.named"].groups
    assert not rules["demo.where"].groups
