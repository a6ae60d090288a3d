"""The walk as keyword rules see it: the side a subschema comes from, and what a rule may call.

The keyword rules take the walker as their first argument and know it only through ``Walker``, so
that they never import the walker module: the walker imports them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from referencing._core import Resolver

    from evalreg.diff._changes import Change


@dataclass(frozen=True)
class Side:
    """Where one side's subschemas resolve their references."""

    resolver: Resolver[Any]
    # draft-07 and older ignore the keywords that stand beside "$ref".
    legacy_refs: bool


class Walker(Protocol):
    """What a keyword rule may do with the walk that calls it."""

    #: ``"lenient"`` or ``"strict"``; see ``diff_schemas``.
    policy: str

    def emit(
        self,
        path: str,
        kind: str,
        before: Any,
        after: Any,
        breaks: frozenset[str],
        reason: str,
        *,
        undecided: bool = False,
    ) -> None:
        """Report one change."""

    def compare(self, old: Any, old_side: Side, new: Any, new_side: Side, path: str) -> None:
        """Compare two subschemas that govern the instance at ``path``."""

    def probe(
        self, old: Any, old_side: Side, new: Any, new_side: Side, path: str
    ) -> tuple[frozenset[str], bool, list[Change]]:
        """Compare without reporting; return the broken directions, undecided flag, changes."""

    def make(self, recipe: tuple[Any, ...], schema: Any) -> Any:
        """Return the schema first made by ``recipe``: remaking it yields the same object."""

    def resolve(self, schema: Any, side: Side) -> tuple[Any, Side]:
        """Follow ``$ref`` until a schema without one; ``true`` becomes ``{}``.

        Raises:
            SchemaDiffError: a reference cannot be resolved, or references only lead to each other.
        """
