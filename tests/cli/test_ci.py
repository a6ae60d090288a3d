"""A contributor's set-up as docs/ci.md writes it: the local form of the pre-commit hooks, run by
the real pre-commit on a real git repository, adopted with a baseline on a datastore that
already has failures; and the `run:` steps of docs/examples/evalreg.yml on the same repository.

pre-commit installs evalreg from a copy of this checkout with pip, into an environment of its
own, as it would for a user; the workflow's install step does the same into a new virtual
environment.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
DEMO = ROOT / "evalreg" / "examples" / "eee" / "data"
FOLDER = "gsm8k/Qwen/Qwen2.5-7B-Instruct"
UUID = "5b0c2e7a-91d4-4f3e-a6b8-2d7c9e1f0a34"
OLD = "hellaswag/mistralai/Mistral-7B-v0.1/c41f8d20-3b6e-4a57-9e02-7f5a1b8c6d93.json"
NEW = "0d6f1c4e-2b3a-4c5d-8e9f-a1b2c3d4e5f6"
_COPIED = ("evalreg", "registry", "schemas", "migrations", "rules")
_COPIED_FILES = ("pyproject.toml", "README.md", "registry.lock", ".pre-commit-hooks.yaml")
PLACEHOLDER = "file:///path/to/evalreg"
BIN = Path(sys.executable).parent

pytestmark = pytest.mark.slow


def local_hooks() -> str:
    """Return the `.pre-commit-config.yaml` of docs/ci.md's local form, as the page shows it."""
    text = (DOCS / "ci.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```yaml\n(.*?)^```", text, re.M | re.S)
    (config,) = [b for b in blocks if "repo: local" in b]
    assert PLACEHOLDER in config
    return config


def shell(
    cwd: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    environment = os.environ | {
        "GIT_AUTHOR_NAME": "Tester",
        "GIT_AUTHOR_EMAIL": "tester@example.org",
        "GIT_COMMITTER_NAME": "Tester",
        "GIT_COMMITTER_EMAIL": "tester@example.org",
        "PATH": str(BIN) + os.pathsep + os.environ["PATH"],
    }
    done = subprocess.run(
        list(args), cwd=cwd, capture_output=True, text=True, env=environment | (env or {})
    )
    done.stdout += done.stderr
    return done


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of this checkout, as a contributor would have it, for pip to install."""
    root = tmp_path_factory.mktemp("checkout") / "evalreg"
    root.mkdir()
    for name in _COPIED:
        shutil.copytree(ROOT / name, root / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in _COPIED_FILES:
        shutil.copy2(ROOT / name, root / name)
    return root


def edit(path: Path, change: Any) -> None:
    record = json.loads(path.read_text())
    change(record)
    path.write_text(json.dumps(record, indent=2))


def spoil(value: float) -> Any:
    def change(record: dict[str, Any]) -> None:
        record["evaluation_results"][0]["score_details"]["score"] = value

    return change


class Datastore:
    """A git repository of evaluation data with failures from before it adopted the hooks."""

    def __init__(self, root: Path, home: Path) -> None:
        self.root = root
        self.env = {"PRE_COMMIT_HOME": str(home)}
        shutil.copytree(DEMO, root / "data")
        edit(root / "data" / FOLDER / f"{UUID}.json", spoil(1.5))  # a score out of bounds
        (root / "data" / "old").mkdir()
        shutil.copy(root / "data" / OLD, root / "data" / "old" / "run.json")  # misplaced copy
        assert shell(root, "git", "init", "-q").returncode == 0
        self.run("git", "add", "-A")
        assert self.run("git", "commit", "-q", "-m", "data from before").returncode == 0

    def run(self, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        return shell(self.root, *args, env=self.env | env)

    def add_new_failing_file(self) -> str:
        """Add an aggregate at the latest version whose score is out of bounds."""
        target = f"data/{FOLDER}/{NEW}.json"
        source = self.root / "new-run.json"
        shutil.copy(DEMO / FOLDER / f"{UUID}.json", source)
        edit(source, lambda r: r.pop("detailed_evaluation_results"))
        out = self.root / "migrated"
        done = self.run("evalreg", "migrate", "--to", "latest", "--out", str(out), str(source))
        assert done.returncode == 0, done.stdout
        (out / "new-run.json").rename(self.root / target)
        shutil.rmtree(out)
        source.unlink()
        edit(self.root / target, spoil(7.0))
        self.run("git", "add", target)
        return target


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")


@pytest.fixture
def datastore(tmp_path: Path, pre_commit_home: Path) -> Datastore:
    return Datastore(tmp_path / "datastore", pre_commit_home)


def adopt(store: Datastore, checkout: Path) -> None:
    """Adopt the hooks as docs/ci.md says: a baseline named in evalreg.toml, the local hooks."""
    (store.root / "evalreg.toml").write_text('baseline = "evalreg-baseline.json"\n')
    done = store.run("evalreg", "validate", "--write-baseline", "evalreg-baseline.json", "data")
    assert done.returncode == 0, done.stdout
    assert "wrote the baseline evalreg-baseline.json: 4 findings in 2 files" in done.stdout
    config = local_hooks().replace(PLACEHOLDER, checkout.as_uri())
    (store.root / ".pre-commit-config.yaml").write_text(config)
    done = store.run(sys.executable, "-m", "pre_commit", "install")
    assert done.returncode == 0, done.stdout
    store.run("git", "add", "evalreg.toml", "evalreg-baseline.json", ".pre-commit-config.yaml")
    done = store.run("git", "commit", "-m", "adopt evalreg's hooks")
    assert done.returncode == 0, done.stdout


def test_the_local_hooks_refuse_new_failures_and_let_old_ones_be(
    datastore: Datastore, checkout: Path
) -> None:
    adopt(datastore, checkout)
    # CI over every file: the old failures are known.
    done = datastore.run(
        sys.executable, "-m", "pre_commit", "run", "evalreg-validate", "--all-files"
    )
    assert done.returncode == 0 and "Passed" in done.stdout, done.stdout
    # A new file that fails is refused, by the commit and by CI; the old ones are not named.
    new = datastore.add_new_failing_file()
    done = datastore.run("git", "commit", "-m", "a new run")
    assert done.returncode == 1, done.stdout
    assert f"{new}: /evaluation_results/0/score_details/score: " in done.stdout
    assert "[eee.score-bounds]" in done.stdout and "evalreg status" in done.stdout
    done = datastore.run(
        sys.executable, "-m", "pre_commit", "run", "evalreg-validate", "--all-files"
    )
    assert done.returncode == 1
    named = {line.split(":")[0] for line in done.stdout.splitlines() if line.startswith("data/")}
    assert named == {new}
    # An old failing file edited elsewhere than where it fails still passes.
    old = f"data/{FOLDER}/{UUID}.json"
    edit(datastore.root / old, lambda r: r["model_info"].update(name="Qwen2.5 7B Instruct"))
    done = datastore.run(
        sys.executable, "-m", "pre_commit", "run", "evalreg-validate", "--files", old
    )
    assert done.returncode == 0 and "Passed" in done.stdout, done.stdout


def test_the_current_hook_names_the_command_that_fixes_a_refusal(
    datastore: Datastore, checkout: Path
) -> None:
    adopt(datastore, checkout)
    old = datastore.root / "data" / OLD
    edit(old, lambda r: r.update(retrieved_timestamp="1700000000"))
    datastore.run("git", "add", f"data/{OLD}")
    done = datastore.run("git", "commit", "-m", "touch an old run")
    assert done.returncode == 1, done.stdout
    (line,) = [
        x.strip() for x in done.stdout.splitlines() if x.strip().startswith("evalreg migrate")
    ]
    assert line == f"evalreg migrate --in-place --to 0.3.0 data/{OLD}"
    assert datastore.run(*line.split()).returncode == 0
    datastore.run("git", "add", f"data/{OLD}")
    done = datastore.run("git", "commit", "-m", "touch an old run")
    assert done.returncode == 0, done.stdout


# -- the GitHub Actions workflow ---------------------------------------------------------------


def workflow_steps() -> Iterator[tuple[str, str, dict[str, str]]]:
    """Yield the name, `run:` script and environment of each step of the example workflow."""
    document = yaml.safe_load((DOCS / "examples" / "evalreg.yml").read_text(encoding="utf-8"))
    (job,) = document["jobs"].values()
    for step in job["steps"]:
        if "run" in step:
            yield step["name"], step["run"], {k: str(v) for k, v in step.get("env", {}).items()}


def test_the_workflow_steps_fail_on_new_findings_only(
    datastore: Datastore, checkout: Path, tmp_path: Path
) -> None:
    (datastore.root / "evalreg.toml").write_text('baseline = "evalreg-baseline.json"\n')
    datastore.run("evalreg", "validate", "--write-baseline", "evalreg-baseline.json", "data")
    runner = tmp_path / "runner"
    assert shell(tmp_path, sys.executable, "-m", "venv", str(runner)).returncode == 0
    path = str(runner / "bin") + os.pathsep + os.environ["PATH"]

    def run_steps() -> dict[str, subprocess.CompletedProcess[str]]:
        done = {}
        for name, script, env in workflow_steps():
            if "EVALREG" in env:
                env["EVALREG"] = str(checkout)  # where evalreg comes from, here
            step = subprocess.run(
                ["bash", "-e", "-c", script],
                cwd=datastore.root,
                capture_output=True,
                text=True,
                env=os.environ | env | {"PATH": path, "CI": "true", "GITHUB_ACTIONS": "true"},
            )
            done[name] = step
            if step.returncode:
                break
        return done

    steps = run_steps()
    assert [s.returncode for s in steps.values()] == [0, 0, 0], {
        n: s.stdout + s.stderr for n, s in steps.items()
    }
    assert shutil.which("evalreg", path=str(runner / "bin")) is not None
    datastore.add_new_failing_file()
    steps = run_steps()
    validate = steps["Validate the records"]
    assert validate.returncode == 1
    annotations = [x for x in validate.stdout.splitlines() if x.startswith("::")]
    assert annotations and all(f"file=data/{FOLDER}/{NEW}.json" in x for x in annotations)
    assert "title=eee.score-bounds::" in validate.stdout
