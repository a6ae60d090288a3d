"""Structural changes between two records, and the changes a step's notes leave unexplained.

`diff` lists what differs between two records, each difference once at the highest place it
starts (a key added or removed, a value changed or of another type), array items by position.
`audit` checks the notes of a step against the step's input and output: every leaf value of the
output must be the input's value at the place the notes trace it back to (a move, a rename, or
the same place), or be covered by a note (added, converted); every leaf of the input must be
used so, or covered (dropped, lost, converted); and every note must point at something there.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from evalreg.engine.notes import Note, shown
from evalreg.io.pointer import MISSING, escape, resolve

DifferenceKind = Literal["added", "removed", "changed"]


@dataclass(frozen=True, slots=True)
class Difference:
    """One difference between two records."""

    kind: DifferenceKind
    pointer: str
    before: Any = MISSING
    after: Any = MISSING

    def __str__(self) -> str:
        where = self.pointer or "/"
        if self.kind == "added":
            return f"+ {where} = {shown(self.after)}"
        if self.kind == "removed":
            return f"- {where} = {shown(self.before)}"
        return f"~ {where}: {shown(self.before, 40)} -> {shown(self.after, 40)}"


def same(a: Any, b: Any) -> bool:
    """Return whether two JSON values are equal, with types told apart (`true` is not `1`).

    Integers and floats of equal value are the same number, as JSON has one number type.
    """
    if a is b:
        return True
    ta, tb = type(a), type(b)
    if ta is not tb:
        numbers = (int, float)
        return ta in numbers and tb in numbers and a == b
    if ta is dict:
        return len(a) == len(b) and all(k in b and same(v, b[k]) for k, v in a.items())
    if ta is list:
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def diff(before: Any, after: Any, pointer: str = "") -> list[Difference]:
    """Return every difference between two records, in document order."""
    found: list[Difference] = []
    _diff(before, after, pointer, found)
    return found


def _diff(before: Any, after: Any, pointer: str, found: list[Difference]) -> None:
    if same(before, after):
        return
    if isinstance(before, dict) and isinstance(after, dict):
        for key, value in before.items():
            where = f"{pointer}/{escape(key)}"
            if key in after:
                _diff(value, after[key], where, found)
            else:
                found.append(Difference("removed", where, value))
        for key, value in after.items():
            if key not in before:
                found.append(Difference("added", f"{pointer}/{escape(key)}", MISSING, value))
        return
    if isinstance(before, list) and isinstance(after, list):
        for index in range(max(len(before), len(after))):
            where = f"{pointer}/{index}"
            if index >= len(after):
                found.append(Difference("removed", where, before[index]))
            elif index >= len(before):
                found.append(Difference("added", where, MISSING, after[index]))
            else:
                _diff(before[index], after[index], where, found)
        return
    found.append(Difference("changed", pointer, before, after))


def leaves(value: Any, pointer: str = "") -> Iterator[tuple[str, Any]]:
    """Yield the pointer and value of every leaf: each scalar, and each empty object or array."""
    if isinstance(value, dict) and value:
        for key, item in value.items():
            yield from leaves(item, f"{pointer}/{escape(key)}")
    elif isinstance(value, list) and value:
        for index, item in enumerate(value):
            yield from leaves(item, f"{pointer}/{index}")
    else:
        yield pointer, value


def _containers(value: Any, pointer: str, out: dict[str, type]) -> None:
    if isinstance(value, dict):
        out[pointer] = dict
        for key, item in value.items():
            _containers(item, f"{pointer}/{escape(key)}", out)
    elif isinstance(value, list):
        out[pointer] = list
        for index, item in enumerate(value):
            _containers(item, f"{pointer}/{index}", out)


def _under(pointer: str, prefixes: set[str]) -> bool:
    """Return whether `pointer` is one of `prefixes` or inside one of them."""
    if pointer in prefixes:
        return True
    cut = pointer.rfind("/")
    while cut > 0:
        pointer = pointer[:cut]
        if pointer in prefixes:
            return True
        cut = pointer.rfind("/")
    return "" in prefixes


def _parent_index(pointer: str) -> tuple[str, int] | None:
    """Return the parent pointer and index of a pointer whose last token is a number."""
    cut = pointer.rfind("/")
    token = pointer[cut + 1 :]
    return (pointer[:cut], int(token)) if cut >= 0 and token.isascii() and token.isdigit() else None


@dataclass
class Audit:
    """What the notes of a step leave unexplained, and the notes that point at nothing."""

    unreported: list[Difference] = field(default_factory=list)
    unfounded: list[Note] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Return whether every change is reported and every note points at something."""
        return not self.unreported and not self.unfounded

    def lines(self) -> list[str]:
        """Return one line per problem."""
        return [f"unreported {change}" for change in self.unreported] + [
            f"unfounded note: {note}" for note in self.unfounded
        ]


class _Tracer:
    """Trace each place of a step's output back to its input through the step's notes."""

    def __init__(self, before: Any, after: Any, notes: Sequence[Note]) -> None:
        self.moves: list[tuple[str, str]] = []  # (target in the output, source in the input)
        self.covered_out: set[str] = set()
        self.covered_in: set[str] = set()
        self.removed: dict[str, set[int]] = {}  # input list -> indices of items taken out
        self.inserted: dict[str, set[int]] = {}  # output list -> indices of items put in
        converted = []
        for note in notes:
            if note.kind in ("moved", "renamed") and note.source is not None:
                self.moves.append((note.pointer, note.source))
            elif note.kind == "added":
                self.covered_out.add(note.pointer)
                self._index(self.inserted, note.pointer, after)
            elif note.kind == "converted":
                self.covered_out.add(note.pointer)
                converted.append(note.pointer)
            elif note.kind in ("dropped", "lost"):
                self.covered_in.add(note.pointer)
                self._index(self.removed, note.pointer, before)
        self.moves.sort(key=lambda move: -len(move[0]))
        self.covered_in.update(self.trace(pointer) for pointer in converted)

    @staticmethod
    def _index(found: dict[str, set[int]], pointer: str, document: Any) -> None:
        parent = _parent_index(pointer)
        if parent is not None and isinstance(resolve(document, parent[0]), list):
            found.setdefault(parent[0], set()).add(parent[1])

    def trace(self, pointer: str) -> str:
        """Return the place in the input that the output's `pointer` comes from."""
        source, rest = "", pointer
        for target, origin in self.moves:
            if pointer == target or pointer.startswith(target + "/"):
                source, rest = origin, pointer[len(target) :]
                pointer_out = target
                break
        else:
            pointer_out = ""
        if not self.removed and not self.inserted:
            return source + rest
        out: list[str] = []
        for token in rest.split("/")[1:]:
            if token.isascii() and token.isdigit():
                index = int(token)
                inserted = self.inserted.get(pointer_out)
                if inserted:
                    index -= sum(1 for i in inserted if i < index)
                removed = self.removed.get(source + "".join(out))
                if removed:
                    index = _nth_kept(index, removed)
                out.append(f"/{index}")
            else:
                out.append(f"/{token}")
            pointer_out += f"/{token}"
        return source + "".join(out)


def _nth_kept(index: int, removed: set[int]) -> int:
    """Return the input index of the `index`-th item kept when the items `removed` are gone."""
    position = -1
    kept = -1
    while kept < index:
        position += 1
        if position not in removed:
            kept += 1
    return position


def audit(before: Any, after: Any, notes: Iterable[Note], ignore: Iterable[str] = ()) -> Audit:
    """Return what a step's `notes` leave unexplained between its input and output.

    `ignore`: pointers whose changes the engine makes (the version marker), not the step.
    """
    notes = list(notes)
    tracer = _Tracer(before, after, notes)
    skip = set(ignore)
    in_leaves = dict(leaves(before))
    containers: dict[str, type] = {}
    _containers(before, "", containers)
    used: set[str] = set()
    found = Audit()
    for pointer, value in leaves(after):
        if pointer in skip:
            continue
        origin = tracer.trace(pointer)
        if _under(pointer, tracer.covered_out):
            if origin in in_leaves and same(in_leaves[origin], value):
                used.add(origin)  # moved into a container the step added: not removed
            continue
        if origin in in_leaves and same(in_leaves[origin], value):
            used.add(origin)
            continue
        if isinstance(value, (dict, list)) and containers.get(origin) is type(value):
            continue  # emptied: what was in it is accounted for on the input's side
        if origin in in_leaves:
            used.add(origin)  # reported once, as changed
            found.unreported.append(Difference("changed", pointer, in_leaves[origin], value))
        elif origin in containers:
            found.unreported.append(Difference("changed", pointer, resolve(before, origin), value))
        else:
            found.unreported.append(Difference("added", pointer, MISSING, value))
    out_containers: dict[str, type] = {}
    _containers(after, "", out_containers)
    for pointer, kind in out_containers.items():
        for origin in (tracer.trace(pointer), pointer):
            if type(in_leaves.get(origin)) is kind:
                used.add(origin)  # an empty object or array that the step filled
    for pointer, value in in_leaves.items():
        if pointer in used or pointer in skip or _under(pointer, tracer.covered_in):
            continue
        found.unreported.append(Difference("removed", pointer, value))
    for note in notes:
        if note.kind in ("dropped", "lost"):
            places = [(before, note.pointer)]
        else:
            places = [(after, note.pointer)]
            if note.kind in ("moved", "renamed") and note.source is not None:
                places.append((before, note.source))
        if any(resolve(document, place) is MISSING for document, place in places):
            found.unfounded.append(note)
    return found
