"""Outputs that would destroy or swallow the input: refused before anything is written.

`--out` that is an input folder replaced the originals; `--out` inside it nested
`migrated/migrated/` on the next run; `--out memory://` said "written" and kept nothing.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from evalreg import Registry
from evalreg.batch.migrate import migrate_paths
from evalreg.batch.migrate_file import MigrateOptions
from evalreg.cli import main

DEMO = Path(__file__).parents[2] / "evalreg" / "examples" / "eee"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as info:
        main(list(args))
    out, err = capsys.readouterr()
    return int(info.value.code or 0), out, err


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.fixture
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the bundled EEE files, old versions among them, as `in` in the current folder."""
    monkeypatch.chdir(tmp_path)
    root = tmp_path / "in"
    (root / "eee").mkdir(parents=True)
    for path in DEMO.rglob("*.json*"):
        target = root / "eee" / path.relative_to(DEMO)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(path.read_bytes())
    return root


@pytest.mark.parametrize(
    ("out", "how"),
    [
        ("in", "is the input folder"),
        ("./in", "is the input folder"),
        ("in/", "is the input folder"),
        ("{abs}/in", "is the input folder"),
        ("in/eee/..", "is the input folder"),
        ("link", "is the input folder"),
        ("in/migrated", "lies inside the input folder"),
        ("in/eee/data/deeper", "lies inside the input folder"),
        (".", "contains the input folder"),
    ],
)
def test_an_output_folder_that_overlaps_the_input_is_refused_before_writing(
    data: Path, capsys: pytest.CaptureFixture[str], out: str, how: str
) -> None:
    (data.parent / "link").symlink_to(data)
    before = snapshot(data.parent)
    out = out.format(abs=data.parent)
    code, stdout, err = run(capsys, "migrate", "in", "--to", "0.2.0", "--out", out)
    assert code == 2 and stdout == ""
    assert err == (
        f"evalreg: error: the output folder {out} {how} in: migrated files would be written over "
        "or among the files being read; choose an output folder outside the input\n"
    )
    assert snapshot(data.parent) == before


def test_a_file_whose_output_would_be_itself_is_refused(
    data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one = next(data.rglob("*.json")).relative_to(data.parent).as_posix()
    before = snapshot(data)
    code, _, err = run(capsys, "migrate", one, "--to", "0.2.0", "--out", os.path.dirname(one))
    assert code == 2 and "holds the input file" in err and len(err.splitlines()) == 1
    assert snapshot(data) == before


def test_outputs_beside_the_input_are_written_and_a_second_run_does_not_nest(
    data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for _ in range(2):
        code, _, _ = run(capsys, "migrate", "in", "--to", "0.2.0", "--out", "out")
        assert code == 0
    assert not (data.parent / "out" / "out").exists() and not (data / "out").exists()
    assert sorted(snapshot(data.parent / "out")) == sorted(snapshot(data))
    # a file given alone may have its output in another folder of the input tree
    one = next(data.rglob("*.json")).relative_to(data.parent).as_posix()
    assert run(capsys, "migrate", one, "--to", "0.2.0", "--out", "in/copies")[0] == 0


def test_dry_runs_and_rewrites_in_place_need_no_output_folder(
    data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "migrate", "in", "--to", "0.2.0", "--dry-run")[0] == 0
    assert run(capsys, "migrate", "in", "--to", "0.2.0", "--in-place")[0] == 0


def test_the_library_refuses_too_before_writing(data: Path, registry: Registry) -> None:
    from evalreg.errors import OutputOverlapError

    before = snapshot(data)
    options = MigrateOptions(to="0.2.0", out=str(data / "eee"))
    events = migrate_paths(registry, [str(data)], options)
    with pytest.raises(OutputOverlapError) as info:
        next(events)
    assert info.value.how == "lies inside the input folder"
    assert snapshot(data) == before


def test_store_urls_are_compared_as_written(registry: Registry) -> None:
    import fsspec

    from evalreg.errors import OutputOverlapError

    memory = fsspec.filesystem("memory")
    memory.pipe("/runs/a.json", json.dumps({"schema_version": "0.1.0"}).encode())
    try:
        for out in ("memory://runs", "memory://runs/", "memory://runs/x"):
            options = MigrateOptions(to="latest", out=out)
            with pytest.raises(OutputOverlapError):
                next(migrate_paths(registry, ["memory://runs"], options))
    finally:
        memory.rm("/runs", recursive=True)


def test_memory_urls_are_refused_as_a_command_line_output(
    data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "migrate", "in", "--to", "0.2.0", "--out", "memory://x")
    assert code == 2 and out == ""
    assert err.startswith("evalreg: error: --out memory:// keeps files in this process's memory")
    assert len(err.splitlines()) == 1
