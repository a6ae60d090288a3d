"""The README: what a newcomer needs first, its two commands, and links that lead somewhere.

Its python and console examples run with those of the documentation site (tests/test_docs.py).
"""

from __future__ import annotations

import re
import shlex
import shutil
from itertools import product
from pathlib import Path

import pytest

from evalreg.cli import main

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
EVALREG = ".venv/bin/evalreg"
MAX_LINES = 150


def sh_blocks() -> list[str]:
    """Return the README's ```sh blocks, in order."""
    return re.findall(r"```sh\n(.*?)\n```", README.read_text(encoding="utf-8"), re.S)


def first_command() -> list[list[str]]:
    """Return the evalreg invocations of the README's first shell block, as argument lists."""
    parts = [shlex.split(part) for part in sh_blocks()[0].split("&&")]
    return [words[1:] for words in parts if words and words[0] == EVALREG]


def test_the_readme_is_short_and_opens_with_the_two_commands() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) < MAX_LINES
    before_prose = text.split("\n\n", 3)
    assert before_prose[0] == "# evalreg"
    assert before_prose[1].startswith("```sh\npython3 -m venv .venv && .venv/bin/pip install -e")
    assert before_prose[2] == "```sh\n.venv/bin/python -m pytest\n```"


def test_ci_runs_the_readme_test_command_and_then_every_test_it_leaves_out() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    test_command = sh_blocks()[1]
    assert f"\n{test_command} -q\n" in ci
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    [default] = re.findall(r'^addopts = \[.*"-m", "([^"]+)"', pyproject, re.M)
    [second] = re.findall(rf'\n{re.escape(test_command)} -q -m "([^"]+)"\n', ci)
    declared = pyproject.split("\nmarkers = [\n", 1)[1].split("\n]", 1)[0]
    markers = re.findall(r'^  "([\w-]+):', declared, re.M)
    assert {"slow", "cluster"} <= set(markers)
    for values in product([False, True], repeat=len(markers)):
        marked = dict(zip(markers, values, strict=True))
        # Exactly one of the two steps selects a test, whatever markers it carries.
        assert eval(default, {}, marked) != eval(second, {}, marked), marked


def test_the_first_command_shows_detect_migrate_validate() -> None:
    commands = first_command()
    assert [c[0] for c in commands] == ["detect", "migrate", "validate"]
    migrate = commands[1]
    assert migrate[migrate.index("--to") + 1] == "0.2.0" and "--out" in migrate


def test_the_first_command_exits_0(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(ROOT / "evalreg" / "examples", tmp_path / "evalreg" / "examples")
    monkeypatch.chdir(tmp_path)
    outputs = []
    for args in first_command():
        with pytest.raises(SystemExit) as info:
            main(args)
        assert info.value.code in (0, None), (args, capsys.readouterr())
        outputs.append(capsys.readouterr())
    detect, migrate, validate = outputs
    assert "eee.aggregate@0.1.0" in detect.out and "22 detected, 0 undecided" in detect.err
    assert "records: 1 migrated, 3 current, 0 failed" in migrate.err
    assert validate.out.strip() == "3 files, 4 records: 4 valid, 0 invalid, 0 unreadable"
    # The broken grading file stays a demonstration of what validate reports.
    with pytest.raises(SystemExit) as info:
        main(["validate", "evalreg/examples"])
    assert info.value.code == 1
    assert "1 invalid" in capsys.readouterr().out


def test_every_link_of_the_readme_leads_to_a_file_and_every_guide_is_linked() -> None:
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README.read_text(encoding="utf-8"))
    local = {link for link in links if "://" not in link}
    for link in local:
        assert (ROOT / link).is_file(), link
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8").split("\nnav:\n", 1)[1]
    top_level = {f"docs/{name}" for name in re.findall(r"[\s:]([\w-]+\.md)\s*$", nav, re.M)}
    assert len(top_level) >= 10
    assert top_level - local == set(), "pages of the site's nav that the README does not link"
