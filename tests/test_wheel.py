"""The wheel ships the built-in registry directory and works outside the checkout."""

from __future__ import annotations

import os
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "build",
            "--wheel",
            "--no-isolation",
            "--outdir",
            str(out),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
    )
    [built] = out.glob("evalreg-*.whl")
    return built


@pytest.mark.slow
def test_wheel_contains_the_registry_directory_and_type_hints(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "evalreg/py.typed" in names
    assert "evalreg/_builtin/registry/eee.aggregate.yaml" in names
    assert "evalreg/_builtin/registry.lock" in names
    assert "evalreg/_builtin/schemas/eee.aggregate/0.2.0.schema.json" in names
    assert any(n.startswith("evalreg/_builtin/migrations/eee.aggregate/") for n in names)
    assert any(n.startswith("evalreg/examples/") for n in names)
    templates = "evalreg/publish/templates"
    assert {f"{templates}/index.html", f"{templates}/changes.html"} <= names


@pytest.mark.slow
def test_wheel_installs_and_runs_outside_the_checkout(wheel: Path, tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", str(wheel)], check=True, capture_output=True
    )
    environ = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "EVALREG_PATH")}
    listing = subprocess.run(
        [str(env_dir / "bin" / "evalreg"), "list", "--format", "json"],
        cwd=tmp_path,
        env=environ,
        check=True,
        capture_output=True,
        text=True,
    )
    assert '"family": "eee.aggregate"' in listing.stdout
    migrated = subprocess.run(
        [
            str(python),
            "-c",
            "import evalreg, sys; r = evalreg.default_registry(); "
            "print(r.directories[0]); print(len(r.steps('eee.aggregate').modules))",
        ],
        cwd=tmp_path,
        env=environ,
        check=True,
        capture_output=True,
        text=True,
    )
    directory, steps = migrated.stdout.split()
    assert "site-packages" in directory and directory.endswith("_builtin")
    assert int(steps) >= 1
    # A plain install publishes: the pages' templates and Jinja2 come with it.
    subprocess.run(
        [str(env_dir / "bin" / "evalreg"), "publish", "site", "--family", "eee.aggregate"],
        cwd=tmp_path,
        env=environ,
        check=True,
        capture_output=True,
    )
    index = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert '<h2 id="eee.aggregate">eee.aggregate</h2>' in index


@pytest.mark.slow
def test_new_version_on_an_installed_wheel_writes_only_into_the_registry_given(
    wheel: Path, tmp_path: Path
) -> None:
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target),
         str(wheel)],
        check=True,
        capture_output=True,
    )  # fmt: skip
    environ = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "EVALREG_PATH")}
    environ["PYTHONPATH"] = str(target)  # ahead of the checkout's editable install
    mine = tmp_path / "mine"
    (mine / "registry").mkdir(parents=True)

    def evalreg(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", "from evalreg.cli import main; main()", *args],
            cwd=tmp_path,
            env=environ,
            capture_output=True,
            text=True,
        )

    def files() -> set[Path]:
        return {p for p in target.rglob("*") if "__pycache__" not in p.parts}

    where = evalreg("--registry", str(mine), "list", "--format", "json")
    assert where.returncode == 0, where.stderr
    before = files()
    made = evalreg("--registry", str(mine), "new-version", "eee.aggregate", "0.3.1")
    assert made.returncode == 0, made.stderr
    assert files() == before
    written = sorted(p.relative_to(mine).as_posix() for p in mine.rglob("*") if p.is_file())
    assert written == [
        "migrations/eee.aggregate/0.3.0_to_0.3.1.py",
        "schemas/eee.aggregate/0.3.1.schema.json",
    ]
    schema = (mine / "schemas" / "eee.aggregate" / "0.3.1.schema.json").read_text()
    assert '"version": "0.3.1"' in schema

    refused = evalreg("new-version", "eee.aggregate", "0.3.2")
    assert refused.returncode == 2
    assert refused.stderr.count("\n") == 1 and "installed with evalreg" in refused.stderr
    assert files() == before
