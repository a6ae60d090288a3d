"""Released versions: digests, the lock file, tampering refused, new-version and release."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

import evalreg
from evalreg import load_registry
from evalreg.errors import IntegrityError, InvalidVersionError, RegistryError
from evalreg.registry.core import builtin_directory
from evalreg.registry.drafting import new_version
from evalreg.registry.lock import (
    LOCK_NAME,
    amend,
    amendments,
    canonical_json,
    digest,
    drafts,
    file_digest,
    is_released,
    lock_errors,
    read_lock,
    release,
)
from tests.conftest import DEMO_MANIFEST, RegistryFactory


def score_schema(version: str, *, with_id: bool = False, unit: bool = False) -> dict[str, Any]:
    properties: dict[str, Any] = {
        "schema_version": {"type": "string", "const": version},
        "name": {"type": "string"},
        "score": {"type": "number"},
    }
    if unit:
        properties["unit"] = {"type": "string"}
    schema: dict[str, Any] = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "required": ["schema_version", "name", "score"],
        "properties": properties,
        "additionalProperties": False,
    }
    if with_id:
        schema = {"$id": f"https://example.org/demo/{version}/score.json", **schema}
    return schema


@pytest.fixture
def demo(make_registry_dir: RegistryFactory) -> Path:
    """A registry directory with one family at 1.0.0 and 1.1.0, both released."""
    root = make_registry_dir(
        {
            "demo.score": {
                "manifest": DEMO_MANIFEST,
                "schemas": {"1.0.0": score_schema("1.0.0"), "1.1.0": score_schema("1.1.0")},
                "steps": {
                    "1.0.0_to_1.1.0.py": '''
                        """Only the version changes."""
                        FROM = "1.0.0"
                        TO = "1.1.0"

                        def upgrade(record, ctx):
                            return dict(record)
                    '''
                },
            }
        }
    )
    registry = load_registry([root], builtin=False)
    for version in ("1.0.0", "1.1.0"):
        release(registry, "demo.score", version)
    return root


def schema_path(root: Path, version: str) -> Path:
    return root / "schemas" / "demo.score" / f"{version}.schema.json"


# -- digests -------------------------------------------------------------------------------------


def test_digest_is_sha256_of_the_canonical_json() -> None:
    document = {"b": [1, 2.5, "é"], "a": {"y": None, "x": True}}
    expected = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert canonical_json(document) == expected.encode("utf-8")
    assert digest(document) == "sha256:" + hashlib.sha256(expected.encode()).hexdigest()


def test_file_digest_ignores_layout_but_not_content(tmp_path: Path) -> None:
    a, b, c = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "c.json"
    a.write_text('{"type": "object", "required": ["x"]}')
    b.write_text('{\n    "required": [ "x" ],\n    "type": "object"\n}\n')
    c.write_text('{"type": "object", "required": ["y"]}')
    assert file_digest(a) == file_digest(b) != file_digest(c)


def test_the_digest_is_of_the_file_not_of_the_loaded_document(demo: Path) -> None:
    registry = load_registry([demo], builtin=False)
    entry = registry.entry("demo.score", "1.0.0")
    assert "$id" in entry.document  # given in memory: the file has none
    assert read_lock(demo).digest("demo.score", "1.0.0") == digest(score_schema("1.0.0"))


# -- the built-in lock ---------------------------------------------------------------------------


def test_the_builtin_lock_file_is_canonical_and_matches() -> None:
    directory = builtin_directory()
    lock = read_lock(directory)
    assert lock.released, "the built-in registry has released versions"
    assert (directory / LOCK_NAME).read_text(encoding="utf-8") == lock.dumps()
    registry = load_registry()
    assert lock_errors(registry) == []
    for family, version, _ in lock.items():
        assert is_released(registry, family, version)


def test_the_released_eee_history_is_locked() -> None:
    lock = read_lock(builtin_directory())
    assert set(lock.released["eee.aggregate"]) >= {"0.1.0", "0.2.0", "0.2.1", "0.2.3", "0.3.0"}
    assert set(lock.released["eee.instance"]) >= {"0.2.0", "0.2.1", "0.3.0"}


# -- integrity -----------------------------------------------------------------------------------


def test_a_tampered_released_schema_is_refused_with_file_and_version(demo: Path) -> None:
    path = schema_path(demo, "1.0.0")
    edited = score_schema("1.0.0")
    edited["properties"]["score"]["minimum"] = 0
    path.write_text(json.dumps(edited, indent=2))
    with pytest.raises(IntegrityError) as info:
        load_registry([demo], builtin=False)
    error = info.value
    assert (error.path, error.family, error.version) == (str(path), "demo.score", "1.0.0")
    message = str(error)
    assert str(path) in message and "demo.score 1.0.0" in message
    assert "edited after release" in message and "evalreg new-version demo.score" in message


def test_reformatting_a_released_schema_is_not_tampering(demo: Path) -> None:
    path = schema_path(demo, "1.0.0")
    document = json.loads(path.read_text())
    path.write_text(json.dumps(dict(reversed(list(document.items()))), indent=4) + "\n")
    load_registry([demo], builtin=False)


def test_a_removed_released_schema_is_refused(demo: Path) -> None:
    schema_path(demo, "1.1.0").unlink()
    (demo / "migrations" / "demo.score" / "1.0.0_to_1.1.0.py").unlink()
    with pytest.raises(IntegrityError, match=r"1\.1\.0.*schema file is missing"):
        load_registry([demo], builtin=False)


def test_verify_false_loads_anyway_and_lock_errors_lists_every_problem(demo: Path) -> None:
    for version in ("1.0.0", "1.1.0"):
        path = schema_path(demo, version)
        path.write_text(path.read_text().replace('"number"', '"integer"'))
    registry = load_registry([demo], builtin=False, verify=False)
    assert [e.version for e in lock_errors(registry)] == ["1.0.0", "1.1.0"]


def test_a_schema_not_in_the_lock_is_a_draft(demo: Path) -> None:
    schema_path(demo, "1.2.0").write_text(json.dumps(score_schema("1.2.0")))
    registry = load_registry([demo], builtin=False)
    assert [e.version for e in drafts(registry)] == ["1.2.0"]
    assert not is_released(registry, "demo.score", "1.2.0")
    assert is_released(registry, "demo.score", "1.0")


def test_a_malformed_lock_file_is_a_registry_error(demo: Path) -> None:
    (demo / LOCK_NAME).write_text('{"demo.score": {"1.0.0": "md5:abc"}}')
    with pytest.raises(RegistryError, match="sha256"):
        load_registry([demo], builtin=False)
    (demo / LOCK_NAME).write_text("[1, 2]")
    with pytest.raises(RegistryError, match="JSON object"):
        load_registry([demo], builtin=False)


# -- new-version and release ---------------------------------------------------------------------


def test_new_version_then_release_round_trip(demo: Path) -> None:
    registry = load_registry([demo], builtin=False)
    created = new_version(registry, "demo.score", "1.2.0")
    assert created.source == "1.1.0"
    assert created.schema_path == schema_path(demo, "1.2.0")
    assert created.step_path == demo / "migrations" / "demo.score" / "1.1.0_to_1.2.0.py"
    copied = json.loads(created.schema_path.read_text())
    assert copied["properties"]["schema_version"]["const"] == "1.2.0"
    assert any("const" in edit for edit in created.edits)

    registry = load_registry([demo], builtin=False)
    assert registry.latest("demo.score") == "1.1.0"  # a draft is not the latest
    assert load_registry([demo], builtin=False, drafts=True).latest("demo.score") == "1.2.0"
    assert not is_released(registry, "demo.score", "1.2.0")
    step = registry.plan("demo.score", "1.1.0", "1.2.0")[0]
    assert step.module.doc.startswith("TODO")
    record = {"schema_version": "1.0.0", "name": "run", "score": 0.5}
    result = registry.migrate(record, "1.2.0")
    assert result.ok and result.record == {**record, "schema_version": "1.2.0"}

    released = release(registry, "demo.score", "1.2.0")
    assert not released.already
    assert read_lock(demo).digest("demo.score", "1.2.0") == released.digest
    assert release(registry, "demo.score", "1.2.0").already

    registry = load_registry([demo], builtin=False)
    assert is_released(registry, "demo.score", "1.2.0")
    created.schema_path.write_text(json.dumps(score_schema("1.2.0", unit=True)))
    with pytest.raises(IntegrityError, match=r"demo\.score 1\.2\.0"):
        load_registry([demo], builtin=False)


def test_new_version_moves_an_id_that_names_the_version(
    make_registry_dir: RegistryFactory,
) -> None:
    schemas = {"1.0": score_schema("1.0", with_id=True)}
    root = make_registry_dir({"demo.score": {"manifest": DEMO_MANIFEST, "schemas": schemas}})
    created = new_version(load_registry([root], builtin=False), "demo.score", "2.0")
    copied = json.loads(created.schema_path.read_text())
    assert copied["$id"] == "https://example.org/demo/2.0/score.json"
    load_registry([root], builtin=False)  # the two versions do not share an $id


def test_new_version_gives_a_fixed_id_the_default_one(make_registry_dir: RegistryFactory) -> None:
    schema = {**score_schema("1"), "$id": "https://example.org/score.json"}
    root = make_registry_dir({"demo.score": {"manifest": DEMO_MANIFEST, "schemas": {"1": schema}}})
    created = new_version(load_registry([root], builtin=False), "demo.score", "2")
    assert json.loads(created.schema_path.read_text())["$id"] == "urn:evalreg:demo.score:2"


@pytest.mark.parametrize(
    ("version", "error", "message"),
    [
        ("1.1.0", RegistryError, "not newer than demo.score's latest version 1.1.0"),
        ("1.0.5", RegistryError, "not newer"),
        ("one", InvalidVersionError, "invalid version 'one'"),
    ],
)
def test_new_version_refuses_a_version_that_does_not_come_next(
    demo: Path, version: str, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        new_version(load_registry([demo], builtin=False), "demo.score", version)


def test_new_version_never_overwrites_a_step(demo: Path) -> None:
    step = demo / "migrations" / "demo.score" / "1.1.0_to_2.0.0.py"
    step.write_text("# mine\n")
    with pytest.raises(RegistryError, match="already exists"):
        new_version(load_registry([demo], builtin=False), "demo.score", "2.0.0")
    assert step.read_text() == "# mine\n"
    assert not schema_path(demo, "2.0.0").exists()


def test_release_refuses_a_changed_released_version(demo: Path) -> None:
    path = schema_path(demo, "1.0.0")
    path.write_text(json.dumps(score_schema("1.0.0", unit=True)))
    registry = load_registry([demo], builtin=False, verify=False)
    with pytest.raises(IntegrityError, match="already released with a different digest"):
        release(registry, "demo.score", "1.0.0")


def test_unknown_family_or_version() -> None:
    registry = evalreg.load_registry()
    with pytest.raises(evalreg.UnknownFamilyError):
        release(registry, "nope", "1")
    with pytest.raises(evalreg.UnknownVersionError):
        is_released(registry, "eee.aggregate", "9.9.9")


# -- amendments ---------------------------------------------------------------------------------


def test_amend_records_old_and_new_digest_and_reason(demo: Path) -> None:
    path = schema_path(demo, "1.0.0")
    before = file_digest(path)
    path.write_text(json.dumps(score_schema("1.0.0", unit=True)))
    registry = load_registry([demo], builtin=False, verify=False)
    amendment = amend(
        registry, "demo.score", "1.0", "  upstream allows\na unit ", date="2026-01-02"
    )
    assert (amendment.old, amendment.new) == (before, file_digest(path))
    assert (amendment.version, amendment.reason, amendment.date) == (
        "1.0.0",
        "upstream allows a unit",
        "2026-01-02",
    )
    lock = read_lock(demo)
    assert lock.digest("demo.score", "1.0.0") == file_digest(path)
    assert lock.amendments == (amendment,)
    assert json.loads((demo / LOCK_NAME).read_text())["$amendments"][0]["from"] == before
    # The amended registry loads verified, and the amendment is listed for the family.
    registry = load_registry([demo], builtin=False)
    assert amendments(registry, "demo.score") == {"1.0.0": (amendment,)}


def test_amendments_chain_one_after_another(demo: Path) -> None:
    path = schema_path(demo, "1.1.0")
    for unit in (True, False):
        document = score_schema("1.1.0", unit=unit)
        document["description"] = f"unit: {unit}"
        path.write_text(json.dumps(document))
        registry = load_registry([demo], builtin=False, verify=False)
        amend(registry, "demo.score", "1.1.0", f"fix {unit}")
    first, second = read_lock(demo).amendments_of("demo.score", "1.1")
    assert first.new == second.old
    assert read_lock(demo).digest("demo.score", "1.1.0") == second.new


def test_amend_refuses_drafts_unchanged_schemas_and_empty_reasons(demo: Path) -> None:
    registry = load_registry([demo], builtin=False)
    with pytest.raises(RegistryError, match="unchanged since it was locked"):
        amend(registry, "demo.score", "1.0.0", "nothing")
    schema_path(demo, "1.0.0").write_text(json.dumps(score_schema("1.0.0", unit=True)))
    registry = load_registry([demo], builtin=False, verify=False)
    with pytest.raises(RegistryError, match="needs a reason"):
        amend(registry, "demo.score", "1.0.0", " \n ")
    new_version(registry, "demo.score", "1.2.0")
    registry = load_registry([demo], builtin=False, verify=False)
    with pytest.raises(RegistryError, match="not released"):
        amend(registry, "demo.score", "1.2.0", "a draft")
    assert read_lock(demo).amendments == ()


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ("to", "not the version's digest"),
        ("from", "do not follow one another"),
        ("shape", r"\$amendments\[1\]"),
        ("key", "unknown key '\\$notes'"),
    ],
)
def test_a_hand_edited_amendment_is_refused(demo: Path, edit: str, message: str) -> None:
    path = schema_path(demo, "1.0.0")
    for reason in ("first", "second"):
        document = score_schema("1.0.0", unit=True)
        document["description"] = reason
        path.write_text(json.dumps(document))
        amend(load_registry([demo], builtin=False, verify=False), "demo.score", "1.0.0", reason)
    data = json.loads((demo / LOCK_NAME).read_text())
    if edit == "to":
        data["$amendments"][1]["to"] = data["$amendments"][0]["to"]
    elif edit == "from":
        data["$amendments"][1]["from"] = "sha256:" + "0" * 64
    elif edit == "shape":
        del data["$amendments"][1]["reason"]
    else:
        data["$notes"] = []
    (demo / LOCK_NAME).write_text(json.dumps(data))
    with pytest.raises(RegistryError, match=message):
        read_lock(demo)
