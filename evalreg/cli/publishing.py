"""Commands about making and shipping registries: init, new-version, release, check, publish."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from evalreg.cli.app import EXIT_PROBLEMS, Context, cli, emit, fail, pass_context
from evalreg.defaults import DEFAULT_BASE_URL, DEFAULT_EXAMPLES

if TYPE_CHECKING:
    from evalreg.publish.check import CheckReport

_SEVERITY_ORDER = {"error": 0, "warning": 1, "note": 2}

examples_option = click.option(
    "--examples",
    type=click.IntRange(min=0),
    default=DEFAULT_EXAMPLES,
    show_default=True,
    metavar="N",
    help="Records generated per migration step and direction (0: do not exercise the steps).",
)
seed_option = click.option(
    "--seed",
    type=int,
    default=None,
    metavar="N",
    help="Generate different records with this seed (default: the same records every run).",
)


def _report_text(report: CheckReport) -> None:
    for finding in sorted(report.findings, key=lambda f: _SEVERITY_ORDER[f.severity]):
        emit(str(finding))
        if finding.example is not None:
            shown = json.dumps(finding.example, ensure_ascii=False, sort_keys=True, default=str)
            emit(f"    smallest failing record: {shown}")
    emit(f"evalreg check: {report.summary()}")


def _report_json(report: CheckReport) -> None:
    emit(json.dumps(report.to_json(), indent=2, ensure_ascii=False, default=str))


REPORTERS: dict[str, Callable[[CheckReport], None]] = {"text": _report_text, "json": _report_json}


@cli.command("check")
@click.option(
    "--registry",
    "only",
    multiple=True,
    type=click.Path(exists=True, file_okay=False),
    metavar="DIR",
    help="Check the families of this registry directory only (loaded beside the built-in "
    "one); repeatable. Without it, every loaded family is checked.",
)
@click.option("--family", "families", multiple=True, metavar="FAMILY", help="Check this family.")
@examples_option
@seed_option
@click.option(
    "--format", "fmt", type=click.Choice(sorted(REPORTERS)), default="text", show_default=True
)
@pass_context
def check_command(
    context: Context,
    only: tuple[str, ...],
    families: tuple[str, ...],
    examples: int,
    seed: int | None,
    fmt: str,
) -> None:
    """Check a registry end to end; exit 1 if any check fails.

    Every schema against its metaschema; released schemas against registry.lock; every
    migration step (FROM and TO exist, each version reaches the latest); every step run on
    generated records valid at FROM, whose results must be valid at TO (failures show the
    smallest failing record); a step between each pair of versions whose diff breaks
    BACKWARD; and version numbers that follow the diffs (manifest key `versioning`).
    """
    from evalreg.publish.check import check_directories

    report = check_directories(
        context.registry_dirs,
        only=only,
        families=families or None,
        examples=examples,
        seed=seed,
    )
    REPORTERS[fmt](report)
    if not report.ok:
        sys.exit(EXIT_PROBLEMS)


@cli.command("init")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--family",
    default="acme.run",
    show_default=True,
    metavar="FAMILY",
    help="The name of the example family (dotted lower-case words).",
)
def init_command(directory: Path, family: str) -> None:
    """Start a registry directory with one example family to edit.

    Writes the manifest (with a declarative rule), two schema versions, the migration step
    between them, a rule in Python, registry.lock releasing both versions, an example record
    at each version and a README. `evalreg check --registry DIRECTORY` passes on it.
    """
    from evalreg.registry.scaffold import init_registry

    made = init_registry(directory, family)
    for path in made.files:
        emit(f"created {path}")
    where = made.directory.as_posix()
    emit(
        f"next: `evalreg check --registry {where}`, then "
        f"`evalreg --registry {where} validate {where}/examples`"
    )


@cli.command("new-version")
@click.argument("family")
@click.argument("version")
@pass_context
def new_version_command(context: Context, family: str, version: str) -> None:
    """Start VERSION of FAMILY: copy the latest schema, and add an empty step to fill in.

    The files go into the registry directory given with --registry (or the only one loaded
    besides the built-in one), never into the directory installed with evalreg. The new
    schema is a draft until `evalreg release FAMILY VERSION` records its digest.
    """
    from evalreg.registry.drafting import new_version

    created = new_version(context.registry, family, version, context.target_directory)
    emit(f"created {created.schema_path} (a copy of {family} {created.source})")
    for edit in created.edits:
        emit(f"  changed {edit}")
    emit(f"created {created.step_path} (upgrade() to fill in)")
    where = f"--registry {context.target_directory} " if context.target_directory else ""
    emit(
        f"next: edit the schema and the step, run `evalreg {where}check --family {family}`, "
        f"then `evalreg {where}release {family} {created.version}`"
    )


@cli.command("release")
@click.argument("family")
@click.argument("version")
@examples_option
@seed_option
@pass_context
def release_command(
    context: Context, family: str, version: str, examples: int, seed: int | None
) -> None:
    """Check FAMILY end to end, then record VERSION's digest in registry.lock.

    A released schema can never change again: loading a registry whose released schema
    differs from its recorded digest is an error.
    """
    from evalreg.publish.check import CheckReport, check_registry
    from evalreg.registry.lock import release

    registry = context.registry
    resolved = registry.resolve_version(family, version)
    report = check_registry(registry, [family], examples=examples, seed=seed)
    if not report.ok:
        _report_text(CheckReport(report.errors, report.families))
        fail(f"{family} {resolved} not released: fix the errors above first", EXIT_PROBLEMS)
    released = release(registry, family, resolved)
    if released.already:
        emit(f"{family} {released.version} was already released ({released.digest})")
    else:
        emit(f"released {family} {released.version}: {released.digest} in {released.lock_path}")


@cli.command("amend")
@click.argument("family")
@click.argument("version")
@click.option(
    "--reason",
    required=True,
    metavar="TEXT",
    help="Which error of the released schema this corrects, and why (recorded in the lock).",
)
@examples_option
@seed_option
@pass_context
def amend_command(
    context: Context, family: str, version: str, reason: str, examples: int, seed: int | None
) -> None:
    """Record a deliberate correction of released VERSION of FAMILY in registry.lock.

    For a registry that mirrors an upstream format and must correct a transcription error in
    a released schema. Edit the schema file first; this checks FAMILY end to end, then
    records the old and new digest, the date and the reason. `evalreg check` and the
    changelog show every amendment.
    """
    from evalreg.engine.registry import load_registry
    from evalreg.publish.check import CheckReport, check_registry
    from evalreg.registry.lock import amend

    registry = load_registry(context.registry_dirs, verify=False)
    resolved = registry.resolve_version(family, version)
    report = check_registry(registry, [family], examples=examples, seed=seed)
    # Other versions edited too are amended one at a time: their lock errors do not block.
    blocking = tuple(f for f in report.errors if f.check != "lock")
    if blocking:
        _report_text(CheckReport(blocking, report.families))
        fail(f"{family} {resolved} not amended: fix the errors above first", EXIT_PROBLEMS)
    amendment = amend(registry, family, resolved, reason)
    emit(f"{family} {amendment.version} {amendment}")


def _base_url(ctx: click.Context, param: click.Parameter, value: str) -> str:
    from evalreg.publish.site import normalise_base_url

    try:
        return normalise_base_url(value)
    except ValueError as err:
        raise click.BadParameter(str(err)) from err


@cli.command("publish")
@click.argument("out_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--base-url",
    default=DEFAULT_BASE_URL,
    show_default=True,
    callback=_base_url,
    metavar="URL",
    help="Where OUT_DIR will be served; every `$id` is a URL under it.",
)
@click.option(
    "--family", "families", multiple=True, metavar="FAMILY", help="Publish this family only."
)
@click.option("--drafts", is_flag=True, help="Also publish draft versions (not in registry.lock).")
@click.option(
    "--docs",
    is_flag=True,
    help="Also write a documentation page per version (needs the docs extra: "
    "pip install 'evalreg[docs]').",
)
@pass_context
def publish_command(
    context: Context,
    out_dir: Path,
    base_url: str,
    families: tuple[str, ...],
    drafts: bool,
    docs: bool,
) -> None:
    """Write the static schema site: versioned schemas, latest, changelogs, catalog, index.

    For every family and released version: OUT_DIR/<family>/<version>.schema.json (`$id`
    under --base-url, `$ref`s between schemas rewritten to match), <family>/latest.schema.json,
    <family>/CHANGELOG.md and changes.html, OUT_DIR/catalog.json (JSON Schema Store catalog
    format) and OUT_DIR/index.html; with --docs, docs/<family>-<version>.html. The same
    registry always gives byte-identical files.

    The site is written beside OUT_DIR and swapped in whole. OUT_DIR must be new, empty, or
    a site evalreg published (files of earlier sites that are no longer published go; files
    others added, such as a CNAME, stay).
    """
    from evalreg.publish.site import publish

    result = publish(
        context.registry,
        out_dir,
        base_url=base_url,
        families=families or None,
        drafts=drafts,
        docs=docs,
    )
    for path in result.kept:
        emit(f"evalreg: kept {path} (not written by evalreg publish)", err=True)
    for family, version in result.skipped_drafts:
        emit(f"evalreg: skipped draft {family} {version} (release it, or pass --drafts)", err=True)
    emit(
        f"published {len(result.families)} families, {result.versions} schema versions, "
        f"{len(result.files)} files to {result.out_dir} (base URL {result.base_url})"
    )
