"""The registry cache: values found again by the bytes they came from, and never a change of
result (an edit, a corrupt or foreign file, a folder that cannot be written)."""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

import evalreg
from evalreg.errors import IntegrityError, RegistryError
from evalreg.registry import cache as cache_module
from evalreg.registry import manifest as manifest_module
from evalreg.registry.cache import (
    ENV_CACHE_DIR,
    MAX_FILES,
    MISS,
    RegistryCache,
    cache_directory,
    cache_file,
)
from evalreg.registry.lock import LOCK_NAME, digest
from tests.conftest import RegistryFactory

MANIFEST = "name: acme.run\ntitle: Acme runs\nkind: json\n"
SCHEMA = {"type": "object", "properties": {"score": {"type": "number"}}}


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The cache folder of the test (empty)."""
    found = tmp_path / "cache"
    monkeypatch.setenv(ENV_CACHE_DIR, str(found))
    return found


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The manifests whose YAML is parsed, by path, as loads go."""
    seen: list[str] = []
    original = manifest_module._parse_yaml

    def parse(raw: bytes, where: str) -> Any:
        seen.append(Path(where).name)
        return original(raw, where)

    monkeypatch.setattr(manifest_module, "_parse_yaml", parse)
    return seen


def acme(make_registry_dir: RegistryFactory, manifest: str = MANIFEST) -> Path:
    return make_registry_dir({"acme.run": {"manifest": manifest, "schemas": {"1.0": SCHEMA}}})


def load(root: Path) -> evalreg.Registry:
    return evalreg.load_registry([root], builtin=False)


def entries(folder: Path) -> dict[str, str]:
    data: dict[str, str] = orjson.loads((cache_file(folder)).read_bytes())["entries"]
    return data


def test_a_second_load_parses_no_yaml(
    folder: Path, parsed: list[str], make_registry_dir: RegistryFactory
) -> None:
    root = acme(make_registry_dir)
    first = load(root)
    assert parsed == ["acme.run.yaml"]
    kinds = sorted(name.split(":")[0] for name in entries(folder))
    assert kinds == ["manifest", "schema"]
    second = load(root)
    assert parsed == ["acme.run.yaml"]
    assert second.manifest("acme.run") == first.manifest("acme.run")
    assert second.entry("acme.run", "1.0").document == first.entry("acme.run", "1.0").document


def test_an_edit_of_the_same_size_in_the_same_second_is_read_again(
    folder: Path, parsed: list[str], make_registry_dir: RegistryFactory
) -> None:
    root = acme(make_registry_dir)
    path = root / "registry" / "acme.run.yaml"
    assert load(root).manifest("acme.run").title == "Acme runs"
    before = path.stat()
    path.write_text(MANIFEST.replace("Acme runs", "Acme test"))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size
    assert load(root).manifest("acme.run").title == "Acme test"
    assert parsed == ["acme.run.yaml", "acme.run.yaml"]


def test_a_corrupt_cache_file_is_ignored_and_replaced(
    folder: Path, parsed: list[str], make_registry_dir: RegistryFactory
) -> None:
    root = acme(make_registry_dir)
    folder.mkdir()
    for junk in (b'{"stamp": [1], "entr', b"[]", b'{"stamp": 1, "entries": {"a": 1}}'):
        (cache_file(folder)).write_bytes(junk)
        assert load(root).manifest("acme.run").title == "Acme runs"
    assert len(parsed) == 3
    assert any(name.startswith("manifest:") for name in entries(folder))


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_pipe_in_place_of_the_cache_file_is_passed_over(
    folder: Path, make_registry_dir: RegistryFactory
) -> None:
    folder.mkdir()
    os.mkfifo(cache_file(folder))  # opened as a file, it would wait for a writer forever
    assert load(acme(make_registry_dir)).manifest("acme.run").title == "Acme runs"
    assert (cache_file(folder)).is_file()  # replaced by a cache file


def test_a_value_in_the_cache_is_checked_as_a_parsed_one(
    folder: Path, make_registry_dir: RegistryFactory
) -> None:
    root = acme(make_registry_dir)
    load(root)
    data = orjson.loads((cache_file(folder)).read_bytes())
    (name,) = (name for name in data["entries"] if name.startswith("manifest:"))
    data["entries"][name] = json.dumps({"name": "acme.run", "title": "x", "kind": "csv"})
    (cache_file(folder)).write_bytes(orjson.dumps(data))
    with pytest.raises(RegistryError, match="kind"):
        load(root)


def test_a_refused_pattern_is_refused_with_a_warm_cache(
    folder: Path, make_registry_dir: RegistryFactory
) -> None:
    manifest = MANIFEST + "markers:\n  - pointer: /v\n    pattern: '(?P<version>a)(?=b)'\n"
    root = acme(make_registry_dir, manifest)
    messages = []
    for _ in range(2):
        with pytest.raises(RegistryError) as caught:
            load(root)
        messages.append(str(caught.value))
    assert messages[0] == messages[1]
    assert "marker pattern '(?P<version>a)(?=b)' is refused: it has a lookahead" in messages[0]
    assert any(name.startswith("manifest:") for name in entries(folder))


def test_an_edited_released_schema_is_caught_with_a_warm_cache(
    folder: Path, make_registry_dir: RegistryFactory
) -> None:
    root = acme(make_registry_dir)
    schema = root / "schemas" / "acme.run" / "1.0.schema.json"
    (root / LOCK_NAME).write_text(json.dumps({"acme.run": {"1.0": digest(SCHEMA)}}))
    load(root)
    assert any(name.startswith("digest:") for name in entries(folder))
    assert load(root).entry("acme.run", "1.0").document["properties"]["score"]["type"] == "number"
    schema.write_text(schema.read_text().replace("number", "string"))
    with pytest.raises(IntegrityError, match="edited after release"):
        load(root)


def test_an_unwritable_folder_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make_registry_dir: RegistryFactory
) -> None:
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv(ENV_CACHE_DIR, str(tmp_path / "a-file" / "cache"))
    root = acme(make_registry_dir)
    assert load(root).manifest("acme.run").title == "Acme runs"
    assert load(root).manifest("acme.run").title == "Acme runs"


def test_what_json_does_not_hold_exactly_is_not_kept(tmp_path: Path) -> None:
    cache = RegistryCache(cache_file(tmp_path))
    key = cache.key(b"bytes")
    for value in (
        {"when": datetime.date(2024, 1, 1)},
        {"tags": {"a", "b"}},
        {1: "a number as a key"},
        {"pair": (1, 2)},
        {"big": 2**70},
        {"text": "\ud800"},
    ):
        cache.put("manifest", key, value)
        cache.save()
        assert not (cache_file(tmp_path)).exists(), value
    cache.put("manifest", key, {"floats": [1.0, -0.0, 1e300], "ints": [1, True, None]})
    cache.save()
    again = RegistryCache(cache_file(tmp_path)).get("manifest", key)
    assert again == {"floats": [1.0, -0.0, 1e300], "ints": [1, True, None]}
    assert [type(v) for v in again["ints"]] == [int, bool, type(None)]
    assert str(again["floats"][1]) == "-0.0"


def test_a_manifest_with_a_date_loads_every_time(
    folder: Path, parsed: list[str], make_registry_dir: RegistryFactory
) -> None:
    manifest = MANIFEST + "versioning:\n  exceptions:\n    '1.0': 2024-01-01\n"
    root = acme(make_registry_dir, manifest)
    for _ in range(2):
        assert load(root).manifest("acme.run").options["versioning"]["exceptions"] == {
            "1.0": datetime.date(2024, 1, 1)
        }
    assert parsed == ["acme.run.yaml", "acme.run.yaml"]


def test_turned_off_by_an_empty_variable(
    monkeypatch: pytest.MonkeyPatch, parsed: list[str], make_registry_dir: RegistryFactory
) -> None:
    monkeypatch.setenv(ENV_CACHE_DIR, "")
    assert cache_directory() is None
    cache = RegistryCache.open()
    assert not cache.enabled and cache.key(b"x") == ""
    root = acme(make_registry_dir)
    load(root)
    load(root)
    assert parsed == ["acme.run.yaml", "acme.run.yaml"]


def test_where_the_cache_is(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(ENV_CACHE_DIR)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_directory() == tmp_path / "evalreg"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/path")  # the XDG spec ignores it
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_directory() == tmp_path / "home" / ".cache" / "evalreg"


def test_a_file_too_large_or_from_other_code_is_ignored(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = RegistryCache.open()
    key = cache.key(b"bytes")
    cache.put("manifest", key, {"a": "b" * 100})
    cache.save()
    assert RegistryCache.open().get("manifest", key) == {"a": "b" * 100}
    monkeypatch.setattr(cache_module, "MAX_CACHE_BYTES", 100)
    assert RegistryCache.open().get("manifest", key) is MISS
    monkeypatch.undo()
    monkeypatch.setenv(ENV_CACHE_DIR, str(folder))
    monkeypatch.setattr(cache_module, "_FORMAT", 0)
    assert RegistryCache.open().get("manifest", key) is MISS


def test_the_file_keeps_the_values_used_last_within_its_bounds(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cache_module, "MAX_ENTRIES", 3)
    cache = RegistryCache.open()
    keys = [cache.key(bytes([n])) for n in range(5)]
    for n, key in enumerate(keys):
        cache.put("schema", key, {"n": n})
    cache.save()
    assert len(entries(folder)) == 3
    later = RegistryCache.open()
    assert [later.get("schema", k) for k in keys] == [{"n": 0}, {"n": 1}, {"n": 2}, MISS, MISS]
    later = RegistryCache.open()
    assert [later.get("schema", k) for k in keys[1:3]] == [{"n": 1}, {"n": 2}]
    later.put("schema", keys[4], {"n": 4})
    later.save()  # those of this run first, then the others while they fit
    kept = RegistryCache.open()
    assert [kept.get("schema", k) is MISS for k in keys] == [True, False, False, True, False]


def test_a_cached_start_does_not_import_yaml(folder: Path) -> None:
    """Nor what the registry needs only for some commands: version specifiers, hashes."""
    watch = (
        "import atexit, runpy, sys\n"
        "watched = ('yaml', 'packaging.specifiers', 'hashlib')\n"
        "def listed():\n"
        "    sys.stderr.write('IMPORTED %s' % [m for m in watched if m in sys.modules])\n"
        "atexit.register(listed)  # the program ends the process: no `finally` would run\n"
        "sys.argv = ['evalreg', 'list']\n"
        "runpy.run_module('evalreg', run_name='__main__')\n"
    )
    env = os.environ | {ENV_CACHE_DIR: str(folder)}
    found = []
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, "-c", watch], capture_output=True, text=True, env=env, timeout=120
        )
        assert "eee.aggregate" in done.stdout, done.stderr
        found.append(done.stderr.rsplit("IMPORTED ", 1)[-1])
    assert "'yaml'" in found[0]  # the first start parses the manifests
    assert found[1] == "[]"


def test_two_installations_keep_a_cache_file_each(
    folder: Path,
    parsed: list[str],
    make_registry_dir: RegistryFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two installations of evalreg (a project's environment and a hook's, say) used in turn
    each find their own values again, instead of replacing each other's file at every start."""
    root = acme(make_registry_dir)
    load(root)
    other = [*cache_module.current_stamp(), "another installation"]
    monkeypatch.setattr(cache_module, "current_stamp", lambda: other)
    load(root)
    assert len(parsed) == 2  # the other installation had no values of its own yet
    load(root)
    monkeypatch.undo()
    load(root)
    assert len(parsed) == 2  # each found its own values again
    assert len(list(folder.glob("registry-cache-*.json"))) == 2


def test_the_files_of_installations_used_least_recently_are_removed(
    folder: Path, make_registry_dir: RegistryFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = acme(make_registry_dir)
    stamp = cache_module.current_stamp()
    folder.mkdir()
    (folder / "notes.json").write_text("{}")  # not a cache file: left alone
    (folder / "registry-cache.json").write_text("{}")  # the one file of earlier versions
    for index in range(MAX_FILES + 3):
        monkeypatch.setattr(cache_module, "current_stamp", lambda i=index: [*stamp, i])
        load(root)
        written = cache_file(folder)
        os.utime(written, ns=(index * 10**9, index * 10**9))  # in order of use
    files = sorted(folder.glob("registry-cache-*.json"), key=lambda p: p.stat().st_mtime_ns)
    assert len(files) == MAX_FILES
    assert files[-1] == cache_file(folder)  # the one used last stays
    assert (folder / "notes.json").exists()
    assert not (folder / "registry-cache.json").exists()
