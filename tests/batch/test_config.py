"""The project configuration: where it is found, what it may say, and that every command that
reads records honours it (detect, status, validate, migrate, and the library functions)."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path
from typing import Any

import pytest

from evalreg import Registry
from evalreg.batch.check import RecordCheck, check_paths, validate_paths
from evalreg.batch.config import Config, PathGlobs, find_config, load_config
from evalreg.batch.migrate import migrate_paths
from evalreg.batch.migrate_file import FileMigration, MigrateOptions
from evalreg.cli import main
from evalreg.errors import ConfigError

DEMO = Path(__file__).parents[2] / "evalreg" / "examples" / "eee" / "data"
FOLDER = "gsm8k/Qwen/Qwen2.5-7B-Instruct"
AGGREGATE = f"{FOLDER}/5b0c2e7a-91d4-4f3e-a6b8-2d7c9e1f0a34.json"
OLD = "hellaswag/mistralai/Mistral-7B-v0.1/c41f8d20-3b6e-4a57-9e02-7f5a1b8c6d93.json"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


# -- finding and reading ----------------------------------------------------------------------


def test_the_nearest_configuration_upwards_wins(tmp_path: Path) -> None:
    write(tmp_path / "evalreg.toml", 'exclude = ["outer"]\n')
    write(tmp_path / "a" / "pyproject.toml", '[project]\nname = "x"\n')  # no [tool.evalreg]
    write(tmp_path / "a" / "b" / "pyproject.toml", '[tool.evalreg]\nexclude = ["inner"]\n')
    (tmp_path / "a" / "b" / "c").mkdir()
    assert find_config(tmp_path / "a" / "b" / "c").exclude == ("inner",)
    found = find_config(tmp_path / "a")
    assert found.exclude == ("outer",) and found.source == str(tmp_path / "evalreg.toml")
    assert found.root == str(tmp_path)
    assert find_config(tmp_path.parent) == Config()  # nothing above tmp_path configures evalreg


def test_evalreg_toml_wins_over_pyproject_in_one_folder_and_says_so(tmp_path: Path) -> None:
    write(tmp_path / "evalreg.toml", 'exclude = ["a"]\n')
    write(tmp_path / "pyproject.toml", '[tool.evalreg]\nexclude = ["b"]\n')
    found = find_config(tmp_path)
    assert found.exclude == ("a",)
    (note,) = found.notes
    assert note.startswith(f"{tmp_path / 'pyproject.toml'}: [tool.evalreg] is not read: ")


def test_every_key_is_read(tmp_path: Path) -> None:
    path = write(
        tmp_path / "evalreg.toml",
        """\
        include = ["*.json"]
        exclude = ["data/scratch"]
        baseline = "known.json"

        [rules]
        select = ["eee.*"]
        ignore = ["eee.model-path"]
        severity = { "eee.score-bounds" = "warning" }
        per-path-ignores = { "data/helm_*" = ["eee.layout"] }

        [rules.per-path-severity]
        "data/old" = { "eee.*" = "warning" }
        """,
    )
    config = load_config(path)
    assert (config.include, config.exclude) == (("*.json",), ("data/scratch",))
    assert config.baseline == str(tmp_path / "known.json")
    assert (config.select, config.ignore) == (("eee.*",), ("eee.model-path",))
    assert config.severity == (("eee.score-bounds", "warning"),)
    assert config.per_path_ignores == (("data/helm_*", ("eee.layout",)),)
    assert config.per_path_severity == (("data/old", (("eee.*", "warning"),)),)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("exclud = []\n", "evalreg.toml: unknown key 'exclud' (known: include, exclude, "),
        ("[rules]\nignored = []\n", "evalreg.toml: unknown key 'ignored' in [rules] (known: "),
        ('exclude = "data"\n', "evalreg.toml: exclude: expected a list of non-empty strings"),
        ("rules = 3\n", "evalreg.toml: rules: expected a table, not 3"),
        ('[rules]\nignore = ["Eee Layout"]\n', "evalreg.toml: rules.ignore: 'Eee Layout' is not"),
        (
            '[rules]\nseverity = { "eee.layout" = "fatal" }\n',
            "evalreg.toml: rules.severity.\"eee.layout\": 'fatal' is not a severity",
        ),
        (
            '[rules.per-path-ignores]\n"data/x" = "eee.layout"\n',
            'evalreg.toml: rules.per-path-ignores."data/x": expected a list',
        ),
        ("baseline = 1\n", "evalreg.toml: baseline: expected a file name, not 1"),
        ("exclude = [\n", "evalreg.toml: not valid TOML: "),
    ],
)
def test_a_bad_key_or_value_is_one_line_naming_the_file_and_key(
    tmp_path: Path, text: str, message: str
) -> None:
    path = write(tmp_path / "evalreg.toml", text)
    with pytest.raises(ConfigError) as raised:
        load_config(path)
    shown = str(raised.value)
    assert "\n" not in shown
    assert shown.startswith(f"{tmp_path}/{message}"), shown


def test_pyproject_keys_are_named_with_their_table(tmp_path: Path) -> None:
    path = write(tmp_path / "pyproject.toml", "[tool.evalreg.rules]\nignore = 5\n")
    with pytest.raises(ConfigError, match=r"pyproject.toml: tool.evalreg.rules.ignore: expected"):
        load_config(path)
    write(tmp_path / "pyproject.toml", "[tool]\nevalreg = 1\n")
    with pytest.raises(ConfigError, match=r"pyproject.toml: tool.evalreg: expected a table"):
        load_config(path)
    write(tmp_path / "pyproject.toml", "[tool.other]\n")
    with pytest.raises(ConfigError, match=r"pyproject.toml: has no \[tool.evalreg\] table"):
        load_config(path)


def test_a_rule_the_registry_does_not_have_is_named_with_its_key(
    tmp_path: Path, registry: Registry
) -> None:
    path = write(
        tmp_path / "pyproject.toml", '[tool.evalreg.rules]\nignore = ["eee.score-bound"]\n'
    )
    with pytest.raises(ConfigError) as raised:
        load_config(path).check_rules(["eee.layout", "eee.score-bounds"])
    assert str(raised.value) == (
        f"{path}: tool.evalreg.rules.ignore: 'eee.score-bound' names no rule "
        "(known: eee.layout, eee.score-bounds)"
    )


def test_path_patterns_name_files_folders_and_paths_from_the_root(tmp_path: Path) -> None:
    root = str(tmp_path)
    inside = str(tmp_path / "data" / "scratch" / "x" / "a.jsonl")
    assert PathGlobs(root, ["*.jsonl"])(inside)
    assert PathGlobs(root, ["scratch"])(inside)  # a folder's name, at any depth
    assert PathGlobs(root, ["data/scratch"])(inside)  # a folder from the root
    assert PathGlobs(root, ["data/*/x/"])(inside)
    assert PathGlobs(root, ["/data/scratch/x/a.jsonl"])(inside)
    assert not PathGlobs(root, ["scratch/x"])(inside)  # paths start at the root
    assert not PathGlobs(root, ["*.json"])(inside)
    outside = str(tmp_path.parent / "elsewhere" / "data" / "scratch" / "a.jsonl")
    assert PathGlobs(root, ["scratch"])(outside) and not PathGlobs(root, ["data/scratch"])(outside)
    assert PathGlobs(root, ["*.jsonl"])("s3://bucket/data/a.jsonl")


def test_the_options_given_come_after_the_configuration() -> None:
    config = Config(select=("eee.*",), ignore=("eee.layout",))
    assert not config.selection().wants("eee.layout", "error")
    assert not config.selection(ignore=["eee.companion"]).wants("eee.companion", "error")
    assert config.selection(select=["eee.layout"]).wants("eee.layout", "error")  # --select wins
    assert not config.selection(enabled=False).wants("eee.companion", "error")


# -- every command honours it -----------------------------------------------------------------


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder (the working folder) with a datastore and a scratch folder in it."""
    shutil.copytree(DEMO, tmp_path / "data")
    write(tmp_path / "data" / "scratch" / "notes.json", '{"not": "a record"}\n')
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as done:
        main(list(args))
    out, err = capsys.readouterr()
    return int(done.value.code or 0), out, err


def configure(project: Path, text: str, name: str = "evalreg.toml") -> None:
    write(project / name, text)


def spoil(project: Path) -> None:
    """Put a score out of bounds in the current aggregate."""
    path = project / "data" / AGGREGATE
    record = json.loads(path.read_text())
    record["evaluation_results"][0]["score_details"]["score"] = 1.5
    path.write_text(json.dumps(record))


def test_detect_honours_exclude(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "detect", "data")
    assert code == 1 and "scratch/notes.json" in out
    configure(project, 'exclude = ["data/scratch"]\n')
    code, out, err = run(capsys, "detect", "data")
    assert code == 0 and "scratch" not in out and "3 files" in err
    code, out, _ = run(capsys, "detect", "--isolated", "data")
    assert code == 1 and "scratch/notes.json" in out


def test_status_honours_include(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    configure(project, '[tool.evalreg]\ninclude = ["*.json"]\n', "pyproject.toml")
    code, out, _ = run(capsys, "status", "--format", "json", "data")
    assert code == 0
    rows = json.loads(out)["rows"]
    assert {r["family"] for r in rows} == {"eee.aggregate", None}  # no samples file
    _code, out, _ = run(capsys, "status", "--format", "json", "--exclude", "scratch/*", "data")
    assert [r["family"] for r in json.loads(out)["rows"]] == ["eee.aggregate", "eee.aggregate"]


def test_validate_honours_exclude_and_rules(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spoil(project)
    code, out, _ = run(capsys, "validate", "data")
    assert code == 1 and "[eee.score-bounds]" in out and "notes.json" in out
    configure(project, 'exclude = ["scratch"]\n[rules]\nignore = ["eee.score-bounds"]\n')
    code, out, _ = run(capsys, "validate", "data")
    assert code == 0 and "[eee." not in out and "notes.json" not in out
    code, out, _ = run(capsys, "validate", "--select", "eee.score-bounds", "data")
    assert code == 1 and "[eee.score-bounds]" in out  # --select replaces the configuration's


def test_validate_honours_rules_per_path(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spoil(project)
    configure(
        project,
        """\
        exclude = ["scratch"]
        [rules.per-path-severity]
        "data/gsm8k" = { "eee.score-bounds" = "warning" }
        """,
    )
    code, out, _ = run(capsys, "validate", "data")
    assert code == 0 and ": warning: /evaluation_results/0/score_details/score: " in out
    configure(project, 'exclude = ["scratch"]\n[rules]\nper-path-ignores = { gsm8k = ["eee.*"] }\n')
    code, out, _ = run(capsys, "validate", "data")
    assert code == 0 and "[eee." not in out
    # Another folder's entry leaves this one alone.
    configure(
        project, 'exclude = ["scratch"]\n[rules]\nper-path-ignores = { "hellaswag" = ["*"] }\n'
    )
    code, out, _ = run(capsys, "validate", "data")
    assert code == 1 and "[eee.score-bounds]" in out


def test_validate_refuses_a_configuration_naming_no_rule(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    configure(project, '[rules]\nignore = ["eee.score-bound"]\n')
    code, out, err = run(capsys, "validate", "data")
    assert code == 2 and out == ""
    assert err.startswith(
        f"evalreg: error: {project / 'evalreg.toml'}: rules.ignore: 'eee.score-bound' names no rule"
    )
    assert len(err.splitlines()) == 1


def test_migrate_honours_exclude(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    configure(project, 'exclude = ["hellaswag", "scratch"]\n')
    code, out, err = run(capsys, "migrate", "--to", "latest", "--out", "out", "data")
    assert code == 0
    assert not (project / "out" / OLD).exists() and "hellaswag" not in out + err
    assert (project / "out" / AGGREGATE).exists()
    _code, out, err = run(capsys, "migrate", "--to", "latest", "--out", "all", "--isolated", "data")
    assert (project / "all" / OLD).exists()


def test_export_honours_exclude(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    args = ("export", "data", "--family", "eee.aggregate", "--to", "latest")
    code, out, err = run(capsys, *args, "--out", "all.parquet")
    assert code == 1 and "scratch/notes.json" in out + err  # not a record
    configure(project, 'exclude = ["scratch", "hellaswag"]\n')
    code, out, err = run(capsys, *args, "--out", "some.parquet")
    assert code == 0 and "scratch" not in out + err
    assert pq.read_table("some.parquet").num_rows == pq.read_table("all.parquet").num_rows - 1


def test_config_names_the_file_and_excludes_isolated(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(project / "ci" / "strict.toml", 'exclude = ["scratch"]\n')
    code, _, err = run(capsys, "detect", "--config", "ci/strict.toml", "data")
    assert code == 0, err
    code, _, err = run(capsys, "detect", "--config", "ci/strict.toml", "--isolated", "data")
    assert code == 2 and err == "evalreg: error: --config and --isolated exclude each other\n"
    code, _, err = run(capsys, "detect", "--config", "ci/missing.toml", "data")
    assert code == 2 and err.startswith("evalreg: error: ci/missing.toml: cannot read: ")
    configure(project, 'exclude = ["scratch"]\n')
    configure(project, '[tool.evalreg]\nexclude = ["gsm8k"]\n', "pyproject.toml")
    code, out, err = run(capsys, "detect", "data")
    assert code == 0 and "gsm8k" in out
    assert "warning: " in err and "[tool.evalreg] is not read" in err


def test_a_bad_configuration_stops_every_command_in_one_line(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    configure(project, "exclude = [\n")
    for command in (
        ["detect"],
        ["status"],
        ["validate"],
        ["migrate", "--to", "latest", "--dry-run"],
    ):
        code, _out, err = run(capsys, *command, "data")
        assert code == 2 and len(err.splitlines()) == 1, (command, err)
        assert err.startswith(f"evalreg: error: {project / 'evalreg.toml'}: not valid TOML: ")


# -- the library functions take it too --------------------------------------------------------


def test_library_functions_take_a_config(project: Path, registry: Registry) -> None:
    spoil(project)
    config = Config(root=str(project), exclude=("scratch",), ignore=("eee.score-bounds",))
    checked = [c.path for c in check_paths(registry, ["data"], validate=False, config=config)]
    assert checked and not any("scratch" in p for p in checked)
    found: list[Any] = list(validate_paths(registry, ["data"], config=config))
    assert not [c for c in found if isinstance(c, RecordCheck)]
    assert [c for c in validate_paths(registry, ["data"]) if isinstance(c, RecordCheck)]
    options = MigrateOptions(to="latest", dry_run=True)
    events = migrate_paths(registry, ["data"], options, config=Config(exclude=("hellaswag",)))
    files = [e.path for e in events if isinstance(e, FileMigration)]
    assert files and not any("hellaswag" in p for p in files)
