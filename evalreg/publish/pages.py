"""The HTML pages of the published site: the index, and each family's changes, with no scripts.

The index is what a consumer of the schemas opens first: every family with its versions, the
compatibility of each version with the one before, links to each schema, its Arrow schema and
Hugging Face `features` block, its documentation page (when published with them), the family's
changes and its rules, and how to use the URLs.
Each family's changes page lists every change between consecutive versions, breaking first, as
`evalreg diff` judges them. Both pages are plain HTML with one inline style sheet: nothing is
loaded from anywhere.

The pages are Jinja2 templates (`evalreg/publish/templates/`) rendered with autoescaping on, so
every value a registry supplies (titles, descriptions, versions, rule texts) is escaped; only
the markup of the templates and of the `text` filter (backquoted spans as code) is not.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

if TYPE_CHECKING:
    import jinja2

    from evalreg.diff import Change, SchemaDiff


@dataclass(frozen=True)
class PublishedFamily:
    """One family as published: its versions, and each one's compatibility with the previous."""

    family: str
    title: str
    description: str
    versions: tuple[str, ...]
    compatibility: Mapping[str, str]
    """Version -> FULL, BACKWARD, FORWARD or NONE against the previous published version."""
    file_match: tuple[str, ...]
    rules: tuple[PublishedRule, ...] = ()
    """The family's rules beyond its schemas."""
    changes: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    """Version -> (changes, breaking changes) against the previous published version."""
    drafts: frozenset[str] = frozenset()
    """The versions published though not released (`drafts=True`)."""
    docs: Mapping[str, str] = field(default_factory=dict)
    """Version -> its documentation page, relative to the site (with `docs=True`)."""
    tables: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    """Version -> its Arrow schema and its Hugging Face `features` block, relative to the site."""


@dataclass(frozen=True)
class PublishedRule:
    """A rule as documented: what it checks, how severe, where, and at which versions."""

    id: str
    severity: str
    scope: str
    versions: str
    description: str


CHANGES_PAGE = "changes.html"
_CODE = re.compile(r"`([^`]+)`")

_LEGEND = (
    ("FULL", "the new schema accepts every document the old one did, and the other way round"),
    ("BACKWARD", "the new schema accepts every document of the old one (readers can upgrade)"),
    ("FORWARD", "the old schema accepts every document of the new one (writers can upgrade)"),
    ("NONE", "neither: data must be migrated, with `evalreg migrate`, between the two"),
)


@cache
def _environment() -> jinja2.Environment:
    """Return the templates' environment (Jinja2 is imported on the first page rendered)."""
    import jinja2
    from markupsafe import Markup, escape

    def text(value: str) -> Markup:
        """Escape `value`, then show its `backquoted` spans as code (as the README writes them)."""
        return Markup(_CODE.sub(r"<code>\1</code>", str(escape(value))))

    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("evalreg.publish", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    environment.filters["quote"] = quote
    environment.filters["text"] = text
    environment.globals["changes_page"] = CHANGES_PAGE
    return environment


def _render(template: str, **values: Any) -> str:
    return _environment().get_template(template).render(**values)


def index_html(families: Sequence[PublishedFamily], base: str) -> str:
    """Return the site's index page."""
    example = max(families, key=lambda f: len(f.versions), default=None)
    shown = None
    if example is not None:
        version = example.versions[-1]
        url = f"{base}{quote(example.family)}/{quote(version)}.schema.json"
        shown = {"url": url, "version": version}
    return _render(
        "index.html",
        families=families,
        versions=sum(len(f.versions) for f in families),
        base=base,
        example=shown,
        legend=_LEGEND,
    )


def _sections(diff: SchemaDiff) -> tuple[tuple[str, list[Change]], ...]:
    """Return a diff's changes in the order a page shows them, each group with its heading."""
    return (
        ("Breaking changes", [c for c in diff.changes if c.breaks and not c.undecided]),
        ("Undecided changes (counted as breaking)", [c for c in diff.changes if c.undecided]),
        ("Compatible changes", [c for c in diff.changes if not c.breaks]),
    )


def changes_html(
    family: PublishedFamily,
    diffs: Sequence[SchemaDiff],
    notes: Mapping[str, Sequence[str]],
    steps: Mapping[str, str] | None = None,
) -> str:
    """Return a family's changes page: each version against the one before, newest first.

    `steps` gives each version's account in plain words (its migration step's description),
    shown above the classified diff.
    """
    accounts = {
        version: [" ".join(p.split()) for p in text.strip().split("\n\n") if p.strip()]
        for version, text in (steps or {}).items()
    }
    return _render(
        "changes.html",
        family=family,
        diffs={diff.new_label: diff for diff in diffs},
        notes=notes,
        accounts=accounts,
        sections=_sections,
    )
