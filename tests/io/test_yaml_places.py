"""Problems of YAML records carry the line and column of the value at fault."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from evalreg.cli import main
from evalreg.io.pointer import split
from evalreg.io.yamlstrict import documents, locate
from tests.conftest import RegistryFactory

TEXT = textwrap.dedent(
    """\
    # defaults shared below
    base: &base
      kind: exam
      limits: {low: 0, high: 1}
    runs:
      - name: first
        <<: *base
        scores: [1, 2,
                 3]
      - name: "second"
        "odd key": x
    ---
    null
    ---
    runs: []
    """
)


def place(pointer: str, document: int = 0) -> tuple[int, int]:
    return locate(documents(TEXT.encode())[document], split(pointer))


def test_a_pointer_reaches_the_key_or_item_at_fault() -> None:
    assert place("") == (2, 1)
    assert place("/runs") == (5, 1)
    assert place("/runs/1") == (10, 5)
    assert place("/runs/1/name") == (10, 5)
    assert place("/runs/1/odd key") == (11, 5)
    assert place("/runs/0/scores/2") == (9, 14)
    assert place("/base/limits/high") == (4, 20)


def test_a_pointer_past_the_document_stops_where_it_goes() -> None:
    assert place("/runs/1/missing") == (10, 5)  # the item that lacks it
    assert place("/runs/7") == (5, 1)
    assert place("/runs/0/name/x") == (6, 5)


def test_merged_keys_are_found_where_they_are_written() -> None:
    assert place("/runs/0/kind") == (3, 3)


def test_empty_documents_are_left_out_as_the_reader_does() -> None:
    assert len(documents(TEXT.encode())) == 2
    assert place("/runs", 1) == (15, 1)


MANIFEST = """\
name: acme.plan
title: Plans
kind: yaml
markers:
  - pointer: /version
rules:
  - id: acme.steps
    message: a step takes some time
    each: /steps/*
    require: [{gt: [/minutes, 0]}]
"""
SCHEMA = {
    "type": "object",
    "required": ["version", "steps"],
    "properties": {"steps": {"type": "array", "items": {"required": ["minutes"]}}},
}


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    with pytest.raises(SystemExit) as done:
        main(list(args))
    return int(done.value.code or 0), capsys.readouterr().out


def test_schema_and_rule_problems_of_each_document_are_placed(
    make_registry_dir: RegistryFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_registry_dir({"acme.plan": {"manifest": MANIFEST, "schemas": {"1": SCHEMA}}})
    path = tmp_path / "plans.yaml"
    path.write_text(
        "version: '1'\nsteps:\n  - minutes: 5\n---\nversion: '1'\nsteps:\n"
        "  - minutes: 0\n  - {title: cook}\n"
    )
    code, out = run(capsys, "--registry", str(root), "validate", str(path))
    assert code == 1
    lines = out.splitlines()
    assert f"{path}:8:5: /steps/1: 'minutes' is a required property" in lines
    assert any(x.startswith(f"{path}:7:5: /steps/0/minutes: a step takes some time") for x in lines)
    code, out = run(capsys, "--registry", str(root), "validate", "--format", "json", str(path))
    rows = [json.loads(x) for x in out.splitlines()[:-1]]
    assert sorted((r["line"], r["column"]) for r in rows) == [(7, 5), (8, 5)]
    code, out = run(capsys, "--registry", str(root), "validate", "--format", "github", str(path))
    assert f"::error file={path},line=8,col=5,title=acme.plan required::" in out
