"""The published site as a consumer sees it, and the folder it is published into.

The pages: every link resolves to a file written, nothing is loaded from elsewhere, each
version has a documentation page made by json-schema-for-humans without the network; and, where
Chromium is installed, the index renders in it. The folder: an unrelated one is refused, the
files of an earlier site that are no longer published go, files others added stay, and a
failed publish leaves the old site as it was.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

import evalreg
from evalreg import Registry
from evalreg.cli import main
from evalreg.errors import PublishError
from evalreg.io import folders
from evalreg.publish import docs as docs_module
from evalreg.publish.site import SITE_MARKER, publish

BASE = "https://schemas.example.org/eval/"
PERSON_REF = "urn:evalreg:demo.person:1#/$defs/p"
NAME = {"type": "string", "description": "The name of the person."}
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


class _Links(HTMLParser):
    """The links, loaded resources and ids of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.loads: list[str] = []
        self.ids: set[str] = set()
        self.scripts = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if found.get("id"):
            self.ids.add(str(found["id"]))
        if tag == "a" and found.get("href"):
            self.links.append(str(found["href"]))
        if tag == "script":
            self.scripts += 1
        for name in ("src", "srcset", "data", "poster"):
            if found.get(name):
                self.loads.append(str(found[name]))
        if tag == "link" and found.get("href"):
            self.loads.append(str(found["href"]))


def parse(path: Path) -> _Links:
    parser = _Links()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built-in registry, published with documentation pages."""
    out = tmp_path_factory.mktemp("published") / "site"
    publish(evalreg.load_registry(), out, base_url=BASE, docs=True)
    return out


def _pages(site: Path) -> list[Path]:
    return sorted(site.rglob("*.html"))


def test_every_link_of_the_index_resolves_to_a_file_written(site: Path) -> None:
    index = parse(site / "index.html")
    assert index.links, "the index links to nothing"
    listed = set(json.loads((site / SITE_MARKER).read_text())["files"])
    for link in index.links:
        parts = urlsplit(link)
        if parts.scheme or parts.netloc:
            pytest.fail(f"the index links outside the site: {link}")
        target = unquote(parts.path)
        if not target:
            assert parts.fragment in index.ids, link
            continue
        assert target in listed and (site / target).is_file(), link
        if parts.fragment and target.endswith(".html"):
            assert parts.fragment in parse(site / target).ids, link


def test_the_index_shows_what_a_consumer_needs(site: Path, registry: Registry) -> None:
    page = (site / "index.html").read_text(encoding="utf-8")
    index = parse(site / "index.html")
    for family in registry.families():
        assert family in index.ids
        assert f'href="{family}/changes.html"' in page
        for version in registry.versions(family):
            assert f'href="{family}/{version}.schema.json"' in page
            assert f'href="docs/{family}-{version}.html"' in page
    assert 'href="#eee.aggregate-rules"' in page and "eee.score-bounds" in page
    assert '<span class="badge NONE">NONE</span>' in page
    assert "catalog.json" in page and f"{BASE}eee.aggregate/latest.schema.json" in page


def test_no_page_loads_anything_from_elsewhere(site: Path) -> None:
    for page in _pages(site):
        found = parse(page)
        for url in found.loads:
            parts = urlsplit(url)
            assert not parts.scheme and not parts.netloc, f"{page} loads {url}"
            assert (page.parent / unquote(parts.path)).is_file(), f"{page} loads {url}, not written"
        if page.parent.name != "docs":
            assert found.scripts == 0 and not found.loads, page  # plain HTML, inline style
    for sheet in (site / "docs").rglob("*.css"):
        text = sheet.read_text(encoding="utf-8")
        assert "@import" not in text and "url(http" not in text and "url(//" not in text


def test_each_version_has_a_documentation_page(site: Path, registry: Registry) -> None:
    page = (site / "docs" / "eee.aggregate-0.2.0.html").read_text(encoding="utf-8")
    assert "evaluation_results" in page and "schema_version" in page
    assert '<a href="../index.html#eee.aggregate">All schemas</a>' in page
    assert "eee.aggregate 0.2.0" in page
    written = {p.name for p in (site / "docs").glob("*.html")}
    assert written == {
        f"{family}-{version}.html"
        for family in registry.families()
        for version in registry.versions(family)
    }


def test_the_changes_page_lists_each_version_breaking_first(site: Path) -> None:
    page = (site / "eee.aggregate" / "changes.html").read_text(encoding="utf-8")
    ids = parse(site / "eee.aggregate" / "changes.html").ids
    assert {"v0.1.0", "v0.2.0", "v0.3.0"} <= ids
    section = page[page.index('id="v0.2.0"') : page.index('id="v0.1.0"')]
    assert section.index("Breaking changes") < section.index("Compatible changes")
    assert "/source_data" in section and "breaks BACKWARD" in section


def test_documentation_resolves_refs_between_schemas_offline(
    small_site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    page = (small_site / "docs" / "demo.team-1.html").read_text(encoding="utf-8")
    assert 'property-name">lead<' in page
    # The person's field, from demo.person's published document (requests.get would fail).
    assert 'property-name">name<' in page and "The name of the person." in page


@pytest.fixture
def small_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    import requests

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"documentation fetched {args}")

    monkeypatch.setattr(requests, "get", refuse)
    root = tmp_path / "reg"
    for family, schema in (
        ("demo.person", {"$defs": {"p": {"type": "object", "properties": {"name": NAME}}}}),
        (
            "demo.team",
            {
                "type": "object",
                "properties": {"lead": {"$ref": "urn:evalreg:demo.person:1#/$defs/p"}},
            },
        ),
    ):
        (root / "registry").mkdir(parents=True, exist_ok=True)
        (root / "registry" / f"{family}.yaml").write_text(
            f"name: {family}\ntitle: {family} records\nkind: json\n"
        )
        (root / "schemas" / family).mkdir(parents=True)
        document = {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}
        (root / "schemas" / family / "1.schema.json").write_text(json.dumps(document))
    registry = evalreg.load_registry([root], builtin=False)
    out = tmp_path / "site"
    publish(registry, out, base_url=BASE, docs=True, drafts=True)
    return out


def test_publishing_documentation_is_deterministic(tmp_path: Path) -> None:
    registry = evalreg.load_registry()
    first = publish(registry, tmp_path / "a", families=["eee.instance"], docs=True)
    second = publish(registry, tmp_path / "b", families=["eee.instance"], docs=True)

    def tree(root: Path) -> dict[str, bytes]:
        return {
            p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()
        }

    assert tree(first.out_dir) == tree(second.out_dir)
    assert "docs/js/schema_doc.min.js" in tree(first.out_dir)


def test_documentation_without_its_library_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import builtins

    real = builtins.__import__

    def no_library(name: str, *args: object, **kwargs: object) -> object:
        if name.startswith("json_schema_for_humans"):
            raise ImportError(name)
        return real(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(builtins, "__import__", no_library)
    with pytest.raises(PublishError, match=r"pip install 'evalreg\[docs\]'"):
        publish(evalreg.load_registry(), tmp_path / "site", families=["eee.instance"], docs=True)
    assert not (tmp_path / "site").exists()
    assert os.listdir(tmp_path) == []  # nothing left beside it either


# -- the folder --------------------------------------------------------------------------------


def test_an_unrelated_folder_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "www"
    out.mkdir()
    (out / "index.html").write_text("<p>my own page</p>")
    (out / "catalog.json").write_text("{}")
    with pytest.raises(PublishError, match="did not write"):
        publish(evalreg.load_registry(), out, families=["eee.instance"])
    assert (out / "index.html").read_text() == "<p>my own page</p>"
    assert sorted(os.listdir(tmp_path)) == ["www"]
    with pytest.raises(SystemExit) as info:
        main(["publish", str(out), "--family", "eee.instance"])
    _, err = capsys.readouterr()
    assert info.value.code == 2
    assert "holds files that evalreg publish did not write (catalog.json, index.html)" in err
    (out / "file").write_text("x")
    out.rename(tmp_path / "file-not-folder")
    (tmp_path / "plain").write_text("x")
    with pytest.raises(PublishError, match="is not a folder"):
        publish(evalreg.load_registry(), tmp_path / "plain")


def test_republishing_removes_what_is_no_longer_published_and_keeps_others_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "site"
    registry = evalreg.load_registry()
    publish(registry, out, families=["eee.instance", "mnemoverse.gold"], docs=True)
    assert (out / "mnemoverse.gold" / "0.1.schema.json").is_file()
    (out / "CNAME").write_text("schemas.example.org\n")
    (out / "extra").mkdir()
    (out / "extra" / "notes.md").write_text("notes")
    result = publish(registry, out, families=["eee.instance"])
    assert not (out / "mnemoverse.gold").exists()
    assert not (out / "docs").exists()  # published without --docs this time
    assert (out / "CNAME").read_text() == "schemas.example.org\n"
    assert (out / "extra" / "notes.md").read_text() == "notes"
    assert sorted(p.name for p in result.kept) == ["CNAME", "notes.md"]
    listed = json.loads((out / SITE_MARKER).read_text())["files"]
    assert "CNAME" not in listed and "index.html" in listed
    assert sorted(os.listdir(tmp_path)) == ["site"]  # nothing left beside it
    with pytest.raises(SystemExit):
        main(["publish", str(out), "--family", "eee.instance"])
    assert f"kept {out / 'CNAME'} (not written by evalreg publish)" in capsys.readouterr().err


def test_a_file_of_others_the_site_would_replace_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "site"
    publish(evalreg.load_registry(), out, families=["eee.instance"])
    before = (out / "index.html").read_text()
    (out / "catalog.json").unlink()
    listed = json.loads((out / SITE_MARKER).read_text())
    listed["files"].remove("catalog.json")
    (out / SITE_MARKER).write_text(json.dumps(listed))
    (out / "catalog.json").write_text('{"mine": true}')
    with pytest.raises(PublishError, match=r"catalog\.json was not written by evalreg publish"):
        publish(evalreg.load_registry(), out, families=["eee.instance"])
    assert (out / "catalog.json").read_text() == '{"mine": true}'
    assert (out / "index.html").read_text() == before


def test_a_failed_publish_leaves_the_old_site(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "site"
    publish(evalreg.load_registry(), out, families=["eee.instance"])
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}

    def broken(*args: object, **kwargs: object) -> object:
        raise PublishError("cannot document eee.instance 0.2.0: broken")

    monkeypatch.setattr("evalreg.publish.site.render_docs", broken)
    with pytest.raises(PublishError, match="broken"):
        publish(evalreg.load_registry(), out, families=["eee.aggregate"], docs=True)
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert sorted(os.listdir(tmp_path)) == ["site"]


@pytest.mark.parametrize("exchange", [True, False], ids=["exchange", "two-renames"])
def test_swap_in_replaces_a_folder_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exchange: bool
) -> None:
    if not exchange:
        monkeypatch.setattr(folders, "_exchange", lambda a, b: False)
    target = tmp_path / "site"
    target.mkdir()
    (target / "old.txt").write_text("old")
    os.chmod(target, 0o750)
    new = folders.staging_folder(target)
    assert new.parent == tmp_path and new.name.startswith(".site.new-")
    assert (os.stat(new).st_mode & 0o777) == 0o750  # the permissions of the folder it replaces
    (new / "new.txt").write_text("new")
    folders.swap_in(new, target)
    assert os.listdir(target) == ["new.txt"]
    assert os.listdir(tmp_path) == ["site"]


def test_a_new_folder_gets_the_usual_permissions(tmp_path: Path) -> None:
    mask = os.umask(0o022)
    try:
        new = folders.staging_folder(tmp_path / "fresh")
    finally:
        os.umask(mask)
    assert (os.stat(new).st_mode & 0o777) == 0o755  # not mkdtemp's 0o700
    folders.swap_in(new, tmp_path / "fresh")
    assert (tmp_path / "fresh").is_dir()


# -- in a browser ------------------------------------------------------------------------------


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed")
def test_the_index_renders_in_chromium(site: Path) -> None:
    assert CHROMIUM is not None
    with tempfile.TemporaryDirectory() as profile:
        done = subprocess.run(
            [
                CHROMIUM,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                f"--user-data-dir={profile}",
                "--dump-dom",
                (site / "index.html").as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert done.returncode == 0, done.stderr[-2000:]
    dom = done.stdout
    assert "<h1>Schemas</h1>" in dom and 'id="eee.aggregate"' in dom
    assert "JSON Schema</a>" in dom and "documentation</a>" in dom


def test_the_docs_module_names_its_pages() -> None:
    assert docs_module.docs_page("eee.aggregate", "0.2.0") == "docs/eee.aggregate-0.2.0.html"
