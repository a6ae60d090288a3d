"""Safe YAML loading that refuses what JSON readers refuse: duplicate keys, non-finite numbers.

It refuses as well a document that aliases (`*name`) would expand beyond `MAX_YAML_NODES` nodes
or `MAX_YAML_DEPTH` levels (a "billion laughs" of a few hundred bytes stands for billions of
values), and one whose alias refers to a node that contains it (a value without end).
"""

from __future__ import annotations

import math
from functools import cache
from typing import Any

import yaml
from yaml.constructor import ConstructorError

from evalreg.io.codec import MAX_DEPTH, TOO_DEEP

_MERGE = "tag:yaml.org,2002:merge"

MAX_YAML_NODES = 1_000_000
"""The most nodes a YAML document may stand for, each alias counted as the nodes it repeats."""
MAX_YAML_DEPTH = MAX_DEPTH
"""The deepest sequences and mappings may nest in a YAML document, aliases expanded (as in
JSON: deeper nesting would exhaust the stack of the code that validates and writes records)."""


def _scalar(node: Any) -> bool:
    return isinstance(node, yaml.ScalarNode)


def _children(node: Any) -> list[Any]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def check_expansion(root: Any) -> None:
    """Refuse a composed document that aliases expand too far, or that contains itself.

    Each distinct node is measured once (its expanded size and depth from its children's), so
    this costs time in proportion to the document as written, not as expanded.

    Raises:
        ConstructorError: the document is too large or too deep once expanded, or recursive.
    """
    measured: dict[int, tuple[int, int]] = {}  # id of a node -> (expanded nodes, depth)
    open_nodes: set[int] = set()
    stack: list[tuple[Any, bool, int]] = [(root, False, 1)]  # node, measured, level
    while stack:
        node, done, level = stack.pop()
        key = id(node)
        if done:
            open_nodes.discard(key)
            sizes = [measured[id(child)] for child in _children(node)]
            size = 1 + sum(s for s, _ in sizes)
            depth = 0 if _scalar(node) else 1 + max((d for _, d in sizes), default=0)
            if size > MAX_YAML_NODES:
                problem = (
                    f"the document stands for more than {MAX_YAML_NODES:,} nodes (aliases expanded)"
                )
            elif depth > MAX_YAML_DEPTH:
                problem = f"the document is {TOO_DEEP}"
            else:
                measured[key] = (size, depth)
                continue
            raise ConstructorError(None, None, problem, node.start_mark)
        elif key in open_nodes:
            raise ConstructorError(
                None, None, "found an alias to a node that contains it", node.start_mark
            )
        elif key not in measured:
            if level > MAX_YAML_DEPTH and not _scalar(node):  # placed where it is too deep
                raise ConstructorError(None, None, f"the document is {TOO_DEEP}", node.start_mark)
            open_nodes.add(key)
            stack.append((node, True, level))
            stack.extend((child, False, level + 1) for child in _children(node))


@cache
def strict_loader() -> type[Any]:
    """Return a safe loader class (libyaml's where PyYAML has it) that is also strict."""
    base: type[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class StrictLoader(base):  # type: ignore[misc]
        def construct_document(self, node: Any) -> Any:
            check_expansion(node)
            return super().construct_document(node)

        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            if isinstance(node, yaml.MappingNode):
                seen: set[Any] = set()
                for key_node, _ in node.value:
                    if key_node.tag == _MERGE or not isinstance(key_node, yaml.ScalarNode):
                        continue
                    key = self.construct_object(key_node, deep=True)
                    if key in seen:
                        raise ConstructorError(
                            "while constructing a mapping",
                            node.start_mark,
                            f"found duplicate key {key!r}",
                            key_node.start_mark,
                        )
                    seen.add(key)
            return super().construct_mapping(node, deep=deep)

        def construct_yaml_float(self, node: Any) -> float:
            value: float = super().construct_yaml_float(node)
            if not math.isfinite(value):
                raise ConstructorError(
                    None, None, f"found a non-finite number {node.value!r}", node.start_mark
                )
            return value

    StrictLoader.add_constructor("tag:yaml.org,2002:float", StrictLoader.construct_yaml_float)
    return StrictLoader


def describe(err: yaml.YAMLError) -> str:
    """Return a YAML error as one line: the problem and where it is (line and column, from 1)."""
    if isinstance(err, yaml.MarkedYAMLError) and err.problem:
        mark = err.problem_mark or err.context_mark
        where = "" if mark is None else f" (line {mark.line + 1}, column {mark.column + 1})"
        context = f"{err.context}: " if err.context else ""
        return f"{context}{err.problem}{where}"
    return " ".join(str(err).split())


# -- where a value is --------------------------------------------------------------------------

_NULL = "tag:yaml.org,2002:null"


def documents(data: bytes) -> list[Any]:
    """Return the composed nodes of a YAML file's documents, as `read_yaml` yields records
    (empty documents left out), for `locate`.

    Raises:
        yaml.YAMLError, UnicodeDecodeError: the file is not valid YAML (then it was not read).
    """
    loader: type[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    nodes = yaml.compose_all(data.decode("utf-8"), Loader=loader)
    return [n for n in nodes if n is not None and not (_scalar(n) and n.tag == _NULL)]


def _entries(node: Any) -> list[tuple[Any, Any]]:
    """Return the key and value nodes of a mapping, merged mappings (`<<`) after its own."""
    own = [(k, v) for k, v in node.value if k.tag != _MERGE]
    for key, value in node.value:
        if key.tag == _MERGE:
            merged = value.value if isinstance(value, yaml.SequenceNode) else [value]
            own += [e for m in merged if isinstance(m, yaml.MappingNode) for e in _entries(m)]
    return own


def locate(root: Any, tokens: list[str]) -> tuple[int, int]:
    """Return the line and column (from 1) of the value a JSON pointer's `tokens` reach in a
    composed document: the key of a mapping's entry, the item of a sequence; as far as the
    document goes (a missing property: the mapping that lacks it)."""
    node, mark = root, root.start_mark
    for token in tokens:
        if isinstance(node, yaml.MappingNode):
            found = next(
                ((k, v) for k, v in _entries(node) if _scalar(k) and k.value == token), None
            )
            if found is None:
                break
            mark, node = found[0].start_mark, found[1]
        elif (
            isinstance(node, yaml.SequenceNode) and token.isdigit() and int(token) < len(node.value)
        ):
            node = node.value[int(token)]
            mark = node.start_mark
        else:
            break
    return mark.line + 1, mark.column + 1
