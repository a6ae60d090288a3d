"""Commands about the registry itself: list families, show schemas."""

from __future__ import annotations

import json
import os
from typing import Any

import click

from evalreg.cli.app import Context, cli, emit, pass_context

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
                "latest": versions[-1] if versions else None,
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
        versions_text = ", ".join(row["versions"]) or "-"
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
    """Print a family's schema as JSON (the latest version unless @VERSION is given)."""
    family, _, version = target.partition("@")
    schema = context.registry.schema(family, version or None)
    emit(json.dumps(schema, indent=2, ensure_ascii=False))
