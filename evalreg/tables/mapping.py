"""One schema version as a tree of typed columns: the one mapping from JSON Schema to tables.

| JSON Schema                                                  | column                           |
|--------------------------------------------------------------|----------------------------------|
| object with `properties`                                     | struct (declared order)          |
| array with one `items` schema                                | list of the item's column        |
| string                                                       | string                           |
| string with `enum` or `const`                                | dictionary-encoded string        |
| integer                                                      | int64                            |
| number (or integer and number)                               | float64                          |
| boolean                                                      | bool                             |
| object without `properties` whose other values are strings   | list of `{key, value}` entries   |
| any other free-form object, a union of different shapes, a   | JSON text                        |
| value of several types, a tuple, a recursive `$ref`, any value |                                |

`$ref`s are followed and `allOf` branches merged; `type: [X, "null"]`, and a union whose other
branches have one shape, is that shape, nullable. A property is non-nullable when it is required
and cannot be null. Keywords that only constrain values (`minimum`, `pattern`, `format`,
`if`/`then`/`else`, `not`) change no column. The tree is made once per version and registry.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from evalreg.errors import TableError
from evalreg.io.codec import schema_type
from evalreg.io.pointer import escape

if TYPE_CHECKING:
    from referencing._core import Resolver

    from evalreg.registry.core import BaseRegistry

MAPPING_VERSION = "1"
"""The version of the mapping, written into every table's metadata: a change of the table a
schema maps to (not of the schema) changes it."""

Kind = Literal["struct", "list", "map", "json", "string", "enum", "int64", "float64", "bool"]
SCALARS = frozenset({"string", "enum", "int64", "float64", "bool"})
EXTRA = "_extra"
"""The column of what the typed columns do not hold as it is, by JSON pointer (see `rows`)."""
ITEM = "*"
"""How a column's pointer names every item of an array (`/evaluation_results/*/score`)."""


@dataclass(frozen=True)
class Column:
    """One column, or one field of a struct, list item or map value, mapped from a schema."""

    name: str
    kind: Kind
    nullable: bool
    pointer: str
    """Where its values are in a record: a JSON pointer, with `*` for every item of an array."""
    description: str = ""
    children: tuple[Column, ...] = ()
    """A struct's fields, a list's item, a map's value."""
    required: bool = False
    """A struct field the schema requires (written back even when null)."""
    open: bool = False
    """A struct whose object may hold properties it does not declare (kept in `_extra`)."""
    reason: str = ""
    """Why a column holds JSON text."""
    loose: bool = False
    """A column whose schema says no `type`, or a property one branch of a union declares and
    another leaves open: a value of another type is valid there too (kept in `_extra`, the
    column null)."""

    @property
    def shape(self) -> tuple[Any, ...]:
        """Return what two branches of a union must share to be one column (nullability and
        what is required aside)."""
        return (self.kind, tuple((c.name, c.shape) for c in self.children))

    def child(self, name: str) -> Column | None:
        """Return the field `name` of a struct (None if it has none)."""
        return next((c for c in self.children if c.name == name), None)


@dataclass(frozen=True)
class Layout:
    """A version's table: its root struct's fields are the columns, `_extra` after them."""

    family: str
    version: str
    root: Column

    @property
    def columns(self) -> tuple[Column, ...]:
        """Return the record's columns (without `_extra`)."""
        return self.root.children

    def column_at(self, pointer: str) -> Column:
        """Return the column of a JSON pointer through structs (`/a/b`).

        Raises:
            TableError: no column is there.
        """
        from evalreg.io.pointer import split

        node = self.root
        for token in split(pointer):
            found = node.child(str(token)) if node.kind == "struct" else None
            if found is None:
                raise TableError(
                    f"no column at {pointer} (a struct field is named by its path of "
                    f"properties, such as /evaluation_results)",
                    self.family,
                    self.version,
                )
            node = found
        return node


# -- what a schema says, merged over `$ref` and `allOf` -----------------------------------------

Sub = tuple[Any, "Resolver[Any]"]
"""A subschema and the resolver of its `$ref`s."""
_TYPES = ("object", "array", "string", "integer", "number", "boolean", "null")


@dataclass
class _Facets:
    types: set[str] | None = None
    properties: dict[str, list[Sub]] = field(default_factory=dict)
    required: set[str] = field(default_factory=set)
    closed: bool = False
    others: list[Sub] = field(default_factory=list)
    """Schemas of undeclared properties (`additionalProperties`, `patternProperties`)."""
    any_other: bool = True
    """Undeclared properties of any value are allowed (no `additionalProperties` schema)."""
    items: list[Sub] = field(default_factory=list)
    tuple_items: bool = False
    enum: list[Any] | None = None
    unions: list[list[Sub]] = field(default_factory=list)
    description: str = ""
    recursive: bool = False
    dynamic: bool = False
    never: bool = False
    refs: list[int] = field(default_factory=list)
    """The schemas reached by `$ref`, open while the value's children are mapped."""


def _same(a: Any, b: Any) -> bool:
    return schema_type(a) == schema_type(b) and a == b


class _Mapper:
    """Maps the schema of one version, following `$ref`s with the registry's resolver."""

    def __init__(self, registry: BaseRegistry, family: str, version: str) -> None:
        self.registry, self.family, self.version = registry, family, version
        self.active: list[int] = []

    def fold(self, schema: Any, resolver: Resolver[Any], facets: _Facets) -> None:
        """Add what `schema` says to `facets` (its `$ref` and `allOf` branches included)."""
        if schema is True or schema == {}:
            return
        if schema is False or not isinstance(schema, dict):
            facets.never = True
            return
        if isinstance(schema.get("$id"), str) and not schema["$id"].startswith("#"):
            from referencing import Resource
            from referencing.jsonschema import DRAFT202012

            resource = Resource.from_contents(schema, default_specification=DRAFT202012)
            resolver = resolver.in_subresource(resource)
        if not facets.description and isinstance(schema.get("description"), str):
            facets.description = schema["description"]
        if "$dynamicRef" in schema or "$recursiveRef" in schema:
            facets.dynamic = True
        ref = schema.get("$ref")
        if isinstance(ref, str):
            self._follow(ref, resolver, facets)
        for branch in schema.get("allOf") or ():
            self.fold(branch, resolver, facets)
        self._fold_type(schema, facets)
        self._fold_object(schema, resolver, facets)
        items = schema.get("items")
        if isinstance(items, list) or "prefixItems" in schema:
            facets.tuple_items = True
        elif items is not None:
            facets.items.append((items, resolver))
        for key in ("anyOf", "oneOf"):
            branches = schema.get(key)
            if isinstance(branches, list) and branches:
                facets.unions.append([(b, resolver) for b in branches])

    def _follow(self, ref: str, resolver: Resolver[Any], facets: _Facets) -> None:
        from referencing.exceptions import Unresolvable

        try:
            resolved = resolver.lookup(ref)
        except Unresolvable as err:
            raise TableError(
                f"$ref {ref!r} does not resolve in the registry", self.family, self.version
            ) from err
        key = id(resolved.contents)  # the documents live as long as the registry
        if key in self.active:
            facets.recursive = True
            return
        self.active.append(key)
        facets.refs.append(key)
        try:
            self.fold(resolved.contents, resolved.resolver, facets)
        finally:
            self.active.pop()

    @staticmethod
    def _fold_type(schema: Mapping[str, Any], facets: _Facets) -> None:
        kind = schema.get("type")
        if kind is not None:
            found = {kind} if isinstance(kind, str) else {t for t in kind if isinstance(t, str)}
            if "number" in found:
                found.add("integer")
            facets.types = found if facets.types is None else facets.types & found
        values: list[Any] | None = None
        if "const" in schema:
            values = [schema["const"]]
        elif isinstance(schema.get("enum"), list):
            values = list(schema["enum"])
        if values is not None:
            if facets.enum is not None:
                values = [v for v in values if any(_same(v, w) for w in facets.enum)]
            facets.enum = values

    @staticmethod
    def _fold_object(schema: Mapping[str, Any], resolver: Resolver[Any], facets: _Facets) -> None:
        for name, sub in (schema.get("properties") or {}).items():
            facets.properties.setdefault(name, []).append((sub, resolver))
        required = schema.get("required")
        if isinstance(required, list):
            facets.required.update(r for r in required if isinstance(r, str))
        for sub in (schema.get("patternProperties") or {}).values():
            facets.others.append((sub, resolver))
        extra = schema.get("additionalProperties")
        if extra is False and not schema.get("patternProperties"):
            facets.closed = True
        elif extra is not None and extra is not True:
            facets.others.append((extra, resolver))
            facets.any_other = False

    # -- columns ---------------------------------------------------------------------------------

    def column(self, subs: Iterable[Sub], name: str, pointer: str, required: bool) -> Column:
        """Return the column of a value that every schema of `subs` describes."""
        facets = _Facets()
        for schema, resolver in subs:
            self.fold(schema, resolver, facets)
        depth = len(self.active)
        self.active.extend(facets.refs)  # a $ref to one of them below is a recursion
        try:
            found = self._column(facets, name, pointer)
        finally:
            del self.active[depth:]
        return replace(found, required=required, nullable=found.nullable or not required)

    def _json(self, facets: _Facets, name: str, pointer: str, reason: str) -> Column:
        return Column(name, "json", True, pointer, facets.description, reason=reason)

    def _column(self, facets: _Facets, name: str, pointer: str) -> Column:
        if facets.recursive:
            return self._json(facets, name, pointer, "a recursive $ref")
        if facets.dynamic:
            return self._json(facets, name, pointer, "a dynamic $ref")
        if len(facets.unions) > 1:
            return self._json(facets, name, pointer, "several unions (anyOf, oneOf)")
        if facets.unions:
            return self._union(facets, name, pointer)
        types = self._types(facets)
        nullable = "null" in types
        types.discard("null")
        if "number" in types:
            types.discard("integer")
        if not types:
            reason = "only null" if nullable else "any value"
            return self._json(facets, name, pointer, reason)
        if len(types) > 1:
            return self._json(facets, name, pointer, "several types: " + ", ".join(sorted(types)))
        kind = types.pop()
        if kind in ("object", "array") and facets.types is None and facets.enum is None:
            # `properties` or `items` without `type`: other types are valid too.
            found = self._object(facets, name, pointer, True) if kind == "object" else None
            found = found or self._array(facets, name, pointer, True)
            return replace(found, loose=found.kind in ("struct", "list", "map"))
        if kind == "object":
            return self._object(facets, name, pointer, nullable)
        if kind == "array":
            return self._array(facets, name, pointer, nullable)
        scalar: Kind = {"string": "string", "integer": "int64", "number": "float64"}.get(
            kind, "bool"
        )  # type: ignore[assignment]
        if kind == "string" and facets.enum is not None:
            scalar = "enum"
        return Column(name, scalar, nullable, pointer, facets.description)

    @staticmethod
    def _types(facets: _Facets) -> set[str]:
        if facets.never:
            return set()
        types = set(_TYPES) if facets.types is None else set(facets.types)
        if facets.types is None and facets.enum is None:
            if facets.properties or facets.others:
                types = {"object"}
            elif facets.items or facets.tuple_items:
                types = {"array"}
            else:
                return {"null", "object", "array", "string", "number"}  # any value: JSON text
        if facets.enum is not None:
            types &= {schema_type(v) for v in facets.enum}
        return types

    def _object(self, facets: _Facets, name: str, pointer: str, nullable: bool) -> Column:
        if not facets.properties:
            if facets.closed:
                return self._json(facets, name, pointer, "an object without properties")
            others = not facets.any_other and facets.others
            value = self._strings(facets, pointer) if others else None
            if value is not None:
                key = Column("key", "string", False, f"{pointer}/{ITEM}")
                return Column(name, "map", nullable, pointer, facets.description, (key, value))
            return self._json(facets, name, pointer, "a free-form object")
        children = tuple(
            self.column(subs, prop, f"{pointer}/{escape(prop)}", prop in facets.required)
            for prop, subs in facets.properties.items()
        )
        if not facets.closed and not facets.any_other and facets.others:
            value = self._strings(facets, pointer)
            if value is not None and all(c.kind in ("string", "enum") for c in children):
                # A strings-only object that names some of its keys: every key in one map.
                for prop, subs in facets.properties.items():
                    known = self.column(subs, prop, f"{pointer}/{escape(prop)}", True)
                    value = replace(value, nullable=value.nullable or known.nullable)
                key = Column("key", "string", False, f"{pointer}/{ITEM}")
                return Column(name, "map", nullable, pointer, facets.description, (key, value))
        return Column(
            name, "struct", nullable, pointer, facets.description, children, open=not facets.closed
        )

    def _strings(self, facets: _Facets, pointer: str) -> Column | None:
        """Return the value column of an object's undeclared properties if they are strings."""
        value = self.column(facets.others, "value", f"{pointer}/{ITEM}", True)
        if value.kind not in ("string", "enum"):
            return None
        return Column("value", "string", value.nullable, value.pointer)

    def _array(self, facets: _Facets, name: str, pointer: str, nullable: bool) -> Column:
        if facets.tuple_items:
            return self._json(facets, name, pointer, "an array of items of set places (a tuple)")
        item = self.column(facets.items, "element", f"{pointer}/{ITEM}", True)
        return Column(name, "list", nullable, pointer, facets.description, (item,))

    def _union(self, facets: _Facets, name: str, pointer: str) -> Column:
        """Return the column of a union: its branches' one shape, or JSON text."""
        (branches,) = facets.unions
        base = replace(facets, unions=[], description="")
        found: list[Column] = []
        nullable = False
        for schema, resolver in branches:
            branch = replace(
                base,
                properties={k: list(v) for k, v in base.properties.items()},
                required=set(base.required),
                others=list(base.others),
                items=list(base.items),
                types=None if base.types is None else set(base.types),
            )
            self.fold(schema, resolver, branch)
            types = self._types(branch)
            if not types:
                continue  # a branch no value can take
            if types == {"null"}:
                nullable = True
                continue
            column = self._column(branch, name, pointer)
            nullable = nullable or column.nullable
            found.append(column)
        if not found:
            return self._json(facets, name, pointer, "only null" if nullable else "no value")
        if all(c.kind == "struct" for c in found):
            merged = found[0]
            for other in found[1:]:
                merged = _merge_structs(merged, other)
            return replace(merged, nullable=nullable, description=facets.description)
        shapes = {c.shape for c in found}
        if {("int64", ()), ("float64", ())} == shapes:
            shapes = {("float64", ())}
            found = [c for c in found if c.kind == "float64"]
        if {("enum", ()), ("string", ())} == shapes:
            shapes = {("string", ())}
            found = [c for c in found if c.kind == "string"]
        if len(shapes) != 1 or found[0].kind == "json":
            reason = found[0].reason if len(shapes) == 1 else "a union of different shapes"
            return self._json(facets, name, pointer, reason)
        merged = found[0]
        for other in found[1:]:
            merged = _merge(merged, other)
        return replace(merged, nullable=nullable, description=facets.description)


def _merge(a: Column, b: Column) -> Column:
    """Return the column of two branches of one shape: nullable where either is, required
    where both are."""
    children = tuple(_merge(x, y) for x, y in zip(a.children, b.children, strict=True))
    return replace(
        a,
        nullable=a.nullable or b.nullable,
        required=a.required and b.required,
        open=a.open or b.open,
        children=children,
    )


def _merge_structs(a: Column, b: Column) -> Column:
    """Return the struct of two object branches of a union: every property of either, each
    required where both require it; a property of different shapes in the two is JSON text."""
    theirs = {c.name: c for c in b.children}
    children = []
    for mine in a.children:
        other = theirs.pop(mine.name, None)
        if other is None:  # any value is valid there where b is open: another type to _extra
            children.append(
                replace(mine, required=False, nullable=True, loose=mine.loose or b.open)
            )
        elif mine.shape == other.shape:
            children.append(_merge(mine, other))
        elif mine.kind == "struct" and other.kind == "struct":
            children.append(_merge_structs(mine, other))
        else:
            reason = "a property of different shapes in the branches of a union"
            children.append(
                Column(mine.name, "json", True, mine.pointer, mine.description, reason=reason)
            )
    children += [
        replace(c, required=False, nullable=True, loose=c.loose or a.open) for c in theirs.values()
    ]
    return replace(
        a,
        nullable=a.nullable or b.nullable,
        required=a.required and b.required,
        open=a.open or b.open,
        children=tuple(children),
    )


def layout(registry: BaseRegistry, family: str, version: str | None = None) -> Layout:
    """Return the table of a family's version (`None` or `latest`: the newest), made once.

    Raises:
        UnknownFamilyError, UnknownVersionError: the family or version is unknown.
        TableError: the schema's records are not objects with declared properties, or one of
            them is named `_extra`.
    """
    entry = registry.entry(family, version)
    cache: dict[tuple[str, str], Layout] = registry.derived("tables:layouts", lambda _: {})
    found = cache.get((entry.family, entry.version))
    if found is None:
        found = _make_layout(registry, entry.family, entry.version)
        cache[entry.family, entry.version] = found
    return found


def _make_layout(registry: BaseRegistry, family: str, version: str) -> Layout:
    entry = registry.entry(family, version)
    resolver = registry.referencing_registry().resolver(base_uri=entry.id)
    mapper = _Mapper(registry, family, version)
    root = mapper.column([(dict(entry.document), resolver)], "", "", True)
    if root.kind != "struct":
        raise TableError(
            "its records are not objects with declared properties, so they have no columns "
            f"(the schema maps to {root.kind}{': ' + root.reason if root.reason else ''})",
            family,
            version,
        )
    if root.child(EXTRA) is not None:
        raise TableError(
            f"a property is named {EXTRA}, the column evalreg keeps undeclared values in",
            family,
            version,
            f"/{EXTRA}",
        )
    return Layout(family, version, replace(root, nullable=False))
