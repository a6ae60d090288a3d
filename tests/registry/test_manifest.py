from __future__ import annotations

from pathlib import Path

import pytest

from evalreg.errors import RegistryError
from evalreg.registry.manifest import Fingerprint, load_manifest, parse_manifest

BASE = {"name": "x.y", "title": "X", "kind": "json"}


def test_marker_pattern_extracts_the_version_from_a_tag() -> None:
    manifest = parse_manifest(
        {
            **BASE,
            "markers": [
                {
                    "pointer": "/$schema",
                    "pattern": r"^tool-v(?P<version>\d+)$",
                    "template": "tool-v{version}",
                }
            ],
        },
        "m.yaml",
    )
    marker, raw, version = manifest.read_version({"$schema": "tool-v2"}) or (None, None, None)
    assert (raw, version) == ("tool-v2", "2")
    assert marker is not None and marker.render("3") == "tool-v3"
    # A tag of another tool is present but states no version of this family.
    assert manifest.read_version({"$schema": "other-v2"})[2] is None  # type: ignore[index]
    assert manifest.read_version({}) is None


def test_numeric_marker_values_are_read_as_text() -> None:
    manifest = parse_manifest({**BASE, "markers": [{"pointer": "/version"}]}, "m.yaml")
    assert manifest.read_version({"version": 2.0})[2] == "2.0"  # type: ignore[index]
    assert manifest.read_version({"version": True})[2] is None  # type: ignore[index]


def test_fingerprint_reports_each_difference() -> None:
    fingerprint = Fingerprint(
        required=("/a", "/b/c"), forbidden=("/d",), equals={"/type": ("x", "y")}
    )
    assert fingerprint.mismatches({"a": 1, "b": {"c": 2}, "type": "x"}) == []
    assert fingerprint.mismatches({"b": {}, "d": 0, "type": "z"}) == [
        "no /a",
        "no /b/c",
        "has /d",
        "/type is 'z', not one of ['x', 'y']",
    ]


def test_file_name_hints_ignore_folders_and_gzip() -> None:
    manifest = parse_manifest({**BASE, "files": ["grading.json"]}, "m.yaml")
    assert manifest.matches_filename("runs/eval-0/grading.json")
    assert manifest.matches_filename("grading.json.gz")
    assert not manifest.matches_filename("grading.json/other.json")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"title": "X", "kind": "json"}, "needs a `name`"),
        ({**BASE, "kind": "csv"}, "kind must be one of"),
        ({**BASE, "markers": [{"pattern": "x"}]}, "needs a `pointer`"),
        ({**BASE, "markers": [{"pointer": "/v", "pattern": "(x"}]}, "marker pattern"),
        ({**BASE, "markers": [{"pointer": "/v", "pattern": "v(\\d)"}]}, "named group"),
        ({**BASE, "markers": [{"pointer": "v"}]}, "must start with '/'"),
        ({**BASE, "structure": {"requires": ["/a"]}}, "unknown keys: requires"),
        ({**BASE, "markers": [{"pointer": "/v", "template": "v2"}]}, "must contain {version}"),
    ],
)
def test_malformed_manifests_are_refused_with_the_reason(data: dict, message: str) -> None:
    with pytest.raises(RegistryError, match=message) as info:
        parse_manifest(data, "registry/x.y.yaml")
    assert str(info.value).startswith("registry/x.y.yaml: ")


def test_manifest_file_name_must_match_its_name(tmp_path: Path) -> None:
    path = tmp_path / "wrong.yaml"
    path.write_text("name: right\ntitle: T\nkind: json\n")
    with pytest.raises(RegistryError, match=r"must be right\.yaml"):
        load_manifest(path)


def test_unreadable_manifest_is_a_registry_error(tmp_path: Path) -> None:
    path = tmp_path / "x.yaml"
    path.write_text("name: [unclosed\n")
    with pytest.raises(RegistryError, match="cannot read manifest"):
        load_manifest(path)


def test_builtin_manifests_have_titles_descriptions_and_kinds(registry) -> None:  # type: ignore[no-untyped-def]
    for family in registry.families():
        manifest = registry.manifest(family)
        assert manifest.title and manifest.description, family
        assert manifest.kind in ("json", "jsonl", "yaml")
