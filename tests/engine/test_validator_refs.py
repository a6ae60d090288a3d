"""A schema that refers only into itself is compiled alone, one that refers out with the rest."""

from __future__ import annotations

from typing import Any

import pytest

from evalreg.engine.validators import _refers_out


@pytest.mark.parametrize(
    ("document", "out"),
    [
        ({"type": "object"}, False),
        ({"properties": {"a": {"$ref": "#/$defs/a"}}, "$defs": {"a": {}}}, False),
        ({"items": [{"$dynamicRef": "#meta"}]}, False),
        ({"properties": {"a": {"$ref": "urn:evalreg:x.family:2#/$defs/s"}}}, True),
        ({"allOf": [{"$ref": "other.schema.json"}]}, True),
        ({"anyOf": [{"$recursiveRef": "#"}, {"$ref": 3}]}, True),
        ({"properties": {"$ref": {"type": "string"}}}, True),  # unsure: the registry is there
    ],
)
def test_references_out_of_a_schema(document: Any, out: bool) -> None:
    assert _refers_out(document) is out
