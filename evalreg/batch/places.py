"""Where the problems of a YAML file's records are: the line and column of each value.

`batch.check` reads a YAML file's records once; only when one has a problem are its documents
composed again, to say where in the file each problem's value is.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from evalreg.io.pointer import split


class Places:
    """Say where the problems of a YAML file's records are: its documents are composed once,
    when the first record with a problem needs them."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.nodes: list[Any] | None = None

    def __call__(self, index: int, check: Any) -> Any:
        """Return the check of the record at `index` with the line and column of each problem."""
        if self.nodes is None:
            self.nodes = _documents(self.data)
        return _located(check, self.nodes[index]) if index < len(self.nodes) else check


def _documents(data: bytes) -> list[Any]:
    """Return the composed documents of a YAML file that was read (none if it cannot be)."""
    from yaml import YAMLError

    from evalreg.io.yamlstrict import documents

    try:
        return documents(data)
    except (YAMLError, ValueError):  # it was read once: no places is no worse than before
        return []


def _located(check: Any, document: Any) -> Any:
    """Return a YAML record's check with the line and column of each problem."""
    from evalreg.io.yamlstrict import locate

    issues = []
    for issue in check.issues:
        line, column = locate(document, split(issue.pointer))
        issues.append(replace(issue, line=line, column=column))
    return replace(check, issues=tuple(issues))
