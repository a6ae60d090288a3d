"""The HTML pages of the published site: the index, and each family's changes, with no scripts.

The index is what a consumer of the schemas opens first: every family with its versions, the
compatibility of each version with the one before, links to each schema, its documentation
page (when published with them), the family's changes and its rules, and how to use the URLs.
Each family's changes page lists every change between consecutive versions, breaking first, as
`evalreg diff` judges them. Both pages are plain HTML with one inline style sheet: nothing is
loaded from anywhere.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import quote

if TYPE_CHECKING:
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


@dataclass(frozen=True)
class PublishedRule:
    """A rule as documented: what it checks, how severe, where, and at which versions."""

    id: str
    severity: str
    scope: str
    versions: str
    description: str


CHANGES_PAGE = "changes.html"
_E = html.escape
_CODE = re.compile(r"`([^`]+)`")


def _text(text: str) -> str:
    """Return `text` as HTML, with its `backquoted` spans as code (as the README writes them)."""
    return _CODE.sub(r"<code>\1</code>", _E(text))


_STYLE = """\
:root{--fg:#1b1f24;--muted:#57606a;--line:#d0d7de;--soft:#f6f8fa;--link:#0550ae;\
--full:#116329;--partial:#7d4e00;--none:#a40e26}
*{box-sizing:border-box}
body{font:16px/1.55 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);\
max-width:70rem;margin:0 auto;padding:1.5rem 1.25rem 4rem}
a{color:var(--link);text-decoration:none}a:hover{text-decoration:underline}
h1{font-size:1.75rem;margin:.5rem 0}h2{font-size:1.3rem;margin:2.5rem 0 .25rem;\
padding-top:1rem;border-top:1px solid var(--line)}h3{font-size:1.05rem;margin:1.5rem 0 .5rem}
p{margin:.5rem 0}.muted{color:var(--muted)}.small{font-size:.875rem}
code{font:.875em/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;\
background:var(--soft);padding:.1em .3em;border-radius:4px;overflow-wrap:anywhere}
pre{background:var(--soft);padding:.75rem 1rem;border-radius:6px;overflow-x:auto}
pre code{padding:0;background:none}
table{border-collapse:collapse;width:100%;margin:.5rem 0 1rem;font-size:.95rem}
th,td{border-bottom:1px solid var(--line);padding:.4rem .6rem;text-align:left;\
vertical-align:top}
th{font-weight:600;background:var(--soft)}
.badge{display:inline-block;font-size:.78rem;font-weight:600;padding:.05rem .5rem;\
border-radius:1rem;border:1px solid currentColor;white-space:nowrap}
.FULL{color:var(--full)}.BACKWARD,.FORWARD{color:var(--partial)}.NONE{color:var(--none)}
.draft{color:var(--muted)}.latest{color:var(--full)}
.links a+a::before{content:"\\00b7";color:var(--muted);padding:0 .4rem}
nav.top{font-size:.9rem;margin-bottom:1rem}
dl.legend{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem;margin:.5rem 0}
dl.legend dd{margin:0}
ul.changes{padding-left:1.25rem}ul.changes li{margin:.25rem 0}
.wide{overflow-x:auto}
.nowrap,.nowrap code{white-space:nowrap;overflow-wrap:normal}"""

_LEGEND = (
    ("FULL", "the new schema accepts every document the old one did, and the other way round"),
    ("BACKWARD", "the new schema accepts every document of the old one (readers can upgrade)"),
    ("FORWARD", "the old schema accepts every document of the new one (writers can upgrade)"),
    ("NONE", "neither: data must be migrated, with `evalreg migrate`, between the two"),
)


def _head(title: str) -> list[str]:
    return [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_E(title)}</title>",
        f"<style>{_STYLE}</style>",
        "</head>",
        "<body>",
    ]


def _badge(compatibility: str) -> str:
    return f'<span class="badge {_E(compatibility)}">{_E(compatibility)}</span>'


def _link(href: str, text: str) -> str:
    return f'<a href="{_E(href)}">{_E(text)}</a>'


def _schema_href(family: str, version: str) -> str:
    return f"{quote(family)}/{quote(version)}.schema.json"


def _version_rows(family: PublishedFamily) -> Iterator[str]:
    folder = quote(family.family)
    for version in reversed(family.versions):
        compat = family.compatibility.get(version)
        cells: list[str] = []
        tags = []
        if version == family.versions[-1]:
            tags.append('<span class="badge latest">latest</span>')
        if version in family.drafts:
            tags.append('<span class="badge draft">draft</span>')
        cells.append(f"<code>{_E(version)}</code> {' '.join(tags)}".strip())
        cells.append(_badge(compat) if compat else '<span class="muted">first version</span>')
        total, breaking = family.changes.get(version, (0, 0))
        anchor = f"{folder}/{CHANGES_PAGE}#v{quote(version)}"
        if compat is None:
            summary = _link(anchor, "first version")
        elif total:
            noun = "change" if total == 1 else "changes"
            summary = _link(anchor, f"{total} {noun}") + (
                f", {breaking} breaking" if breaking else ""
            )
        else:
            summary = _link(anchor, "no schema change")
        cells.append(summary)
        links = [_link(_schema_href(family.family, version), "JSON Schema")]
        page = family.docs.get(version)
        if page:
            links.append(_link(page, "documentation"))
        cells.append(f'<span class="links">{"".join(links)}</span>')
        yield "<tr>" + "".join(f"<td>{cell}</td>" for cell in cells) + "</tr>"


def _rule_rows(family: PublishedFamily) -> list[str]:
    if not family.rules:
        return []
    rows = [
        f'<h3 id="{_E(family.family)}-rules">Rules beyond the schema</h3>',
        '<p class="small muted">Checked by <code>evalreg validate</code>; an error makes a '
        "record invalid, a warning does not.</p>",
        '<div class="wide"><table>',
        "<tr><th>Rule</th><th>Severity</th><th>Scope</th><th>Versions</th>"
        "<th>What must hold</th></tr>",
    ]
    rows += [
        f'<tr><td class="nowrap"><code>{_E(r.id)}</code></td><td>{_E(r.severity)}</td>'
        f"<td>{_E(r.scope)}</td><td>{_E(r.versions)}</td><td>{_text(r.description)}</td></tr>"
        for r in family.rules
    ]
    return [*rows, "</table></div>"]


def _family_section(family: PublishedFamily, base: str) -> list[str]:
    name = family.family
    folder = quote(name)
    latest_url = f"{base}{folder}/latest.schema.json"
    links = [
        _link(f"{folder}/latest.schema.json", "latest schema"),
        _link(f"{folder}/{CHANGES_PAGE}", "changes"),
        _link(f"{folder}/CHANGELOG.md", "CHANGELOG.md"),
    ]
    if family.rules:
        links.append(_link(f"#{name}-rules", f"rules ({len(family.rules)})"))
    lines = [
        f'<h2 id="{_E(name)}">{_E(name)}</h2>',
        f"<p><strong>{_E(family.title)}</strong>"
        + (f" &mdash; {_text(family.description)}" if family.description else "")
        + "</p>",
        f'<p class="links small">{"".join(links)}</p>',
    ]
    if family.file_match:
        patterns = ", ".join(f"<code>{_E(p)}</code>" for p in family.file_match)
        lines.append(f'<p class="small">Files: {patterns}</p>')
    lines += [
        f'<p class="small">Latest version at <code>{_E(latest_url)}</code></p>',
        '<div class="wide"><table>',
        "<tr><th>Version</th><th>Compatibility with the version before</th>"
        "<th>Changes</th><th>Files</th></tr>",
        *_version_rows(family),
        "</table></div>",
        *_rule_rows(family),
    ]
    return lines


def index_html(families: Sequence[PublishedFamily], base: str) -> str:
    """Return the site's index page."""
    versions = sum(len(f.versions) for f in families)
    lines = _head("Schemas")
    example = max(families, key=lambda f: len(f.versions), default=None)
    lines += [
        "<h1>Schemas</h1>",
        f'<p class="muted">{len(families)} families, {versions} versions, published under '
        f"<code>{_E(base)}</code> by evalreg. Editors and tools can use the "
        f"{_link('catalog.json', 'schema catalog')} (JSON Schema Store format).</p>",
    ]
    if example is not None:
        url = f"{base}{quote(example.family)}/{quote(example.versions[-1])}.schema.json"
        lines += [
            "<h3>Using a schema</h3>",
            "<p>Each version has a URL that never changes meaning: <code>$ref</code> it from "
            "a schema of your own, give it to a validator or an editor, or validate with "
            "evalreg, which also checks each family's rules and migrates data between "
            "versions:</p>",
            f'<pre><code>{{"$ref": "{_E(url)}"}}\n\n'
            f"evalreg validate data/\n"
            f"evalreg migrate data/ --to {_E(example.versions[-1])} --out migrated/</code></pre>",
        ]
    lines += [
        "<h3>Compatibility</h3>",
        '<dl class="legend small">',
        *(f"<dt>{_badge(name)}</dt><dd>{_text(text)}</dd>" for name, text in _LEGEND),
        "</dl>",
        "<h3>Families</h3>",
        '<div class="wide"><table>',
        "<tr><th>Family</th><th>Title</th><th>Latest</th><th>Versions</th></tr>",
    ]
    for family in families:
        lines.append(
            f"<tr><td>{_link('#' + family.family, family.family)}</td>"
            f"<td>{_E(family.title)}</td><td><code>{_E(family.versions[-1])}</code></td>"
            f"<td>{len(family.versions)}</td></tr>"
        )
    lines.append("</table></div>")
    for family in families:
        lines += _family_section(family, base)
    lines += ["</body>", "</html>"]
    return "\n".join(lines) + "\n"


def _change_item(change: Change) -> str:
    path = change.path or "(root)"
    verdict = f" <em>({_E(change.verdict)})</em>" if change.breaks else ""
    return (
        f"<li><code>{_E(path)}</code>: {_E(change.kind)}, {_E(change.summary)}{verdict}"
        f'<br><span class="small muted">{_E(change.reason)}</span></li>'
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
    name = family.family
    lines = _head(f"{name}: changes")
    lines += [
        f'<nav class="top">{_link("../index.html#" + name, "All schemas")} / {_E(name)}</nav>',
        f"<h1>{_E(name)}: changes between versions</h1>",
        f'<p class="muted">{_E(family.title)}. Each version is compared with the one before '
        "it, as <code>evalreg diff</code> does; breaking changes come first.</p>",
    ]
    by_version = {diff.new_label: diff for diff in diffs}
    for version in reversed(family.versions):
        lines.append(f'<h2 id="v{_E(version)}">{_E(version)}</h2>')
        for note in notes.get(version, ()):
            lines.append(f'<p class="small"><em>{_E(note)}</em></p>')
        account = (steps or {}).get(version, "")
        paragraphs = [" ".join(p.split()) for p in account.strip().split("\n\n") if p.strip()]
        lines += [f'<p class="step">{_E(p)}</p>' for p in paragraphs]
        diff = by_version.get(version)
        if diff is None:
            lines.append("<p>First published version.</p>")
            continue
        lines.append(
            f"<p>Compared with <code>{_E(diff.old_label)}</code>: {_badge(diff.compatibility)}</p>"
        )
        if not diff.changes:
            lines.append("<p>No schema changes.</p>")
        sections = (
            ("Breaking changes", [c for c in diff.changes if c.breaks and not c.undecided]),
            ("Undecided changes (counted as breaking)", [c for c in diff.changes if c.undecided]),
            ("Compatible changes", [c for c in diff.changes if not c.breaks]),
        )
        for title, changes in sections:
            if changes:
                lines += [f"<h3>{title}</h3>", '<ul class="changes">']
                lines += [*map(_change_item, changes), "</ul>"]
    lines += ["</body>", "</html>"]
    return "\n".join(lines) + "\n"
