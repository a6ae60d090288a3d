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
