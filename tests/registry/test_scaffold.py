"""`evalreg init`: a registry directory to start from, which `evalreg check` passes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalreg.cli import main
from evalreg.errors import RegistryError
from evalreg.registry.scaffold import init_registry


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as info:
        main(list(args))
    out, err = capsys.readouterr()
    return int(info.value.code or 0), out, err


def test_init_writes_a_registry_that_check_passes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    root = tmp_path / "reg"
    code, out, _ = run(capsys, "init", str(root))
    assert code == 0
    for part in (
        "registry/acme.run.yaml",
        "schemas/acme.run/1.0.0.schema.json",
        "schemas/acme.run/2.0.0.schema.json",
        "migrations/acme.run/1.0.0_to_2.0.0.py",
        "rules/acme.run/unique_tasks.py",
        "registry.lock",
        "examples/run-1.0.0.acme.run.json",
        "examples/run-2.0.0.acme.run.json",
        "README.md",
    ):
        assert (root / part).is_file()
        assert f"created {root / part}" in out
    code, out, _ = run(capsys, "check", "--registry", str(root))
    assert code == 0, out
    assert out.strip().endswith("0 errors, 0 warnings, 0 notes")
    assert "1 step moves exercised on 50 generated records" in out


def test_the_examples_validate_and_migrate(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    root = tmp_path / "reg"
    init_registry(root)
    examples = str(root / "examples")
    code, out, _ = run(capsys, "--registry", str(root), "validate", examples)
    assert code == 0 and out.strip() == "2 files, 2 records: 2 valid, 0 invalid, 0 unreadable"
    code, out, _ = run(capsys, "--registry", str(root), "status", examples)
    assert [line.split()[:4] for line in out.splitlines()[1:]] == [
        ["acme.run", "1.0.0", "1", "1"],
        ["acme.run", "2.0.0", "1", "1"],
    ]
    out_dir = tmp_path / "out"
    args = ("--registry", str(root), "migrate", examples, "--to", "2.0.0", "--out", str(out_dir))
    code, _, err = run(capsys, *args, "--set", "harness=lm-eval")
    assert code == 0 and "1 migrated, 1 current, 0 failed" in err
    migrated = json.loads((out_dir / "run-1.0.0.acme.run.json").read_text())
    assert migrated["model"] == {"id": "tiny-model-1"}
    assert migrated["harness"] == "lm-eval" and migrated["schema_version"] == "2.0.0"
    code, _, _ = run(capsys, "--registry", str(root), "validate", str(out_dir))
    assert code == 0


def test_both_rules_apply(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    root = tmp_path / "reg"
    init_registry(root)
    record = json.loads((root / "examples" / "run-2.0.0.acme.run.json").read_text())
    record["results"][1] = {"task": "arithmetic", "score": 2, "min": 0, "max": 1}
    bad = tmp_path / "bad.acme.run.json"
    bad.write_text(json.dumps(record))
    code, out, _ = run(capsys, "--registry", str(root), "validate", str(bad))
    assert code == 1
    assert f"{bad}: /results/1/score: each score lies within its bounds" in out
    assert "[acme.run.bounds]" in out
    duplicate = "/results/1/task: task 'arithmetic' appears more than once"
    assert f"{duplicate} [acme.run.unique-tasks]" in out


def test_another_family_name(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    root = tmp_path / "reg"
    made = init_registry(root, "myorg.results")
    assert (root / "registry" / "myorg.results.yaml").is_file()
    assert [p.name for p in made.examples] == [
        "run-1.0.0.myorg.results.json",
        "run-2.0.0.myorg.results.json",
    ]
    code, out, _ = run(capsys, "check", "--registry", str(root), "--examples", "10")
    assert code == 0, out


def test_init_never_overwrites(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    root = tmp_path / "reg"
    init_registry(root)
    before = (root / "registry.lock").read_text()
    with pytest.raises(RegistryError, match="already exists"):
        init_registry(root)
    code, _, err = run(capsys, "init", str(root))
    assert code == 2 and "already exists; init writes into a new directory" in err
    assert (root / "registry.lock").read_text() == before
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    init_registry(tmp_path / "other")  # an existing folder is fine where no file collides
    assert (tmp_path / "other" / "notes.txt").read_text() == "mine"


@pytest.mark.parametrize("name", ["Acme", "acme", "acme..run", "acme.run!", "1acme.run"])
def test_a_family_name_must_be_dotted_lower_case_words(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str
) -> None:
    code, _, err = run(capsys, "init", str(tmp_path / "reg"), "--family", name)
    assert code == 2 and "use dotted lower-case words such as acme.run" in err
    assert not (tmp_path / "reg").exists()
