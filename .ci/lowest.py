"""Print `name==version` for the lower bound of each named dependency in pyproject.toml.

    python .ci/lowest.py NAME...

A dependency without a `>=` or `==` bound is an error: CI would not test what it claims to.
"""

from __future__ import annotations

import sys
from pathlib import Path

import tomllib
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name


def main(names: list[str]) -> int:
    """Print the lower bounds of `names`; return the exit status."""
    project = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text())
    requirements = {
        canonicalize_name(r.name): r for r in map(Requirement, project["project"]["dependencies"])
    }
    pins = []
    for name in names:
        requirement = requirements.get(canonicalize_name(name))
        specifiers = requirement.specifier if requirement else []
        lows = [s.version for s in specifiers if s.operator in (">=", "==")]
        if requirement is None or len(lows) != 1:
            print(f"lowest.py: {name} has no single lower bound in pyproject.toml", file=sys.stderr)
            return 2
        pins.append(f"{requirement.name}=={lows[0]}")
    print(" ".join(pins))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
