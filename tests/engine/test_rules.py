"""Rules beyond JSON Schema: declarations, conditions, Python rules, selection."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evalreg import load_registry
from evalreg.engine.rules import (
    Selection,
    check,
    family_rules,
    finish_collection,
    rule_set,
)
from evalreg.errors import RegistryError
from evalreg.registry.manifest import parse_manifest
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
    message: each score lies within its bounds
    each: /results/*
    when: [{present: /score}]
    require:
      - le: [/min, /score]
      - le: [/score, /max]
  - id: demo.kind
    severity: warning
    versions: ">=2"
    message: the kind is a known one
    require: [{in: [/kind, [exam, chat]]}]
  - id: demo.layout
    scope: file
    message: runs live under runs/<team>/<name>.json, in their team's folder
    path: '(?:^|/)runs/(?P<team>[a-z]+)/[^/]+\\.json$'
    require: [{eq: [/team, {group: team}]}]
"""
RULE_MODULES = {
    "odd.py": '''
        """No score is odd."""
        ID = "demo.odd"
        VERSIONS = ["1"]

        def check(record, ctx):
            for index, result in enumerate(record.get("results", [])):
                if result.get("score", 0) % 2:
                    ctx.report(f"/results/{index}/score", f"{result['score']} is odd")
    ''',
    "unique.py": '''
        """Run names are unique across the datastore."""
        ID = "demo.unique"
        SCOPE = "collection"

        class Collector:
            def __init__(self, path):
                self.names = []

            def add(self, record, ctx):
                self.names.append(record.get("name"))

            def summary(self):
                return self.names

        def finish(summaries, ctx):
            seen = {}
            for path, names in summaries:
                for name in names:
                    if name in seen:
                        ctx.report("/name", f"{name!r} is also the name of a run in {seen[name]}",
                                   path=path)
                    seen.setdefault(name, path)
    ''',
}


@pytest.fixture
def root(make_registry_dir: RegistryFactory) -> Path:
    return make_registry_dir(
        {
            "demo.run": {
                "manifest": MANIFEST,
                "schemas": {"1": SCHEMA, "2": SCHEMA},
                "rules": RULE_MODULES,
            }
        }
    )


def run_rules(root: Path, record: dict[str, Any], version: str, **selection: Any) -> list[str]:
    registry = load_registry([root], builtin=False)
    rules = rule_set(registry, "demo.run", version, Selection(**selection))
    return [str(i) for i in check(rules.record, record, "demo.run", version, "x.json")]


def test_declared_and_python_rules_are_loaded_with_their_settings(root: Path) -> None:
    registry = load_registry([root], builtin=False)
    rules = {r.id: r for r in family_rules(registry, "demo.run")}
    assert list(rules) == ["demo.bounds", "demo.kind", "demo.layout", "demo.odd", "demo.unique"]
    assert (rules["demo.kind"].severity, rules["demo.layout"].scope) == ("warning", "file")
    assert rules["demo.odd"].description == "No score is odd."
    assert "2" in rules["demo.kind"].versions and "1" not in rules["demo.kind"].versions
    assert str(rules["demo.odd"].versions) == "1" and rules["demo.unique"].scope == "collection"


def test_comparisons_find_each_item_out_of_bounds(root: Path) -> None:
    record = {
        "kind": "exam",
        "results": [
            {"min": 0, "max": 1, "score": 0.5},
            {"min": 0, "max": 1, "score": 1.5},
            {"min": 2, "max": 1},  # no score: `when` does not hold
            {"min": 0, "score": -1},  # no max: only the lower bound is checked
        ],
    }
    assert run_rules(root, record, "2") == [
        "/results/1/score: each score lies within its bounds (/score = 1.5, /max = 1; expected "
        "/score <= /max) [demo.bounds]",
        "/results/3/min: each score lies within its bounds (/min = 0, /score = -1; expected "
        "/min <= /score) [demo.bounds]",
    ]


def test_values_of_types_that_cannot_be_ordered_are_left_to_the_schema(root: Path) -> None:
    record = {"kind": "chat", "results": [{"min": "0", "max": None, "score": True}]}
    assert run_rules(root, record, "2") == []


def test_in_and_versions_and_severity(root: Path) -> None:
    registry = load_registry([root], builtin=False)
    rules = rule_set(registry, "demo.run", "2")
    (issue,) = check(rules.record, {"kind": "essay"}, "demo.run", "2")
    assert (issue.rule, issue.severity, issue.keyword, issue.pointer) == (
        "demo.kind",
        "warning",
        "rule",
        "/kind",
    )
    assert "/kind = 'essay', not one of ['exam', 'chat']" in issue.message
    assert run_rules(root, {"kind": "essay"}, "1") == []  # versions: >=2
    assert run_rules(root, {"kind": "essay"}, "2", minimum="error") == []


def test_a_python_record_rule_reports_where_and_what(root: Path) -> None:
    record = {"results": [{"score": 2}, {"score": 3}]}
    assert run_rules(root, record, "1") == ["/results/1/score: 3 is odd [demo.odd]"]
    assert run_rules(root, record, "2") == []  # VERSIONS = ["1"]
    assert run_rules(root, record, "1", select=("demo.b*",)) == []
    assert run_rules(root, record, "1", enabled=False) == []


def test_a_failing_python_rule_is_a_finding_not_a_crash(root: Path) -> None:
    record = {"results": [{"score": "x"}]}
    (shown,) = run_rules(root, record, "1")
    assert shown.startswith("/: the rule failed: TypeError") and shown.endswith("[demo.odd]")


def test_file_rules_match_the_path_and_compare_its_groups(root: Path) -> None:
    registry = load_registry([root], builtin=False)
    rules = rule_set(registry, "demo.run", "1")
    record = {"team": "red"}
    assert check(rules.file, record, "demo.run", "1", "data/runs/red/a.json") == []
    (wrong_team,) = check(rules.file, record, "demo.run", "1", "data/runs/blue/a.json")
    assert wrong_team.pointer == "/team" and "{team} = 'blue'" in wrong_team.message
    (elsewhere,) = check(rules.file, record, "demo.run", "1", "data/a.json")
    assert elsewhere.message.endswith("in their team's folder (the file is data/a.json)")


def test_a_collection_rule_compares_the_summaries_of_every_file(root: Path) -> None:
    registry = load_registry([root], builtin=False)
    (rule,) = rule_set(registry, "demo.run", "1").collection
    summaries = []
    for path, names in (("a.json", ["x", "y"]), ("b.json", ["z"]), ("c.json", ["y"])):
        assert rule.collector is not None
        collector = rule.collector(path)
        for name in names:
            collector.add({"name": name}, None)  # type: ignore[arg-type]
        summaries.append((path, collector.summary()))

    def read(path: str) -> Iterator[tuple[int | None, Any]]:
        raise AssertionError("nothing to read")

    (found,) = finish_collection(rule, summaries, read)
    assert (found.path, found.issue.pointer, found.issue.rule) == ("c.json", "/name", "demo.unique")
    assert found.issue.message == "'y' is also the name of a run in a.json"


@pytest.mark.parametrize(
    ("rules", "message"),
    [
        ("- {id: Bad, message: m, require: [{present: /a}]}", "rule id 'Bad' must be lower-case"),
        ("- {id: a, message: m}", "needs require"),
        ("- {id: a, require: [{present: /a}]}", "needs a message"),
        ("- {id: a, message: m, require: [{close: [/a, 1]}]}", "unknown condition 'close'"),
        ("- {id: a, message: m, require: [{le: [/a]}]}", "takes a list of two operands"),
        ("- {id: a, message: m, require: [{present: a}]}", "takes one JSON pointer"),
        ("- {id: a, message: m, severity: fatal, require: [{present: /a}]}", "severity must be"),
        ("- {id: a, message: m, versions: '>>1', require: [{present: /a}]}", "versions '>>1'"),
        ("- {id: a, message: m, path: 'x', require: [{present: /a}]}", "path needs scope: file"),
        (
            "- {id: a, message: m, scope: file, path: 'x', require: [{eq: [/a, {group: g}]}]}",
            "no path group named g",
        ),
        (
            "- {id: a, message: m, require: [{present: /a}]}\n"
            "- {id: a, message: n, require: [{absent: /b}]}",
            "declared twice",
        ),
        ("- {id: a, message: m, colour: red, require: [{present: /a}]}", "unknown keys colour"),
    ],
)
def test_malformed_declarations_are_refused_with_the_reason(rules: str, message: str) -> None:
    import yaml

    data = yaml.safe_load(f"name: demo.run\ntitle: t\nkind: json\nrules:\n{rules}\n")
    with pytest.raises(RegistryError, match=message):
        parse_manifest(data, "demo.run.yaml")


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ('"""Doc."""\n', "rule id None"),
        ('"""Doc."""\nID = "demo.x"\n', "must define check"),
        ('ID = "demo.x"\ndef check(record, ctx): pass\n', "docstring must say what must hold"),
        ('"""Doc."""\nID = "demo.x"\nSCOPE = "collection"\n', "must define Collector and finish"),
        ('"""Doc."""\nID = "demo.x"\nSCOPE = "world"\n', "scope must be one of"),
        ("raise ValueError('boom')\n", "failed to load: ValueError"),
    ],
)
def test_malformed_python_rules_are_refused(
    make_registry_dir: RegistryFactory, source: str, message: str
) -> None:
    root = make_registry_dir({"demo.run": {"schemas": {"1": SCHEMA}, "rules": {"x.py": source}}})
    registry = load_registry([root], builtin=False)
    with pytest.raises(RegistryError, match=message):
        family_rules(registry, "demo.run")


def test_two_rules_with_one_id_are_refused(make_registry_dir: RegistryFactory) -> None:
    manifest = MANIFEST.replace("demo.kind", "demo.odd")
    root = make_registry_dir(
        {"demo.run": {"manifest": manifest, "schemas": {"1": SCHEMA}, "rules": RULE_MODULES}}
    )
    with pytest.raises(RegistryError, match=r"rule id demo\.odd is also used by"):
        family_rules(load_registry([root], builtin=False), "demo.run")


def test_check_reports_rules_that_fail_to_load_or_apply_nowhere(
    make_registry_dir: RegistryFactory,
) -> None:
    from evalreg.publish.check import check_registry

    manifest = MANIFEST.replace('versions: ">=2"', 'versions: ">=7"')
    root = make_registry_dir(
        {
            "demo.run": {
                "manifest": manifest,
                "schemas": {"1": SCHEMA, "2": SCHEMA},
                "rules": {**RULE_MODULES, "broken.py": "raise ValueError('boom')\n"},
            }
        }
    )
    findings = check_registry(load_registry([root], builtin=False), examples=0).findings
    rules = [(f.severity, f.message) for f in findings if f.check == "rules"]
    assert rules == [("error", "the module failed to load: ValueError('boom')")]
    (root / "rules" / "demo.run" / "broken.py").unlink()
    findings = check_registry(load_registry([root], builtin=False), examples=0).findings
    rules = [(f.severity, f.message) for f in findings if f.check == "rules"]
    assert rules == [("warning", "rule demo.kind applies to no version of the family (>=7)")]


def test_the_published_site_documents_each_familys_rules(tmp_path: Path) -> None:
    from evalreg.publish.site import publish

    result = publish(load_registry(), tmp_path)
    eee = next(f for f in result.families if f.family == "eee.aggregate")
    assert {r.id for r in eee.rules} >= {"eee.layout", "eee.score-bounds", "eee.companion"}
    page = (tmp_path / "index.html").read_text()
    assert (
        '<td class="nowrap"><code>eee.model-path</code></td><td>warning</td><td>file</td>' in page
    )


def _readme_blocks() -> tuple[str, str]:
    """Return the manifest and the Python rule that the rules page of the docs shows."""
    text = (Path(__file__).parents[2] / "docs" / "rules.md").read_text(encoding="utf-8")
    manifest = text.split("```yaml\n", 1)[1].split("```", 1)[0]
    module = text.split("```python\n", 1)[1].split("```", 1)[0]
    return manifest, module


def test_the_readme_example_rules_run_as_shown(
    make_registry_dir: RegistryFactory, tmp_path: Path
) -> None:
    manifest, module = _readme_blocks()
    root = make_registry_dir(
        {
            "acme.run": {
                "manifest": manifest,
                "schemas": {"1": SCHEMA, "2": SCHEMA},
                "rules": {"odd.py": module},
            }
        }
    )
    registry = load_registry([root], builtin=False)
    record = {"team": "red", "kind": "essay", "results": [{"min": 0, "max": 5, "score": 7}]}
    found = {}
    for version in ("1", "2"):
        rules = rule_set(registry, "acme.run", version)
        issues = check(rules.record, record, "acme.run", version, "runs/blue/a.json")
        issues += check(rules.file, record, "acme.run", version, "runs/blue/a.json")
        found[version] = sorted((i.rule, i.severity, i.pointer) for i in issues)
    assert found == {
        "1": [
            ("acme.bounds", "error", "/results/0/score"),
            ("acme.layout", "error", "/team"),
            ("acme.odd", "error", "/results/0/score"),
        ],
        "2": [
            ("acme.bounds", "error", "/results/0/score"),
            ("acme.kind", "warning", "/kind"),
            ("acme.layout", "error", "/team"),
        ],
    }
    rules = rule_set(registry, "acme.run", "1")
    assert check(rules.file, record, "acme.run", "1", "elsewhere/a.json") == []
