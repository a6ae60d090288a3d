"""Commands about the schemas themselves: list families, show, diff and changelog."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import click

from evalreg.cli.app import EXIT_PROBLEMS, Context, cli, emit, fail, pass_context

# -- list / show -----------------------------------------------------------------------------


@cli.command("list")
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@pass_context
def list_command(context: Context, fmt: str) -> None:
    """List every family with its versions, latest version and title."""
    registry = context.registry
    rows: list[dict[str, Any]] = []
    for family in registry.families():
        manifest = registry.manifest(family)
        versions = registry.versions(family)
        rows.append(
            {
                "family": family,
                "versions": list(versions),
                "drafts": [v for v in versions if registry.is_draft(family, v)],
                "latest": registry.latest(family) if versions else None,
                "title": manifest.title,
                "description": manifest.description,
                "kind": manifest.kind,
            }
        )
    if fmt == "json":
        emit(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(box=None, pad_edge=False, header_style="bold")
    for column in ("family", "versions", "latest", "title"):
        table.add_column(column, no_wrap=column != "title")
    for row in rows:
        drafts = set(row["drafts"])
        shown = [f"{v} (draft)" if v in drafts else v for v in row["versions"]]
        versions_text = ", ".join(shown) or "-"
        table.add_row(row["family"], versions_text, row["latest"] or "-", row["title"])
    Console(soft_wrap=True, width=max(120, _terminal_width())).print(table)


def _terminal_width() -> int:
    try:
        return os.get_terminal_size().columns
    except OSError:
        return 120


@cli.command("show")
@click.argument("target", metavar="FAMILY[@VERSION]")
@pass_context
def show_command(context: Context, target: str) -> None:
    """Print a family's schema as JSON (the latest version unless @VERSION is given).

    A draft version (not recorded in registry.lock) is marked on standard error.
    """
    family, _, version = target.partition("@")
    registry = context.registry
    resolved = registry.resolve_version(family, version or None)
    schema = registry.schema(family, resolved)
    if registry.is_draft(family, resolved):
        emit(f"evalreg: {family} {resolved} is a draft (not released in registry.lock)", err=True)
    emit(json.dumps(schema, indent=2, ensure_ascii=False))


# -- diff / changelog ------------------------------------------------------------------------

_HOLDS = {
    "FULL": {"FULL"},
    "BACKWARD": {"FULL", "BACKWARD"},
    "FORWARD": {"FULL", "FORWARD"},
    "NONE": {"FULL", "BACKWARD", "FORWARD", "NONE"},
}


def _read_schema_file(path: str) -> dict[str, Any]:
    from evalreg.errors import ReadError
    from evalreg.io.codec import DecodeError, loads

    try:
        with open(path, "rb") as handle:
            document = loads(handle.read())
    except OSError as err:
        raise ReadError(path, f"cannot read: {err.strerror or err}") from err
    except DecodeError as err:
        raise ReadError(path, f"not valid JSON: {err}") from err
    if not isinstance(document, dict):
        raise ReadError(path, "a schema must be a JSON object")
    return document


@cli.command("diff")
@click.argument("args", nargs=-1, metavar="FAMILY FROM TO")
@click.option(
    "--files",
    nargs=2,
    type=click.Path(dir_okay=False),
    metavar="OLD.json NEW.json",
    help="Compare two schema files instead of two registry versions.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "markdown", "json"]),
    default="text",
    show_default=True,
)
@click.option(
    "--policy",
    type=click.Choice(["lenient", "strict"]),
    default="lenient",
    show_default=True,
    help="Whether adding or removing an optional property of an object that allows extra "
    "properties breaks compatibility (strict) or not (lenient).",
)
@click.option(
    "--require",
    type=click.Choice(["BACKWARD", "FORWARD", "FULL"]),
    help="Exit with status 1 unless the change keeps this compatibility.",
)
@pass_context
def diff_command(
    context: Context,
    args: tuple[str, ...],
    files: tuple[str, str] | None,
    fmt: str,
    policy: str,
    require: str | None,
) -> None:
    """Show what changed between two schema versions, and whether it breaks readers or writers.

    Each change is classified as schema registries do: BACKWARD (the new schema reads data
    written under the old one) and FORWARD (the old schema reads new data). The summary gives
    the overall compatibility: FULL, BACKWARD, FORWARD or NONE.
    """
    from evalreg.diff import diff_schemas

    if files:
        if args:
            fail("give either FAMILY FROM TO or --files OLD NEW, not both")
        old, new = (_read_schema_file(path) for path in files)
        diff = diff_schemas(
            old,
            new,
            registry=context.registry.referencing_registry(),
            policy=policy,
            old_label=files[0],
            new_label=files[1],
        )
    elif len(args) == 3:
        family, source, target = args
        diff = context.registry.diff(family, source, target, policy=policy)
    else:
        fail("diff needs FAMILY FROM TO (or --files OLD NEW)")
    if fmt == "json":
        emit(json.dumps(diff.to_json(), indent=2, ensure_ascii=False, default=str))
    elif fmt == "markdown":
        emit(diff.to_markdown())
    else:
        emit(diff.to_text())
    if require and diff.compatibility not in _HOLDS[require]:
        sys.exit(EXIT_PROBLEMS)


@cli.command("changelog")
@click.argument("family")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["markdown", "json"]),
    default="markdown",
    show_default=True,
)
@click.option(
    "--policy", type=click.Choice(["lenient", "strict"]), default="lenient", show_default=True
)
@pass_context
def changelog_command(context: Context, family: str, fmt: str, policy: str) -> None:
    """Write a family's whole schema history, newest version first, for release notes.

    Each version starts with the plain-language account of its migration step (the step's
    own description), above the classified diff.
    """
    from evalreg.diff import changelog_markdown
    from evalreg.publish.upstream.describe import step_accounts
    from evalreg.registry.lock import amendment_notes

    registry = context.registry
    diffs = registry.history(family, policy=policy)
    accounts = step_accounts(registry, family, registry.versions(family), f"{family}@")
    if fmt == "json":
        rows = [d.to_json() | {"step": accounts.get(d.new_label)} for d in reversed(diffs)]
        emit(
            json.dumps(
                {"family": family, "versions": rows}, indent=2, ensure_ascii=False, default=str
            )
        )
    else:
        notes = amendment_notes(context.registry, family, prefix=f"{family}@")
        emit(changelog_markdown(family, diffs, notes, accounts))
