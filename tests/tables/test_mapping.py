"""The mapping from JSON Schema versions to Arrow schemas, and what is published of it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
import yaml

import evalreg
from evalreg import Registry, TableError
from evalreg.tables.features import features_yaml, schema_json
from evalreg.tables.mapping import layout


@pytest.fixture(scope="session")
def datasets() -> Any:
    """Hugging Face `datasets`, imported by the tests that use it (it takes a second or two)."""
    return pytest.importorskip("datasets")


VERSIONS = [
    (family, version)
    for family in evalreg.default_registry().families()
    for version in evalreg.default_registry().versions(family)
]


def render(schema: pa.Schema) -> dict[str, Any]:
    """Render a pyarrow schema as `schema_json` renders a layout."""

    def field(f: pa.Field) -> dict[str, Any]:
        kind = f.type
        found: dict[str, Any] = {"name": f.name, "nullable": f.nullable}
        if pa.types.is_struct(kind):
            fields = [field(kind.field(i)) for i in range(kind.num_fields)]
            found |= {"type": "struct", "fields": fields}
        elif pa.types.is_list(kind):
            found |= {"type": "list", "fields": [field(kind.value_field)]}
        else:
            found["type"] = str(kind)
        found["metadata"] = {k.decode(): v.decode() for k, v in (f.metadata or {}).items()}
        return found

    metadata = {k.decode(): v.decode() for k, v in (schema.metadata or {}).items()}
    return {"fields": [field(f) for f in schema], "metadata": metadata}


def _fields(schema: pa.Schema) -> list[pa.Field]:
    found = []
    stack = list(schema)
    while stack:
        f = stack.pop()
        found.append(f)
        kind = f.type
        if pa.types.is_struct(kind):
            stack += [kind.field(i) for i in range(kind.num_fields)]
        elif pa.types.is_list(kind):
            stack.append(kind.value_field)
    return found


@pytest.mark.parametrize(("family", "version"), VERSIONS, ids=[f"{f}@{v}" for f, v in VERSIONS])
def test_every_built_in_version_has_an_arrow_schema_and_a_features_block(
    registry: Registry, datasets: Any, family: str, version: str
) -> None:
    schema = evalreg.arrow_schema(family, version, registry=registry)
    assert schema.names[-1] == "_extra" and len(schema) > 1
    assert schema.metadata[b"evalreg.family"] == family.encode()
    for f in _fields(schema):
        if f.name == "_extra" or (f.name == "element" and not f.metadata):
            continue  # the entries of a map carry no place of their own
        assert b"evalreg.pointer" in f.metadata, f.name
        if pa.types.is_string(f.type) and f.metadata.get(b"evalreg.encoding") == b"json":
            raise AssertionError(f"{f.name}: JSON text without the arrow.json type")
    # the published JSON rendering is the schema, field for field
    found = layout(registry, family, version)
    assert schema_json(found) == render(schema)
    # the dataset card block loads as the features datasets derives from the schema
    block = yaml.safe_load(features_yaml(found))["dataset_info"]["features"]
    features = datasets.Features._from_yaml_list(block)
    assert features == datasets.Features.from_arrow_schema(schema)


SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["name", "score", "tags"],
    "properties": {
        "schema_version": {"type": "string"},
        "name": {"type": "string", "description": "The run's name."},
        "kind": {"enum": ["a", "b"]},
        "score": {"type": "number"},
        "count": {"type": "integer"},
        "ok": {"type": "boolean"},
        "maybe": {"type": ["integer", "null"]},
        "tags": {"type": "array", "items": {"type": "string"}},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "named": {
            "type": "object",
            "properties": {"kind": {"const": "x"}},
            "additionalProperties": {"type": "string"},
        },
        "free": {"type": "object"},
        "either": {"anyOf": [{"type": "string"}, {"type": "number"}]},
        "both": {"anyOf": [{"type": "integer"}, {"type": "number"}, {"type": "null"}]},
        "pair": {"type": "array", "prefixItems": [{"type": "string"}]},
        "tree": {"$ref": "#/$defs/node"},
        "event": {
            "oneOf": [
                {
                    "type": "object",
                    "required": ["type", "a"],
                    "properties": {"type": {"const": "one"}, "a": {"type": "string"}},
                },
                {
                    "type": "object",
                    "required": ["type"],
                    "properties": {"type": {"const": "two"}, "b": {"type": "integer"}},
                },
            ]
        },
        "closed": {
            "allOf": [
                {"type": "object", "properties": {"x": {"type": "integer"}}},
                {"properties": {"y": {"type": "string"}}, "required": ["y"]},
            ],
            "additionalProperties": False,
        },
    },
    "$defs": {
        "node": {
            "type": "object",
            "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
        }
    },
}


@pytest.fixture
def demo(make_registry_dir: Any) -> Registry:
    root = make_registry_dir({"demo.score": {"schemas": {"1.0": SCHEMA}}})
    return evalreg.load_registry([root], builtin=False)


def test_the_mapping_table(demo: Registry) -> None:
    schema = evalreg.arrow_schema("demo.score", registry=demo)
    types = {f.name: f.type for f in schema}
    strings = pa.list_(
        pa.field(
            "element",
            pa.struct(
                [
                    pa.field("key", pa.string(), nullable=False),
                    pa.field("value", pa.string(), nullable=False),
                ]
            ),
            nullable=False,
        )
    )
    assert types["name"] == pa.string() and not schema.field("name").nullable
    assert types["kind"] == pa.dictionary(pa.int32(), pa.string())
    assert types["score"] == pa.float64() and types["count"] == pa.int64()
    assert types["ok"] == pa.bool_() and schema.field("ok").nullable
    assert types["maybe"] == pa.int64()
    assert types["tags"] == pa.list_(pa.field("element", pa.string(), nullable=False))
    assert types["labels"] == strings and types["named"] == strings
    assert types["both"] == pa.float64()
    for name, reason in [
        ("free", b"a free-form object"),
        ("either", b"a union of different shapes"),
        ("pair", b"an array of items of set places (a tuple)"),
    ]:
        assert types[name] == pa.json_(pa.string())
        assert schema.field(name).metadata[b"evalreg.reason"] == reason
    children = types["tree"].field("children").type.value_type
    assert children == pa.json_(pa.string())  # the recursion stops at JSON text
    event = types["event"]
    assert [event.field(i).name for i in range(event.num_fields)] == ["type", "a", "b"]
    assert not event.field("type").nullable and event.field("a").nullable
    closed = types["closed"]
    assert [closed.field(i).name for i in range(closed.num_fields)] == ["x", "y"]
    assert not closed.field("y").nullable
    assert schema.field("name").metadata == {
        b"evalreg.pointer": b"/name",
        b"evalreg.description": b"The run's name.",
    }


def test_what_cannot_be_a_table_is_refused_when_the_schema_is_mapped(
    make_registry_dir: Any,
) -> None:
    scalar = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "string"}
    reserved = {"type": "object", "properties": {"_extra": {"type": "string"}}}
    sourced = {"type": "object", "properties": {"_source": {"type": "string"}}}
    root = make_registry_dir(
        {
            "demo.scalar": {"schemas": {"1.0": scalar}},
            "demo.reserved": {"schemas": {"1.0": reserved}},
            "demo.sourced": {"schemas": {"1.0": sourced}},
        }
    )
    registry = evalreg.load_registry([root], builtin=False)
    with pytest.raises(TableError, match=r"demo.scalar 1.0: its records are not objects"):
        evalreg.arrow_schema("demo.scalar", registry=registry)
    with pytest.raises(TableError, match=r"/_extra: a property is named _extra"):
        evalreg.arrow_schema("demo.reserved", registry=registry)
    evalreg.arrow_schema("demo.sourced", registry=registry)
    with pytest.raises(TableError, match=r"a property is named _source"):
        evalreg.arrow_schema("demo.sourced", provenance=True, registry=registry)
    with pytest.raises(TableError, match=r"cannot explode /model_info/name: it is a string column"):
        evalreg.arrow_schema("eee.aggregate", explode="/model_info/name")
    with pytest.raises(TableError, match=r"no column at /nowhere"):
        evalreg.arrow_schema("eee.aggregate", explode="/nowhere")


def test_explode_and_provenance_change_the_columns() -> None:
    plain = evalreg.arrow_schema("eee.aggregate", "0.3.0")
    wide = evalreg.arrow_schema(
        "eee.aggregate", "0.3.0", explode="/evaluation_results", provenance=True
    )
    assert pa.types.is_list(plain.field("evaluation_results").type)
    item = plain.field("evaluation_results").type.value_type
    assert wide.field("evaluation_results").type == item
    assert wide.names[-8:] == [
        "_extra",
        "_source",
        "_line",
        "_family",
        "_version",
        "_target",
        "_notes",
        "_index",
    ]
    assert wide.metadata[b"evalreg.explode"] == b"/evaluation_results"


def test_import_evalreg_does_not_import_pyarrow() -> None:
    code = "import sys, evalreg; evalreg.load; print('pyarrow' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_without_pyarrow_the_arrow_extra_is_named_in_one_line() -> None:
    code = (
        "import sys; sys.modules['pyarrow'] = None\n"
        "import evalreg\n"
        "try:\n"
        "    evalreg.arrow_schema('eee.aggregate')\n"
        "except evalreg.MissingExtraError as err:\n"
        "    print(err)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == (
        "tables (Arrow, Parquet, `evalreg export`) need the arrow extra: "
        "pip install 'evalreg[arrow]'\n"
    )


def test_publish_writes_the_arrow_schema_and_features_beside_each_version(
    registry: Registry, tmp_path: Path
) -> None:
    from evalreg.publish.site import publish

    result = publish(registry, tmp_path / "site", families=["eee.aggregate", "mnemoverse.gold"])
    for family in ("eee.aggregate", "mnemoverse.gold"):
        for version in registry.versions(family):
            arrow = tmp_path / "site" / family / f"{version}.arrow.json"
            features = tmp_path / "site" / family / f"{version}.features.yaml"
            published = json.loads(arrow.read_text())
            assert published == render(evalreg.arrow_schema(family, version, registry=registry))
            block = yaml.safe_load(features.read_text())["dataset_info"]["features"]
            assert block[-1] == {"name": "_extra", "dtype": "json"}
            assert tmp_path / "site" / family / f"{version}.arrow.json" in result.files
    index = (tmp_path / "site" / "index.html").read_text()
    assert '<a href="eee.aggregate/0.3.0.arrow.json">Arrow schema</a>' in index
    assert '<a href="eee.aggregate/0.3.0.features.yaml">HF features</a>' in index
