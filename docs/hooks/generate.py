"""Pages of the documentation site generated from the code as the site is built (an MkDocs hook).

- a page per command of the click group `evalreg.cli.cli`: a command with a hand-written page
  (`docs/commands/NAME.md`) gets its reference appended, rendered by mkdocs-click from its click
  definition; any other command gets a page of its own, so a new command needs no edit here;
- the Python API, `<!-- evalreg:api -->`: one mkdocstrings block per public name of
  `evalreg.__all__`, grouped by the room that defines it;
- the families of the built-in registry, `<!-- evalreg:families -->`: versions, what each
  version changed, the steps between them and the rules;
- the commands, `<!-- evalreg:commands -->`: a table of every command and what it does.

Pages that are in `docs/` but not in the `nav` of mkdocs.yml are added to a last section, so
that no page is left out of the site.
"""

from __future__ import annotations

import os
import sys
import types
from collections.abc import Iterator
from typing import Any

COMMANDS_MODULE = "_evalreg_docs_commands"
"""A module made while the site is built, holding every command under a Python name, since
mkdocs-click loads a command as a module attribute."""
COMMANDS_SECTION = "Commands"
MORE_SECTION = "More"
_generated: set[str] = set()


def commands() -> dict[str, Any]:
    """Return the commands of the click group by name, in the order `evalreg --help` lists them."""
    import click

    from evalreg.cli import cli

    context = click.Context(cli, info_name="evalreg")
    return {name: cli.get_command(context, name) for name in cli.list_commands(context)}


def _attribute(name: str) -> str:
    return name.replace("-", "_")


def command_reference(name: str) -> str:
    """Return the mkdocs-click block that renders command `name` from its click definition."""
    return (
        "## Reference\n\n"
        "::: mkdocs-click\n"
        f"    :module: {COMMANDS_MODULE}\n"
        f"    :command: {_attribute(name)}\n"
        f"    :prog_name: evalreg {name}\n"
        "    :depth: 2\n"
        "    :style: plain\n"
    )


def command_page(name: str, command: Any) -> str:
    """Return the page of a command that has no hand-written page."""
    summary = command.get_short_help_str(limit=200)
    return f"# evalreg {name}\n\n{summary}\n\n{command_reference(name)}"


def commands_table() -> str:
    """Return a Markdown table of every command, linked to its page, with its summary."""
    rows = ["| command | what it does |", "| --- | --- |"]
    for name, command in commands().items():
        summary = command.get_short_help_str(limit=200).replace("|", "\\|")
        rows.append(f"| [`evalreg {name}`]({name}.md) | {summary} |")
    return "\n".join(rows) + "\n"


# -- the Python API ------------------------------------------------------------------------------

API_GROUPS = (
    ("evalreg.engine.registry", "The registry"),
    ("evalreg.registry", "The registry"),
    ("evalreg.batch", "Loading records"),
    ("evalreg.engine.detect", "Detection"),
    ("evalreg.engine.validators", "Validation"),
    ("evalreg.engine.migrate", "Migration"),
    ("evalreg.engine.steps", "Migration steps"),
    ("evalreg.stepkit", "The step toolkit"),
    ("evalreg.diff", "Schema diffs"),
    ("evalreg.publish", "Published schemas"),
    ("evalreg.errors", "Errors"),
)
"""Headings of the API page by the module that defines a name (the first prefix that fits);
a name defined elsewhere goes under its module's name."""


def api_groups() -> dict[str, list[str]]:
    """Return the public names of `evalreg` (its `__all__`) by heading, in a stable order."""
    import evalreg
    import evalreg.stepkit

    groups: dict[str, list[str]] = {title: [] for _, title in API_GROUPS}
    for name in evalreg.__all__:
        value = getattr(evalreg, name)
        module = getattr(value, "__module__", None)
        if module is None or not callable(value):
            continue  # a constant such as __version__
        if name in evalreg.stepkit.__all__:  # defined lower down, offered to steps by stepkit
            module = "evalreg.stepkit"
        title = next(
            (t for prefix, t in API_GROUPS if module == prefix or module.startswith(prefix + ".")),
            f"`{module}`",
        )
        groups.setdefault(title, []).append(name)
    return {title: names for title, names in groups.items() if names}


def api_reference() -> str:
    """Return the API reference: one mkdocstrings block per public name, under headings."""
    parts = []
    for title, names in api_groups().items():
        parts.append(f"## {title}\n")
        for name in names:
            parts.append(f"::: evalreg.{name}\n")
    return "\n".join(parts)


# -- the families of the built-in registry -------------------------------------------------------


def _builtin_registry() -> Any:
    """Return the built-in registry alone, whatever `EVALREG_PATH` says."""
    import evalreg

    saved = os.environ.pop("EVALREG_PATH", None)
    try:
        return evalreg.load_registry(builtin=True)
    finally:
        if saved is not None:
            os.environ["EVALREG_PATH"] = saved


def _cell(text: object) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _code_list(values: Any) -> str:
    return ", ".join(f"`{v}`" for v in values) or "-"


def families_reference() -> str:
    """Return the families of the built-in registry: an overview, then a section per family."""
    registry = _builtin_registry()
    lines = [
        "| family | versions | latest | what it is |",
        "| --- | --- | --- | --- |",
    ]
    for family in registry.families():
        manifest = registry.manifest(family)
        versions = registry.versions(family)
        lines.append(
            f"| [`{family}`](#{_anchor(family)}) | {', '.join(versions)} | {versions[-1]} "
            f"| {_cell(manifest.title)} |"
        )
    lines.append("")
    for family in registry.families():
        lines.extend(_family_section(registry, family))
    return "\n".join(lines) + "\n"


def _anchor(family: str) -> str:
    return family.replace(".", "")


def _family_section(registry: Any, family: str) -> Iterator[str]:
    from evalreg.engine.rules import family_rules
    from evalreg.registry.lock import drafts

    manifest = registry.manifest(family)
    versions = registry.versions(family)
    unreleased = {entry.version for entry in drafts(registry, [family])}
    yield f"## {family} {{#{_anchor(family)}}}\n"
    yield f"**{_cell(manifest.title)}.** {_cell(manifest.description)}\n"
    yield f"- files: {manifest.kind}, named {_code_list(manifest.files)}"
    markers = [m.pointer for m in manifest.markers]
    yield f"- version stated at: {_code_list(markers) if markers else 'nowhere (told by shape)'}"
    yield f"- schemas: `schemas/{family}/<version>.schema.json`\n"
    diffs = {d.new_label.rpartition("@")[2]: d for d in registry.history(family)}
    modules = {(m.source, m.target): m for m in registry.steps(family).modules}
    yield "| version | state | against the version before | step up | step down |"
    yield "| --- | --- | --- | --- | --- |"
    previous = None
    for version in versions:
        state = "draft" if version in unreleased else "released"
        diff = diffs.get(version)
        if diff is None:
            against = "-"
        else:
            against = (
                f"{diff.compatibility}: {len(diff.changes)} changes, {len(diff.breaking)} breaking"
            )
        up = down = "-"
        step = modules.get((previous, version)) if previous else None
        if step is not None:
            up = _cell(step.doc.splitlines()[0] if step.doc else f"{previous} -> {version}")
            params = [p.name for p in step.params]
            if params:
                up += f" (`--set` {', '.join(f'`{p}`' for p in params)})"
            down = "yes" if step.downgrade is not None else "no"
        yield f"| {version} | {state} | {against} | {up} | {down} |"
        previous = version
    yield ""
    rules = family_rules(registry, family)
    if rules:
        yield "| rule | severity | scope | versions | what must hold |"
        yield "| --- | --- | --- | --- | --- |"
        for rule in rules:
            yield (
                f"| `{rule.id}` | {rule.severity} | {rule.scope} | {_cell(rule.versions)} "
                f"| {_cell(rule.description)} |"
            )
        yield ""


# -- MkDocs events -------------------------------------------------------------------------------

PLACEHOLDERS = {
    "<!-- evalreg:api -->": api_reference,
    "<!-- evalreg:commands -->": commands_table,
    "<!-- evalreg:families -->": families_reference,
}


def _nav_pages(nav: Any) -> Iterator[str]:
    if isinstance(nav, str):
        yield nav
    elif isinstance(nav, dict):
        for value in nav.values():
            yield from _nav_pages(value)
    elif isinstance(nav, list):
        for item in nav:
            yield from _nav_pages(item)


def on_config(config: Any) -> Any:
    """Register the commands for mkdocs-click, and list their pages in the nav."""
    found = commands()
    module = types.ModuleType(COMMANDS_MODULE)
    for name, command in found.items():
        setattr(module, _attribute(name), command)
    sys.modules[COMMANDS_MODULE] = module
    pages = [{"Overview": "commands/index.md"}]
    pages += [{f"evalreg {name}": f"commands/{name}.md"} for name in found]
    for item in config["nav"] or []:
        if isinstance(item, dict) and COMMANDS_SECTION in item:
            item[COMMANDS_SECTION] = pages
    return config


def on_files(files: Any, config: Any) -> Any:
    """Add a page for every command without one, and list pages the nav leaves out."""
    from mkdocs.structure.files import File

    for name, command in commands().items():
        uri = f"commands/{name}.md"
        if files.get_file_from_path(uri) is None:
            files.append(File.generated(config, uri, content=command_page(name, command)))
            _generated.add(uri)
    listed = set(_nav_pages(config["nav"]))
    left_out = sorted(
        f.src_uri
        for f in files.documentation_pages()
        if f.src_uri not in listed and not f.src_uri.startswith("hooks/")
    )
    if left_out:
        config["nav"].append({MORE_SECTION: left_out})
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Fill the placeholders, and append its reference to a hand-written command page."""
    for placeholder, build in PLACEHOLDERS.items():
        if placeholder in markdown:
            markdown = markdown.replace(placeholder, build())
    uri = page.file.src_uri
    name = uri.removeprefix("commands/").removesuffix(".md")
    if uri.startswith("commands/") and uri not in _generated and name in commands():
        markdown = markdown.rstrip("\n") + "\n\n" + command_reference(name)
    return markdown
