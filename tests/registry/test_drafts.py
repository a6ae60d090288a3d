"""Drafts stay drafts: every "latest" ignores a version not in registry.lock unless drafts are
asked for; new versions are written into the registry directory the user names, with the modes
any new file gets."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

import evalreg
from evalreg.cli import main
from evalreg.errors import RegistryError
from evalreg.registry.drafting import new_version, target_directory
from evalreg.registry.lock import LOCK_NAME, amend, release
from tests.conftest import DEMO_MANIFEST, RegistryFactory


def _schema(version: str, *, extra: str | None = None) -> dict[str, Any]:
    properties: dict[str, Any] = {
        "schema_version": {"type": "string", "const": version},
        "name": {"type": "string"},
    }
    required = ["schema_version", "name"]
    if extra:
        properties[extra] = {"type": "string"}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "version": version,
        "title": f"Demo score {version}",
        "type": "object",
        "required": required,
        "properties": properties,
        "additionalProperties": False,
    }


_STEP = '''
    """Only the version changes."""
    FROM = "{a}"
    TO = "{b}"

    def upgrade(record, ctx):
        return dict(record)
'''


@pytest.fixture
def drafted(make_registry_dir: RegistryFactory) -> Path:
    """1.0.0 and 1.1.0 released; 1.2.0 a draft that accepts one more property."""
    root = make_registry_dir(
        {
            "demo.score": {
                "manifest": DEMO_MANIFEST,
                "schemas": {
                    "1.0.0": _schema("1.0.0"),
                    "1.1.0": _schema("1.1.0"),
                    "1.2.0": _schema("1.2.0", extra="unit"),
                },
                "steps": {
                    "1.0.0_to_1.1.0.py": _STEP.format(a="1.0.0", b="1.1.0"),
                    "1.1.0_to_1.2.0.py": _STEP.format(a="1.1.0", b="1.2.0"),
                },
            }
        }
    )
    registry = evalreg.load_registry([root], builtin=False)
    for version in ("1.0.0", "1.1.0"):
        release(registry, "demo.score", version)
    return root


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as info:
        main(list(args))
    out, err = capsys.readouterr()
    return int(info.value.code or 0), out, err


def test_the_registry_api_ignores_a_draft_unless_asked(drafted: Path) -> None:
    registry = evalreg.load_registry([drafted], builtin=False)
    assert registry.is_draft("demo.score", "1.2.0")
    assert not registry.is_draft("demo.score", "1.1.0")
    assert registry.latest("demo.score") == "1.1.0"
    assert registry.resolve_version("demo.score", "latest") == "1.1.0"
    assert registry.versions("demo.score")[-1] == "1.2.0"  # still there, by name
    with_drafts = evalreg.load_registry([drafted], builtin=False, drafts=True)
    assert with_drafts.latest("demo.score") == "1.2.0"
    assert registry.with_drafts().latest("demo.score") == "1.2.0"
    assert registry.with_drafts().with_drafts(False).latest("demo.score") == "1.1.0"

    record = {"schema_version": "1.0.0", "name": "run"}
    assert registry.migrate(record, "latest").record["schema_version"] == "1.1.0"
    assert with_drafts.migrate(record, "latest").record["schema_version"] == "1.2.0"


def test_load_to_latest_ignores_a_draft(drafted: Path, tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"schema_version": "1.0.0", "name": "run"}))
    registry = evalreg.load_registry([drafted], builtin=False)
    [plain] = evalreg.load(path, to="latest", registry=registry)
    [drafty] = evalreg.load(path, to="latest", registry=registry, drafts=True)
    assert (plain["schema_version"], drafty["schema_version"]) == ("1.1.0", "1.2.0")


def test_detection_prefers_a_release_to_a_draft(make_registry_dir: RegistryFactory) -> None:
    manifest = 'name: demo.plain\ntitle: no version marker\nkind: json\nfiles: ["*.plain.json"]\n'
    root = make_registry_dir(
        {
            "demo.plain": {
                "manifest": manifest,
                "schemas": {
                    "1.0.0": {"type": "object", "required": ["a"]},
                    "2.0.0": {"type": "object", "required": ["b"]},
                    "2.1.0": {"type": "object", "required": ["b"]},
                },
            }
        }
    )
    registry = evalreg.load_registry([root], builtin=False)
    for version in ("1.0.0", "2.0.0"):
        release(registry, "demo.plain", version)
    registry = evalreg.load_registry([root], builtin=False)
    found = registry.detect({"b": 1}, "x.plain.json")
    assert (found.family, found.version) == ("demo.plain", "2.0.0")
    assert "draft" in str(found.evidence)
    undecided = registry.with_drafts().detect({"b": 1}, "x.plain.json")
    assert undecided.version is None  # with drafts, 2.0.0 and 2.1.0 are equals again


def test_cli_latest_paths_ignore_a_draft_and_drafts_includes_it(
    drafted: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "run.json").write_text(json.dumps({"schema_version": "1.1.0", "name": "run"}))
    reg = ["--registry", str(drafted)]

    code, out, _ = run(capsys, *reg, "status", str(data), "--require-latest")
    assert code == 0, out  # 1.1.0 is the latest release: nobody is behind a draft
    code, out, _ = run(capsys, *reg, "--drafts", "status", str(data), "--require-latest")
    assert code == 1 and "behind latest 1.2.0" in out

    out_dir = tmp_path / "out"
    code, out, err = run(
        capsys, *reg, "migrate", str(data), "--to", "latest", "--out", str(out_dir)
    )
    assert code == 0, err
    assert json.loads((out_dir / "run.json").read_text())["schema_version"] == "1.1.0"
    code, out, err = run(
        capsys, *reg, "--drafts", "migrate", str(data), "--to", "latest", "--out", str(out_dir)
    )
    assert code == 0, err
    assert json.loads((out_dir / "run.json").read_text())["schema_version"] == "1.2.0"

    (data / "run.json").write_text(json.dumps({"schema_version": "1.2.0", "name": "run"}))
    code, out, _ = run(capsys, *reg, "status", str(data), "--require-latest")
    assert code == 0 and "draft (newer than the latest release 1.1.0)" in out

    code, out, _ = run(capsys, *reg, "list", "--format", "json")
    [row] = [r for r in json.loads(out) if r["family"] == "demo.score"]
    assert (row["latest"], row["drafts"]) == ("1.1.0", ["1.2.0"])
    code, out, _ = run(capsys, *reg, "list")
    assert "1.2.0 (draft)" in out
    code, out, err = run(capsys, *reg, "show", "demo.score")
    assert json.loads(out)["version"] == "1.1.0" and "draft" not in err
    code, out, err = run(capsys, *reg, "--drafts", "show", "demo.score")
    assert json.loads(out)["version"] == "1.2.0" and "1.2.0 is a draft" in err


def test_publish_latest_is_the_latest_release(drafted: Path, tmp_path: Path) -> None:
    from evalreg.publish.site import publish

    registry = evalreg.load_registry([drafted], builtin=False)
    site = publish(registry, tmp_path / "site", families=["demo.score"])
    latest = json.loads((site.out_dir / "demo.score" / "latest.schema.json").read_text())
    assert latest["version"] == "1.1.0"
    site = publish(registry, tmp_path / "site2", families=["demo.score"], drafts=True)
    latest = json.loads((site.out_dir / "demo.score" / "latest.schema.json").read_text())
    assert latest["version"] == "1.2.0"


def test_new_version_writes_into_the_directory_given_with_its_own_version(
    drafted: Path, make_registry_dir: RegistryFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    mine = make_registry_dir({}, name="mine")
    before = sorted(p for p in drafted.rglob("*"))
    code, _, err = run(
        capsys, "--registry", str(drafted), "--registry", str(mine), "new-version",
        "demo.score", "1.3.0",
    )  # fmt: skip
    assert code == 0, err  # the directory holding the family's newest schema wins
    assert sorted(p for p in drafted.rglob("*")) != before
    registry = evalreg.load_registry([drafted, mine], builtin=False)
    created = new_version(registry, "demo.score", "1.4.0", mine)
    assert created.schema_path == mine / "schemas" / "demo.score" / "1.4.0.schema.json"
    assert created.step_path == mine / "migrations" / "demo.score" / "1.3.0_to_1.4.0.py"
    copied = json.loads(created.schema_path.read_text())
    assert copied["version"] == "1.4.0" and copied["title"] == "Demo score 1.4.0"
    assert copied["properties"]["schema_version"]["const"] == "1.4.0"
    registry = evalreg.load_registry([drafted, mine], builtin=False, drafts=True)
    assert registry.latest("demo.score") == "1.4.0"
    assert registry.is_draft("demo.score", "1.4.0")


def test_new_version_refuses_a_directory_not_loaded(drafted: Path, tmp_path: Path) -> None:
    registry = evalreg.load_registry([drafted], builtin=False)
    with pytest.raises(RegistryError, match="not a loaded registry directory"):
        target_directory(registry, "demo.score", tmp_path)


def test_the_installed_directory_is_never_written(monkeypatch: pytest.MonkeyPatch) -> None:
    import evalreg.registry.core as core

    registry = evalreg.load_registry()
    builtin = core.builtin_directory()
    monkeypatch.setattr(core, "installed_package", lambda: builtin)
    with pytest.raises(RegistryError, match=r"installed with evalreg.*--registry DIR"):
        new_version(registry, "eee.aggregate", "9.0.0")
    with pytest.raises(RegistryError, match="installed with evalreg"):
        amend(registry, "eee.aggregate", "0.3.0", "a reason")


@pytest.mark.skipif(os.name != "posix", reason="file modes")
def test_registry_files_get_the_modes_of_a_plain_write(drafted: Path) -> None:
    old = os.umask(0o022)
    try:
        registry = evalreg.load_registry([drafted], builtin=False)
        created = new_version(registry, "demo.score", "1.3.0")
        registry = evalreg.load_registry([drafted], builtin=False)
        release(registry, "demo.score", "1.2.0")
        schema = drafted / "schemas" / "demo.score" / "1.1.0.schema.json"
        schema.write_text(json.dumps(_schema("1.1.0", extra="note")))
        registry = evalreg.load_registry([drafted], builtin=False, verify=False)
        amend(registry, "demo.score", "1.1.0", "add the note the format had")
        for path in (created.schema_path, created.step_path, drafted / LOCK_NAME):
            assert stat.S_IMODE(path.stat().st_mode) == 0o644, path
        os.umask(0o002)
        (drafted / LOCK_NAME).unlink()
        release(evalreg.load_registry([drafted], builtin=False), "demo.score", "1.0.0")
        assert stat.S_IMODE((drafted / LOCK_NAME).stat().st_mode) == 0o664
    finally:
        os.umask(old)
