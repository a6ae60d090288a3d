"""The datastore layout rules judge each folder once (`rulekit.layout_problems`, the model and
companion rules): their findings are those of the whole path."""

from __future__ import annotations

import importlib.util
import itertools
import os
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from evalreg.rulekit import layout_problems, unportable

RULES = Path(__file__).parents[2] / "rules"
UUID = "5b0c2e7a-91d4-4f3e-a6b8-2d7c9e1f0a34"


def _module(family: str, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"layout_{name}_{family}", RULES / family / name)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


LAYOUTS = {family: _module(family, "layout.py") for family in ("eee.aggregate", "eee.instance")}
MODEL_PATH = _module("eee.aggregate", "model_path.py")


class _Context:
    def __init__(self, path: str) -> None:
        self.path = path
        self.reported: list[tuple[str, str]] = []

    def report(self, pointer: str, message: str) -> None:
        self.reported.append((pointer, message))


PART = st.sampled_from(["data", "c", "Qwen", "a:b", "NUL", "v1.", "", "..", "x y", "Ab"])
NAME = st.sampled_from(
    [f"{UUID}.json", f"{UUID}_samples.jsonl", f"{UUID.upper()}.json", "run.json", "data", ""]
)
PATHS = st.builds(lambda parts, name: "/".join([*parts, name]), st.lists(PART, max_size=6), NAME)


def _layout(path: str, folders: Any, name: Any, name_form: str, why: dict[str, str]) -> list[str]:
    """`rulekit.layout_problems` under `data` as it was written first: every part of the path
    at each call."""
    parts = path.split("/")
    if "data" not in parts[:-1]:
        return []
    below = parts[len(parts) - 1 - parts[-2::-1].index("data") :]
    shown = "/".join(f"<{f}>" for f in folders)
    found: list[str] = []
    if len(below) - 1 != len(folders):
        count = len(below) - 1
        inside = "/".join(below[:-1])
        found.append(
            f"the file is {count} {'folder' if count == 1 else 'folders'} below data/"
            + (f" ({inside})" if inside else "")
            + f", not {len(folders)} ({shown})"
        )
    else:
        for label, part in zip(folders, below[:-1], strict=True):
            reason = unportable(part)
            if reason is not None:
                found.append(f"the {label} folder {part!r} {reason}")
    if not name.fullmatch(below[-1]):
        reason = next((w for p, w in why.items() if re.search(p, below[-1])), None)
        detail = f": {reason}" if reason else ""
        found.append(f"the file name {below[-1]!r} is not {name_form}{detail}")
    return found


@settings(max_examples=100, deadline=None)
@given(st.lists(PATHS, min_size=1, max_size=6))
def test_layout_findings_are_those_of_the_whole_path(paths: list[str]) -> None:
    for family, form, lives in (
        ("eee.aggregate", "<uuid4>.json", "an aggregate lives at"),
        ("eee.instance", "<uuid4>_samples.jsonl", "a samples file lives at"),
    ):
        rule = LAYOUTS[family]
        for path in [*paths, *paths]:  # the second time from what is kept of the folder
            ctx = _Context(path)
            rule.check({}, ctx)
            whole = _layout(path, rule.FOLDERS, rule.NAME, form, rule.WHY)
            assert layout_problems(path, "data", rule.FOLDERS, rule.NAME, form, rule.WHY) == whole
            assert ctx.reported == [("", f"{p} ({lives} {rule.LAYOUT})") for p in whole]


def _folders(path: str) -> Any:
    """`model_path.folders` as it was written first: every part of the path at each call."""
    model_path = MODEL_PATH
    parts = path.replace("\\", "/").split("/")
    if "data" not in parts:
        return None
    below = parts[len(parts) - 1 - parts[::-1].index("data") + 1 :]
    if len(below) != 4 or not model_path._NAME.fullmatch(below[3]):
        return None
    if not all(model_path.portable(part) and part != "data" for part in below[:3]):
        return None
    return below[1], below[2]


@settings(max_examples=100, deadline=None)
@given(st.lists(PATHS, min_size=1, max_size=6))
def test_model_path_folders_are_those_of_the_whole_path(paths: list[str]) -> None:
    for path in [*paths, *paths]:
        assert MODEL_PATH.folders(path) == _folders(path)


def _relative(path: str) -> str | None:
    """`companion.relative` as it was written first: every part of the path at each call."""
    parts = os.path.normpath(path).replace(os.sep, "/").split("/")
    if "data" not in parts:
        return None
    return "/".join(parts[len(parts) - 1 - parts[::-1].index("data") :])


def test_companion_paths_from_data_are_those_of_the_whole_path() -> None:
    companion = _module("eee.aggregate", "companion.py")
    parts = ["data", "a", ".", "..", "", "x.json", "/"]
    for count in range(1, 4):
        for chosen in itertools.product(parts, repeat=count):
            for lead in ("", "/", "./"):
                path = lead + "/".join(chosen)
                assert companion.relative(path) == _relative(path), path


def test_companion_normalises_paths_as_normpath_does() -> None:
    companion = _module("eee.aggregate", "companion.py")
    parts = ["data", "a", ".", "..", "", "x.json", "/"]
    for count in range(1, 5):
        for chosen in itertools.product(parts, repeat=count):
            for lead in ("", "/", "//", "./"):
                path = lead + "/".join(chosen)
                for _ in range(2):  # the second time from what is kept of the folder
                    assert companion._normalised(path) == os.path.normpath(path), path
