"""Shared fixtures: the built-in registry, and small registry directories built in tmp_path.

The suite runs on every core (pytest-xdist), so a test keeps to its own `tmp_path`, ports the
system picks (port 0), and `monkeypatch` for the environment; nothing is written into the
checkout, the Hypothesis example database included.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import textwrap
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis.configuration import set_hypothesis_home_dir

import evalreg
from evalreg import Registry

EXAMPLES = Path(__file__).parent / "examples"
DEMO_MANIFEST = """\
name: demo.score
title: Demo scores
kind: json
markers:
  - pointer: /schema_version
    template: "{version}"
"""
"""The manifest of a small family for registries built in tests (schemas given by each test)."""


def builtin_versions(slow_families: Collection[str] = ()) -> list[Any]:
    """Return a `pytest.param` (family, version) for every version of every built-in family,
    with the id `family@version`.

    The default run takes the first and the latest version of each family, the ends of its
    migration chain; the versions between them, and every version of `slow_families` (schemas
    Hypothesis takes long to draw from), are marked `slow`: CI's second step runs them.
    """
    found = evalreg.default_registry()
    params = []
    for family in found.families():
        versions = found.versions(family)
        for version in versions:
            slow = family in slow_families or version not in (versions[0], versions[-1])
            marks = [pytest.mark.slow] if slow else []
            params.append(pytest.param(family, version, id=f"{family}@{version}", marks=marks))
    return params


def examples(full: int, quick: int) -> list[Any]:
    """Return the counts of examples a property test draws, as parameters: `quick` in the
    default run, the `full` count in CI's second step (marked `slow`)."""
    return [pytest.param(quick, id="quick"), pytest.param(full, id="full", marks=pytest.mark.slow)]


def pytest_configure(config: pytest.Config) -> None:
    """Keep Hypothesis's files (its example database and caches) out of the checkout, and the
    registry cache out of the home folder (in the environment: commands run by tests see it)."""
    set_hypothesis_home_dir(str(Path(tempfile.gettempdir()) / "evalreg-tests-hypothesis"))
    os.environ["EVALREG_CACHE_DIR"] = tempfile.mkdtemp(prefix="evalreg-tests-cache-")


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(os.environ.pop("EVALREG_CACHE_DIR", ""), ignore_errors=True)


@pytest.fixture(scope="session")
def registry() -> Registry:
    """The built-in registry (no user directories)."""
    return evalreg.load_registry(builtin=True)


@pytest.fixture(autouse=True)
def _no_user_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EVALREG_PATH", raising=False)


RegistryFactory = Callable[..., Path]


@pytest.fixture
def make_registry_dir(tmp_path: Path) -> RegistryFactory:
    """Return a function that writes a registry directory and returns its path.

    `families` maps a family name to {"manifest": str (YAML), "schemas": {version: dict},
    "steps": {file name: str (Python source)}, "rules": {file name: str (Python source)}}.
    """
    counter = {"n": 0}

    def make(families: Mapping[str, Mapping[str, Any]], name: str | None = None) -> Path:
        counter["n"] += 1
        root = tmp_path / (name or f"reg{counter['n']}")
        (root / "registry").mkdir(parents=True)
        (root / "schemas").mkdir()
        for family, parts in families.items():
            manifest = parts.get("manifest") or (
                f"name: {family}\ntitle: {family} records\nkind: json\n"
            )
            (root / "registry" / f"{family}.yaml").write_text(textwrap.dedent(manifest))
            for version, schema in parts.get("schemas", {}).items():
                path = root / "schemas" / family / f"{version}.schema.json"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(json.dumps(schema, indent=2))
            for folder, key in (("migrations", "steps"), ("rules", "rules")):
                for file_name, source in parts.get(key, {}).items():
                    path = root / folder / family / file_name
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_text(textwrap.dedent(source))
        return root

    return make
