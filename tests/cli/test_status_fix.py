"""`status --require-latest` / `--require` refusals give the `evalreg migrate` command that fixes
them, and running it does."""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path

import pytest

from evalreg.cli import main

DEMO = Path(__file__).parents[2] / "evalreg" / "examples" / "eee" / "data"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as done:
        main(list(args))
    out, err = capsys.readouterr()
    return int(done.value.code or 0), out, err


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copytree(DEMO, tmp_path / "data")
    monkeypatch.chdir(tmp_path)
    return tmp_path / "data"


def commands(out: str) -> list[list[str]]:
    return [shlex.split(line) for line in out.splitlines() if line.startswith("  evalreg ")]


def test_the_refusal_names_the_command_and_the_command_fixes_it(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "status", "--require-latest", "data")
    assert code == 1
    (command,) = commands(out)
    assert command[:5] == ["evalreg", "migrate", "--in-place", "--to", "0.3.0"]
    assert sorted(command[5:]) == sorted(
        str(p.relative_to(store.parent)) for p in store.rglob("*") if p.is_file()
    )
    assert out.splitlines()[out.splitlines().index("to fix:") - 1].endswith("required 0.3.0")
    code, _, err = run(capsys, *command[1:])
    assert code == 0, err
    code, out, _ = run(capsys, "status", "--require-latest", "data")
    assert code == 0 and "to fix" not in out


def test_each_required_version_gets_its_command(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    required = ["--require", "eee.aggregate@0.2.2", "--require", "eee.instance@0.2.1"]
    code, out, _ = run(capsys, "status", *required, "data")
    assert code == 1
    found = commands(out)
    assert sorted(c[4] for c in found) == ["0.2.1", "0.2.2"]
    assert out.count("to bring them to the required versions, run:") == 1
    for command in found:
        assert run(capsys, *command[1:])[0] == 0
    assert run(capsys, "status", *required, "data")[0] == 0


def test_json_lists_the_commands_with_the_options_they_need(
    store: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "ci.toml").write_text("exclude = []\n")
    registry = tmp_path / "more"
    (registry / "registry").mkdir(parents=True)
    args = ["--registry", str(registry), "status", "--config", "ci.toml", "--format", "json"]
    code, out, _ = run(capsys, *args, "--require-latest", "data")
    assert code == 1
    (command,) = json.loads(out)["fix"]
    words = shlex.split(command)
    assert words[:7] == [
        "evalreg",
        "--registry",
        str(registry),
        "--config",
        "ci.toml",
        "migrate",
        "--in-place",
    ]
