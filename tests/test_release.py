"""What a release relies on: one version number, and a changelog in Keep a Changelog's form."""

from __future__ import annotations

import re
from pathlib import Path

import evalreg

ROOT = Path(__file__).resolve().parent.parent
ORDER = ("Added", "Changed", "Deprecated", "Removed", "Fixed", "Security")
VERSION_HEADING = re.compile(r"## \[(Unreleased|\d+\.\d+\.\d+)\](?: - (\d{4}-\d{2}-\d{2}))?$")


def test_the_package_states_the_version_pyproject_gives() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    [version] = re.findall(r'^version = "([^"]+)"$', pyproject, re.M)
    assert evalreg.__version__ == version


def test_the_changelog_keeps_its_sections_in_order_with_short_entries() -> None:
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    versions = re.findall(r"^## .*$", text, re.M)
    assert versions[0] == "## [Unreleased]"
    for heading in versions:
        found = VERSION_HEADING.fullmatch(heading)
        assert found, heading
        assert (found.group(1) == "Unreleased") == (found.group(2) is None), heading
    for section in re.split(r"^## .*$", text, flags=re.M)[1:]:
        kinds = re.findall(r"^### (.*)$", section, re.M)
        assert kinds == sorted(kinds, key=ORDER.index), kinds
        entries = re.findall(r"^- .*(?:\n  .*)*", section, re.M)
        assert all(len(entry.splitlines()) <= 2 for entry in entries), "entries are short"
        for line in section.splitlines():
            assert not line or line.startswith(("### ", "- ", "  ")), line
