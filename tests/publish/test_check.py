"""Checking a registry end to end: schemas, lock, steps on generated records, version numbers."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

import evalreg
from evalreg import Registry, load_registry
from evalreg.cli import main
from evalreg.errors import RegistryError
from evalreg.publish.check import (
    CheckReport,
    Finding,
    bump_level,
    check_directories,
    check_registry,
    record_strategy,
)
from evalreg.registry.lock import release
from evalreg.registry.manifest import parse_manifest, versioning
from tests.conftest import DEMO_MANIFEST, RegistryFactory


def schema(version: str, *, required: tuple[str, ...] = ("name", "score")) -> dict[str, Any]:
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "required": ["schema_version", *required],
        "properties": {
            "schema_version": {"type": "string"},
            "name": {"type": "string"},
            "score": {"type": "number"},
            "unit": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "additionalProperties": False,
    }


def step(source: str, target: str, body: str = "return dict(record)") -> dict[str, str]:
    code = f'''
        """Move a record from {source} to {target}."""
        FROM = "{source}"
        TO = "{target}"

        def upgrade(record, ctx):
            {body}
    '''
    return {f"{source}_to_{target}.py": code}


@pytest.fixture
def build(make_registry_dir: RegistryFactory) -> Any:
    """Return a function that writes a one-family registry and releases its schemas."""

    def make(
        schemas: Mapping[str, dict[str, Any]],
        steps: Mapping[str, str] | None = None,
        manifest_extra: str = "",
        release_all: bool = True,
    ) -> Path:
        root = make_registry_dir(
            {
                "demo.score": {
                    "manifest": DEMO_MANIFEST + manifest_extra,
                    "schemas": schemas,
                    "steps": steps or {},
                }
            }
        )
        if release_all:
            registry = load_registry([root], builtin=False, verify=False)
            for version in schemas:
                release(registry, "demo.score", version)
        return root

    return make


def check(root: Path, examples: int = 20) -> CheckReport:
    registry = load_registry([root], builtin=False, verify=False)
    return check_registry(registry, examples=examples)


def by_check(report: CheckReport, name: str) -> list[Finding]:
    return [f for f in report.findings if f.check == name]


# -- steps on generated records ------------------------------------------------------------------


def test_a_step_that_drops_a_required_field_fails_naming_the_field(build: Any) -> None:
    drop = "return {k: v for k, v in record.items() if k != 'name'}"
    root = build({"1.0.0": schema("1.0.0"), "1.1.0": schema("1.1.0")}, step("1.0.0", "1.1.0", drop))
    report = check(root)
    assert not report.ok
    (failure,) = report.errors
    assert failure.check == "exercise" and failure.severity == "error"
    assert (failure.family, failure.version) == ("demo.score", "1.1.0")
    assert failure.path.endswith("1.0.0_to_1.1.0.py")
    assert "'name' is a required property" in failure.message
    assert "step 1.0.0 -> 1.1.0" in failure.message
    # The smallest failing record: only what 1.0.0 requires, each value as small as it gets.
    assert failure.example == {"schema_version": "1.0.0", "name": "", "score": 0}


def test_a_correct_registry_passes(build: Any) -> None:
    add_unit = "return {**record, 'unit': record.get('unit', 'points')}"
    root = build(
        {"1.0.0": schema("1.0.0"), "2.0.0": schema("2.0.0", required=("name", "score", "unit"))},
        step("1.0.0", "2.0.0", add_unit),
    )
    report = check(root)
    assert report.ok, report.findings
    assert report.findings == ()
    assert (report.families, report.schemas, report.steps) == (("demo.score",), 2, 1)
    assert report.records >= 20
    assert "0 errors" in report.summary()


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("return record['missing']", "raised KeyError: 'missing'"),
        ("record['unit'] = 'x'\n            return record", "changed its input record"),
        ("return [record]", "returned list, not an object"),
    ],
)
def test_a_step_that_crashes_mutates_or_returns_junk_fails(
    build: Any, body: str, message: str
) -> None:
    root = build({"1": schema("1"), "2": schema("2")}, step("1", "2", body))
    (failure,) = check(root).errors
    assert failure.check == "exercise" and message in failure.message
    assert failure.example is not None


def test_a_deliberate_refusal_is_not_a_failure(build: Any) -> None:
    refuse = (
        "if record['score'] < 0:\n"
        "                from evalreg import MigrationError\n"
        "                why = 'negative scores have no place'\n"
        "                raise MigrationError('demo.score', '1 -> 2', why)\n"
        "            return dict(record)"
    )
    root = build({"1": schema("1"), "2": schema("2")}, step("1", "2", refuse))
    report = check(root)
    assert report.ok
    (note,) = report.findings
    assert note.severity == "note" and "refused" in note.message
    assert "negative scores have no place" in note.message


def test_every_step_is_exercised_in_both_directions(build: Any) -> None:
    steps = step("1", "2")
    steps["1_to_2.py"] += "\n        def downgrade(record, ctx):\n            return dict(record)\n"
    root = build({"1": schema("1"), "2": schema("2")}, steps)
    report = check(root, examples=10)
    assert report.ok and report.steps == 2


# -- steps and paths -----------------------------------------------------------------------------


def test_a_breaking_change_without_a_step(build: Any) -> None:
    root = build({"1": schema("1"), "2": schema("2", required=("name", "score", "unit"))})
    report = check(root)
    (path,) = by_check(report, "path")
    assert path.version == "1" and "no chain of steps leads from 1 to the latest version 2" in (
        path.message
    )
    (missing,) = by_check(report, "missing-step")
    assert "1 -> 2 breaks BACKWARD (/unit: required-added)" in missing.message
    assert "migrations/demo.score/1_to_2.py" in missing.message


def test_a_step_naming_an_unknown_version(build: Any, tmp_path: Path) -> None:
    steps = step("1", "2") | step("1", "3")
    root = build({"1": schema("1"), "2": schema("2")}, steps)
    report = check(root)
    (bad,) = by_check(report, "step")
    assert "TO = '3' is not a version of demo.score" in bad.message
    assert bad.path.endswith("1_to_3.py")
    assert by_check(report, "exercise") == []  # the good step still ran
    assert report.steps == 1


def test_a_step_whose_file_name_disagrees(build: Any) -> None:
    steps = {"one_to_two.py": step("1", "2")["1_to_2.py"]}
    root = build({"1": schema("1"), "2": schema("2")}, steps)
    (bad,) = by_check(check(root), "step")
    assert "the file must be named 1_to_2.py" in bad.message


# -- version numbers -----------------------------------------------------------------------------

BREAKING = {"1.0.0": schema("1.0.0"), "1.0.1": schema("1.0.1", required=("name", "score", "unit"))}
ADD_UNIT = step("1.0.0", "1.0.1", "return {**record, 'unit': record.get('unit', '')}")


def test_a_breaking_patch_release_is_an_error(build: Any) -> None:
    report = check(build(BREAKING, ADD_UNIT))
    (bump,) = report.errors
    assert bump.check == "bump" and bump.version == "1.0.1"
    assert "1.0.0 -> 1.0.1 is a patch bump but breaks BACKWARD (/unit: required-added)" in (
        bump.message
    )
    assert "versioning.exceptions" in bump.message


def test_the_manifest_can_make_the_bump_check_a_warning(build: Any) -> None:
    report = check(build(BREAKING, ADD_UNIT, "versioning:\n  bump_check: warning\n"))
    assert report.ok
    assert [f.severity for f in by_check(report, "bump")] == ["warning"]


def test_a_known_exception_is_a_note(build: Any) -> None:
    extra = 'versioning:\n  exceptions:\n    "1.0.1": unit became required upstream\n'
    report = check(build(BREAKING, ADD_UNIT, extra))
    assert report.ok
    (note,) = report.findings
    assert note.severity == "note"
    assert note.message.endswith("known exception: unit became required upstream")


def test_exceptions_that_do_not_apply(build: Any) -> None:
    extra = 'versioning:\n  exceptions: ["1.0.0", "7"]\n'
    report = check(build(BREAKING | {"1.1.0": schema("1.1.0")}, ADD_UNIT, extra))
    found = {(f.severity, f.version) for f in by_check(report, "exception")}
    assert found == {("warning", "1.0.0"), ("error", "7")}


def test_a_compatible_patch_and_a_breaking_minor_are_fine(build: Any) -> None:
    schemas = {
        "1.0.0": schema("1.0.0"),
        "1.0.1": schema("1.0.1", required=("name",)),
        "1.1.0": schema("1.1.0", required=("name", "score", "unit")),
    }
    steps = step("1.0.0", "1.0.1") | step(
        "1.0.1", "1.1.0", "return {'score': 0, **record, 'unit': record.get('unit', '')}"
    )
    assert check(build(schemas, steps)).findings == ()


@pytest.mark.parametrize(
    ("old", "new", "level"),
    [
        ("0.2.0", "0.2.1", "patch"),
        ("0.2.3", "0.3.0", "minor"),
        ("0.3", "1.0", "major"),
        ("2", "2.1", "minor"),
        ("1.0.0", "1.0.0.1", "patch"),
        ("3.1", "4", "major"),
    ],
)
def test_bump_level(old: str, new: str, level: str) -> None:
    assert bump_level(old, new) == level


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("versioning: [error]", "versioning must map"),
        ("versioning: {bump_check: fatal}", "bump_check must be `error` or `warning`"),
        ("versioning: {policy: loose}", "policy must be `lenient` or `strict`"),
        ("versioning: {exceptions: [x.y]}", "'x.y' is not a version"),
        ("versioning: {exceptions: 1}", "must list versions"),
        ("versioning: {other: 1}", "unknown keys: other"),
    ],
)
def test_malformed_versioning_settings(text: str, message: str) -> None:
    import yaml

    data = yaml.safe_load(DEMO_MANIFEST + text)
    with pytest.raises(RegistryError, match=message):
        versioning(parse_manifest(data, "demo.yaml"))


def test_versioning_defaults_and_both_exception_forms() -> None:
    import yaml

    plain = parse_manifest(yaml.safe_load(DEMO_MANIFEST), "m.yaml")
    assert versioning(plain).bump_check == "error" and not versioning(plain).exceptions
    listed = parse_manifest(
        yaml.safe_load(DEMO_MANIFEST + "versioning: {exceptions: ['1.1']}"), "m"
    )
    assert versioning(listed).exceptions == {"1.1": ""}


# -- schemas and the lock ------------------------------------------------------------------------


def test_a_schema_that_breaks_its_metaschema(build: Any) -> None:
    bad = {**schema("1"), "properties": {"score": {"type": "numeric"}}}
    (finding,) = check(build({"1": bad})).errors
    assert finding.check == "metaschema" and finding.version == "1"
    assert "/properties/score/type" in finding.message


def test_an_unknown_dialect(build: Any) -> None:
    odd = {**schema("1"), "$schema": "https://example.org/my-dialect"}
    (finding,) = check_directories(only=[build({"1": odd}, release_all=False)]).errors
    assert finding.check == "load"
    assert "1.schema.json: /$schema: unknown dialect 'https://example.org" in finding.message


def test_tampering_and_drafts_are_reported_not_raised(build: Any) -> None:
    root = build({"1": schema("1")})
    path = root / "schemas" / "demo.score" / "1.schema.json"
    path.write_text(json.dumps(schema("1", required=("name",))))
    (root / "schemas" / "demo.score" / "2.schema.json").write_text(json.dumps(schema("2")))
    report = check_directories(only=[root], examples=5)
    (tampered,) = by_check(report, "lock")
    assert tampered.severity == "error" and tampered.path == str(path.resolve())
    assert "demo.score 1" in tampered.message and "edited after release" in tampered.message
    (draft,) = by_check(report, "draft")
    assert draft.severity == "warning" and draft.version == "2"
    assert "evalreg release demo.score 2" in draft.message


def test_a_registry_that_cannot_load_is_one_finding(make_registry_dir: RegistryFactory) -> None:
    root = make_registry_dir({"demo.score": {"manifest": "name: demo.score\nkind: json\n"}})
    report = check_directories(only=[root])
    (finding,) = report.findings
    assert finding.check == "load" and "needs a `title` string" in finding.message
    assert not report.ok and report.families == ()


def test_only_the_given_directories_are_checked(build: Any) -> None:
    root = build({"1": schema("1")})
    report = check_directories(only=[root], examples=0)
    assert report.families == ("demo.score",)


# -- generated records ---------------------------------------------------------------------------

RECURSIVE = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "definitions": {
        "node": {
            "type": "object",
            "required": ["name"],
            "properties": {
                "name": {"type": "string", "minLength": 1},
                "children": {"type": "array", "items": {"$ref": "#/definitions/node"}},
            },
            "additionalProperties": False,
        }
    },
    "$ref": "#/definitions/node",
}


def test_records_are_generated_for_recursive_schemas(build: Any) -> None:
    root = build({"1": RECURSIVE})
    registry = load_registry([root], builtin=False)
    validator = registry.validator("demo.score", "1")

    @settings(max_examples=30, database=None, suppress_health_check=list(HealthCheck))
    @given(record_strategy(registry, "demo.score", "1"))
    def every_record_is_valid(record: Any) -> None:
        assert validator.is_valid(record), record

    every_record_is_valid()


@pytest.mark.parametrize(
    ("family", "version"),
    [
        (f, v)
        for f in evalreg.load_registry().families()
        for v in evalreg.load_registry().versions(f)
    ],
)
@pytest.mark.slow
def test_builtin_records_are_generated_valid(registry: Registry, family: str, version: str) -> None:
    validator = registry.validator(family, version)
    seen: list[bool] = []

    @settings(
        max_examples=10, database=None, derandomize=True, suppress_health_check=list(HealthCheck)
    )
    @given(record_strategy(registry, family, version))
    def generated(record: Any) -> None:
        seen.append(validator.is_valid(record))

    generated()
    assert seen and sum(seen) >= len(seen) * 0.8, f"{sum(seen)} of {len(seen)} valid"


# -- the built-in registry -----------------------------------------------------------------------


@pytest.mark.slow
def test_the_eee_instance_history_checks_out(registry: Registry) -> None:
    report = check_registry(registry, ["eee.instance"], examples=5)
    assert report.ok, [str(f) for f in report.errors]
    (note,) = report.findings
    assert note.check == "bump" and note.version == "0.2.1"
    assert report.steps == 7  # four upgrades and three lossless downgrades


def test_every_builtin_family_but_the_steps_checks_out(registry: Registry) -> None:
    report = check_registry(registry, examples=0)
    problems = [f for f in report.errors if f.check not in ("path", "missing-step")]
    assert problems == []


# -- the commands --------------------------------------------------------------------------------


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as info:
        main(list(args))
    out, err = capsys.readouterr()
    return int(info.value.code or 0), out, err


def test_the_check_command(build: Any, capsys: pytest.CaptureFixture[str]) -> None:
    drop = "return {k: v for k, v in record.items() if k != 'name'}"
    broken = build({"1": schema("1"), "2": schema("2")}, step("1", "2", drop))
    code, out, err = run(capsys, "check", "--registry", str(broken), "--examples", "10")
    assert code == 1 and err == ""
    assert "error: demo.score 2: exercise: step 1 -> 2" in out
    assert "'name' is a required property" in out
    shown = next(line for line in out.splitlines() if "smallest failing record: " in line)
    smallest = json.loads(shown.split("smallest failing record: ", 1)[1])
    assert smallest == {"name": "", "schema_version": "1", "score": 0}
    assert out.splitlines()[-1].startswith("evalreg check: 1 families, 2 schemas, 1 step moves")

    code, out, _ = run(capsys, "check", "--registry", str(broken), "--format", "json")
    data = json.loads(out)
    assert code == 1 and data["ok"] is False and data["findings"][0]["example"]["name"] == ""

    fine = build({"1": schema("1"), "2": schema("2")}, step("1", "2"))
    code, out, _ = run(capsys, "check", "--registry", str(fine), "--examples", "5")
    assert code == 0 and out.splitlines()[-1].endswith("0 errors, 0 warnings, 0 notes")


def test_the_check_command_on_a_broken_registry(
    make_registry_dir: RegistryFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_registry_dir(
        {"demo.score": {"manifest": DEMO_MANIFEST, "schemas": {"1": schema("1")}}}
    )
    (root / "schemas" / "demo.score" / "1.schema.json").write_text("{not json")
    code, out, err = run(capsys, "check", "--registry", str(root))
    assert code == 1 and "Traceback" not in out + err
    assert "error: load:" in out and "cannot read schema" in out


def test_new_version_and_release_commands(build: Any, capsys: pytest.CaptureFixture[str]) -> None:
    root = build({"1.0": schema("1.0")})
    code, out, _ = run(capsys, "--registry", str(root), "new-version", "demo.score", "1.1")
    assert code == 0
    assert "1.1.schema.json (a copy of demo.score 1.0)" in out and "1.0_to_1.1.py" in out
    code, out, _ = run(capsys, "--registry", str(root), "check", "--registry", str(root))
    assert code == 0 and "warning: demo.score 1.1: draft" in out
    assert "warning: demo.score 1.1: step: the step is still the template" in out
    code, out, _ = run(capsys, "--registry", str(root), "release", "demo.score", "1.1")
    assert code == 0 and "released demo.score 1.1: sha256:" in out
    assert load_registry([root], builtin=False).versions("demo.score") == ("1.0", "1.1")
    code, out, _ = run(capsys, "--registry", str(root), "release", "demo.score", "1.1")
    assert code == 0 and "already released" in out


def test_release_refuses_a_version_whose_checks_fail(
    build: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    drop = "return {k: v for k, v in record.items() if k != 'name'}"
    root = build({"1": schema("1"), "2": schema("2")}, step("1", "2", drop), release_all=False)
    code, out, err = run(capsys, "--registry", str(root), "release", "demo.score", "2")
    assert code == 1
    assert "'name' is a required property" in out
    assert "demo.score 2 not released" in err
    assert not (root / "registry.lock").exists()


def test_a_step_from_a_version_that_admits_no_record_is_not_exercised(build: Any) -> None:
    empty = {
        **schema("1"),
        "properties": {"name": {"type": "string", "minLength": 3, "maxLength": 1}},
    }
    report = check(build({"1": empty, "2": schema("2")}, step("1", "2")))
    (skipped,) = by_check(report, "exercise")
    assert skipped.severity == "warning" and "step 1 -> 2 not exercised" in skipped.message


def test_a_remote_ref_is_one_load_error_naming_its_place(build: Any) -> None:
    remote = {**schema("1"), "properties": {"name": {"$ref": "https://elsewhere.example/n.json"}}}
    root = build({"1": remote, "2": schema("2")}, step("1", "2"), release_all=False)
    (finding,) = check_directories(only=[root]).findings
    assert finding.severity == "error" and finding.check == "load"
    assert "1.schema.json: /properties/name/$ref: $ref 'https://elsewhere.example/n.json'" in (
        finding.message
    )


def test_the_amend_command_records_a_correction_that_check_and_changelog_show(
    build: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    root = build({"1": schema("1"), "2": schema("2")}, step("1", "2"))
    corrected = schema("1")
    corrected["properties"]["unit"] = {"type": "string", "pattern": "^[A-Za-z]+$"}
    for version in ("1", "2"):  # two released versions corrected at once
        path = root / "schemas" / "demo.score" / f"{version}.schema.json"
        path.write_text(json.dumps(corrected | {"description": version}))
    code, _, err = run(capsys, "--registry", str(root), "validate", "-")
    assert code == 2 and "evalreg amend demo.score 1 --reason TEXT" in err
    code, out, _ = run(
        capsys, "--registry", str(root), "amend", "demo.score", "1", "--reason", "upper case too"
    )
    assert code == 0 and out.startswith("demo.score 1 amended on ") and "upper case too" in out
    code, out, _ = run(capsys, "check", "--registry", str(root), "--examples", "5")
    assert code == 1 and "error: demo.score 2: lock: " in out  # 2 is not amended yet
    code, _, _ = run(capsys, "--registry", str(root), "amend", "demo.score", "2", "--reason", "b")
    assert code == 0
    code, out, _ = run(capsys, "check", "--registry", str(root), "--examples", "5")
    assert code == 0 and "note: demo.score 1: amendment: amended on " in out
    code, out, _ = run(capsys, "--registry", str(root), "changelog", "demo.score")
    assert code == 0 and "upper case too" not in out  # version 1 has no diff entry
    assert "## demo.score@2" in out and "*amended on " in out and ": b*" in out


def test_amend_refuses_a_family_whose_other_checks_fail(
    build: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    drop = "return {k: v for k, v in record.items() if k != 'name'}"
    root = build({"1": schema("1"), "2": schema("2")}, step("1", "2", drop))
    (root / "schemas" / "demo.score" / "1.schema.json").write_text(
        json.dumps(schema("1") | {"description": "x"})
    )
    lock = (root / "registry.lock").read_text()
    code, out, err = run(
        capsys, "--registry", str(root), "amend", "demo.score", "1", "--reason", "x"
    )
    assert code == 1 and "demo.score 1 not amended" in err
    assert "'name' is a required property" in out
    assert (root / "registry.lock").read_text() == lock
