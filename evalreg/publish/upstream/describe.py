"""What each migration step says of itself, in plain words: for `evalreg steps`, the changelog,
the site's changes pages and `evalreg check` (a generated step's unfinished TODOs).

Read from the step module's text (its docstring, `FROM`, `TO`, `PARAMS`, `TODOS` and `LOSSES`),
parsed and never imported: describing a registry runs none of its code.
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
    from evalreg.registry.core import BaseRegistry

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


def _literal(node: ast.expr | None) -> Any:
    if node is None:
        return None
    try:
        return ast.literal_eval(node)
    except ValueError:
        return "(computed)"


def _params(tree: ast.Module) -> tuple[tuple[str, str, Any], ...]:
    """Return the `Param(...)` calls of `PARAMS` as (name, help, default), read as literals."""
    found: list[tuple[str, str, Any]] = []
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if not any(isinstance(t, ast.Name) and t.id == "PARAMS" for t in targets):
            continue
        assert isinstance(node, ast.Assign)
        items = node.value.elts if isinstance(node.value, (ast.Tuple, ast.List)) else []
        for call in items:
            if not isinstance(call, ast.Call):
                continue
            given = {k.arg: k.value for k in call.keywords if k.arg}
            name = _literal(call.args[0]) if call.args else _literal(given.get("name"))
            help_text = (
                _literal(call.args[1]) if len(call.args) > 1 else _literal(given.get("help"))
            )
            default = (
                _literal(call.args[2]) if len(call.args) > 2 else _literal(given.get("default"))
            )
            found.append((str(name), str(help_text or ""), default))
    return tuple(found)


def describe_file(path: Path, family: str) -> StepInfo | None:
    """Return what a step module says of itself, read from its text (None: unreadable).

    The module is parsed, never imported: describing a registry runs none of its code.
    """
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return None
    constants: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id in ("FROM", "TO"):
                    constants[target.id] = _literal(node.value)
    if not isinstance(constants.get("FROM"), str) or not isinstance(constants.get("TO"), str):
        return None
    text = (ast.get_docstring(tree) or "").strip()
    losses, todos = _constant(tree, "LOSSES"), _constant(tree, "TODOS")
    if not losses:
        paragraphs = [" ".join(p.split()) for p in re.split(r"\n\s*\n|\n- ", text)]
        losses = tuple(p.lstrip("- ") for p in paragraphs[1:] if _LOSS_WORDS.search(p))
    downgrade = any(
        isinstance(node, ast.FunctionDef) and node.name == "downgrade" for node in tree.body
    )
    return StepInfo(
        family,
        constants["FROM"],
        constants["TO"],
        path,
        text.split("\n", 1)[0].strip(),
        text,
        _params(tree),
        losses,
        todos,
        downgrade,
    )


def describe_steps(registry: BaseRegistry, family: str) -> list[StepInfo]:
    """Return every step of a family, described from its file, in version order.

    Raises:
        UnknownFamilyError: no such family.
    """
    from evalreg.registry.versions import is_version, parse_version

    infos = [
        info
        for path in registry.step_files(family)
        if (info := describe_file(path, family)) is not None
        and is_version(info.source)
        and is_version(info.target)
    ]
    return sorted(infos, key=lambda i: (parse_version(i.source), parse_version(i.target)))


def step_accounts(
    registry: BaseRegistry, family: str, versions: Sequence[str], prefix: str = ""
) -> dict[str, str]:
    """Return the description of the step into each of `versions` from the one before it.

    Keys are `prefix` + version; a version reached by no direct step has none.

    Raises:
        UnknownFamilyError: no such family.
    """
    direct = {(i.source, i.target): i.description for i in describe_steps(registry, family)}
    return {
        prefix + new: direct[(old, new)]
        for old, new in itertools.pairwise(versions)
        if (old, new) in direct
    }
