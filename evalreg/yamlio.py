"""Writing YAML back: keep key order and, where the keys survive, their comments.

Records are migrated as plain data. To write a YAML file back, the original is loaded again with
ruamel.yaml's round-trip loader and brought up to date in place, so comments and the order of the
keys that a step left alone are kept; new keys are placed where the migrated record puts them.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any


def _yaml() -> Any:
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.default_flow_style = False
    yaml.width = 100
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.preserve_quotes = True
    return yaml


def _update(node: Any, new: Any) -> Any:
    """Return `node` changed in place to equal `new`, keeping comments where keys survive."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    if isinstance(node, CommentedMap) and isinstance(new, dict):
        for key in [k for k in node if k not in new]:
            del node[key]
        for position, (key, value) in enumerate(new.items()):
            if key in node:
                node[key] = _update(node[key], value)
                continue
            node.insert(position, key, value)
        return node
    if isinstance(node, CommentedSeq) and isinstance(new, list) and len(node) == len(new):
        for index, value in enumerate(new):
            node[index] = _update(node[index], value)
        return node
    return new


def dump_yaml(records: Sequence[Any], original: bytes) -> bytes:
    """Return YAML text of `records` (one document each), reusing the layout of `original`."""
    yaml = _yaml()
    try:
        old = list(yaml.load_all(original.decode("utf-8")))
    except Exception:  # the original was readable by the safe loader; layout reuse is a bonus
        old = []
    documents = [
        _update(old[i], record) if i < len(old) else record for i, record in enumerate(records)
    ]
    out = io.StringIO()
    if len(documents) == 1:
        yaml.dump(documents[0], out)
    else:
        yaml.dump_all(documents, out)
    return out.getvalue().encode("utf-8")
