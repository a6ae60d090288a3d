"""Safe YAML loading that refuses what JSON readers refuse: duplicate keys, non-finite numbers."""

from __future__ import annotations

import math
from functools import cache
from typing import Any

import yaml
from yaml.constructor import ConstructorError

_MERGE = "tag:yaml.org,2002:merge"


@cache
def strict_loader() -> type[Any]:
    """Return a safe loader class (libyaml's where PyYAML has it) that is also strict."""
    base: type[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class StrictLoader(base):  # type: ignore[misc]
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
