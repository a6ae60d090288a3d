"""Publishing: a static, versioned set of schema files with stable `$id`s, and a catalog.

`publish` writes, under an output directory, one file per family and version whose `$id` is
its published URL (`<base>/<family>/<version>.schema.json`), with every `$ref` to another
registry schema rewritten to that schema's published URL; beside it its Arrow schema
(`<version>.arrow.json`) and the Hugging Face dataset-card `features` block that loads its
exported Parquet files (`<version>.features.yaml`); a `latest.schema.json` and a
`CHANGELOG.md` per family; a `catalog.json` in the JSON Schema Store catalog format; and an
`index.html` with no scripts. The same registry always gives byte-identical output.

Programs that `$ref` evalreg's schemas offline use `schema_uri` and `published_registry`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urldefrag, urljoin, urlsplit

from evalreg.defaults import DEFAULT_BASE_URL
from evalreg.errors import PublishError, RegistryError, TableError
from evalreg.publish.docs import docs_page, render_docs
from evalreg.publish.pages import (
    CHANGES_PAGE,
    PublishedFamily,
    PublishedRule,
    changes_html,
    index_html,
)
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

SITE_MARKER = ".evalreg-site.json"
"""The file that says a folder holds a site `publish` wrote, and which of its files it wrote."""


@dataclass(frozen=True)
class PublishResult:
    """What `publish` wrote, the files of others it kept, and the draft versions it left out."""

    out_dir: Path
    base_url: str
    families: tuple[PublishedFamily, ...]
    files: tuple[Path, ...]
    skipped_drafts: tuple[tuple[str, str], ...] = ()
    kept: tuple[Path, ...] = ()
    """Files in the folder that an earlier publish did not write (a CNAME, say), kept as they
    were."""

    @property
    def versions(self) -> int:
        """Return how many schema versions were published, of every family."""
        return sum(len(family.versions) for family in self.families)


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
    family: str,
    versions: Sequence[str],
    diffs: Sequence[SchemaDiff],
    notes: Mapping[str, Any],
    steps: Mapping[str, str],
) -> str:
    from evalreg.diff import changelog_markdown

    text = changelog_markdown(family, diffs, notes, steps)
    first = "".join(f"\n*{note}*\n" for note in notes.get(versions[0], ()))
    return text + f"\n## {versions[0]}\n\nFirst published version.\n{first}"


def publish(
    registry: Registry,
    out_dir: str | Path,
    *,
    base_url: str = DEFAULT_BASE_URL,
    families: Iterable[str] | None = None,
    drafts: bool = False,
    docs: bool = False,
) -> PublishResult:
    """Write the published schema files, changelogs, catalog and pages as the folder `out_dir`.

    Only released versions are published unless `drafts` is true: a published URL must never
    change meaning, and a draft may still change. With `docs`, each version also gets a
    documentation page (json-schema-for-humans, the `docs` extra).

    The site is written beside `out_dir` and swapped in whole, so that the folder always holds
    a complete site, and files of an earlier site that are no longer published are gone.
    `out_dir` must be new, empty, or a site `publish` wrote (it leaves a `.evalreg-site.json`
    listing its files); other files there are kept, unless the site would overwrite one.

    Raises:
        UnknownFamilyError: a family in `families` is unknown.
        ValueError: the base URL is not absolute.
        PublishError: `out_dir` holds files `publish` did not write and would overwrite, or
            is not a folder, or a documentation page cannot be made.
        RegistryError: a file cannot be written.
    """
    from evalreg.publish.upstream.describe import step_accounts
    from evalreg.registry.lock import amendment_notes
    from evalreg.registry.lock import drafts as draft_entries

    base = normalise_base_url(base_url)
    names = sorted(set(registry.families() if families is None else families))
    for name in names:
        registry.manifest(name)
    unreleased = {(e.family, e.version) for e in draft_entries(registry, names)}
    skipped = set() if drafts else unreleased
    urls = _id_map(registry, base)
    out = Path(os.path.abspath(out_dir))
    previous = previous_site(out)
    contents: dict[str, str] = {}
    documents: dict[str, Any] = {}
    published: list[PublishedFamily] = []
    pages: list[tuple[PublishedFamily, list[SchemaDiff], Mapping[str, Any], Mapping[str, str]]] = []
    for family in names:
        versions = tuple(v for v in registry.versions(family) if (family, v) not in skipped)
        if not versions:
            continue
        manifest = registry.manifest(family)
        diffs = _diffs(registry, family, versions)
        notes = amendment_notes(registry, family)
        tables: dict[str, tuple[str, str]] = {}
        for version in versions:
            entry = registry.entry(family, version)
            document = _published_document(entry, urls[entry.id], urls)
            documents[urls[entry.id]] = document
            contents[f"{family}/{version}.schema.json"] = _dump(document)
            made = _table_files(registry, family, version)
            if made is not None:
                arrow_name, features_name = table_names(family, version)
                contents[arrow_name], contents[features_name] = made
                tables[version] = (arrow_name, features_name)
        latest_doc = _published_document(
            registry.entry(family, versions[-1]), published_url(base, family, LATEST_NAME), urls
        )
        contents[f"{family}/{LATEST_NAME}.schema.json"] = _dump(latest_doc)
        steps = step_accounts(registry, family, versions)
        contents[f"{family}/CHANGELOG.md"] = _changelog(family, versions, diffs, notes, steps)
        item = PublishedFamily(
            family,
            manifest.title,
            manifest.description,
            versions,
            {diff.new_label: diff.compatibility for diff in diffs},
            file_match(manifest),
            _rules(registry, family),
            {d.new_label: (len(d.changes), len(d.breaking)) for d in diffs},
            frozenset(v for v in versions if (family, v) in unreleased),
            {v: docs_page(family, v) for v in versions} if docs else {},
            tables,
        )
        published.append(item)
        pages.append((item, diffs, notes, steps))
    for done, its_diffs, its_notes, its_steps in pages:
        contents[f"{done.family}/{CHANGES_PAGE}"] = changes_html(
            done, its_diffs, its_notes, its_steps
        )
    contents["catalog.json"] = _dump(_catalog(published, base))
    contents["index.html"] = index_html(published, base)
    written, kept = _write_site(out, previous, contents, documents, published if docs else [])
    return PublishResult(
        out,
        base,
        tuple(published),
        written,
        tuple(sorted(skipped, key=lambda fv: (fv[0], parse_version(fv[1])))),
        kept,
    )


def previous_site(out: Path) -> frozenset[str] | None:
    """Return the files an earlier publish wrote in `out`: none if it is new or empty.

    Returns None for a folder holding files no publish wrote.

    Raises:
        PublishError: `out` is not a folder, or its marker file is unreadable.
    """
    if not out.exists():
        return frozenset()
    if not out.is_dir():
        raise PublishError("is not a folder", str(out))
    marker = out / SITE_MARKER
    if not marker.is_file():
        return frozenset() if not any(out.iterdir()) else None
    try:
        listed = json.loads(marker.read_text(encoding="utf-8"))["files"]
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise PublishError(f"cannot read {SITE_MARKER}: {err}", str(out)) from err
    return frozenset(str(name) for name in listed)


def _others(out: Path, previous: frozenset[str] | None) -> list[str]:
    """Return the files under `out` that an earlier publish did not write, sorted."""
    if not out.is_dir():
        return []
    found = []
    for path in sorted(out.rglob("*")):
        if path.is_dir() and not path.is_symlink():
            continue
        relative = path.relative_to(out).as_posix()
        if relative != SITE_MARKER and (previous is None or relative not in previous):
            found.append(relative)
    return found


def _write_site(
    out: Path,
    previous: frozenset[str] | None,
    contents: Mapping[str, str],
    documents: Mapping[str, Any],
    documented: Sequence[PublishedFamily],
) -> tuple[tuple[Path, ...], tuple[Path, ...]]:
    """Write the site beside `out`, keep the files of others, and swap it in."""
    from evalreg.io.folders import staging_folder, swap_in

    others = _others(out, previous)
    if previous is None:
        more = f" and {len(others) - 3} more" if len(others) > 3 else ""
        raise PublishError(
            f"holds files that evalreg publish did not write ({', '.join(others[:3])}{more}) and "
            f"no {SITE_MARKER}; publish into a new or empty folder, or one evalreg published",
            str(out),
        )
    clashes = [name for name in others if name in contents]
    if clashes:
        raise PublishError(
            f"{clashes[0]} was not written by evalreg publish, and the site would replace it; "
            "move it away first",
            str(out),
        )
    try:
        staging = staging_folder(out)
    except OSError as err:
        raise PublishError(f"cannot make a folder beside it: {err}", str(out)) from err
    try:
        written = [staging / name for name in contents]
        for path, text in zip(written, contents.values(), strict=True):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8", newline="\n")
        if documented:
            schema_files = {
                (f.family, v): staging / f"{f.family}/{v}.schema.json"
                for f in documented
                for v in f.versions
            }
            titles = {f.family: f.title for f in documented}
            written += render_docs(schema_files, documents, staging, titles)
        names = sorted(p.relative_to(staging).as_posix() for p in written)
        for name in others:
            (staging / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(out / name, staging / name, follow_symlinks=False)
        marker = {"generator": "evalreg publish", "files": names}
        (staging / SITE_MARKER).write_text(_dump(marker), encoding="utf-8", newline="\n")
        swap_in(staging, out)
    except OSError as err:
        shutil.rmtree(staging, ignore_errors=True)
        raise RegistryError(str(err.filename or out), f"cannot write: {err}") from err
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return tuple(out / name for name in names), tuple(out / name for name in others)


def table_names(family: str, version: str) -> tuple[str, str]:
    """Return where a version's Arrow schema and Hugging Face features go, in the site."""
    return f"{family}/{version}.arrow.json", f"{family}/{version}.features.yaml"


def _table_files(registry: Registry, family: str, version: str) -> tuple[str, str] | None:
    """Return a version's Arrow schema (JSON) and dataset-card `features` block (YAML), or
    None for a schema that cannot be a table (its records are not objects with properties)."""
    from evalreg.tables.features import features_yaml, schema_json
    from evalreg.tables.mapping import layout

    try:
        found = layout(registry, family, version)
    except TableError:
        return None
    return _dump(schema_json(found)), features_yaml(found)


def _rules(registry: Registry, family: str) -> tuple[PublishedRule, ...]:
    from evalreg.engine.rules import family_rules

    return tuple(
        PublishedRule(r.id, r.severity, r.scope, str(r.versions), r.description)
        for r in family_rules(registry, family)
    )


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
