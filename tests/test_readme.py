"""The README's first command: its evalreg parts run on the bundled examples and exit 0."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pytest

from evalreg.cli import main

ROOT = Path(__file__).resolve().parent.parent
EVALREG = ".venv/bin/evalreg"


def first_command() -> list[list[str]]:
    """Return the evalreg invocations of the README's first shell block, as argument lists."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```sh\n(.*?)\n```", text, re.S)
    assert block is not None
    parts = [shlex.split(part) for part in block.group(1).split("&&")]
    return [words[1:] for words in parts if words and words[0] == EVALREG]


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
