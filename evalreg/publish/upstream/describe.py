"""What each migration step says of itself, in plain words: for `evalreg steps`, the changelog,
the site's changes pages and `evalreg check` (a generated step's unfinished TODOs).

Read from the step module's text (its docstring and its `TODOS` and `LOSSES` constants) and
from its loaded `PARAMS`; nothing is run.
"""

from __future__ import annotations

import ast
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evalreg.engine.registry import Registry
    from evalreg.engine.steps import StepModule

_LOSS_WORDS = re.compile(r"\b(lose|loses|lost|loss|dropped|drops)\b", re.IGNORECASE)


@dataclass(frozen=True)
class StepInfo:
    """One step described: its versions, its words, its parameters, what it may lose."""

    family: str
    source: str
    target: str
    path: Path
    summary: str
    """The docstring's first line."""
    description: str
    """The whole docstring."""
    params: tuple[tuple[str, str, Any], ...]
    """Each parameter's name, help and default."""
    losses: tuple[str, ...]
    """What the step may lose: its `LOSSES`, else the docstring's lines that speak of loss."""
    todos: tuple[str, ...]
    """A generated step's unfinished decisions (its `TODOS`)."""
    downgrade: bool = False

    def to_json(self) -> dict[str, Any]:
        """Return the description as a JSON-able dict."""
        return {
            "family": self.family,
            "from": self.source,
            "to": self.target,
            "path": str(self.path),
            "summary": self.summary,
            "description": self.description,
            "params": [{"name": n, "help": h, "default": d} for n, h, d in self.params],
            "may_lose": list(self.losses),
            "todos": list(self.todos),
            "downgrade": self.downgrade,
        }


def _constant(tree: ast.Module, name: str) -> tuple[str, ...]:
    for node in tree.body:
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            try:
                found = ast.literal_eval(value)
            except ValueError:
                return ()
            if isinstance(found, (tuple, list)):
                return tuple(str(item) for item in found)
    return ()


def todos_of(path: Path) -> tuple[str, ...]:
    """Return the `TODOS` a step module lists (empty when it has none or cannot be read)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return ()
    return _constant(tree, "TODOS")


def describe_step(module: StepModule) -> StepInfo:
    """Return what a loaded step module says of itself."""
    description = " ".join(module.doc.split("\n", 1)[:1]).strip()
    text = module.doc.strip()
    losses: tuple[str, ...] = ()
    todos: tuple[str, ...] = ()
    try:
        tree = ast.parse(module.path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        tree = None
    if tree is not None:
        losses, todos = _constant(tree, "LOSSES"), _constant(tree, "TODOS")
    if not losses:
        paragraphs = [" ".join(p.split()) for p in re.split(r"\n\s*\n|\n- ", text)]
        losses = tuple(p.lstrip("- ") for p in paragraphs[1:] if _LOSS_WORDS.search(p))
    return StepInfo(
        module.family,
        module.source,
        module.target,
        module.path,
        description,
        text,
        tuple((p.name, p.help, p.default) for p in module.params),
        losses,
        todos,
        module.downgrade is not None,
    )


def describe_steps(registry: Registry, family: str) -> list[StepInfo]:
    """Return every step of a family, described, in version order.

    Raises:
        UnknownFamilyError: no such family.
        RegistryError: a step module is malformed.
    """
    from evalreg.registry.versions import parse_version

    modules = registry.steps(family).modules
    infos = [describe_step(m) for m in modules]
    return sorted(infos, key=lambda i: (parse_version(i.source), parse_version(i.target)))


def step_accounts(
    registry: Registry, family: str, versions: Sequence[str], prefix: str = ""
) -> dict[str, str]:
    """Return the description of the step into each of `versions` from the one before it.

    Keys are `prefix` + version; a version reached by no direct step has none.

    Raises:
        UnknownFamilyError: no such family.
        RegistryError: a step module is malformed.
    """
    direct = {(i.source, i.target): i.description for i in describe_steps(registry, family)}
    return {
        prefix + new: direct[(old, new)]
        for old, new in itertools.pairwise(versions)
        if (old, new) in direct
    }
