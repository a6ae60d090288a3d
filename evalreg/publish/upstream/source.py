"""Where a family's format is published: the manifest's `upstream:` key, and reading from it.

    upstream:
      schema: https://example.org/eval.schema.json    # a file or fsspec URL, or:
      git: ../checkouts/every_eval_ever              # a local checkout (or bare git directory)
      path: [eval.schema.json, "*/schemas/eval.schema.json"]   # the schema's paths in it
      ref: main                                      # the revision to read (default HEAD)

Relative paths are read from the registry directory that holds the manifest. A `path` may be
a list of git pathspecs (globs): the schema moved around in the repository's history, and the
newest file any of them names is the schema at a revision.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalreg.errors import ReadError, RegistryError
from evalreg.io.codec import DecodeError, loads
from evalreg.io.remote import is_url, read_url
from evalreg.registry.manifest import FamilyManifest

MAX_UPSTREAM_BYTES = 16 * 1024 * 1024
"""The largest upstream schema read, in bytes (16 MiB, as for registry schemas)."""
GIT_TIMEOUT = 120
"""Seconds one git command may take."""


@dataclass(frozen=True)
class Upstream:
    """Where a family's schema is published: a file or URL, or paths in a git repository."""

    schema: str | None = None
    git: Path | None = None
    paths: tuple[str, ...] = ()
    ref: str = "HEAD"


@dataclass(frozen=True)
class Published:
    """One version of an upstream schema: its document, and where and when it was read."""

    document: dict[str, Any]
    where: str
    commit: str | None = None
    date: str | None = None


def upstream_of(manifest: FamilyManifest) -> Upstream | None:
    """Return a family's `upstream:` settings (None when the manifest has none).

    Raises:
        RegistryError: the key is malformed.
    """
    data = manifest.options.get("upstream")
    if data is None:
        return None
    where = manifest.path
    base = Path(manifest.path).parent.parent
    if isinstance(data, str):
        data = {"schema": data}
    if not isinstance(data, dict) or set(data) - {"schema", "git", "path", "ref"}:
        raise RegistryError(
            where, "upstream must be a schema URL or path, or map schema, or git, path and ref"
        )
    schema, git, path, ref = (data.get(k) for k in ("schema", "git", "path", "ref"))
    if (schema is None) == (git is None):
        raise RegistryError(where, "upstream names either a schema (file or URL) or a git checkout")
    if git is not None:
        paths = [path] if isinstance(path, str) else path
        if not isinstance(git, str) or not isinstance(paths, list) or not paths:
            raise RegistryError(where, "upstream.git needs upstream.path: the schema's path(s)")
        if not all(isinstance(p, str) and p for p in paths):
            raise RegistryError(where, "upstream.path must be a path or a list of paths")
        return Upstream(None, base / git, tuple(paths), str(ref or "HEAD"))
    if not isinstance(schema, str):
        raise RegistryError(where, "upstream.schema must be a file path or a URL")
    return Upstream(schema if is_url(schema) else str(base / schema))


def _document(data: bytes, where: str) -> dict[str, Any]:
    if len(data) > MAX_UPSTREAM_BYTES:
        raise ReadError(where, f"larger than {MAX_UPSTREAM_BYTES:,} bytes")
    try:
        document = loads(data)
    except DecodeError as err:
        raise ReadError(where, f"not valid JSON: {err}") from err
    if not isinstance(document, dict):
        raise ReadError(where, "a schema must be a JSON object")
    return document


def read_schema(location: str) -> Published:
    """Read a schema from a file path or a URL.

    Raises:
        ReadError: it cannot be read, or is no JSON object.
    """
    try:
        if is_url(location):
            data = read_url(location)
        else:
            with open(location, "rb") as handle:
                data = handle.read(MAX_UPSTREAM_BYTES + 1)
    except OSError as err:
        raise ReadError(location, f"cannot read: {err.strerror or err}") from err
    return Published(_document(data, location), location)


def _git(upstream: Upstream, *args: str) -> str:
    assert upstream.git is not None
    try:
        done = subprocess.run(
            ["git", "-C", str(upstream.git), *args],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as err:
        raise ReadError(str(upstream.git), f"git {args[0]} failed: {err}") from err
    if done.returncode != 0:
        detail = " ".join(done.stderr.split())[:300]
        raise ReadError(str(upstream.git), f"git {args[0]}: {detail}")
    return done.stdout


def read_upstream(upstream: Upstream, ref: str | None = None) -> Published:
    """Read the upstream schema (at revision `ref` of a git checkout; default: its `ref`).

    Raises:
        ReadError: it cannot be read, is no JSON object, or no path names a file at `ref`.
    """
    if upstream.schema is not None:
        return read_schema(upstream.schema)
    revision = ref or upstream.ref
    line = _git(upstream, "log", "-1", "--format=%H %cs", revision, "--", *upstream.paths)
    if not line.strip():
        shown = ", ".join(upstream.paths)
        raise ReadError(str(upstream.git), f"no commit up to {revision} has {shown}")
    commit, date = line.split()
    listing = _git(upstream, "ls-tree", "-r", "--name-only", commit, "--", *upstream.paths)
    names = listing.split()
    if not names:
        names = _changed_paths(upstream, commit)
    if not names:
        raise ReadError(str(upstream.git), f"{', '.join(upstream.paths)} not found at {revision}")
    path = names[0]
    data = _git(upstream, "show", f"{commit}:{path}").encode("utf-8")
    return Published(_document(data, f"{upstream.git}@{commit[:12]}:{path}"), path, commit, date)


def _changed_paths(upstream: Upstream, commit: str) -> list[str]:
    raw = _git(upstream, "show", "--format=", "--name-only", commit, "--", *upstream.paths)
    return raw.split()


def history(upstream: Upstream, ref: str | None = None) -> Iterator[Published]:
    """Yield every distinct version of the upstream schema in a checkout's history, oldest first.

    Each distinct file content counts once, at the first commit that has it.

    Raises:
        ReadError: the upstream is not a git checkout, or git fails.
    """
    if upstream.git is None:
        raise ReadError(str(upstream.schema), "--history needs an upstream git checkout")
    log = _git(
        upstream,
        "log",
        "--reverse",
        "--no-renames",
        "--format=C %H %cs",
        "--raw",
        "--no-abbrev",
        ref or upstream.ref,
        "--",
        *upstream.paths,
    )
    seen: set[str] = set()
    commit = date = ""
    for line in log.splitlines():
        if line.startswith("C "):
            _, commit, date = line.split()
        elif line.startswith(":"):
            meta, path = line.split("\t", 1)
            sha, status = meta.split()[3], meta.split()[4]
            if status.startswith("D") or not sha.strip("0") or sha in seen:
                continue
            seen.add(sha)
            data = _git(upstream, "cat-file", "blob", sha).encode("utf-8")
            try:
                document = _document(data, f"{upstream.git}@{commit[:12]}:{path}")
            except ReadError:
                continue  # a broken file in the history is no version
            yield Published(document, path, commit, date)


def version_stated(document: dict[str, Any], pointers: Sequence[str]) -> str | None:
    """Return the version a schema states of itself: a marker's `const`, or `version`."""
    from evalreg.io.pointer import split
    from evalreg.registry.versions import VERSION_IN_TEXT

    candidates: list[Any] = []
    for pointer in pointers:
        node: Any = document
        for token in split(pointer):
            props = node.get("properties") if isinstance(node, dict) else None
            node = props.get(token) if isinstance(props, dict) else None
        if isinstance(node, dict):
            candidates.append(node.get("const"))
    candidates.append(document.get("version"))
    for value in candidates:
        if isinstance(value, str) and (found := VERSION_IN_TEXT.search(value)):
            return found.group(0)
    return None
