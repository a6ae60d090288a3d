"""`evalreg validate`: every problem of every record, and the rules beyond JSON Schema."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import click

from evalreg.cli.app import (
    EXIT_OK,
    EXIT_PROBLEMS,
    Context,
    cli,
    emit,
    emit_json,
    fail,
    json_text,
    pass_context,
)
from evalreg.cli.options import (
    jobs_count,
    jobs_option,
    located,
    path_options,
    project_config,
    runner_for,
    scheduler_option,
)
from evalreg.cli.progress import progress_for, progress_option


def _github_escape(text: str, *, property_value: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if property_value:
        text = text.replace(":", "%3A").replace(",", "%2C")
    return text


def _report_text(check: Any, quiet: bool) -> Iterator[str]:
    where = located(check.path, check.line)
    if check.status == "unreadable":
        yield f"{where}: {check.error}"
    for issue in check.issues:
        yield _text_line(where, issue, issue.pointer or "/")


def _text_line(where: str, issue: Any, pointer: str, more: str = "") -> str:
    warning = "warning: " if issue.severity == "warning" else ""
    rule = f" [{issue.rule}]" if issue.rule else ""
    place = where if issue.line is None else f"{where}:{issue.line}:{issue.column}"
    return f"{place}: {warning}{pointer}: {issue.message}{more}{rule}"


def _group_lines(groups: Iterable[Any]) -> Iterator[str]:
    """Yield the text lines of a file's problems, each kind once (see `ProblemGroups`).

    Problems alike are one line: `(24 places)` within a record, `(300 records, first at line
    12)` across the lines of a JSONL file. `--verbose` prints each one.
    """
    for group in groups:
        check, issue, count, records = group.check, group.issue, group.count, group.records
        if issue is None:
            yield from _report_text(check, False)
            continue
        where = located(check.path, check.line)
        if count == 1:
            yield _text_line(where, issue, issue.pointer or "/")
            continue
        if records == 1:
            more = f" ({count:,} places)"
        else:
            where = located(check.path, None)
            first = f", first at line {check.line}" if check.line is not None else ""
            times = f"{count:,} times in " if count != records else ""
            more = f" ({times}{records:,} records{first})"
        yield _text_line(where, issue, group.pattern, more)


def _report_json(check: Any, quiet: bool) -> Iterator[str]:
    base = {
        "path": check.path,
        "line": check.line,
        "family": check.family,
        "version": check.version,
    }
    if check.status == "unreadable":
        row = {**base, "kind": "unreadable", "pointer": None, "keyword": None}
        yield json_text({**row, "message": check.error})
    for issue in check.issues:
        kind = "warning" if issue.severity == "warning" else "invalid"
        row = dict(base)
        if issue.line is not None:  # a YAML record's value: where it is in the file
            row |= {"line": issue.line, "column": issue.column}
        row |= {"kind": kind, "pointer": issue.pointer, "keyword": issue.keyword}
        row |= {"message": issue.message, "schema_path": issue.schema_path}
        if issue.rule:
            row |= {"rule": issue.rule, "severity": issue.severity}
        yield json_text(row)


def _report_github(check: Any, quiet: bool) -> Iterator[str]:
    where = f"file={_github_escape(check.path, property_value=True)}"
    if check.line is not None:
        where += f",line={check.line}"
    if check.status == "unreadable":
        yield f"::error {where},title=unreadable::{_github_escape(check.error or '')}"
    for issue in check.issues:
        label = issue.rule or f"{check.family or 'record'} {issue.keyword}"
        title = _github_escape(label, property_value=True)
        message = _github_escape(f"{issue.pointer or '/'}: {issue.message}")
        place = where if issue.line is None else f"{where},line={issue.line},col={issue.column}"
        yield f"::{issue.severity} {place},title={title}::{message}"


REPORTERS: dict[str, Callable[[Any, bool], Iterator[str]]] = {
    "text": _report_text,
    "json": _report_json,
    "github": _report_github,
}


def _entries(given: tuple[str, ...]) -> tuple[str, ...]:
    """Return the rule ids and prefixes of a repeatable, comma-separated option."""
    return tuple(e.strip() for value in given for e in value.split(",") if e.strip())


def _rule_ids(context: Context) -> list[str]:
    """Return the id of every rule of the registry."""
    from evalreg.engine.rules import family_rules

    registry = context.registry
    return sorted(r.id for f in registry.families() for r in family_rules(registry, f))


def _check_entries(known: list[str], selected: tuple[str, ...], ignored: tuple[str, ...]) -> None:
    """Refuse an id or prefix that names no rule of the registry (a typo would check nothing)."""
    from evalreg.engine.selection import names_none

    for option, given in (("select", selected), ("ignore", ignored)):
        for entry in _entries(given):
            if names_none(entry, known):
                fail(f"--{option} {entry}: names no rule (known: {', '.join(known)})")


def _print(lines: Iterable[str], printed: int, most: int) -> int:
    """Print lines up to `most` in all (0: no limit); return how many are printed in all."""
    for line in lines:
        if most and printed >= most:
            break
        emit(line)
        printed += 1
    return printed


_CONSOLE_WIDTH = 200
_PLAIN_CELL = re.compile(r"[A-Za-z0-9._,/@+=-]*")
"""Cells that rich prints as they are (no markup, emoji code, wide or control character)."""


def _plain_table(columns: list[tuple[str, bool]], rows: list[tuple[str, ...]]) -> list[str] | None:
    """Return the lines rich prints for a table of plain cells (see `_tables`), or None where it
    might print otherwise (a cell it would read as markup, a table wider than the console).

    Columns are `(header, left-justified)`, two spaces apart, as wide as their widest cell.
    """
    table = [tuple(header for header, _ in columns), *rows]
    if not all(_PLAIN_CELL.fullmatch(cell) for row in table for cell in row):
        return None
    widths = [max(len(row[i]) for row in table) for i in range(len(columns))]
    lefts = [left for _, left in columns]
    lines = [
        "  ".join(
            cell.ljust(width) if left else cell.rjust(width)
            for cell, width, left in zip(row, widths, lefts, strict=True)
        )
        for row in table
    ]
    if len(lines[0]) >= _CONSOLE_WIDTH:  # rich would cut cells short
        return None
    return [line.rstrip() for line in lines]


def _rich_table(columns: list[tuple[str, bool]], rows: list[tuple[str, ...]]) -> list[str]:
    """Return the lines of a table as rich prints it."""
    from rich.console import Console
    from rich.table import Table

    table = Table(box=None, pad_edge=False, header_style="bold")
    for header, left in columns:
        table.add_column(header, no_wrap=True, justify="left" if left else "right")
    for row in rows:
        table.add_row(*row)
    console = Console(width=_CONSOLE_WIDTH, highlight=False, soft_wrap=True, color_system=None)
    with console.capture() as captured:
        console.print(table)
    return [line.rstrip() for line in captured.get().splitlines()]


def _table(columns: list[tuple[str, bool]], rows: list[tuple[str, ...]]) -> list[str]:
    """Return the lines of a summary table: plain cells without rich, which is slow to import."""
    found = _plain_table(columns, rows)
    return _rich_table(columns, rows) if found is None else found


def _tables(summary: Any) -> Iterator[str]:
    """Yield the lines of the summary's tables: per rule, then per family and version."""
    if summary.rules:
        columns = [(c, c == "rule") for c in ("rule", "files", "errors", "warnings")]
        rows: list[tuple[str, ...]] = [
            (name, f"{tally.files:,}", f"{tally.errors:,}", f"{tally.warnings:,}")
            for name, tally in summary.rule_rows()
        ]
        yield from _table(columns, rows)
    if summary.versions:
        names = ("family", "version", "files", "records", "invalid", "findings")
        columns = [(c, c in ("family", "version")) for c in names]
        versions: list[tuple[str, ...]] = []
        for (family, version), tally in summary.version_rows():
            counts = (tally.files, tally.records, tally.invalid, tally.findings)
            versions.append((family, version, *(f"{n:,}" for n in counts)))
        yield from _table(columns, versions)


@cli.command("validate")
@path_options
@click.option("--family", metavar="FAMILY", help="Validate every record as this family.")
@click.option("--version", "version", metavar="VERSION", help="Validate at this version.")
@click.option(
    "--format", "fmt", type=click.Choice(sorted(REPORTERS)), default="text", show_default=True
)
@click.option(
    "--max-errors",
    type=click.IntRange(min=0),
    default=0,
    metavar="N",
    help="Stop printing problems after N (0: no limit); every record is still counted.",
)
@click.option("--quiet", "-q", is_flag=True, help="Print problems only, no summary.")
@click.option(
    "--verbose",
    "-v",
    is_flag=True,
    help="In text, print every problem on a line of its own, even where alike ones are "
    "counted on one line (the same message at many places or lines of a file).",
)
@click.option(
    "--statistics",
    is_flag=True,
    help="Print the summary only: the files and findings of each rule, and of each family and "
    "version, without the problems one by one.",
)
@click.option(
    "--rules/--no-rules",
    "use_rules",
    default=True,
    show_default=True,
    help="Also check each family's rules beyond JSON Schema (datastore layout, score bounds, "
    "companion files, ...).",
)
@click.option(
    "--select",
    "--rule",
    "selected",
    multiple=True,
    metavar="RULE",
    help="Check only these rules: ids, or prefixes ending in * such as eee.*; repeatable or "
    "comma-separated (--rule is the same option).",
)
@click.option(
    "--ignore",
    "ignored",
    multiple=True,
    metavar="RULE",
    help="Do not check these rules (ids or prefixes); repeatable or comma-separated.",
)
@click.option(
    "--severity",
    type=click.Choice(["error", "warning"]),
    default="warning",
    show_default=True,
    help="The least severe rule findings to report: error leaves warnings out.",
)
@click.option(
    "--baseline",
    "baseline_file",
    type=click.Path(dir_okay=False),
    metavar="FILE",
    help="Report only the findings FILE does not hold (written by --write-baseline; default: "
    "the configuration's `baseline`); the exit code counts the new ones alone.",
)
@click.option("--no-baseline", is_flag=True, help="Report every finding, whatever the baseline.")
@click.option(
    "--write-baseline",
    "write_to",
    type=click.Path(dir_okay=False),
    metavar="FILE",
    help="Write every finding of the run to FILE as a baseline, print the summary, exit 0.",
)
@jobs_option
@scheduler_option
@progress_option
@pass_context
def validate_command(
    context: Context,
    paths: tuple[str, ...],
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    family: str | None,
    version: str | None,
    fmt: str,
    max_errors: int,
    quiet: bool,
    verbose: bool,
    statistics: bool,
    use_rules: bool,
    selected: tuple[str, ...],
    ignored: tuple[str, ...],
    severity: str,
    baseline_file: str | None,
    no_baseline: bool,
    write_to: str | None,
    jobs: int | None,
    scheduler: str | None,
    progress: bool | None,
) -> None:
    """Validate every record against its family's schema at its version, and its rules.

    Each problem is printed as `path:line: /json/pointer: message`, a rule's finding with its
    id (`[eee.score-bounds]`), a warning after `warning:`; problems alike in one file (the
    same message at many places or lines) are counted on one line unless --verbose. Findings
    of rules across files (companion files, duplicates) come after those of the records. A run
    with problems ends with the files and findings of each rule (`schema` for JSON Schema),
    and the files, records and findings of each family and version, then one summary line.
    With a baseline, the findings it holds are counted as known and not reported. Exit code 0
    when all records are valid and no rule fails (warnings and known findings do not count),
    1 otherwise, 2 for usage errors.
    """
    from evalreg.batch.parallel import collector_paused

    # Start-up makes thousands of objects that live as long as the command (modules, the
    # registry) and no garbage worth collecting: the collector waits until the run.
    with collector_paused():
        from evalreg.batch.records import RecordCheck, RuleFinding
        from evalreg.batch.runs import validate_run
        from evalreg.batch.summary import ProblemGroups

        if version and not family:
            fail("--version needs --family")
        config = project_config()
        if use_rules:  # without rules, no rule module is loaded (they are a registry's code)
            known = _rule_ids(context)
            config.check_rules(known)
            _check_entries(known, selected, ignored)
        selection = config.selection(
            enabled=use_rules,
            select=_entries(selected) or None,
            ignore=_entries(ignored),
            minimum="error" if severity == "error" else "warning",
        )
        baseline = None
        if write_to is None and not no_baseline and (baseline_file or config.baseline):
            from evalreg.batch.baseline import Baseline

            baseline = Baseline.load(baseline_file or str(config.baseline))
        reporter = REPORTERS[fmt]
        printed = 0
        statistics = statistics or write_to is not None
        run = validate_run(
            context.registry,
            paths,
            include=include,
            exclude=exclude,
            family=family,
            version=version,
            jobs=jobs_count(jobs),
            rules=selection,
            runner=runner_for(scheduler, jobs),
            config=config,
            baseline=baseline,
        )
    shown = progress_for("validate", paths, include, exclude, progress)
    # A record's check counts one record, a run of valid ones its length, a finding none.
    checks: Iterable[Any] = shown.wrap(
        run, lambda c: None if isinstance(c, RuleFinding) else (c.path, getattr(c, "count", 1))
    )
    if write_to is not None:
        checks = _written(checks, write_to)
    grouped = ProblemGroups() if fmt == "text" and not verbose else None
    for check in checks:
        if statistics or not isinstance(check, (RecordCheck, RuleFinding)):
            continue
        lines = _group_lines(grouped.add(check)) if grouped else reporter(check, quiet)
        printed = _print(lines, printed, max_errors)
    if grouped is not None:
        printed = _print(_group_lines(grouped.flush()), printed, max_errors)
    summary = run.summary
    counts = summary.as_dict()
    if fmt == "json":
        emit_json({"summary": counts})
    elif not quiet:
        if statistics or summary.rules:
            for line in _tables(summary):
                emit(line, err=fmt == "github")
        more = (
            f" (first {max_errors} problems shown)" if max_errors and printed >= max_errors else ""
        )
        rules = [
            f"{counts[key]} {label}"
            for key, label in (("across_files", "problems across files"), ("warnings", "warnings"))
            if counts[key]
        ]
        if summary.known:
            rules.append(
                f"{summary.known_records} known ({summary.known} findings of the baseline left out)"
            )
        emit(
            f"{counts['files']} files, {counts['records']} records: {counts['valid']} valid, "
            f"{counts['invalid']} invalid, {counts['unreadable']} unreadable"
            + "".join(f", {r}" for r in rules)
            + more,
            err=fmt == "github",
        )
    if baseline is not None and baseline.fixed and not quiet:
        emit(
            f"{baseline.fixed} findings of the baseline {baseline.path} were not found again: "
            f"`--write-baseline {baseline.path}` drops them",
            err=True,
        )
    if write_to is not None:
        sys.exit(EXIT_OK)
    sys.exit(EXIT_OK if summary.ok else EXIT_PROBLEMS)


def _written(checks: Iterable[Any], target: str) -> Iterator[Any]:
    """Yield `checks`, and write them as a baseline to `target` once they are all read."""
    from evalreg.batch.baseline import BaselineWriter

    writer = BaselineWriter(target)
    for check in checks:
        writer.add(check)
        yield check
    try:
        written = writer.write()
    except OSError as err:
        fail(f"{target}: cannot write the baseline: {err.strerror or err}")
    emit(
        f"wrote the baseline {target}: {written['findings']} findings in {written['files']} files",
        err=True,
    )
