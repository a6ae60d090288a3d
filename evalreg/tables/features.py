"""What is published beside each schema version for table readers, made without pyarrow.

`features_yaml` is the `dataset_info.features` block of a Hugging Face dataset card that loads
an exported Parquet file with its declared types; `schema_json` is the version's Arrow schema
as JSON (each field's name, Arrow type, nullability and metadata, nested fields under
`fields`), as `evalreg.arrow_schema` makes it with pyarrow.
"""

from __future__ import annotations

from typing import Any

from evalreg.tables.mapping import EXTRA, MAPPING_VERSION, Column, Layout

_DTYPES = {
    "string": "string",
    "enum": "string",
    "int64": "int64",
    "float64": "float64",
    "bool": "bool",
    "json": "json",
}
_ARROW = {
    "string": "string",
    "enum": "dictionary<values=string, indices=int32, ordered=0>",
    "int64": "int64",
    "float64": "double",
    "bool": "bool",
    "json": "extension<arrow.json>",
}


def _feature(column: Column) -> dict[str, Any]:
    """Return a column as a Hugging Face feature (the YAML form, without its name)."""
    if column.kind in _DTYPES:
        return {"dtype": _DTYPES[column.kind]}
    if column.kind == "struct":
        return {"struct": [{"name": c.name, **_feature(c)} for c in column.children]}
    if column.kind == "map":
        return {"list": [{"name": c.name, **_feature(c)} for c in column.children]}
    inner = _feature(column.children[0])
    if "dtype" in inner:
        return {"list": inner["dtype"]}
    if "struct" in inner:
        return {"list": inner["struct"]}
    return {"list": inner}


def features(layout: Layout) -> list[dict[str, Any]]:
    """Return the `features` list of a dataset card for a version's table (with `_extra`)."""
    found = [{"name": c.name, **_feature(c)} for c in layout.columns]
    return [*found, {"name": EXTRA, "dtype": "json"}]


def features_yaml(layout: Layout) -> str:
    """Return the `dataset_info:` block of a dataset card's YAML header for a version."""
    import yaml

    block = {"dataset_info": {"features": features(layout)}}
    return yaml.safe_dump(block, sort_keys=False, allow_unicode=True, width=100)


def _field(column: Column) -> dict[str, Any]:
    metadata = {"evalreg.pointer": column.pointer}
    if column.description:
        metadata["evalreg.description"] = column.description
    if column.kind == "json":
        metadata |= {"evalreg.encoding": "json", "evalreg.reason": column.reason}
    elif column.kind == "map":
        metadata["evalreg.encoding"] = "map"
    found: dict[str, Any] = {"name": column.name, "nullable": column.nullable}
    if column.kind in _ARROW:
        found["type"] = _ARROW[column.kind]
    elif column.kind == "struct":
        found |= {"type": "struct", "fields": [_field(c) for c in column.children]}
    elif column.kind == "map":
        entries = {
            "name": "element",
            "nullable": False,
            "type": "struct",
            "fields": [_field(c) for c in column.children],
            "metadata": {},
        }
        found |= {"type": "list", "fields": [entries]}
    else:
        found |= {"type": "list", "fields": [_field(column.children[0])]}
    found["metadata"] = metadata
    return found


def schema_json(layout: Layout) -> dict[str, Any]:
    """Return a version's Arrow schema as JSON (what `arrow_schema` gives, field for field)."""
    extra = {
        "name": EXTRA,
        "nullable": True,
        "type": _ARROW["json"],
        "metadata": {
            "evalreg.encoding": "json",
            "evalreg.reason": "what the typed columns do not hold as it is, by JSON pointer",
        },
    }
    return {
        "fields": [*(_field(c) for c in layout.columns), extra],
        "metadata": {
            "evalreg.family": layout.family,
            "evalreg.version": layout.version,
            "evalreg.mapping": MAPPING_VERSION,
        },
    }
