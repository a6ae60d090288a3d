from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema.validators import validator_for

import evalreg
from evalreg import Registry
from evalreg.errors import RegistryError, RemoteRefError, UnknownFamilyError, UnknownVersionError
from evalreg.registry.core import builtin_directory, default_id

SEED_FAMILIES = {
    "eee.aggregate": "0.2.0",
    "eee.instance": "0.2.0",
    "agentv.eval": "2",
    "mnemoverse.gold": "0.1",
    "mnemoverse.result": "0.1",
    "mnemoverse.events": "0.1",
    **{
        f"skill-creator.{name}": "1.0.0"
        for name in (
            "evals",
            "eval-metadata",
            "grading",
            "benchmark",
            "timing",
            "feedback",
            "comparison",
            "history",
        )
    },
}


def test_every_seed_family_and_version_is_built_in(registry: Registry) -> None:
    for family, version in SEED_FAMILIES.items():
        assert version in registry.versions(family), family


def test_every_schema_is_valid_against_its_metaschema(registry: Registry) -> None:
    for entry in registry.entries():
        cls = validator_for(entry.document)
        cls.check_schema(entry.document)


def test_every_schema_has_a_stable_id(registry: Registry) -> None:
    ids = [entry.id for entry in registry.entries()]
    assert len(ids) == len(set(ids))
    assert registry.schema_id("eee.aggregate", "0.2.0") == "urn:evalreg:eee.aggregate:0.2.0"
    # Ids given by the source are kept.
    assert registry.schema_id("mnemoverse.gold") == (
        "https://mnemoverse.dev/schemas/eval/gold.schema.json"
    )


def test_seed_schema_files_are_kept_exactly_as_given(registry: Registry) -> None:
    path = registry.entry("eee.aggregate", "0.2.0").path
    assert "$id" not in json.loads(path.read_text())
    assert path.read_text().startswith('{\n"$schema": "http://json-schema.org/draft-07/schema#",')


def test_versions_are_ordered_and_latest_is_the_newest(registry: Registry) -> None:
    versions = registry.versions("eee.aggregate")
    assert list(versions) == sorted(versions, key=lambda v: tuple(map(int, v.split("."))))
    assert registry.latest("eee.aggregate") == versions[-1]
    assert registry.resolve_version("mnemoverse.gold", "0.1.0") == "0.1"
    assert registry.resolve_version("eee.aggregate", "latest") == versions[-1]


def test_schema_returns_a_copy(registry: Registry) -> None:
    schema = registry.schema("eee.aggregate", "0.2.0")
    schema["properties"].clear()
    assert registry.schema("eee.aggregate", "0.2.0")["properties"]


def test_unknown_family_and_version_name_what_is_known(registry: Registry) -> None:
    with pytest.raises(UnknownFamilyError, match=r"unknown family 'eee\.nope' \(known: agentv"):
        registry.versions("eee.nope")
    with pytest.raises(
        UnknownVersionError, match=r"unknown version '9\.9' of eee\.aggregate \(known: 0\.1\.0"
    ):
        registry.schema("eee.aggregate", "9.9")


def test_builtin_directory_is_found_from_a_source_checkout() -> None:
    assert (builtin_directory() / "registry" / "eee.aggregate.yaml").is_file()


def _small_family(make_registry_dir, name: str = "acme.run", schema: dict | None = None) -> Path:  # type: ignore[no-untyped-def]
    return make_registry_dir(
        {
            name: {
                "manifest": f"name: {name}\ntitle: Acme runs\nkind: json\nmarkers:\n"
                "  - pointer: /v\n    template: '{version}'\n",
                "schemas": {"1.0": schema or {"type": "object", "required": ["v"]}},
            }
        }
    )


def test_user_directory_through_evalreg_path(
    make_registry_dir, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    first = _small_family(make_registry_dir, "acme.run")
    second = _small_family(make_registry_dir, "acme.other")
    monkeypatch.setenv("EVALREG_PATH", f"{first}{__import__('os').pathsep}{second}")
    registry = evalreg.load_registry()
    assert {"acme.run", "acme.other", "eee.aggregate"} <= set(registry.families())
    # Both user families state their version in /v, so detection must not pick one silently.
    detection = registry.detect({"v": "1.0"})
    assert detection.status == "ambiguous"
    assert {c.family for c in detection.candidates} == {"acme.run", "acme.other"}


def test_user_directory_through_paths(make_registry_dir) -> None:  # type: ignore[no-untyped-def]
    path = _small_family(make_registry_dir)
    registry = evalreg.load_registry([path])
    assert registry.versions("acme.run") == ("1.0",)
    assert registry.validate({"v": "1.0"}, "acme.run") == []


def test_refs_resolve_across_schema_files(make_registry_dir) -> None:  # type: ignore[no-untyped-def]
    root = make_registry_dir(
        {
            "acme.common": {
                "schemas": {
                    "1.0": {
                        "$schema": "https://json-schema.org/draft/2020-12/schema",
                        "$defs": {"score": {"type": "number", "minimum": 0}},
                    }
                }
            },
            "acme.run": {
                "schemas": {
                    "1.0": {
                        "$schema": "https://json-schema.org/draft/2020-12/schema",
                        "type": "object",
                        "properties": {
                            "score": {"$ref": "urn:evalreg:acme.common:1.0#/$defs/score"}
                        },
                    }
                }
            },
        }
    )
    registry = evalreg.load_registry([root], builtin=False)
    assert registry.validate({"score": 1}, "acme.run", "1.0") == []
    [issue] = registry.validate({"score": -1}, "acme.run", "1.0")
    assert (issue.pointer, issue.keyword) == ("/score", "minimum")


def test_remote_refs_are_refused_never_fetched(make_registry_dir) -> None:  # type: ignore[no-untyped-def]
    root = _small_family(
        make_registry_dir,
        schema={"type": "object", "properties": {"x": {"$ref": "https://example.com/x.json"}}},
    )
    with pytest.raises(
        RemoteRefError, match=r"/properties/x/\$ref: .*https://example\.com/x\.json.*never fetches"
    ):
        evalreg.load_registry([root], builtin=False)


def test_a_family_defined_twice_is_refused(make_registry_dir) -> None:  # type: ignore[no-untyped-def]
    first = _small_family(make_registry_dir)
    second = _small_family(make_registry_dir)
    with pytest.raises(RegistryError, match="already defined by"):
        evalreg.load_registry([first, second], builtin=False)


def test_schemas_without_a_manifest_are_refused(make_registry_dir) -> None:  # type: ignore[no-untyped-def]
    root = _small_family(make_registry_dir)
    (root / "schemas" / "stray").mkdir()
    with pytest.raises(RegistryError, match="'stray', which has no manifest"):
        evalreg.load_registry([root], builtin=False)


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("1.0.schema.json", "{not json", "cannot read schema"),
        ("one.schema.json", "{}", "'one' is not a version number"),
        ("1.schema.json", "{}", "version 1 of acme.run is already defined"),
        ("2.schema.json", "[]", "a schema must be a JSON object"),
    ],
)
def test_malformed_schema_files_are_refused(
    make_registry_dir, name: str, content: str, message: str
) -> None:  # type: ignore[no-untyped-def]
    root = _small_family(make_registry_dir)
    (root / "schemas" / "acme.run" / name).write_text(content)
    with pytest.raises(RegistryError, match=message):
        evalreg.load_registry([root], builtin=False)


def test_a_directory_that_is_not_a_registry_is_refused(tmp_path: Path) -> None:
    with pytest.raises(RegistryError, match="not a registry directory"):
        evalreg.load_registry([tmp_path], builtin=False)


def test_default_ids_derive_from_family_and_version() -> None:
    assert default_id("a.b", "1.2") == "urn:evalreg:a.b:1.2"
