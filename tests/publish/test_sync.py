"""`evalreg sync`: an upstream schema becomes a draft with a generated step; `evalreg steps`;
`evalreg check` reports a generated step's TODOs."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

import evalreg
from evalreg.cli import main
from evalreg.publish.check import check_registry
from evalreg.publish.upstream import propose, upstream_of, write_proposal
from evalreg.publish.upstream.source import Published, read_upstream
from evalreg.registry.lock import release
from tests.conftest import RegistryFactory

MANIFEST = """\
name: demo.run
title: Demo runs
kind: json
markers:
  - pointer: /schema_version
    template: "{version}"
"""


def obj(props: dict[str, Any], required: list[str] | None = None, **more: Any) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": props, **more}
    if required:
        schema["required"] = required
    return schema


def v1() -> dict[str, Any]:
    return {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "version": "1.0.0",
        **obj(
            {
                "schema_version": {"type": "string"},
                "model": obj({"name": {"type": "string", "minLength": 1}}, ["name"]),
                "items": {"type": "array", "items": obj({"text": {"type": "string"}})},
                "score": {"type": ["number", "boolean"]},
                "note": {"type": "string"},
                "tag": {"type": "string", "description": "A tag."},
            },
            ["schema_version", "model"],
            additionalProperties=False,
        ),
    }


def v2() -> dict[str, Any]:
    """1.0.0 with: model renamed subject, items' text a list, score a number, note removed,
    a required harness (no default), a required seed (default 0), tag a short string."""
    return {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "version": "2.0.0",
        **obj(
            {
                "schema_version": {"type": "string"},
                "subject": obj({"name": {"type": "string", "minLength": 1}}, ["name"]),
                "items": {
                    "type": "array",
                    "items": obj({"text": {"type": "array", "items": {"type": "string"}}}),
                },
                "score": {"type": "number"},
                "tag": {"type": "string", "maxLength": 3},
                "harness": {"type": "string", "description": "The harness that ran it."},
                "seed": {"type": "integer", "default": 0},
            },
            ["schema_version", "subject", "harness", "seed"],
            additionalProperties=False,
        ),
    }


@pytest.fixture
def reg(make_registry_dir: RegistryFactory) -> Path:
    root = make_registry_dir({"demo.run": {"manifest": MANIFEST, "schemas": {"1.0.0": v1()}}})
    release(evalreg.load_registry([root], builtin=False), "demo.run", "1.0.0")
    return root


def _proposed(reg: Path) -> Any:
    registry = evalreg.load_registry([reg], builtin=False)
    return registry, propose(registry, "demo.run", Published(v2(), "upstream.json"))


def test_the_proposal_is_numbered_and_its_step_says_each_change(reg: Path) -> None:
    _, proposal = _proposed(reg)
    assert proposal.version == "2.0.0" and "states" in proposal.numbered
    assert proposal.diff.compatibility == "NONE"
    step = proposal.step
    words = "\n".join(step.changes)
    assert "`/model` is renamed `/subject`" in words
    assert "`/items/*/text` is now array" in words
    assert "`/note` is removed" in words
    assert "parameter harness" in words and "default 0" in words
    assert [p.name for p in step.params] == ["harness"]
    assert step.params[0].help == "The harness that ran it."
    assert len(step.todos) == 1 and "`/tag`" in step.todos[0]
    compile(step.text, "step.py", "exec")
    assert '"""Bring 1.0.0 records to 2.0.0' in step.text


def test_the_generated_step_migrates_refuses_or_loses_never_silently(reg: Path) -> None:
    registry, proposal = _proposed(reg)
    write_proposal(registry, proposal, reg)
    registry = evalreg.load_registry([reg], builtin=False, drafts=True)
    record = {
        "schema_version": "1.0.0",
        "model": {"name": "m"},
        "items": [{"text": "a"}, {"text": "b"}],
        "score": True,
        "tag": "ab",
    }
    done = registry.migrate(record, "latest", "demo.run", params={"harness": "h"})
    assert done.ok, done.error
    assert done.record == {
        "schema_version": "2.0.0",
        "subject": {"name": "m"},
        "items": [{"text": ["a"]}, {"text": ["b"]}],
        "score": 1.0,
        "tag": "ab",
        "harness": "h",
        "seed": 0,
    }
    assert record["model"] == {"name": "m"}  # the input is never changed
    refused = registry.migrate(
        {**record, "tag": "long"}, "latest", "demo.run", params={"harness": "h"}
    )
    assert not refused.ok and "TODO 1" in (refused.error or "") and "/tag" in (refused.error or "")
    lost = registry.migrate({**record, "note": "n"}, "latest", "demo.run", params={"harness": "h"})
    assert not lost.ok and "--allow-loss" in (lost.error or "")
    needs = registry.migrate(record, "latest", "demo.run")
    assert not needs.ok and "--set harness=VALUE" in (needs.error or "")


def test_check_reports_the_unfinished_step(reg: Path) -> None:
    registry, proposal = _proposed(reg)
    write_proposal(registry, proposal, reg)
    report = check_registry(evalreg.load_registry([reg], builtin=False), ["demo.run"], examples=0)
    unfinished = [f for f in report.errors if f.check == "unfinished"]
    assert len(unfinished) == 1 and "1 TODO left" in unfinished[0].message


def test_sync_command_writes_a_draft_or_says_nothing_changed(
    reg: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    upstream = tmp_path / "upstream.json"
    upstream.write_text(json.dumps({**v1(), "description": "reworded"}))
    args = ["--registry", str(reg), "sync", "demo.run", "--schema", str(upstream)]
    with pytest.raises(SystemExit) as done:
        main(args)
    out = capsys.readouterr().out
    assert done.value.code == 0 and "nothing written" in out
    assert sorted(p.name for p in (reg / "schemas" / "demo.run").iterdir()) == ["1.0.0.schema.json"]

    upstream.write_text(json.dumps(v2()))
    with pytest.raises(SystemExit) as done:
        main(args)
    out = capsys.readouterr().out
    assert done.value.code == 0
    assert "differs from 1.0.0: NONE compatibility; draft 2.0.0" in out
    assert "`/model` is renamed `/subject`" in out and "1 TODO left" in out
    assert (reg / "migrations" / "demo.run" / "1.0.0_to_2.0.0.py").is_file()
    registry = evalreg.load_registry([reg], builtin=False)
    assert registry.is_draft("demo.run", "2.0.0") and registry.latest("demo.run") == "1.0.0"

    with pytest.raises(SystemExit) as done:
        main([*args[:-2], "--schema", str(upstream)])
    assert "nothing written" in capsys.readouterr().out  # 2.0.0 is the newest now

    with pytest.raises(SystemExit) as done:
        main(["--registry", str(reg), "steps", "demo.run"])
    out = capsys.readouterr().out
    assert "1.0.0 -> 2.0.0: Bring 1.0.0 records to 2.0.0" in out
    assert "parameter harness (default: null): The harness that ran it." in out
    assert "may lose: /note" in out and "unfinished: TODO 1" in out


def test_numbering_follows_the_compatibility_without_a_stated_version(reg: Path) -> None:
    registry = evalreg.load_registry([reg], builtin=False)
    wider = v1()
    del wider["version"]
    wider["properties"]["extra"] = {"type": "string"}  # BACKWARD: old data stays valid
    proposal = propose(registry, "demo.run", Published(wider, "u"))
    assert (proposal.version, proposal.diff.compatibility) == ("1.1.0", "BACKWARD")
    assert proposal.step is not None and proposal.step.finished
    narrower = v1()
    del narrower["version"]
    narrower["required"] = [*narrower["required"], "tag"]
    proposal = propose(registry, "demo.run", Published(narrower, "u"))
    assert proposal.version == "2.0.0"
    given = propose(registry, "demo.run", Published(narrower, "u"), version="1.5.0")
    assert given.version == "1.5.0"


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def test_upstream_git_checkout_and_history(
    make_registry_dir: RegistryFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    checkout = tmp_path / "upstream"
    checkout.mkdir()
    _git(checkout, "init", "-q")
    schema = checkout / "spec" / "run.schema.json"
    schema.parent.mkdir()
    first = v1()
    for index, document in enumerate([first, {**first, "title": "retitled"}, v2()]):
        schema.write_text(json.dumps(document))
        _git(checkout, "add", "-A")
        _git(checkout, "commit", "-q", "-m", f"c{index}")
    manifest = MANIFEST + f"upstream:\n  git: {checkout}\n  path: ['*/run.schema.json']\n"
    root = make_registry_dir({"demo.run": {"manifest": manifest, "schemas": {"1.0.0": v1()}}})
    registry = evalreg.load_registry([root], builtin=False)
    upstream = upstream_of(registry.manifest("demo.run"))
    assert upstream is not None and upstream.git == checkout
    assert read_upstream(upstream).document == v2()
    assert read_upstream(upstream, "HEAD~2").document == v1()

    with pytest.raises(SystemExit) as done:
        main(["--registry", str(root), "sync", "demo.run", "--history"])
    out = capsys.readouterr().out
    assert done.value.code == 0, out
    assert out.count("draft 2.0.0") == 1 and "draft 1." not in out  # the retitle is no change
    assert (root / "schemas" / "demo.run" / "2.0.0.schema.json").is_file()


def test_changelog_and_changes_page_put_each_step_s_words_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from evalreg.publish.site import publish

    with pytest.raises(SystemExit):
        main(["changelog", "eee.instance"])
    text = capsys.readouterr().out
    section = text[text.index("## eee.instance@0.2.1") :]
    words = section.index("Rename interactions to messages")
    assert words < section.index("Compared with eee.instance@0.2.0")
    site = publish(evalreg.load_registry(), tmp_path / "site", families=["eee.instance"])
    page = (site.out_dir / "eee.instance" / "changes.html").read_text()
    part = page[page.index('id="v0.2.1"') :]
    assert part.index('<p class="step">Rename interactions to messages') < part.index(
        "Compared with"
    )
    changelog = (site.out_dir / "eee.instance" / "CHANGELOG.md").read_text()
    assert "Rename interactions to messages" in changelog
