"""The example records under tests/examples/<family>/{valid,invalid}/, for parametrized tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple

from evalreg.io.readers import read_items

EXAMPLES = Path(__file__).parent / "examples"


class Example(NamedTuple):
    family: str
    path: Path
    valid: bool
    expect: dict[str, Any] | None

    @property
    def id(self) -> str:
        kind = "valid" if self.valid else "invalid"
        return f"{self.family}/{kind}/{self.path.relative_to(EXAMPLES / self.family / kind)}"

    def records(self) -> list[Any]:
        items = list(read_items(str(self.path)))
        assert all(item.ok for item in items), [item.error for item in items]
        return [item.record for item in items]


def _expect_file(path: Path) -> Path:
    name = path.name
    stem = name[: name.rindex(".")] if "." in name else name
    return path.with_name(stem + ".expect.json")


def examples() -> list[Example]:
    found = []
    for family_dir in sorted(p for p in EXAMPLES.iterdir() if p.is_dir()):
        for kind in ("valid", "invalid"):
            for path in sorted((family_dir / kind).rglob("*")):
                if not path.is_file() or path.name.endswith(".expect.json"):
                    continue
                expect = None
                if kind == "invalid":
                    expect = json.loads(_expect_file(path).read_text())
                found.append(Example(family_dir.name, path, kind == "valid", expect))
    return found


ALL = examples()
