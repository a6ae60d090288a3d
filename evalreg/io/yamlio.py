"""Writing YAML back: keep key order and, as far as YAML allows, comments and layout.

Records are migrated as plain data. To write a YAML file back, the original is loaded again with
ruamel.yaml's round-trip loader and brought up to date in place:

- keys a step left alone keep their place, their comments and the style of their scalars;
- a renamed key takes over the removed key's comments and the layout of its value. A new key is
  taken for a rename when it stands where the removed key stood and holds the same kind of value,
  or when it holds a value like the removed one (`outcome` -> `expected_outcome`);
- a value that moved into a new place (`input` -> `vars.input`, `note` -> `metadata.note`,
  `execution.evaluators` -> `assert`) brings its layout and inner comments along, and so does a
  list item moved into another list (told apart by its `id` or `name`);
- list items with an `id` (or `name`) keep their comments when others are added or removed;
- full-line comments (and blank lines) that followed a removed key stay before the key that
  followed it (before the map's first key, where that key comes first now);
- new keys are placed where the migrated record puts them, in block style;
- a text that was a literal or folded block scalar (`|`, `>`) in the original stays one wherever
  a step moves or rebuilds it, and a value renamed or moved unchanged is told apart from a
  merely similar one (input and expected turns).

Comments on the line of a removed key, and inside a removed value that found no new place, go
with it.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

_NO_VALUE = object()


def _yaml() -> Any:
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.default_flow_style = False
    # Wide enough that long lines of the original are not folded anew.
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.preserve_quotes = True
    return yaml


# -- telling old and new values apart ------------------------------------------------------


def _shape(value: Any) -> str:
    if isinstance(value, dict):
        return "map"
    if isinstance(value, list):
        return "seq"
    return "scalar"


def _same_scalar(old: Any, new: Any) -> bool:
    if isinstance(old, bool) or isinstance(new, bool):
        return isinstance(old, bool) and isinstance(new, bool) and old == new
    if isinstance(old, str) != isinstance(new, str):
        return False
    return bool(old == new)


def _equal(old: Any, new: Any) -> bool:
    """Return whether two values are the same data (`1`, `1.0` and `true` differ)."""
    if isinstance(old, dict) and isinstance(new, dict):
        return list(old) == list(new) and all(_equal(old[k], new[k]) for k in old)
    if isinstance(old, list) and isinstance(new, list):
        return len(old) == len(new) and all(_equal(a, b) for a, b in zip(old, new, strict=True))
    if _shape(old) != "scalar" or _shape(new) != "scalar":
        return False
    return _same_scalar(old, new) and isinstance(old, float) == isinstance(new, float)


def _label(item: Any) -> Any:
    if isinstance(item, dict):
        for key in ("id", "name"):
            if isinstance(item.get(key), str):
                return (key, item[key])
    return None


def _similar(old: Any, new: Any) -> bool:
    """Return whether `new` looks like `old` after a step: mostly the same keys or items."""
    if isinstance(old, dict) and isinstance(new, dict):
        if not old or not new:
            return not old and not new
        if _label(old) is not None and _label(new) is not None:
            return bool(_label(old) == _label(new))
        return 2 * len(set(old) & set(new)) >= min(len(old), len(new))
    if isinstance(old, list) and isinstance(new, list):
        return len(old) == len(new) and all(_similar(a, b) for a, b in zip(old, new, strict=True))
    return _shape(old) == _shape(new) == "scalar" and _same_scalar(old, new)


# -- comments ------------------------------------------------------------------------------


def _compatible(old: Any, new: Any) -> bool:
    """Return whether `new` may be `old` renamed: the same kind of value, sharing a key if maps."""
    if isinstance(old, dict) and isinstance(new, dict):
        return not old or not new or bool(set(old) & set(new))
    if isinstance(old, list) and isinstance(new, list):
        return not old or not new or _compatible(old[0], new[0])
    return _shape(old) == _shape(new) == "scalar" and _same_scalar(old, new)


def _is_block(value: Any) -> bool:
    from ruamel.yaml.scalarstring import FoldedScalarString, LiteralScalarString

    return isinstance(value, (LiteralScalarString, FoldedScalarString))


def _split_comment(entry: Any, block: bool, slot: int = 2) -> tuple[Any, str]:
    """Return a comment entry without the full-line comments after it, and those lines.

    The comment after a scalar's line starts with the rest of that line (`# note` or nothing,
    then a newline); after a block scalar, whose last line is ended already, it does not.
    """
    from ruamel.yaml.error import CommentMark
    from ruamel.yaml.tokens import CommentToken

    if not isinstance(entry, list) or len(entry) <= slot or entry[slot] is None:
        return entry, ""
    token = entry[slot]
    first, newline, rest = ("", "", token.value) if block else token.value.partition("\n")
    if not rest:
        return entry, ""
    own = list(entry)
    mark = token.start_mark if token.start_mark is not None else CommentMark(0)
    own[slot] = CommentToken(first + newline, mark) if first.strip() else None
    return own, rest


def _tail(node: Any, key: Any) -> tuple[Any, Any, int] | None:
    """Return where the comment printed after the last line of `node[key]` lives.

    That is the container, the key or index in it, and the slot of its comment entry.
    """
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    value = node[key]
    if isinstance(value, CommentedMap) and value:
        return _tail(value, list(value)[-1])
    if isinstance(value, CommentedSeq) and value:
        if isinstance(value[-1], (dict, list)):
            return _tail(value, len(value) - 1) if isinstance(value[-1], CommentedMap) else None
        return value, len(value) - 1, 0
    if isinstance(value, (dict, list)) and value:
        return None
    return node, key, 2 if isinstance(node, CommentedMap) else 0


def _take_lines(node: Any, key: Any) -> tuple[Any, str]:
    """Detach the full-line comments printed after `node[key]`; return its own comment and them."""
    own, lines = _split_comment(node.ca.items.get(key), _is_block(node[key]))
    tail = _tail(node, key)
    if tail is not None and not (tail[0] is node and tail[1] == key):
        where, at, slot = tail
        inner, lines = _split_comment(where.ca.items.get(at), _is_block(where[at]), slot)
        if inner is not None:
            where.ca.items[at] = inner
    return own, lines


def _start_lines(node: Any, lines: str) -> None:
    """Print full-line comments `lines` (as taken after a key's line) before map `node`'s first
    key, after the comments already there."""
    from ruamel.yaml.error import CommentMark
    from ruamel.yaml.tokens import CommentToken

    text = lines[1:] if lines.startswith("\n") else lines  # the newline ended the key's line
    if not text.strip():
        return
    if node.ca.comment is None:
        node.ca.comment = [None, None]
    if node.ca.comment[1] is None:
        node.ca.comment[1] = []
    node.ca.comment[1].append(CommentToken(text, CommentMark(0)))


def _append_lines(node: Any, key: Any, lines: str) -> None:
    """Print full-line comments `lines` after the last line of `node[key]`."""
    from ruamel.yaml.error import CommentMark
    from ruamel.yaml.tokens import CommentToken

    tail = _tail(node, key)
    if tail is None:
        return
    where, at, slot = tail
    entry = where.ca.items.setdefault(at, [None, None, None, None])
    while len(entry) < 4:
        entry.append(None)
    if entry[slot] is None:
        text = lines if _is_block(where[at]) else "\n" + lines
        entry[slot] = CommentToken(text, CommentMark(0))
    else:
        text = entry[slot].value
        entry[slot].value = (text if text.endswith("\n") or not text else text + "\n") + lines


class _Donors:
    """Old values that left their place, to be reused where the new record puts them.

    A removed map is offered whole and child by child, a removed list whole and item by item;
    taking a part withdraws the whole and the reverse, so that no old node is used twice.
    """

    def __init__(self, blocks: dict[str, Any] | None = None) -> None:
        self.items: list[tuple[Any, Any, Any, Any]] = []  # (key, node, comment entry, parent)
        self.used: set[int] = set()  # ids of list items taken one by one
        self.blocks: dict[str, Any] = {} if blocks is None else blocks
        """The original's block scalars (`|`, `>`) by their text, with their style."""

    def fresh(self) -> _Donors:
        """Return donors of their own for a subtree, knowing the same block scalars."""
        return _Donors(self.blocks)

    def styled(self, value: Any) -> Any:
        """Return `value`, as a block scalar of the original's style where it was one."""
        if isinstance(value, str) and not _is_block(value):
            style = self.blocks.get(value)
            if style is not None:
                return style(value)
        return value

    def add(self, key: Any, node: Any, comment: Any, parent: Any = None) -> None:
        """Offer an old value that left its place under `key` (in the removed map `parent`)."""
        self.items.append((key, node, comment, parent))

    def mark(self) -> int:
        """Return a mark to `release` back to."""
        return len(self.items)

    def release(self, mark: int) -> None:
        """Withdraw the values offered since `mark` (they stay within one list item)."""
        del self.items[mark:]

    def _pop(self, index: int) -> tuple[Any, Any]:
        _, node, comment, parent = self.items.pop(index)
        self.items = [item for item in self.items if item[3] is not node and item[1] is not parent]
        return node, comment

    def take(self, key: Any, value: Any) -> tuple[Any, Any] | None:
        """Return (node, comment) of an old value fit to hold `value` under `key`, if any.

        The latest offers come first: they are the nearest to where the value is wanted.
        """
        shape = _shape(value)
        found = [
            i
            for i, (old_key, node, _, _) in enumerate(self.items)
            if old_key == key
            and _shape(node) == shape
            and id(node) not in self.used
            and (shape != "scalar" or _same_scalar(node, value))
        ]
        if found:
            return self._pop(found[-1])
        found = [
            i
            for i, (_, node, _, _) in enumerate(self.items)
            if _shape(node) == shape != "scalar"
            and id(node) not in self.used
            and _similar(node, value)
        ]
        # The same value moved beats a like one (input and expected turns look alike).
        same = [i for i in found if _equal(self.items[i][1], value)]
        if same or found:
            node, _ = self._pop((same or found)[-1])
            return node, None
        return None

    def take_item(self, value: Any) -> Any:
        """Return an item of an offered list fit to hold the mapping `value`, if any."""
        for _, node, _, parent in reversed(self.items):
            if not isinstance(node, list):
                continue
            for item in node:
                if id(item) not in self.used and isinstance(item, dict) and _similar(item, value):
                    # The item is used once; its list and the map it was in cannot be taken whole.
                    self.used.update((id(item), id(node)))
                    self.items = [entry for entry in self.items if entry[1] is not parent]
                    return item
        return _NO_VALUE


def _build(value: Any, donors: _Donors) -> Any:
    """Return new data for a YAML tree, reusing old nodes that moved into it."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    if isinstance(value, dict):
        built = CommentedMap()
        for key, item in value.items():
            found = donors.take(key, item)
            if found is None:
                built[key] = _build(item, donors)
                continue
            node, comment = found
            built[key] = _update(node, item, donors)
            if comment is not None:
                built.ca.items[key] = comment
        return built
    if isinstance(value, list):
        built_items = []
        for item in value:
            old = donors.take_item(item) if isinstance(item, dict) else _NO_VALUE
            built_items.append(
                _build(item, donors) if old is _NO_VALUE else _update(old, item, donors.fresh())
            )
        return CommentedSeq(built_items)
    return donors.styled(value)


def _pair(node: Any, new: dict[Any, Any]) -> dict[Any, Any]:
    """Return the renames among the keys of map `node` and dict `new`: new key -> old key."""
    old_keys = list(node)
    free = [k for k in old_keys if k not in new]
    pairs: dict[Any, Any] = {}
    previous: int | None = -1  # where the key before the current one was in `old_keys`
    for key, value in new.items():
        if key in node:
            previous = old_keys.index(key)
            continue
        # A key holding the same kind of value where the removed one stood, or a like value.
        here = (
            old_keys[previous + 1]
            if previous is not None and previous + 1 < len(old_keys)
            else None
        )
        if here in free and _compatible(node[here], value):
            found = here
        else:
            # The same value renamed beats a like one (input and expected turns look alike).
            found = next((k for k in free if _equal(node[k], value)), None)
            if found is None:
                found = next((k for k in free if _similar(node[k], value)), None)
        previous = None
        if found is not None:
            pairs[key] = found
            free.remove(found)
            previous = old_keys.index(found)
    return pairs


def _update_map(node: Any, new: dict[Any, Any], donors: _Donors) -> Any:
    from ruamel.yaml.comments import CommentedMap, merge_attrib

    if getattr(node, merge_attrib, None) or getattr(node, "_ref", None):
        return _build(new, donors)  # maps with or under merge keys (<<) cannot be rearranged
    old_keys = list(node)
    pairs = _pair(node, new)
    now = {old: key for key, old in pairs.items()} | {k: k for k in old_keys if k in new}
    # A removed key's value is offered to the new keys; the full-line comments after it keep
    # standing before the key that followed it.
    carried: list[tuple[Any, str]] = []
    for index, key in enumerate(old_keys):
        if key in now:
            continue
        own, lines = _take_lines(node, key)
        if lines:
            after = [now[k] for k in old_keys[index + 1 :] if k in now]
            carried.append((after[0] if after else _NO_VALUE, lines))
        donors.add(key, node[key], own)
        if isinstance(node[key], CommentedMap):
            for child, value in node[key].items():
                donors.add(child, value, node[key].ca.items.get(child), node[key])
    # Kept and renamed keys first: values they shed are offered to the new keys.
    done: dict[Any, tuple[Any, Any]] = {}
    for key, value in new.items():
        old = key if key in node else pairs.get(key, _NO_VALUE)
        if old is not _NO_VALUE:
            done[key] = (_update(node[old], value, donors), node.ca.items.get(old))
    for key, value in new.items():
        if key not in done:
            found = donors.take(key, value)
            done[key] = (
                (_build(value, donors), None)
                if found is None
                else (_update(found[0], value, donors), found[1])
            )
    for key in old_keys:
        del node[key]
    node.ca.items.clear()
    for key in new:
        value, comment = done[key]
        node[key] = value
        if comment is not None:
            node.ca.items[key] = comment
    keys = list(node)
    for before, lines in carried:
        index = len(keys) if before is _NO_VALUE else keys.index(before)
        if index > 0:
            _append_lines(node, keys[index - 1], lines)
        elif keys:
            _start_lines(node, lines)
    return node


def _update_seq(node: Any, new: list[Any], donors: _Donors) -> Any:
    old_items = list(node)
    if len(old_items) == len(new):
        matched: list[Any] = old_items
    elif any(_label(item) is not None for item in old_items):
        # Items keep their comments when they can be told apart by their id (or name).
        by_label = {_label(item): item for item in old_items if _label(item) is not None}
        matched = [by_label.pop(_label(value), _NO_VALUE) for value in new]
    else:
        matched = old_items[: len(new)] + [_NO_VALUE] * (len(new) - len(old_items))
    items = []
    for old, value in zip(matched, new, strict=True):
        mark = donors.mark()
        if old is not _NO_VALUE and _compatible(old, value):
            items.append(_update(old, value, donors))
        else:
            found = donors.take_item(value) if isinstance(value, dict) else _NO_VALUE
            items.append(
                _build(value, donors)
                if found is _NO_VALUE
                else _update(found, value, donors.fresh())
            )
        donors.release(mark)
    while len(node) > len(items):
        del node[len(node) - 1]
    for index, item in enumerate(items):
        if index < len(node):
            node[index] = item
        else:
            node.append(item)
    return node


def _update(node: Any, new: Any, donors: _Donors | None = None) -> Any:
    """Return `node` changed in place to equal `new`, keeping comments where keys survive."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq
    from ruamel.yaml.scalarstring import ScalarString

    donors = donors if donors is not None else _Donors()
    if _equal(node, new):
        return node  # untouched, with every comment and style inside it
    if isinstance(node, CommentedMap) and isinstance(new, dict):
        return _update_map(node, new, donors)
    if isinstance(node, CommentedSeq) and isinstance(new, list):
        return _update_seq(node, new, donors)
    if isinstance(new, (dict, list)):
        return _build(new, donors)
    if _same_scalar(node, new):
        return node  # keeps the original's quoting and block style
    if isinstance(node, ScalarString) and isinstance(new, str):
        return type(node)(new)
    return donors.styled(new)


def _blocks(node: Any, found: dict[str, Any] | None = None) -> dict[str, Any]:
    """Return the block scalars (`|`, `>`) of a loaded YAML tree: their style by their text."""
    found = {} if found is None else found
    if isinstance(node, dict):
        for value in node.values():
            _blocks(value, found)
    elif isinstance(node, list):
        for value in node:
            _blocks(value, found)
    elif _is_block(node):
        found.setdefault(str(node), type(node))
    return found


def dump_yaml(records: Sequence[Any], original: bytes) -> bytes:
    """Return YAML text of `records` (one document each), reusing the layout of `original`."""
    yaml = _yaml()
    try:
        old = list(yaml.load_all(original.decode("utf-8")))
    except Exception:  # the original was readable by the safe loader; layout reuse is a bonus
        old = []
    documents = [
        _update(old[i], record, _Donors(_blocks(old[i]))) if i < len(old) else record
        for i, record in enumerate(records)
    ]
    out = io.StringIO()
    if len(documents) == 1:
        yaml.dump(documents[0], out)
    else:
        yaml.dump_all(documents, out)
    return out.getvalue().encode("utf-8")
