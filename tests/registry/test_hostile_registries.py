"""Registry directories that are hostile or broken: each is refused with one line, quickly."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import evalreg
from evalreg.cli import main
from evalreg.errors import RegistryError, RemoteRefError
from evalreg.publish.check import check_registry
from evalreg.regex import MAX_PATTERN_LENGTH, refusal, search
from evalreg.registry.manifest import MAX_NAME_LENGTH, check_family_name
from evalreg.registry.patterns import MAX_MATCHED_LENGTH, safe_pattern
from evalreg.registry.schemawalk import MAX_SCHEMA_DEPTH
from tests.conftest import RegistryFactory

ROOT = Path(__file__).parents[2]

MANIFEST = "name: acme.run\ntitle: Acme runs\nkind: json\nmarkers:\n  - pointer: /v\n"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as info:
        main(list(args))
    out, err = capsys.readouterr()
    return int(info.value.code or 0), out, err


def one_line(text: str) -> str:
    """Return the text of a one-line error, failing if it is not one."""
    lines = text.strip().splitlines()
    assert len(lines) == 1, text
    assert "Traceback" not in text
    return lines[0]


def family(
    make_registry_dir: RegistryFactory,
    manifest: str = MANIFEST,
    schemas: dict[str, Any] | None = None,
    **parts: Any,
) -> Path:
    schemas = {"1.0": {"type": "object"}} if schemas is None else schemas
    return make_registry_dir({"acme.run": {"manifest": manifest, "schemas": schemas, **parts}})


def load_error(root: Path) -> str:
    with pytest.raises((RegistryError, RemoteRefError)) as info:
        evalreg.load_registry([root], builtin=False)
    return one_line(str(info.value))


# -- 1. regular expressions that backtrack for ever ------------------------------------------

# Python's `re` takes time exponential (or of a high power) in the length of a text these fail
# on. RE2 compiles every one of them and matches in time linear in the text.
EXPONENTIAL = [
    r"(a+)+$",
    r"^(?P<version>(a+)+)$",
    r"(a|aa)+$",
    r"(\d+\.?)+$",
    r"(a*)*$",
    r"(a?a)+$",
    r"(\w+\s?)*$",
    r"(x+x+)+y",
    r"^(a|b|ab)*c$",
    r"(\d+)*?x",
    r"(\w|\w\w)+$",
    r"^(/?[a-z]+)+$",
    r"^(?P<version>.*.*.*.*.*x)$",
    r"^\w*\w*\w*\w*!$",
    ".*" * 200 + "x",
]
SAFE = [
    r"^(?P<version>\d+(?:\.\d+)*)$",
    r"^acme-run-v(?P<version>\d+(?:\.\d+)*)$",
    r"^(?:instance_level_eval_)?(?P<version>.+)$",
    r"([a-z]+-)+$",
    r"^([a-z0-9]+(-[a-z0-9]+)*\.)+[a-z]{2,}$",
    r"(?:foo|fob)+$",
    r"(?:^|/)data/",
]
# What only a backtracking engine runs: refused, saying so.
BACKTRACKING = {
    r"^(?P<version>(a+)+)\1$": "a backreference \\1",
    r"^(?P<v>a+)(?P=v)$": "a backreference (?P=name)",
    r"^(?=a)(?P<version>a+)$": "a lookahead (?=...)",
    r"^(?!x)(?P<version>.+)$": "a negative lookahead (?!...)",
    r"(?<=v)(?P<version>\d+)": "a lookbehind (?<=...)",
    r"(?<!x)(?P<version>\d+)": "a negative lookbehind (?<!...)",
    r"^(?P<version>a++)$": "a possessive quantifier ++",
    r"^(?>(?P<version>a+))$": "an atomic group (?>...)",
    r"^(a)?(?(1)b|c)$": "a conditional group",
}
# Syntax RE2 lacks, or none at all.
NOT_RE2 = {
    r"^(?P<version>\d+)\Z": "RE2 has no \\Z (Python's end of the text): write \\z",
    r"^(?P<version>[0-9]+": "RE2 cannot compile it: missing ): ",
    r"(?P<version>a{1001})": "RE2 cannot compile it: invalid repetition size: {1001}",
}


def _pumps(pattern: str) -> list[str]:
    """Return texts made to be slow for a backtracking engine: a pattern's characters, repeated."""
    found = []
    for pump in ("a", "1.", "x", "ab", "1", " a", "/a", "aa"):
        text = pump * (MAX_MATCHED_LENGTH // len(pump))
        found += [text, text[:-1] + "!"]
    return found


@pytest.mark.parametrize("pattern", EXPONENTIAL, ids=lambda p: p[:30])
def test_patterns_that_backtrack_in_python_run_in_linear_time(pattern: str) -> None:
    assert refusal(pattern) is None
    bounded = safe_pattern(pattern, "m.yaml", "marker pattern")
    began = time.process_time()
    for text in _pumps(pattern):
        bounded.search(text)
        bounded.fullmatch(text)
    assert time.process_time() - began < 0.25  # Python's `re` takes hours on the first ones
    # Schema patterns see whole values, unbounded: 100 times longer takes no time either.
    began = time.process_time()
    for pump in ("a", "1.", "ab", " a"):
        search(pattern, pump * 50_000 + "!")
    assert time.process_time() - began < 0.25


@pytest.mark.parametrize("pattern", SAFE)
def test_linear_patterns_are_accepted(pattern: str) -> None:
    assert refusal(pattern) is None


@pytest.mark.parametrize(("pattern", "why"), BACKTRACKING.items())
def test_what_needs_a_backtracking_engine_is_refused_saying_so(pattern: str, why: str) -> None:
    with pytest.raises(RegistryError) as info:
        safe_pattern(pattern, "m.yaml", "marker pattern")
    line = one_line(str(info.value))
    assert line.startswith(f"m.yaml: marker pattern {pattern!r} is refused: it has {why}")
    assert "only a backtracking engine runs" in line and "RE2, in linear time" in line


@pytest.mark.parametrize(("pattern", "why"), NOT_RE2.items())
def test_syntax_re2_lacks_is_refused_saying_so(pattern: str, why: str) -> None:
    reason = refusal(pattern)
    assert reason is not None and reason.startswith(why)
    with pytest.raises(RegistryError, match="is refused: "):
        safe_pattern(pattern, "m.yaml", "marker pattern")


def test_python_and_ecma_unicode_escapes_are_read() -> None:
    bounded = safe_pattern(r"^caf\u00e9-v(?P<version>\d+)$", "m.yaml", "marker pattern")
    match = bounded.fullmatch("café-v2")
    assert match is not None and match.group("version") == "2"
    # An escaped backslash before `u` stays a backslash.
    assert safe_pattern(r"^\\u00e9$", "m.yaml", "p").fullmatch("\\u00e9") is not None
    assert search("\\u00e9", "é") and not search("\\\\u00e9", "é")


def test_every_built_in_pattern_compiles_with_re2(registry: evalreg.Registry) -> None:
    """The built-in directory's schemas are not walked at start-up; this is where they are."""
    report = check_registry(registry, examples=0)
    assert [f for f in report.findings if f.check == "pattern"] == []


def test_a_pattern_is_bounded_in_length_and_so_are_the_values_it_sees() -> None:
    with pytest.raises(RegistryError, match=f"longer than {MAX_PATTERN_LENGTH} characters"):
        safe_pattern("a" * (MAX_PATTERN_LENGTH + 1), "m.yaml", "marker pattern")
    bounded = safe_pattern(r"(?P<version>.+)", "m.yaml", "marker pattern")
    assert bounded.fullmatch("1" * MAX_MATCHED_LENGTH) is not None
    assert bounded.fullmatch("1" * (MAX_MATCHED_LENGTH + 1)) is None
    assert bounded.search("1" * (MAX_MATCHED_LENGTH + 1)) is None


def test_a_marker_that_backtracks_in_python_detects_in_no_time(
    make_registry_dir: RegistryFactory, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    manifest = MANIFEST + "    pattern: '^(?P<version>(1+)+)$'\n"
    root = family(make_registry_dir, manifest, schemas={"111": {"type": "object"}})
    record = tmp_path / "run.json"
    for value in ("1" * 40 + "!", "1" * (MAX_MATCHED_LENGTH - 1) + "!", "111"):
        record.write_text(json.dumps({"v": value}))
        began = time.process_time()
        code, out, err = run(capsys, "--registry", str(root), "detect", str(record))
        assert time.process_time() - began < 2
        assert "Traceback" not in out + err
        assert (code == 0) == (value == "111"), out + err


def test_a_marker_needing_backtracking_is_refused_at_load_by_every_command(
    make_registry_dir: RegistryFactory, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    manifest = MANIFEST + "    pattern: '^(?P<version>(a+)+)(?=!)'\n"
    root = family(make_registry_dir, manifest)
    record = tmp_path / "run.json"
    record.write_text(json.dumps({"v": "a" * 40 + "!"}))
    code, _, err = run(capsys, "--registry", str(root), "detect", str(record))
    line = one_line(err)
    assert code == 2
    assert "acme.run.yaml" in line and "'^(?P<version>(a+)+)(?=!)'" in line
    assert "is refused: it has a lookahead (?=...)" in line
    code, out, _ = run(capsys, "check", "--registry", str(root), "--examples", "0")
    assert code == 1 and "'^(?P<version>(a+)+)(?=!)'" in out


@pytest.mark.parametrize(
    "rule",
    [
        "{id: acme.m, message: m, require: [{matches: [/name, '(a+)+(?=$)']}]}",
        "{id: acme.m, message: m, require: [{not: {matches: [/name, '(\\w|\\w\\w)+\\1$']}}]}",
        "{id: acme.p, scope: file, message: m, path: '^(/?[a-z]+)+(?<!x)$'}",
    ],
)
def test_rule_patterns_needing_backtracking_are_refused_too(
    make_registry_dir: RegistryFactory, rule: str
) -> None:
    root = family(make_registry_dir, MANIFEST + f"rules:\n  - {rule}\n")
    line = load_error(root)
    assert "acme.run.yaml" in line and "is refused: it has a" in line and "rule acme." in line


def test_rule_patterns_that_backtrack_in_python_check_in_no_time(
    make_registry_dir: RegistryFactory, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    rule = "{id: acme.m, message: m, require: [{matches: [/name, '^(\\w|\\w\\w)+$']}]}"
    root = family(make_registry_dir, MANIFEST + f"rules:\n  - {rule}\n")
    record = tmp_path / "run.json"
    record.write_text(json.dumps({"v": "1.0", "name": "a" * 1000 + "!"}))
    began = time.process_time()
    code, out, err = run(capsys, "--registry", str(root), "validate", str(record))
    assert time.process_time() - began < 2
    assert code == 1 and out.count("[acme.m]") == 1, out + err


def test_a_huge_pattern_is_refused_in_one_short_line(make_registry_dir: RegistryFactory) -> None:
    manifest = MANIFEST + f"    pattern: '(?P<version>{'a' * 1_000_000})'\n"
    line = load_error(family(make_registry_dir, manifest))
    assert f"longer than {MAX_PATTERN_LENGTH} characters" in line and len(line) < 400


def test_a_marker_value_too_long_to_match_states_no_version(
    make_registry_dir: RegistryFactory,
) -> None:
    manifest = MANIFEST + "    pattern: '(?P<version>[0-9.]+)'\n"
    registry = evalreg.load_registry([family(make_registry_dir, manifest)], builtin=False)
    assert registry.detect({"v": "1.0"}).version == "1.0"
    assert registry.detect({"v": "1" * (MAX_MATCHED_LENGTH + 1)}).version is None


def test_schema_patterns_needing_backtracking_are_refused(
    make_registry_dir: RegistryFactory,
) -> None:
    ahead = {"properties": {"a": {"pattern": "^(?=a)(a+)+$"}}}
    line = load_error(family(make_registry_dir, schemas={"1.0": ahead}))
    assert "/properties/a/pattern: pattern '^(?=a)(a+)+$' is refused: it has a lookahead" in line
    named = {"patternProperties": {"(b|bb)+\\1": {}}}
    line = load_error(family(make_registry_dir, schemas={"1.0": named}))
    assert "/patternProperties/(b|bb)+\\1: pattern " in line and "a backreference \\1" in line
    long = {"properties": {"a": {"pattern": "a" * (MAX_PATTERN_LENGTH + 1)}}}
    line = load_error(family(make_registry_dir, schemas={"1.0": long}))
    assert f"is refused: longer than {MAX_PATTERN_LENGTH} characters" in line


HOSTILE_SCHEMA = {
    "type": "object",
    "properties": {
        "a": {"type": "string", "pattern": "^(a+)+$"},
        "closed": {
            "type": "object",
            "patternProperties": {"^(b+)+$": {"type": "integer"}},
            "additionalProperties": False,
        },
        "unevaluated": {
            "type": "object",
            "allOf": [{"patternProperties": {"^(c|cc)+$": {"type": "integer"}}}],
            "unevaluatedProperties": False,
        },
    },
}


def test_schema_patterns_that_backtrack_in_python_validate_in_no_time(
    make_registry_dir: RegistryFactory,
) -> None:
    """jsonschema-rs and the reference validator that explains a record both match with RE2."""
    root = family(make_registry_dir, schemas={"1.0": HOSTILE_SCHEMA})
    registry = evalreg.load_registry([root], builtin=False, verify=False)
    slow = "a" * 50 + "!"
    record = {
        "a": slow,
        "closed": {"b" * 50 + "!": 1, "bbb": "x"},
        "unevaluated": {"c" * 50 + "!": 1, "cc": 2},
    }
    began = time.process_time()
    issues = registry.validate(record, "acme.run", "1.0")
    assert time.process_time() - began < 1
    found = {(i.pointer, i.keyword) for i in issues}
    assert found == {
        ("/a", "pattern"),
        ("/closed", "additionalProperties"),
        ("/closed/bbb", "type"),
        ("/unevaluated", "unevaluatedProperties"),
    }
    messages = {i.keyword: i.message for i in issues}
    assert messages["pattern"] == f"{slow!r} does not match '^(a+)+$'"
    assert messages["additionalProperties"] == (
        f"{'b' * 50 + '!'!r} does not match any of the regexes: '^(b+)+$'"
    )
    assert messages["unevaluatedProperties"] == (
        f"Unevaluated properties are not allowed ({'c' * 50 + '!'!r} was unexpected)"
    )
    assert registry.validate({"a": "aaa", "closed": {"bb": 1}}, "acme.run", "1.0") == []


def test_check_compiles_the_schema_patterns_of_directories_loading_trusts(
    make_registry_dir: RegistryFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    behind = {"properties": {"a": {"pattern": "(?<=x)y"}}}
    root = family(make_registry_dir, schemas={"1.0": behind})
    # As the built-in directory is: its schemas are not walked at load, so start-up stays fast.
    monkeypatch.setattr("evalreg.registry.load.builtin_directory", lambda: root)
    registry = evalreg.load_registry([root], builtin=False)
    report = check_registry(registry, ["acme.run"], examples=0)
    found = [(f.version, f.message) for f in report.errors if f.check == "pattern"]
    assert len(found) == 1
    assert found[0][0] == "1.0"
    assert found[0][1].startswith("/properties/a/pattern: '(?<=x)y': it has a lookbehind")
    # Its manifest patterns are compiled all the same: RE2 compiling is the check.
    (root / "registry" / "acme.run.yaml").write_text(MANIFEST + "    pattern: '(?=x)'\n")
    assert "is refused: it has a lookahead" in load_error(root)


# -- 2. names that become file names -----------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "..",
        ".",
        ".hidden",
        "a/b",
        "a\\b",
        "a..b",
        "a.",
        "-",
        " a",
        "a b",
        "x" * (MAX_NAME_LENGTH + 1),
    ],
)
def test_unsafe_family_names_are_refused(name: str) -> None:
    with pytest.raises(RegistryError, match="family name") as info:
        check_family_name(name, "m.yaml")
    one_line(str(info.value))


@pytest.mark.parametrize("name", ["acme.run", "skill-creator.eval-metadata", "right", "A1_b"])
def test_ordinary_family_names_are_accepted(name: str) -> None:
    assert check_family_name(name, "m.yaml") == name


def test_a_family_named_dot_dot_is_refused_by_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "registry").mkdir()
    (tmp_path / "registry" / "...yaml").write_text("name: ..\ntitle: t\nkind: json\n")
    code, _, err = run(capsys, "--registry", str(tmp_path), "list")
    assert code == 2 and "family name '..'" in one_line(err)


@pytest.mark.parametrize("version", [" 1.0", "1.0 ", "v1..0", "1" * 70])
def test_schema_file_versions_must_be_plain(
    make_registry_dir: RegistryFactory, version: str
) -> None:
    root = family(make_registry_dir, schemas={version: {"type": "object"}})
    assert "is not a version number of at most 64 characters" in load_error(root)


@pytest.mark.parametrize("version", [" 4.0", "4.0/x", "../4.0", "4" * 70])
def test_new_version_refuses_a_version_that_cannot_name_a_file(
    make_registry_dir: RegistryFactory, version: str
) -> None:
    from evalreg.errors import InvalidVersionError
    from evalreg.registry.drafting import new_version

    root = family(make_registry_dir)
    registry = evalreg.load_registry([root], builtin=False, verify=False)
    with pytest.raises(InvalidVersionError):
        new_version(registry, "acme.run", version)
    assert sorted(p.name for p in (root / "schemas" / "acme.run").iterdir()) == ["1.0.schema.json"]


# -- 3. references, read as JSON Schema --------------------------------------------------------

REMOTE = "https://example.com/x.json"


@pytest.mark.parametrize(
    ("schema", "pointer"),
    [
        ({"properties": {"default": {"$ref": REMOTE}}}, "/properties/default/$ref"),
        ({"properties": {"enum": {"$ref": REMOTE}}}, "/properties/enum/$ref"),
        ({"properties": {"const": {"items": {"$ref": REMOTE}}}}, "/properties/const/items/$ref"),
        ({"$defs": {"examples": {"$ref": REMOTE}}}, "/$defs/examples/$ref"),
        ({"$defs": {"a": {"$dynamicRef": REMOTE}}}, "/$defs/a/$dynamicRef"),
        ({"anyOf": [{"type": "string"}, {"not": {"$ref": REMOTE}}]}, "/anyOf/1/not/$ref"),
        ({"$id": "https://example.com/", "$defs": {"a": {"$ref": "x.json"}}}, "/$defs/a/$ref"),
    ],
)
def test_every_reference_is_checked_where_json_schema_reads_it(
    make_registry_dir: RegistryFactory, schema: dict[str, Any], pointer: str
) -> None:
    with pytest.raises(RemoteRefError) as info:
        evalreg.load_registry([family(make_registry_dir, schemas={"1.0": schema})], builtin=False)
    line = one_line(str(info.value))
    assert f"1.0.schema.json: {pointer}: $ref " in line and "never fetches" in line


@pytest.mark.parametrize("keyword", ["enum", "const", "default", "examples"])
def test_data_keywords_holding_refs_are_data(
    make_registry_dir: RegistryFactory, keyword: str
) -> None:
    data: list[Any] = [{"$ref": REMOTE}, {"$ref": 5}, {"$dynamicRef": {"deep": [1]}}]
    value = data if keyword in ("enum", "examples") else data[0]
    schema = {"properties": {"a": {keyword: value}}}
    registry = evalreg.load_registry(
        [family(make_registry_dir, schemas={"1.0": schema})], builtin=False
    )
    assert registry.validate({"a": {"$ref": REMOTE}}, "acme.run", "1.0") == []


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ({"$schema": "https://example.com/my-dialect"}, "/$schema: unknown dialect"),
        ({"$defs": {"a": {"$id": "x", "$schema": "urn:x"}}}, "/$defs/a/$schema: unknown dialect"),
        ({"properties": {"a": {"$ref": 5}}}, "/properties/a/$ref: $ref must be a string"),
        ({"properties": {"a": 5}}, "/properties/a: not a schema"),
        ({"allOf": {"type": "string"}}, "/allOf: must be a list of schemas"),
        ({"properties": {"a": {"$ref": "#/$defs/missing"}}}, "/properties/a/$ref: $ref "),
    ],
)
def test_malformed_schemas_are_refused_with_their_pointer(
    make_registry_dir: RegistryFactory, schema: dict[str, Any], message: str
) -> None:
    line = load_error(family(make_registry_dir, schemas={"1.0": schema}))
    assert f"1.0.schema.json: {message}" in line


def test_refs_within_and_across_schemas_still_resolve(make_registry_dir: RegistryFactory) -> None:
    schemas = {
        "1.0": {"$defs": {"n": {"type": "integer"}}, "properties": {"a": {"$ref": "#/$defs/n"}}},
        "2.0": {
            "$schema": "http://json-schema.org/draft-07/schema#",
            "definitions": {"b": {"$ref": "urn:evalreg:acme.run:1.0#/$defs/n"}},
            "properties": {"b": {"$ref": "#/definitions/b"}},
        },
    }
    registry = evalreg.load_registry([family(make_registry_dir, schemas=schemas)], builtin=False)
    assert registry.validate({"b": 1}, "acme.run", "2.0") == []
    assert registry.validate({"b": "x"}, "acme.run", "2.0") != []


def test_deep_and_huge_schemas_are_refused(
    make_registry_dir: RegistryFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    deep: dict[str, Any] = {"type": "object"}
    for _ in range(MAX_SCHEMA_DEPTH):
        deep = {"not": deep}  # one level each: within what the JSON reader takes (254)
    assert f"nested deeper than {MAX_SCHEMA_DEPTH} levels" in load_error(
        family(make_registry_dir, schemas={"1.0": deep})
    )
    root = family(make_registry_dir)
    (root / "schemas" / "acme.run" / "1.0.schema.json").write_text(
        '{"not":' * 10_000 + "{}" + "}" * 10_000
    )
    assert "1.0.schema.json: cannot read schema" in load_error(root)
    monkeypatch.setattr("evalreg.registry.load.MAX_SCHEMA_BYTES", 100)
    big = family(make_registry_dir, schemas={"1.0": {"description": "x" * 200}})
    assert "schema is larger than 100 bytes" in load_error(big)


# -- 4. manifests that are not YAML ------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("name: acme.run\ntitle: [unclosed\nkind: json\n", "line 3, column 5: did not find"),
        ("name: acme.run\ntitle: a\ntitle: b\nkind: json\n", "found duplicate key 'title'"),
        ("name: acme.run\n\ttitle: a\n", "line 2, column 1: "),
    ],
)
def test_a_malformed_manifest_is_one_line_with_line_and_column(
    make_registry_dir: RegistryFactory, capsys: pytest.CaptureFixture[str], text: str, message: str
) -> None:
    root = family(make_registry_dir, text)
    code, _, err = run(capsys, "--registry", str(root), "list")
    line = one_line(err)
    assert code == 2 and "acme.run.yaml: cannot read manifest: " in line and message in line


def test_a_manifest_that_is_too_big_or_not_utf8_is_refused(
    make_registry_dir: RegistryFactory,
) -> None:
    root = family(make_registry_dir)
    path = root / "registry" / "acme.run.yaml"
    path.write_bytes(b"name: acme.run\ntitle: \xff\nkind: json\n")
    assert "not UTF-8 at byte" in load_error(root)
    path.write_text(MANIFEST + "#" * 1_100_000 + "\n")
    assert "manifest is larger than 1,048,576 bytes" in load_error(root)


# -- 5. Python files of a registry directory: who imports them ---------------------------------

MARK = "\nimport os, pathlib\npathlib.Path(os.environ['EVALREG_TEST_MARKS'], {kind!r}).touch()\n"
STEP = (
    '"""Copy the record."""\n\nFROM = "1.0"\nTO = "2.0"\n\n\n'
    "def upgrade(record, ctx):\n    return dict(record)\n"
)
RULE = '"""Nothing is checked."""\n\nID = "acme.none"\n\n\ndef check(record, ctx):\n    pass\n'


@pytest.fixture
def trusting(make_registry_dir: RegistryFactory, tmp_path: Path) -> tuple[Path, Path]:
    schemas = {
        v: {"type": "object", "properties": {"v": {"type": "string"}}} for v in ("1.0", "2.0")
    }
    root = family(
        make_registry_dir,
        MANIFEST + "    template: '{version}'\n",
        schemas,
        steps={"1.0_to_2.0.py": STEP + MARK.format(kind="step")},
        rules={"none.py": RULE + MARK.format(kind="rule")},
    )
    data = tmp_path / "data"
    data.mkdir()
    (data / "run.json").write_text(json.dumps({"v": "1.0"}))
    return root, data


@pytest.mark.parametrize(
    ("args", "imported"),
    [
        (("list",), set()),
        (("show", "acme.run"), set()),
        (("detect", "{data}"), set()),
        (("status", "{data}"), set()),
        (("diff", "acme.run", "1.0", "2.0"), set()),
        (("changelog", "acme.run"), set()),
        (("steps", "acme.run"), set()),
        (("validate", "--no-rules", "{data}"), set()),
        (("validate", "{data}"), {"rule"}),
        (("validate", "--rule", "acme.none", "{data}"), {"rule"}),
        (("publish", "{out}", "--drafts"), {"rule"}),
        (("migrate", "{data}", "--to", "2.0", "--dry-run"), {"step"}),
        (("migrate", "{data}", "--to", "2.0", "--out", "{out}"), {"step"}),
    ],
)
def test_which_commands_import_a_registrys_python_files(
    trusting: tuple[Path, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    args: tuple[str, ...],
    imported: set[str],
) -> None:
    root, data = trusting
    marks = tmp_path / "marks"
    marks.mkdir()
    monkeypatch.setenv("EVALREG_TEST_MARKS", str(marks))
    filled = [a.format(data=data, out=tmp_path / "out") for a in args]
    code, _, err = run(capsys, "--registry", str(root), *filled)
    assert code == 0, err
    assert {p.name for p in marks.iterdir()} == imported


def test_check_imports_both(
    trusting: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, _ = trusting
    monkeypatch.setenv("EVALREG_TEST_MARKS", str(tmp_path))
    evalreg_check = evalreg.load_registry([root], verify=False)
    check_registry(evalreg_check, ["acme.run"], examples=0)
    assert {p.name for p in tmp_path.iterdir()} >= {"step", "rule"}


@pytest.mark.parametrize("body", ["raise SystemExit(0)\n", "raise RuntimeError('boom')\n"])
def test_a_module_failing_on_import_is_one_line_and_fails_the_command(
    make_registry_dir: RegistryFactory,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    body: str,
) -> None:
    schemas = {v: {"type": "object"} for v in ("1.0", "2.0")}
    root = family(
        make_registry_dir,
        MANIFEST + "    template: '{version}'\n",
        schemas,
        steps={"1.0_to_2.0.py": STEP + body},
    )
    (tmp_path / "run.json").write_text(json.dumps({"v": "1.0"}))
    args = ("--registry", str(root), "migrate", str(tmp_path / "run.json"), "--to", "2.0")
    code, _, err = run(capsys, *args, "--dry-run")
    assert code != 0 and "1.0_to_2.0.py: the module failed to load: " in one_line(err)


# -- the benchmark of hostile registries -------------------------------------------------------


@pytest.mark.slow
def test_the_reliability_benchmark_passes(tmp_path: Path) -> None:
    script = ROOT / "benchmarks" / "reliability_registries.py"
    done = subprocess.run(
        [sys.executable, str(script), "--timeout", "20", "--work", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "EVALREG_PATH": ""},
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "FAIL" not in done.stdout.replace("0 FAIL", "")
