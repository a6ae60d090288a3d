"""Commands about keeping up with upstream formats: sync, and steps (each step in words)."""

from __future__ import annotations

import json
import textwrap

import click

from evalreg.cli.app import Context, cli, emit, fail, pass_context


@cli.command("sync")
@click.argument("family", required=False)
@click.option(
    "--schema",
    "location",
    metavar="FILE|URL",
    help="Compare this schema instead of the one the manifest's `upstream:` names.",
)
@click.option("--ref", metavar="REV", help="Read the upstream git checkout at this revision.")
@click.option(
    "--version",
    "version",
    metavar="V",
    help="Number the draft V (default: the version the upstream schema states, else the "
    "diff's compatibility and the family's versioning settings).",
)
@click.option(
    "--history",
    is_flag=True,
    help="Walk the upstream checkout's commits and propose a draft per change the family lacks.",
)
@click.option("--dry-run", is_flag=True, help="Say what would be written; write nothing.")
@pass_context
def sync_command(
    context: Context,
    family: str | None,
    location: str | None,
    ref: str | None,
    version: str | None,
    history: bool,
    dry_run: bool,
) -> None:
    """Compare FAMILY's upstream schema with its newest version; write a draft if it changed.

    When the upstream schema differs in more than annotations, a draft version is written into
    the registry directory given with --registry (never the installed one): the schema and a
    generated migration step, whose docstring lists every change in plain words. What the
    generator cannot decide is a TODO that refuses the records it concerns until finished
    (`evalreg check` lists them). Without FAMILY, every family whose manifest names an
    upstream is synced.
    """
    from evalreg.publish.upstream import propose, sync_history, upstream_of, write_proposal
    from evalreg.publish.upstream.source import read_schema, read_upstream

    registry = context.registry
    families = [family] if family else [
        f for f in registry.families() if "upstream" in registry.manifest(f).options
    ]  # fmt: skip
    if not families:
        fail("no family's manifest names an upstream; give FAMILY and --schema FILE|URL")
    if len(families) > 1 and (location or version):
        fail("--schema and --version go with one FAMILY")
    if history and (location or version):
        fail("--history reads the checkout's own schemas and numbers each draft itself")
    for name in families:
        upstream = upstream_of(registry.manifest(name))
        if history:
            if upstream is None or upstream.git is None:
                fail(f"{name}: --history needs `upstream: {{git: ..., path: ...}}` in its manifest")
            proposals = list(sync_history(registry, name, upstream, ref))
            if not proposals:
                emit(f"{name}: the upstream history has nothing the family lacks; nothing written")
            for proposal in proposals:
                _report(proposal)
                if not dry_run:
                    _written(*write_proposal(registry, proposal, context.target_directory))
            continue
        if location is not None:
            published = read_schema(location)
        elif upstream is not None:
            published = read_upstream(upstream, ref)
        else:
            fail(f"{name} names no upstream in its manifest; give --schema FILE|URL")
        proposal = propose(registry, name, published, version=version)
        if not proposal.changed:
            emit(
                f"{name}: the upstream schema ({published.where}) is {proposal.source} up to "
                "annotations; nothing written"
            )
            continue
        _report(proposal)
        if not dry_run:
            _written(*write_proposal(registry, proposal, context.target_directory))
            where = f"--registry {context.target_directory} " if context.target_directory else ""
            emit(
                f"next: finish the step, run `evalreg {where}check --family {name}`, then "
                f"`evalreg {where}release {name} {proposal.version}`"
            )


def _report(proposal: object) -> None:
    from evalreg.publish.upstream import Proposal

    assert isinstance(proposal, Proposal) and proposal.step is not None
    where = proposal.upstream.where
    if proposal.upstream.commit:
        where += f" at {proposal.upstream.commit[:12]} ({proposal.upstream.date})"
    emit(
        f"{proposal.family}: the upstream schema ({where}) differs from {proposal.source}: "
        f"{proposal.diff.compatibility} compatibility; draft {proposal.version} "
        f"({proposal.numbered})"
    )
    for line in proposal.step.changes:
        emit(textwrap.fill(line, 100, initial_indent="  - ", subsequent_indent="    "))
    todos = len(proposal.step.todos)
    if todos:
        emit(
            f"  {todos} TODO{'s' if todos > 1 else ''} left in the step: `evalreg check` lists them"
        )


def _written(schema: object, step: object) -> None:
    emit(f"created {schema} (draft)")
    emit(f"created {step} (generated: review it)")


@cli.command("steps")
@click.argument("family")
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@pass_context
def steps_command(context: Context, family: str, fmt: str) -> None:
    """Describe FAMILY's migration steps in plain words.

    Each step: what it does (its own description), its parameters with their help and
    defaults (set with `migrate --set NAME=VALUE`), and what it may lose (refused unless
    `--allow-loss`).
    """
    from evalreg.publish.upstream.describe import describe_steps

    infos = describe_steps(context.registry, family)
    if fmt == "json":
        emit(json.dumps([i.to_json() for i in infos], indent=2, ensure_ascii=False, default=str))
        return
    if not infos:
        emit(f"{family} has no migration steps")
    for info in infos:
        back = " (and back)" if info.downgrade else ""
        emit(f"{info.source} -> {info.target}{back}: {info.summary}")
        body = info.description.split("\n", 1)[1].strip() if "\n" in info.description else ""
        if body:
            emit(textwrap.indent(body, "    "))
        for name, help_text, default in info.params:
            emit(f"    parameter {name} (default: {json.dumps(default)}): {help_text}")
        for loss in info.losses:
            emit(
                textwrap.fill(
                    loss, 100, initial_indent="    may lose: ", subsequent_indent="      "
                )
            )
        for todo in info.todos:
            emit(f"    unfinished: {todo}")
        emit()
