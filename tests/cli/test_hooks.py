"""The pre-commit hooks of `.pre-commit-hooks.yaml`, run by the real pre-commit on real commits.

A copy of this checkout is the hook repository (pre-commit installs it with pip, as it would
for a user); a temporary git repository of evaluation data uses its hooks, and each test commits
to it and sees the commit go through or be refused.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "evalreg" / "examples"
EEE = DEMO / "eee" / "data"
BROKEN = next(DEMO.rglob("without_skill/grading.json"))
OLD = next((EEE / "hellaswag").rglob("*.json"))
CURRENT = next((EEE / "gsm8k").rglob("*.json"))
SAMPLES = next((EEE / "gsm8k").rglob("*_samples.jsonl"))
_COPIED = ("evalreg", "registry", "schemas", "migrations", "rules")
_COPIED_FILES = ("pyproject.toml", "README.md", "registry.lock", ".pre-commit-hooks.yaml")

pytestmark = pytest.mark.slow


def _git(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = os.environ | {
        "GIT_AUTHOR_NAME": "Tester",
        "GIT_AUTHOR_EMAIL": "tester@example.org",
        "GIT_COMMITTER_NAME": "Tester",
        "GIT_COMMITTER_EMAIL": "tester@example.org",
    }
    return subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, env=env, check=False
    )


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """Return a git repository holding this checkout's hooks and package, and its commit."""
    repo = tmp_path_factory.mktemp("hooks") / "evalreg"
    repo.mkdir()
    for name in _COPIED:
        shutil.copytree(ROOT / name, repo / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in _COPIED_FILES:
        shutil.copy2(ROOT / name, repo / name)
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    assert _git(repo, "commit", "-q", "-m", "hooks").returncode == 0
    sha = _git(repo, "rev-parse", "HEAD").stdout.strip()
    yield repo, sha


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One pre-commit cache for the module: the hook environment is installed once."""
    return tmp_path_factory.mktemp("pre-commit-home")


class Data:
    """A git repository of evaluation data whose commits run evalreg's hooks."""

    def __init__(self, root: Path, hook_repo: tuple[Path, str], home: Path) -> None:
        self.root = root
        self.repo, self.sha = hook_repo
        self.env = os.environ | {"PRE_COMMIT_HOME": str(home)}
        root.mkdir()
        _git(root, "init", "-q")

    def configure(self, hooks: list[dict[str, object]]) -> None:
        config = {"repos": [{"repo": str(self.repo), "rev": self.sha, "hooks": hooks}]}
        (self.root / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config))
        done = subprocess.run(
            [sys.executable, "-m", "pre_commit", "install"],
            cwd=self.root,
            capture_output=True,
            text=True,
            env=self.env,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        _git(self.root, "add", ".pre-commit-config.yaml")

    def add(self, source: Path, target: str | None = None) -> str:
        """Stage a copy of `source` (by default where it is in the example datastore)."""
        target = target or source.relative_to(EEE.parent).as_posix()
        path = self.root / target
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, path)
        _git(self.root, "add", target)
        return target

    def commit(self, message: str = "data") -> subprocess.CompletedProcess[str]:
        """Commit what is staged, through the installed hook."""
        done = subprocess.run(
            ["git", "commit", "-m", message],
            cwd=self.root,
            capture_output=True,
            text=True,
            env=self.env
            | {
                "GIT_AUTHOR_NAME": "Tester",
                "GIT_AUTHOR_EMAIL": "tester@example.org",
                "GIT_COMMITTER_NAME": "Tester",
                "GIT_COMMITTER_EMAIL": "tester@example.org",
                "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"],
            },
            check=False,
        )
        done.stdout += done.stderr
        return done

    def committed(self) -> set[str]:
        """Return the files of the last commit."""
        done = _git(self.root, "ls-tree", "-r", "--name-only", "HEAD")
        return set(done.stdout.split()) if done.returncode == 0 else set()


@pytest.fixture
def data(tmp_path: Path, hook_repo: tuple[Path, str], pre_commit_home: Path) -> Data:
    return Data(tmp_path / "datastore", hook_repo, pre_commit_home)


def test_the_manifest_names_the_three_hooks() -> None:
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert [h["id"] for h in hooks] == ["evalreg-validate", "evalreg-current", "evalreg-check"]
    assert all(h["language"] == "python" for h in hooks)


def test_validate_passes_valid_records_and_refuses_invalid_ones(data: Data) -> None:
    data.configure([{"id": "evalreg-validate"}])
    data.add(CURRENT)
    data.add(SAMPLES)
    done = data.commit()
    assert done.returncode == 0, done.stdout
    assert "evalreg validate" in done.stdout and "Passed" in done.stdout
    data.add(BROKEN, "skill/grading.json")
    done = data.commit()
    assert done.returncode == 1, done.stdout
    assert "Failed" in done.stdout
    problem = "skill/grading.json: /expectations/0: 'passed' is a required property"
    assert problem in done.stdout
    assert "skill/grading.json" not in data.committed()
    # Only the changed files are checked: another valid file goes in after the invalid one.
    _git(data.root, "rm", "-q", "--cached", "skill/grading.json")
    old = data.add(OLD)
    done = data.commit()
    assert done.returncode == 0, done.stdout
    assert "1 files, 1 records: 1 valid" in done.stdout or "Passed" in done.stdout
    assert old in data.committed()


def test_current_refuses_records_behind_the_required_version(data: Data) -> None:
    data.configure([{"id": "evalreg-current"}])
    old = data.add(OLD)
    done = data.commit()
    assert done.returncode == 1, done.stdout
    assert f"{old}: eee.aggregate@0.1.0 (1 record), required 0.3.0" in done.stdout
    assert old not in data.committed()
    data.configure([{"id": "evalreg-current", "args": ["--require", "eee.aggregate@0.1.0"]}])
    done = data.commit()
    assert done.returncode == 0, done.stdout
    assert old in data.committed()
    data.configure([{"id": "evalreg-current", "args": ["--require", "eee.aggregate@0.2.0"]}])
    data.add(CURRENT)
    done = data.commit()
    assert done.returncode == 0, done.stdout  # only the changed files are judged


def test_check_passes_a_sound_registry_and_refuses_a_broken_step(data: Data) -> None:
    from evalreg.registry.scaffold import init_registry

    init_registry(data.root / "reg")
    hooks: list[dict[str, object]] = [
        {"id": "evalreg-validate", "files": "^data/"},
        {"id": "evalreg-check", "args": ["--registry", "reg"]},
    ]
    data.configure(hooks)
    _git(data.root, "add", "reg")
    done = data.commit()
    assert done.returncode == 0, done.stdout
    assert "evalreg check" in done.stdout and "Passed" in done.stdout
    # A change to data alone does not run the check.
    data.add(CURRENT)
    data.add(SAMPLES)
    done = data.commit()
    assert done.returncode == 0, done.stdout
    assert "evalreg check" in done.stdout and "Skipped" in done.stdout
    step = data.root / "reg" / "migrations" / "acme.run" / "1.0.0_to_2.0.0.py"
    step.write_text(step.read_text().replace('    out["harness"] = ', "    _ = "))
    _git(data.root, "add", "reg")
    done = data.commit()
    assert done.returncode == 1, done.stdout
    assert "made a record not valid at 2.0.0" in done.stdout
