"""The converter of a version's rows as one Python function, written for its columns.

`evalreg.tables.rows` turns a record into a row with a converter per column, a closure that
walks what it is given; a record of a few dozen values makes a dozen calls, and every value of
a list is given a JSON pointer, wanted only when something goes into `_extra` or is refused.
`compile_struct` writes the same walk out as the source of one function: the structs and lists
of the layout inline, the fields that need no work not visited, the pointers built only where
they are used. What it returns does what the closures do (the same rows, the same `_extra`, in
the same order, the same errors), and it calls them wherever a value leaves the common path: an
object with undeclared properties, a column of no type (`loose`), the scalars that convert, and
whatever is nested deeper than `MAX_DEPTH`.
"""

from __future__ import annotations

from typing import Any

from evalreg.io.pointer import escape
from evalreg.tables.mapping import Column
from evalreg.tables.rows import (
    _HELD,
    _INT64,
    Convert,
    RowError,
    _struct_converter,
    converter,
)

MAX_DEPTH = 12
"""Structs and lists nested deeper than this are converted by the closures (Python allows
20 nested loops and 100 levels of indentation in a function)."""

Pointer = tuple[tuple[bool, str], ...]
"""A pointer as source parts: (True, a variable holding a string or an index) or (False, text)."""


def _render(pointer: Pointer) -> str:
    """Return the Python expression of a pointer."""
    parts: list[str] = []
    text = ""
    for variable, value in pointer:
        if variable:
            if text:
                parts.append(repr(text))
                text = ""
            parts.append(f"str({value})" if value != "pointer" else value)
        else:
            text += value
    if text:
        parts.append(repr(text))
    return " + ".join(parts) or "''"


class _Writer:
    """The source of a function, and the values it refers to."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.names: dict[str, Any] = {
            "RowError": RowError,
            "HELD": _HELD,
            "dict": dict,
            "list": list,
            "type": type,
            "str": str,
            "enumerate": enumerate,
            "int": int,
            "float": float,
        }
        self._count = 0

    def name(self, prefix: str) -> str:
        self._count += 1
        return f"{prefix}{self._count}"

    def const(self, value: Any, prefix: str = "k") -> str:
        found = self.name(prefix)
        self.names[found] = value
        return found

    def line(self, depth: int, text: str) -> None:
        self.lines.append("    " * depth + text)


def _struct(
    w: _Writer, column: Column, value: str, out: str, pointer: Pointer, indent: int, depth: int
) -> None:
    """Write the code that sets `out` to the row value of the object in `value` (a struct
    column, not loose), as `rows._struct_converter` makes it."""
    p = _render(pointer)
    w.line(indent, f"if type({value}) is not dict:")
    w.line(indent + 1, f"raise RowError({p}, 'an object', {value})")
    declared = w.const(frozenset(c.name for c in column.children), "declared")
    whole = w.const(_struct_converter(column), "struct")
    w.line(indent, f"if not {value}.keys() <= {declared}:")
    w.line(indent + 1, f"{out} = {whole}({value}, {p}, extras)")  # the undeclared kept
    w.line(indent, "else:")
    indent += 1
    w.line(indent, f"{out} = {value}")
    w.line(indent, f"if None in {value}.values():")
    _nulls(w, column, value, out, p, indent + 1)
    for child in column.children:
        each = converter(child)
        if each is None:
            continue  # taken as it is
        element, new = w.name("e"), w.name("n")
        inner = (*pointer, (False, "/" + escape(child.name)))
        w.line(indent, f"{element} = {value}.get({child.name!r})")
        w.line(indent, f"if {element} is not None:")
        body = indent + 1
        if child.kind == "int64":
            w.line(
                body,
                f"if type({element}) is not int or not ({_INT64[0]} <= {element} <= {_INT64[1]}):",
            )
            body += 1
        elif child.kind == "float64":
            w.line(body, f"if type({element}) is not float:")
            body += 1
        _value(w, child, each, element, new, inner, body, depth + 1)
        w.line(body, f"if {new} is not {element}:")
        w.line(body + 1, f"if {out} is {value}:")
        w.line(body + 2, f"{out} = dict({value})")
        if not child.nullable:
            w.line(body + 1, f"if {new} is None:")
            w.line(body + 2, f"raise RowError({_render(inner)}, HELD, {element})")
        w.line(body + 1, f"{out}[{child.name!r}] = {new}")


def _nulls(w: _Writer, column: Column, value: str, out: str, p: str, indent: int) -> None:
    """Write what `rows.struct_nulls` does with the nulls of `value` (declared properties)."""
    actions = {}
    for child in column.children:
        suffix = "/" + escape(child.name)
        if child.kind == "json":
            actions[child.name] = ("json", suffix)
        elif not child.nullable:
            actions[child.name] = ("refused", suffix)
        elif not child.required:
            actions[child.name] = ("extra", suffix)  # a null written, not a value missing
    if not actions:
        w.line(indent, "pass")  # nulls where null is a value
        return
    known, key, element, action = w.const(actions, "nulls"), w.name("k"), w.name("z"), w.name("a")
    w.line(indent, f"for {key}, {element} in {value}.items():")
    w.line(indent + 1, f"if {element} is None and {key} in {known}:")
    w.line(indent + 2, f"{action}, suffix = {known}[{key}]")
    w.line(indent + 2, f"if {action} == 'extra':")
    w.line(indent + 3, f"extras[{p} + suffix] = None")
    w.line(indent + 2, f"elif {action} == 'json':")
    w.line(indent + 3, f"if {out} is {value}:")
    w.line(indent + 4, f"{out} = dict({value})")
    w.line(indent + 3, f"{out}[{key}] = b'null'")
    w.line(indent + 2, "else:")
    w.line(indent + 3, f"raise RowError({p} + suffix, 'a value', None)")


def _list(
    w: _Writer, column: Column, value: str, out: str, pointer: Pointer, indent: int, depth: int
) -> None:
    """Write the code that sets `out` to the row value of the array in `value` (a list column,
    not loose, whose items convert), as `rows._list_converter` makes it."""
    (item,) = column.children
    each = converter(item)
    assert each is not None
    index, element, new = w.name("i"), w.name("x"), w.name("y")
    inner = (*pointer, (False, "/"), (True, index))
    w.line(indent, f"if type({value}) is not list:")
    w.line(indent + 1, f"raise RowError({_render(pointer)}, 'an array', {value})")
    w.line(indent, f"{out} = {value}")
    w.line(indent, f"for {index}, {element} in enumerate({value}):")
    body = indent + 1
    w.line(body, f"if {element} is None:")
    if not item.nullable:
        w.line(body + 1, f"raise RowError({_render(inner)}, 'a value', {element})")
    else:
        w.line(body + 1, "continue")
    _value(w, item, each, element, new, inner, body, depth + 1)
    w.line(body, f"if {new} is not {element}:")
    w.line(body + 1, f"if {out} is {value}:")
    w.line(body + 2, f"{out} = list({value})")
    if not item.nullable:
        w.line(body + 1, f"if {new} is None:")
        w.line(body + 2, f"raise RowError({_render(inner)}, HELD, {element})")
    w.line(body + 1, f"{out}[{index}] = {new}")


def _value(
    w: _Writer,
    column: Column,
    each: Convert,
    value: str,
    out: str,
    pointer: Pointer,
    indent: int,
    depth: int,
) -> None:
    """Write the code that sets `out` to the row value of `value` (not None) of `column`,
    whose converter is `each`."""
    if depth <= MAX_DEPTH and not column.loose:
        if column.kind == "struct":
            _struct(w, column, value, out, pointer, indent, depth)
            return
        if column.kind == "list":
            _list(w, column, value, out, pointer, indent, depth)
            return
    w.line(indent, f"{out} = {w.const(each, 'c')}({value}, {_render(pointer)}, extras)")


def compile_struct(column: Column) -> Convert:
    """Return a function that does what `rows._struct_converter(column)` does, faster."""
    w = _Writer()
    w.line(0, "def convert(value, pointer, extras):")
    _struct(w, column, "value", "out", ((True, "pointer"),), 1, 0)
    w.line(1, "return out")
    source = "\n".join(w.lines) + "\n"
    code = compile(source, f"<evalreg row converter {column.pointer or '/'}>", "exec")
    namespace = dict(w.names)
    exec(code, namespace)  # the source is written above, names and keys as repr()
    convert: Convert = namespace["convert"]
    return convert
