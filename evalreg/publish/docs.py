"""Documentation pages for each published schema, made by json-schema-for-humans.

Each version gets `docs/<family>-<version>.html`: every property with its type, whether it is
required, its description, constraints and examples, in json-schema-for-humans' offline
template (its style sheets, fonts and scripts are copied beside the pages: nothing is loaded
from elsewhere, and the scripts only fold and unfold sections). `$ref`s between schemas are
resolved from the documents being published, never fetched. The library is the `docs` extra.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import re
import shutil
from collections.abc import Iterator, Mapping
from html import escape
from pathlib import Path
from typing import Any
from urllib.parse import quote

from evalreg.errors import PublishError

DOCS_FOLDER = "docs"
_TEMPLATE = "js_offline"
_BODY = re.compile(r"<body[^>]*>")


def docs_page(family: str, version: str) -> str:
    """Return the path of a version's documentation page, relative to the site."""
    return f"{DOCS_FOLDER}/{quote(family)}-{quote(version)}.html"


def _config() -> Any:
    try:
        from json_schema_for_humans.generation_configuration import GenerationConfiguration
    except ImportError as err:
        raise PublishError(
            "documentation pages need json-schema-for-humans: pip install 'evalreg[docs]', "
            "or publish without --docs"
        ) from err
    return GenerationConfiguration(
        template_name=_TEMPLATE,
        footer_show_time=False,  # the same registry gives the same bytes
        description_is_markdown=False,  # upstream descriptions are plain text
        show_toc=True,
        expand_buttons=True,
        link_to_reused_ref=True,
        with_footer=True,
    )


def _nav(family: str, version: str, title: str) -> str:
    folder = escape(quote(family))
    return (
        '<nav style="font:14px system-ui,sans-serif;padding:.5rem 0 .75rem;'
        'border-bottom:1px solid #d0d7de;margin-bottom:1rem">'
        f'<a href="../index.html#{escape(family)}">All schemas</a> / {escape(family)} &middot; '
        f'<a href="../{folder}/{escape(quote(version))}.schema.json">JSON Schema</a> &middot; '
        f'<a href="../{folder}/changes.html#v{escape(version)}">changes</a>'
        f'<h1 style="font-size:1.5rem;margin:.5rem 0 0">{escape(family)} {escape(version)}'
        f'<small style="color:#57606a"> &mdash; {escape(title)}</small></h1>'
        "</nav>"
    )


def render_docs(
    pages: Mapping[tuple[str, str], Path],
    documents: Mapping[str, Any],
    out: Path,
    titles: Mapping[str, str],
) -> Iterator[Path]:
    """Write a documentation page for each (family, version) whose published file is given.

    `titles` gives each family's title, for the heading of its pages.
    `documents` maps each published URL to its document, so that `$ref`s between schemas
    resolve without the network. Yields the files written under `out`.

    Raises:
        PublishError: json-schema-for-humans is not installed, or cannot render a schema.
    """
    config = _config()
    # The library's own entry points open each schema file without closing it and take no
    # schemas already loaded; its two steps below do both, and read no file at all.
    from json_schema_for_humans.schema.intermediate_representation import (
        build_intermediate_representation,
    )
    from json_schema_for_humans.template_renderer import TemplateRenderer

    renderer = TemplateRenderer(config)

    folder = out / DOCS_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    loaded = dict(documents)
    for (family, version), schema_file in pages.items():
        path = os.path.realpath(schema_file)
        loaded[path] = json.loads(Path(path).read_text(encoding="utf-8"))
        problems: list[str] = []
        try:
            # The library prints its progress (not ours to print) and logs what it cannot
            # load, which is an error here: every schema it may need is in `loaded`.
            with contextlib.redirect_stdout(io.StringIO()), _logged(problems):
                tree = build_intermediate_representation(path, config, loaded)
                page = renderer.render(tree)
        except Exception as err:  # the library raises many kinds; one line names the schema
            problems.append(f"{type(err).__name__}: {err}")
        if problems:
            raise PublishError(f"cannot document {family} {version}: {problems[0]}")
        body = _BODY.search(page)
        if body is not None:
            nav = _nav(family, version, titles.get(family, ""))
            page = page[: body.end()] + nav + page[body.end() :]
        target = out / docs_page(family, version)
        target.write_text(page, encoding="utf-8", newline="\n")
        yield target
    source = Path(config.template_path).parent
    for name in config.files_to_copy:
        if not (source / name).is_file():
            continue  # the library lists a font script it does not ship (nor load)
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source / name, target)
        yield target


class _Collect(logging.Handler):
    def __init__(self, found: list[str]) -> None:
        super().__init__(logging.WARNING)
        self.found = found

    def emit(self, record: logging.LogRecord) -> None:
        self.found.append(record.getMessage())


@contextlib.contextmanager
def _logged(found: list[str]) -> Iterator[None]:
    """Collect the warnings logged meanwhile into `found` instead of printing them."""
    logger = logging.getLogger()
    handler = _Collect(found)
    logger.addHandler(handler)
    try:
        yield
    finally:
        logger.removeHandler(handler)
