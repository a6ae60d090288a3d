"""`eee.layout` names the part of a path at fault, and why (`evalreg.rulekit`)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evalreg.cli import main
from evalreg.rulekit import unportable

DEMO = Path(__file__).parents[2] / "evalreg" / "examples" / "eee" / "data"
FOLDER = "gsm8k/Qwen/Qwen2.5-7B-Instruct"
UUID = "5b0c2e7a-91d4-4f3e-a6b8-2d7c9e1f0a34"


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("nova-lite-v1:0", "holds ':', which Windows cannot hold in a name"),
        ("a|b", "holds '|', which Windows cannot hold in a name"),
        ("tab\there", "holds the control character '\\t'"),
        ("v1.", "ends with a dot"),
        ("v1 ", "ends with a space"),
        ("NUL.json", "is a Windows device name (NUL)"),
        ("com3", "is a Windows device name (COM3)"),
        ("", "is empty"),
        ("..", "is '..'"),
        ("Qwen2.5-7B", None),
        ("console", None),
    ],
)
def test_names_every_file_system_can_hold(name: str, why: str | None) -> None:
    assert unportable(name) == why


def layout(capsys: pytest.CaptureFixture[str], root: Path) -> list[str]:
    with pytest.raises(SystemExit):
        main(["validate", "--select", "eee.layout", str(root)])
    out = capsys.readouterr().out
    return [
        line.split(": /: ", 1)[1].rsplit(" (a", 1)[0]
        for line in out.splitlines()
        if line.endswith("[eee.layout]")
    ]


def place(tmp_path: Path, relative: str, source: str = f"{FOLDER}/{UUID}.json") -> Path:
    target = tmp_path / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(DEMO / source, target)
    return target


def test_the_part_at_fault_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    place(tmp_path, f"data/helm/amazon/nova-lite-v1:0/{UUID}.json")
    assert layout(capsys, tmp_path) == [
        "the model folder 'nova-lite-v1:0' holds ':', which Windows cannot hold in a name"
    ]


@pytest.mark.parametrize(
    ("relative", "problems"),
    [
        (f"data/a/b/c/{UUID}.json", []),
        (f"elsewhere/{UUID}.json", []),  # not in a datastore: no layout to keep
        (
            f"data/a/b/{UUID}.json",
            ["the file is 2 folders below data/ (a/b), not 3 (<collection>/<developer>/<model>)"],
        ),
        (f"data/{UUID}.json", ["the file is 0 folders below data/, not 3 (<collection>/"]),
        # The nearest folder named data is the datastore's: none of its folders is named so.
        (f"data/a/data/c/{UUID}.json", ["the file is 1 folder below data/ (c), not 3"]),
        (f"x/data/data/b/c/{UUID}.json", ["the file is 2 folders below data/ (b/c), not 3"]),
        (
            f"data/aux/b/c/{UUID}.json",
            ["the collection folder 'aux' is a Windows device name (AUX)"],
        ),
        (f"data/a/b./c/{UUID}.json", ["the developer folder 'b.' ends with a dot"]),
        (
            f"data/a/b/c/{UUID.upper()}.json",
            [f"'{UUID.upper()}.json' is not <uuid4>.json: its UUID is written in upper case"],
        ),
        (
            "data/a/b/c/5b0c2e7a-91d4-1f3e-a6b8-2d7c9e1f0a34.json",
            ["is not <uuid4>.json: its UUID is not of version 4 (a 4 as the 13th digit)"],
        ),
        (
            "data/a/b/c/5b0c2e7a-91d4-4f3e-c6b8-2d7c9e1f0a34.json",
            ["is not <uuid4>.json: its UUID's variant digit (the 17th) is not 8, 9, a or b"],
        ),
        ("data/a/b/c/results.json", ["is not <uuid4>.json: it is not a UUID followed by .json"]),
    ],
)
def test_each_problem_of_an_aggregate_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], relative: str, problems: list[str]
) -> None:
    place(tmp_path, relative)
    found = layout(capsys, tmp_path)
    assert len(found) == len(problems), found
    for shown, expected in zip(found, problems, strict=True):
        assert expected in shown, shown


def test_a_samples_file_is_judged_by_its_own_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    samples = f"{FOLDER}/{UUID}_samples.jsonl"
    place(tmp_path, f"data/a/b/c/{UUID}_samples.jsonl", samples)
    assert layout(capsys, tmp_path) == []
    place(tmp_path, "data/a/b/c:d/results.jsonl", samples)
    assert layout(capsys, tmp_path) == [
        "the model folder 'c:d' holds ':', which Windows cannot hold in a name",
        "the file name 'results.jsonl' is not <uuid4>_samples.jsonl: it does not end in "
        "_samples.jsonl",
    ]
