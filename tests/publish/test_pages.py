"""The site's HTML pages: every value a registry supplies is escaped, and nothing else changes."""

from __future__ import annotations

import json
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import evalreg
from evalreg.diff import diff_schemas
from evalreg.publish.pages import PublishedFamily, PublishedRule, changes_html, index_html
from evalreg.publish.site import publish
from tests.conftest import RegistryFactory

HOSTILE = "<script>alert('x')</script> & \"quoted\" `<b>code</b>`"


class _Tags(HTMLParser):
    """The elements and the text of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _parse(page: str) -> _Tags:
    parser = _Tags()
    parser.feed(page)
    return parser


def _family(**changes: object) -> PublishedFamily:
    values: dict[str, object] = {
        "family": "acme.run",
        "title": HOSTILE,
        "description": HOSTILE,
        "versions": ("1.0", "2.0"),
        "compatibility": {"2.0": "NONE"},
        "file_match": ("<i>*.json",),
        "rules": (PublishedRule("acme.r", "error", "record", "every version", HOSTILE),),
        "changes": {"2.0": (2, 1)},
        "docs": {"1.0": 'docs/"x".html'},
    }
    values.update(changes)
    return PublishedFamily(**values)  # type: ignore[arg-type]


def test_a_hostile_title_and_description_are_escaped_on_the_index() -> None:
    page = index_html([_family()], 'https://example.org/"><script>/')
    found = _parse(page)
    assert "script" not in found.tags and "b" not in found.tags and "i" not in found.tags
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &#34;quoted&#34;" in page
    # A description's `backquoted` span is code, and what it holds is escaped too.
    assert "<code>&lt;b&gt;code&lt;/b&gt;</code>" in page
    assert 'href="docs/&#34;x&#34;.html"' in page
    assert "<script" not in page
    # The text a reader sees is the title as written.
    assert HOSTILE in "".join(found.text)


def test_a_hostile_changes_page_is_escaped() -> None:
    family = _family(family="acme.<run>")
    old = {"type": "object", "properties": {"<a>": {"type": "string"}}}
    new = {"type": "object", "properties": {"<a>": {"type": "integer"}}}
    diff = diff_schemas(old, new, old_label="1.0", new_label="2.0")
    page = changes_html(family, [diff], {"2.0": [HOSTILE]})
    found = _parse(page)
    assert "script" not in found.tags and "b" not in found.tags
    assert "<title>acme.&lt;run&gt;: changes</title>" in page
    assert "<code>/&lt;a&gt;</code>" in page
    assert '<span class="badge NONE">NONE</span>' in page


def test_the_index_is_laid_out_as_before() -> None:
    """One family, fully shown: the markup the pages have always had, line for line."""
    page = index_html([_family(title="Acme", description="Runs of `acme`.")], "https://x.org/")
    lines = page.splitlines()
    assert page.startswith('<!DOCTYPE html>\n<html lang="en">\n<head>\n')
    assert page.endswith("</table></div>\n</body>\n</html>\n")
    assert "<p><strong>Acme</strong> &mdash; Runs of <code>acme</code>.</p>" in lines
    assert (
        '<p class="links small"><a href="acme.run/latest.schema.json">latest schema</a>'
        '<a href="acme.run/changes.html">changes</a><a href="acme.run/CHANGELOG.md">'
        'CHANGELOG.md</a><a href="#acme.run-rules">rules (1)</a></p>'
    ) in lines
    assert (
        '<tr><td><code>2.0</code> <span class="badge latest">latest</span></td>'
        '<td><span class="badge NONE">NONE</span></td>'
        '<td><a href="acme.run/changes.html#v2.0">2 changes</a>, 1 breaking</td>'
        '<td><span class="links"><a href="acme.run/2.0.schema.json">JSON Schema</a>'
        "</span></td></tr>"
    ) in lines
    assert '<p class="small">Files: <code>&lt;i&gt;*.json</code></p>' in lines


def test_a_hostile_manifest_title_is_escaped_when_published(
    make_registry_dir: RegistryFactory, tmp_path: Path
) -> None:
    manifest = (
        "name: acme.run\n"
        f"title: {json.dumps(HOSTILE)}\n"
        f"description: {json.dumps(HOSTILE)}\n"
        "kind: json\n"
    )
    schemas = {"1.0": {"type": "object"}, "2.0": {"type": "object", "required": ["a"]}}
    root = make_registry_dir({"acme.run": {"manifest": manifest, "schemas": schemas}})
    registry = evalreg.load_registry([root], builtin=False, verify=False)
    out = tmp_path / "site"
    publish(registry, out, drafts=True)
    for page in (out / "index.html", out / "acme.run" / "changes.html"):
        text = page.read_text(encoding="utf-8")
        assert "<script" not in text and "<b>" not in text, page
        assert "&lt;script&gt;" in text, page


def test_importing_evalreg_does_not_import_jinja2() -> None:
    code = "import sys, evalreg; print('jinja2' in sys.modules, 'markupsafe' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "False"]
