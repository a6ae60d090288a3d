"""Publishing: ids and refs under the base URL, latest, changelogs, catalog, index, determinism."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import referencing.exceptions

import evalreg
from evalreg import Registry, load_registry
from evalreg.cli import main
from evalreg.publish.site import (
    CATALOG_SCHEMA,
    DEFAULT_BASE_URL,
    normalise_base_url,
    publish,
    published_registry,
    published_schema,
    schema_uri,
)
from evalreg.registry.lock import amend, drafts, release
from tests.conftest import RegistryFactory

BASE = "https://schemas.example.org/eval/"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built-in registry, published once."""
    out = tmp_path_factory.mktemp("site")
    publish(evalreg.load_registry(), out, base_url=BASE)
    return out


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def released(registry: Registry) -> list[tuple[str, str]]:
    unreleased = {(e.family, e.version) for e in drafts(registry)}
    return [
        (family, version)
        for family in registry.families()
        for version in registry.versions(family)
        if (family, version) not in unreleased
    ]


# -- the built-in registry, published --------------------------------------------------------


def test_every_released_version_is_published_with_its_id(site: Path, registry: Registry) -> None:
    for family, version in released(registry):
        document = read_json(site / family / f"{version}.schema.json")
        assert document["$id"] == f"{BASE}{family}/{version}.schema.json"
        original = registry.schema(family, version)
        assert list(document)[: 2 if "$schema" in original else 1][-1] == "$id"
        original.pop("$id")
        assert {k: v for k, v in document.items() if k != "$id"} == original


def test_latest_is_a_copy_of_the_newest_version_under_its_own_id(
    site: Path, registry: Registry
) -> None:
    for family in {f for f, _ in released(registry)}:
        versions = [v for f, v in released(registry) if f == family]
        latest = read_json(site / family / "latest.schema.json")
        newest = read_json(site / family / f"{versions[-1]}.schema.json")
        assert latest["$id"] == f"{BASE}{family}/latest.schema.json"
        assert {**latest, "$id": newest["$id"]} == newest


def test_the_catalog_follows_the_schema_store_format(site: Path, registry: Registry) -> None:
    catalog = read_json(site / "catalog.json")
    assert catalog["$schema"] == CATALOG_SCHEMA
    assert catalog["version"] == 1
    entries = {entry["url"]: entry for entry in catalog["schemas"]}
    for family in {f for f, _ in released(registry)}:
        entry = entries[f"{BASE}{family}/latest.schema.json"]
        assert set(entry) == {"name", "description", "fileMatch", "url", "versions"}
        assert entry["name"] == registry.manifest(family).title
        assert family in entry["description"]
        versions = [v for f, v in released(registry) if f == family]
        assert entry["versions"] == {v: f"{BASE}{family}/{v}.schema.json" for v in versions}
        for url in entry["versions"].values():
            assert (site / url.removeprefix(BASE)).is_file()
    by_name = {e["url"].removeprefix(BASE).split("/")[0]: e for e in catalog["schemas"]}
    assert by_name["eee.aggregate"]["fileMatch"] == []  # "*.json" would claim every JSON file
    assert by_name["skill-creator.benchmark"]["fileMatch"] == ["benchmark.json"]


def test_each_family_has_a_changelog_newest_first(site: Path) -> None:
    text = (site / "eee.aggregate" / "CHANGELOG.md").read_text(encoding="utf-8")
    assert text.startswith("# eee.aggregate schema changelog\n")
    assert text.index("## 0.3.0") < text.index("## 0.2.1") < text.index("## 0.1.0")
    assert "Compared with 0.2.0: **NONE** compatibility" in text
    assert text.endswith("## 0.1.0\n\nFirst published version.\n")


def test_the_index_needs_no_scripts(site: Path, registry: Registry) -> None:
    page = (site / "index.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert "<script" not in page.lower() and " src=" not in page.lower()
    assert "<link" not in page.lower()  # no stylesheet or font from the network
    for family, version in released(registry):
        assert f'href="{family}/{version}.schema.json"' in page
    assert '<span class="badge NONE">NONE</span>' in page
    assert '<span class="badge FULL">FULL</span>' in page
    assert 'href="catalog.json"' in page


def test_publishing_is_deterministic(site: Path, tmp_path: Path) -> None:
    again = tmp_path / "again"
    publish(evalreg.load_registry(), again, base_url=BASE)  # as `site`, from another registry

    def tree(root: Path) -> dict[str, bytes]:
        return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}

    assert tree(again) == tree(site)
    assert len(tree(site)) > 20


def test_family_subset(tmp_path: Path) -> None:
    result = publish(evalreg.load_registry(), tmp_path, families=["eee.instance"])
    assert [f.family for f in result.families] == ["eee.instance"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".evalreg-site.json",
        "catalog.json",
        "eee.instance",
        "index.html",
    ]
    with pytest.raises(evalreg.UnknownFamilyError):
        publish(evalreg.load_registry(), tmp_path, families=["nope"])


# -- refs, drafts and the catalog override, on a small registry ------------------------------

PERSON = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$defs": {
        "person": {
            "type": "object",
            "required": ["name"],
            "properties": {"name": {"type": "string"}},
        }
    },
    "$ref": "#/$defs/person",
}
TEAM = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["lead", "members"],
    "properties": {
        "lead": {"$ref": "urn:evalreg:demo.person:1#/$defs/person"},
        "members": {"type": "array", "items": {"$ref": "#/$defs/member"}},
    },
    "$defs": {"member": {"$ref": "urn:evalreg:demo.person:1"}},
}
NOTE_V1 = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://example.org/s/note-1.json",
    "type": "object",
    "properties": {"author": {"$ref": "author-1.json#/$defs/name"}},
}
AUTHOR_V1 = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://example.org/s/author-1.json",
    "$defs": {"name": {"type": "string", "minLength": 1}},
}


def manifest(name: str, extra: str = "") -> str:
    return f"name: {name}\ntitle: {name} records\nkind: json\nfiles: ['*.json']\n{extra}"


@pytest.fixture
def small(make_registry_dir: RegistryFactory) -> Registry:
    root = make_registry_dir(
        {
            "demo.person": {"manifest": manifest("demo.person"), "schemas": {"1": PERSON}},
            "demo.team": {
                "manifest": manifest("demo.team", "catalog: {fileMatch: ['team.json']}\n"),
                "schemas": {"1": TEAM, "2": TEAM},
            },
            "demo.note": {"manifest": manifest("demo.note"), "schemas": {"1": NOTE_V1}},
            "demo.author": {"manifest": manifest("demo.author"), "schemas": {"1": AUTHOR_V1}},
        }
    )
    registry = load_registry([root], builtin=False)
    for family, version in [
        ("demo.person", "1"),
        ("demo.team", "1"),
        ("demo.note", "1"),
        ("demo.author", "1"),
    ]:
        release(registry, family, version)
    return registry


def test_refs_to_other_registry_schemas_point_at_their_published_urls(small: Registry) -> None:
    team = published_schema(small, "demo.team", "1", base_url=BASE)
    assert team["$id"] == f"{BASE}demo.team/1.schema.json"
    lead = team["properties"]["lead"]["$ref"]
    assert lead == f"{BASE}demo.person/1.schema.json#/$defs/person"
    assert team["properties"]["members"]["items"]["$ref"] == "#/$defs/member"  # internal
    assert team["$defs"]["member"]["$ref"] == f"{BASE}demo.person/1.schema.json"
    person = published_schema(small, "demo.person", "1", base_url=BASE)
    assert person["$ref"] == "#/$defs/person"
    note = published_schema(small, "demo.note", "1", base_url=BASE)
    assert note["properties"]["author"]["$ref"] == f"{BASE}demo.author/1.schema.json#/$defs/name"
    assert TEAM["properties"]["lead"]["$ref"].startswith("urn:")  # the input is not mutated


def test_the_published_registry_resolves_refs_offline(small: Registry) -> None:
    refs = published_registry(small, base_url=BASE)
    team_uri = schema_uri("demo.team", "1", base_url=BASE, registry=small)
    validator = jsonschema.Draft202012Validator({"$ref": team_uri}, registry=refs)
    assert validator.is_valid({"lead": {"name": "a"}, "members": [{"name": "b"}]})
    errors = list(validator.iter_errors({"lead": {}, "members": [{"name": 1}]}))
    assert {e.message for e in errors} == {
        "'name' is a required property",
        "1 is not of type 'string'",
    }
    note = jsonschema.Draft202012Validator(
        {"$ref": f"{BASE}demo.note/latest.schema.json"}, registry=refs
    )
    assert not note.is_valid({"author": ""})
    with pytest.raises(referencing.exceptions.Unresolvable):
        jsonschema.Draft202012Validator(
            {"$ref": "https://elsewhere.example/x.json"}, registry=refs
        ).is_valid({})


def test_drafts_are_left_out_unless_asked_for(small: Registry, tmp_path: Path) -> None:
    result = publish(small, tmp_path / "released", base_url=BASE)
    assert result.skipped_drafts == (("demo.team", "2"),)
    assert not (tmp_path / "released" / "demo.team" / "2.schema.json").exists()
    latest = read_json(tmp_path / "released" / "demo.team" / "latest.schema.json")
    assert latest["properties"]["lead"]["$ref"].startswith(f"{BASE}demo.person/1.schema.json")
    catalog = read_json(tmp_path / "released" / "catalog.json")
    team = next(e for e in catalog["schemas"] if e["name"] == "demo.team records")
    assert list(team["versions"]) == ["1"]
    assert team["fileMatch"] == ["team.json"]  # from the manifest's catalog key
    everything = publish(small, tmp_path / "all", base_url=BASE, drafts=True)
    assert everything.skipped_drafts == ()
    assert (tmp_path / "all" / "demo.team" / "2.schema.json").is_file()


# -- URLs ----------------------------------------------------------------------------------------


def test_schema_uri(registry: Registry) -> None:
    latest = registry.latest("eee.aggregate")
    assert evalreg.schema_uri("eee.aggregate") == (
        f"{DEFAULT_BASE_URL}eee.aggregate/{latest}.schema.json"
    )
    assert schema_uri("eee.aggregate", "0.2", base_url="https://x.example/s") == (
        "https://x.example/s/eee.aggregate/0.2.0.schema.json"
    )
    with pytest.raises(evalreg.UnknownVersionError):
        schema_uri("eee.aggregate", "9")


def test_the_default_published_registry_holds_every_builtin_schema(registry: Registry) -> None:
    refs = evalreg.published_registry()
    for family in registry.families():
        for version in registry.versions(family):
            resource = refs.get_or_retrieve(schema_uri(family, version)).value
            assert resource.contents["$id"] == schema_uri(family, version)


@pytest.mark.parametrize("url", ["schemas/", "example.org/schemas", "https:///x", ""])
def test_a_base_url_must_be_absolute(url: str) -> None:
    with pytest.raises(ValueError, match="not absolute"):
        normalise_base_url(url)
    assert normalise_base_url("https://a.example/s") == "https://a.example/s/"


# -- the command ---------------------------------------------------------------------------------


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as info:
        main(list(args))
    out, err = capsys.readouterr()
    return int(info.value.code or 0), out, err


def test_the_publish_command(
    capsys: pytest.CaptureFixture[str], small: Registry, tmp_path: Path
) -> None:
    (directory,) = small.directories
    out = tmp_path / "site"
    code, stdout, stderr = run(
        capsys, "--registry", str(directory), "publish", str(out), "--base-url", BASE.rstrip("/")
    )
    assert code == 0
    assert "published" in stdout and f"base URL {BASE}" in stdout
    assert "skipped draft demo.team 2" in stderr
    assert (
        read_json(out / "demo.person" / "1.schema.json")["$id"]
        == f"{BASE}demo.person/1.schema.json"
    )
    code, _, stderr = run(capsys, "publish", str(out), "--base-url", "schemas/")
    assert code == 2 and "not absolute" in stderr


def test_the_published_changelog_lists_amendments(small: Registry, tmp_path: Path) -> None:
    entry = small.entry("demo.person", "1")
    entry.path.write_text(json.dumps({**PERSON, "description": "with a description"}))
    amended = load_registry(small.directories, builtin=False, verify=False)
    amend(amended, "demo.person", "1", "the description was left out", date="2026-03-04")
    publish(load_registry(small.directories, builtin=False), tmp_path / "site", base_url=BASE)
    text = (tmp_path / "site" / "demo.person" / "CHANGELOG.md").read_text()
    assert "## 1\n\nFirst published version.\n\n*amended on 2026-03-04 (sha256:" in text
    assert text.endswith("): the description was left out*\n")
