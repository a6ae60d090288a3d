"""Publishing: a static, versioned set of schema files with stable `$id`s, and a catalog.

`publish` writes, under an output directory, one file per family and version whose `$id` is
its published URL (`<base>/<family>/<version>.schema.json`), with every `$ref` to another
registry schema rewritten to that schema's published URL; a `latest.schema.json` and a
`CHANGELOG.md` per family; a `catalog.json` in the JSON Schema Store catalog format; and an
`index.html` with no scripts. The same registry always gives byte-identical output.

Programs that `$ref` evalreg's schemas offline use `schema_uri` and `published_registry`.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urldefrag, urljoin, urlsplit

from evalreg.defaults import DEFAULT_BASE_URL
from evalreg.errors import RegistryError
from evalreg.registry.versions import parse_version

if TYPE_CHECKING:
    import referencing

    from evalreg.diff import SchemaDiff
    from evalreg.engine.registry import Registry
    from evalreg.registry.core import SchemaEntry
    from evalreg.registry.manifest import FamilyManifest

CATALOG_SCHEMA = "https://json.schemastore.org/schema-catalog.json"
LATEST_NAME = "latest"
# A pattern such as `*.json` matches every file of its kind: an editor following the catalog
# would apply the schema to unrelated files, so such patterns stay out of `fileMatch`.
_CATCH_ALL = re.compile(r"\*\.[A-Za-z0-9]+")


def normalise_base_url(base_url: str) -> str:
    """Return `base_url` ending in `/`.

    Raises:
        ValueError: the URL is not absolute (it needs a scheme, and a host for http and https).
    """
    parts = urlsplit(base_url)
    if not parts.scheme or (parts.scheme in ("http", "https") and not parts.netloc):
        raise ValueError(
            f"base URL {base_url!r} is not absolute; give one such as {DEFAULT_BASE_URL}"
        )
    return base_url if base_url.endswith("/") else base_url + "/"


def published_url(base_url: str, family: str, version: str) -> str:
    """Return the published URL of a family's version (or of `latest`) under `base_url`.

    Raises:
        ValueError: the base URL is not absolute.
    """
    base = normalise_base_url(base_url)
    return f"{base}{quote(family)}/{quote(version)}.schema.json"


def schema_uri(
    family: str,
    version: str | None = None,
    *,
    base_url: str = DEFAULT_BASE_URL,
    registry: Registry | None = None,
) -> str:
    """Return the published `$id` of a family's version (the newest when `version` is None).

    The version is spelled as the registry spells it (`0.2` gives the URL of `0.2.0`).

    Raises:
        UnknownFamilyError, UnknownVersionError: the family or version is unknown.
        ValueError: the base URL is not absolute.
    """
    if registry is None:
        from evalreg.engine.registry import default_registry

        registry = default_registry()
    return published_url(base_url, family, registry.resolve_version(family, version))


def _rewrite_refs(node: Any, base: str, root_id: str, urls: Mapping[str, str]) -> Any:
    """Return `node` with every `$ref` to another registry schema pointing at its new URL."""
    if isinstance(node, list):
        return [_rewrite_refs(item, base, root_id, urls) for item in node]
    if not isinstance(node, dict):
        return node
    if isinstance(node.get("$id"), str):
        base = urljoin(base, node["$id"])
    rewritten: dict[str, Any] = {}
    for key, value in node.items():
        if key == "$ref" and isinstance(value, str):
            target, fragment = urldefrag(urljoin(base, value))
            if target in urls and not (value.startswith("#") and base == root_id):
                value = urls[target] + (f"#{fragment}" if fragment else "")
            rewritten[key] = value
        elif key in ("enum", "const", "examples", "default"):
            rewritten[key] = value
        else:
            rewritten[key] = _rewrite_refs(value, base, root_id, urls)
    return rewritten


def _published_document(entry: SchemaEntry, new_id: str, urls: Mapping[str, str]) -> dict[str, Any]:
    body = _rewrite_refs(dict(entry.document), entry.id, entry.id, urls)
    body.pop("$id", None)
    head = {"$schema": body.pop("$schema")} if "$schema" in body else {}
    return {**head, "$id": new_id, **body}


def _id_map(registry: Registry, base_url: str) -> dict[str, str]:
    """Map every schema's registry `$id` to its published URL."""
    return {
        entry.id: published_url(base_url, entry.family, entry.version)
        for entry in registry.entries()
    }


def published_schema(
    registry: Registry, family: str, version: str | None = None, *, base_url: str = DEFAULT_BASE_URL
) -> dict[str, Any]:
    """Return a version's schema as published: `$id` its URL, `$ref`s to published URLs.

    Raises:
        UnknownFamilyError, UnknownVersionError: the family or version is unknown.
        ValueError: the base URL is not absolute.
    """
    entry = registry.entry(family, version)
    urls = _id_map(registry, base_url)
    return _published_document(entry, urls[entry.id], urls)


def published_registry(
    registry: Registry | None = None, *, base_url: str = DEFAULT_BASE_URL
) -> referencing.Registry[Any]:
    """Return a `referencing.Registry` of every schema under its published `$id`.

    Each family's newest version is also there under `<family>/latest.schema.json`. Nothing
    else can be retrieved: the registry never fetches over the network.

    Raises:
        ValueError: the base URL is not absolute.
    """
    from referencing import Registry as RefRegistry
    from referencing import Resource
    from referencing.exceptions import NoSuchResource
    from referencing.jsonschema import DRAFT202012

    if registry is None:
        from evalreg.engine.registry import default_registry

        registry = default_registry()

    def refuse(uri: str) -> Resource[Any]:
        raise NoSuchResource(ref=uri)  # type: ignore[call-arg]

    urls = _id_map(registry, base_url)
    resources = []
    for entry in registry.entries():
        document = _published_document(entry, urls[entry.id], urls)
        resources.append((urls[entry.id], document))
        if entry.version == registry.latest(entry.family):
            latest = published_url(base_url, entry.family, LATEST_NAME)
            resources.append((latest, {**document, "$id": latest}))
    empty: referencing.Registry[Any] = RefRegistry(retrieve=refuse)  # type: ignore[call-arg]
    return empty.with_resources(
        (uri, Resource.from_contents(doc, default_specification=DRAFT202012))
        for uri, doc in resources
    )


# -- publishing ---------------------------------------------------------------------------------


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


@dataclass(frozen=True)
class PublishedRule:
    """A rule as documented: what it checks, how severe, where, and at which versions."""

    id: str
    severity: str
    scope: str
    versions: str
    description: str


@dataclass(frozen=True)
class PublishResult:
    """What `publish` wrote, and the draft versions it left out."""

    out_dir: Path
    base_url: str
    families: tuple[PublishedFamily, ...]
    files: tuple[Path, ...]
    skipped_drafts: tuple[tuple[str, str], ...] = ()


def _dump(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def file_match(manifest: FamilyManifest) -> tuple[str, ...]:
    """Return the catalog's `fileMatch` for a family.

    The manifest key `catalog: {fileMatch: [...]}` sets it; otherwise it is the manifest's
    `files` patterns, less those such as `*.json` that match every file of a kind.

    Raises:
        RegistryError: `catalog` is malformed.
    """
    catalog = manifest.options.get("catalog")
    if catalog is None:
        return tuple(p for p in manifest.files if not _CATCH_ALL.fullmatch(p))
    patterns = catalog.get("fileMatch") if isinstance(catalog, dict) else None
    if not isinstance(patterns, list) or not all(isinstance(p, str) for p in patterns):
        raise RegistryError(manifest.path, "catalog must be {fileMatch: [patterns]}")
    return tuple(patterns)


def _diffs(registry: Registry, family: str, versions: Sequence[str]) -> list[SchemaDiff]:
    from evalreg.diff import diff_schemas
    from evalreg.registry.manifest import versioning

    policy = versioning(registry.manifest(family)).policy
    diffs = []
    for old, new in pairwise(versions):
        diffs.append(
            diff_schemas(
                registry.entry(family, old).document,
                registry.entry(family, new).document,
                registry=registry.referencing_registry(),
                policy=policy,
                old_label=old,
                new_label=new,
            )
        )
    return diffs


def _changelog(
    registry: Registry, family: str, versions: Sequence[str], diffs: Sequence[SchemaDiff]
) -> str:
    from evalreg.diff import changelog_markdown
    from evalreg.registry.lock import amendment_notes

    notes = amendment_notes(registry, family)
    text = changelog_markdown(family, diffs, notes)
    first = "".join(f"\n*{note}*\n" for note in notes.get(versions[0], ()))
    return text + f"\n## {versions[0]}\n\nFirst published version.\n{first}"


def publish(
    registry: Registry,
    out_dir: str | Path,
    *,
    base_url: str = DEFAULT_BASE_URL,
    families: Iterable[str] | None = None,
    drafts: bool = False,
) -> PublishResult:
    """Write the published schema files, changelogs, catalog and index under `out_dir`.

    Only released versions are published unless `drafts` is true: a published URL must never
    change meaning, and a draft may still change.

    Raises:
        UnknownFamilyError: a family in `families` is unknown.
        ValueError: the base URL is not absolute.
        RegistryError: a file cannot be written.
    """
    from evalreg.registry.lock import drafts as draft_entries

    base = normalise_base_url(base_url)
    names = sorted(set(registry.families() if families is None else families))
    for name in names:
        registry.manifest(name)
    unreleased = (
        set() if drafts else {(e.family, e.version) for e in draft_entries(registry, names)}
    )
    urls = _id_map(registry, base)
    out = Path(out_dir)
    files: dict[Path, str] = {}
    published: list[PublishedFamily] = []
    for family in names:
        versions = tuple(v for v in registry.versions(family) if (family, v) not in unreleased)
        if not versions:
            continue
        manifest = registry.manifest(family)
        diffs = _diffs(registry, family, versions)
        compatibility = {new.new_label: new.compatibility for new in diffs}
        for version in versions:
            entry = registry.entry(family, version)
            document = _published_document(entry, urls[entry.id], urls)
            files[out / family / f"{version}.schema.json"] = _dump(document)
        latest_doc = _published_document(
            registry.entry(family, versions[-1]), published_url(base, family, LATEST_NAME), urls
        )
        files[out / family / f"{LATEST_NAME}.schema.json"] = _dump(latest_doc)
        files[out / family / "CHANGELOG.md"] = _changelog(registry, family, versions, diffs)
        published.append(
            PublishedFamily(
                family,
                manifest.title,
                manifest.description,
                versions,
                compatibility,
                file_match(manifest),
                _rules(registry, family),
            )
        )
    files[out / "catalog.json"] = _dump(_catalog(published, base))
    files[out / "index.html"] = _index(published, base)
    for path, text in files.items():
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8", newline="\n")
        except OSError as err:
            raise RegistryError(str(path), f"cannot write: {err}") from err
    return PublishResult(
        out,
        base,
        tuple(published),
        tuple(files),
        tuple(sorted(unreleased, key=lambda fv: (fv[0], parse_version(fv[1])))),
    )


def _rules(registry: Registry, family: str) -> tuple[PublishedRule, ...]:
    from evalreg.engine.rules import family_rules

    return tuple(
        PublishedRule(r.id, r.severity, r.scope, str(r.versions), r.description)
        for r in family_rules(registry, family)
    )


def _rule_rows(family: PublishedFamily) -> list[str]:
    if not family.rules:
        return []
    e = html.escape
    rows = [
        "<p>Rules beyond the schema (checked by <code>evalreg validate</code>):</p>",
        "<table>",
        "<tr><th>Rule</th><th>Severity</th><th>Scope</th><th>Versions</th>"
        "<th>What must hold</th></tr>",
    ]
    rows += [
        f"<tr><td><code>{e(r.id)}</code></td><td>{e(r.severity)}</td><td>{e(r.scope)}</td>"
        f"<td>{e(r.versions)}</td><td>{e(r.description)}</td></tr>"
        for r in family.rules
    ]
    return [*rows, "</table>"]


def _catalog(families: Sequence[PublishedFamily], base: str) -> dict[str, Any]:
    return {
        "$schema": CATALOG_SCHEMA,
        "version": 1,
        "schemas": [
            {
                "name": f.title,
                "description": f"{f.description} (evalreg family {f.family})".strip(),
                "fileMatch": list(f.file_match),
                "url": published_url(base, f.family, LATEST_NAME),
                "versions": {v: published_url(base, f.family, v) for v in f.versions},
            }
            for f in families
        ],
    }


_STYLE = """\
body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;\
line-height:1.5;color:#1a1a1a}
h1{font-size:1.6rem}h2{font-size:1.2rem;margin-top:2rem}code{font-size:.95em}
table{border-collapse:collapse;margin:.5rem 0}th,td{border:1px solid #ccc;padding:.2rem .6rem;\
text-align:left}th{background:#f3f3f3}.FULL{color:#176117}.BACKWARD,.FORWARD{color:#8a5a00}\
.NONE{color:#a31515}"""


def _index_rows(family: PublishedFamily) -> Iterator[str]:
    e = html.escape
    for version in reversed(family.versions):
        compat = family.compatibility.get(version)
        cell = f'<span class="{e(compat)}">{e(compat)}</span>' if compat else "first version"
        link = f"{quote(family.family)}/{quote(version)}.schema.json"
        latest = " (latest)" if version == family.versions[-1] else ""
        yield (f'<tr><td><a href="{e(link)}">{e(version)}</a>{latest}</td><td>{cell}</td></tr>')


def _index(families: Sequence[PublishedFamily], base: str) -> str:
    e = html.escape
    lines = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>evalreg schemas</title>",
        f"<style>{_STYLE}</style>",
        "</head>",
        "<body>",
        "<h1>evalreg schemas</h1>",
        f"<p>Published under <code>{e(base)}</code>. Tools can use the "
        '<a href="catalog.json">schema catalog</a>. Compatibility compares each version with '
        "the one before it: FULL (both ways), BACKWARD (the new schema accepts old data), "
        "FORWARD (the old schema accepts new data) or NONE.</p>",
    ]
    lines.append("<ul>")
    for family in families:
        lines.append(
            f'<li><a href="#{e(family.family)}">{e(family.family)}</a>: {e(family.title)} '
            f"(latest {e(family.versions[-1])})</li>"
        )
    lines.append("</ul>")
    for family in families:
        folder = quote(family.family)
        lines += [
            f'<h2 id="{e(family.family)}">{e(family.family)}: {e(family.title)}</h2>',
            f"<p>{e(family.description)}</p>",
            f'<p><a href="{e(folder)}/latest.schema.json">latest</a> &middot; '
            f'<a href="{e(folder)}/CHANGELOG.md">changelog</a></p>',
            "<table>",
            "<tr><th>Version</th><th>Compatibility with the previous version</th></tr>",
            *_index_rows(family),
            "</table>",
            *_rule_rows(family),
        ]
    lines += ["</body>", "</html>"]
    return "\n".join(lines) + "\n"
