"""Run evalreg against hostile or broken registry directories and judge how each is refused.

    python benchmarks/reliability_registries.py [--timeout SECONDS] [--work DIR] [--only NAME]

Each case writes a registry directory (a family `acme.run` with one flaw) under a temporary
folder (or `--work DIR`), then runs `evalreg detect` on a small record and `evalreg check`
against it (and `evalreg migrate --dry-run` where the flaw is in a migration step), each as a
separate process with a timeout (`detect` is left out where the flaw is in a step module, which
`detect` never imports). Per run it prints the exit code, the first line of the error
(standard error, or `check`'s first `error:` line), the time, and PASS or FAIL: PASS is a
non-zero exit, an error of one line with no traceback, within the timeout.

Patterns that backtrack for ever in Python's `re` (`(a+)+$`, `.*.*.*.*.*x`) are no flaw to evalreg,
which matches registry patterns with RE2 in linear time: those cases (`linear`) also run
`validate` on a record made to be slow, and PASS when every command finishes within the
timeout with no traceback and at most one line of error. Patterns RE2 cannot compile
(lookaround, backreferences) are refused like the other flaws.

A step module that loops for ever when imported is trusted code doing what it says: evalreg
imports a registry directory's Python files as they are (docs/registry-directories.md,
"Trust"), so that case is run and shown as DOCUMENTED, whatever happens, and not judged.
The exit code is 1 when any judged run fails.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MANIFEST = """\
name: acme.run
title: Acme runs
kind: json
markers:
  - pointer: /v
    template: '{version}'
"""
SCHEMA = {"type": "object", "properties": {"v": {"type": "string"}}}
STEP = (
    '"""Copy the record."""\n\nFROM = "1.0"\nTO = "2.0"\n\n\n'
    "def upgrade(record, ctx):\n    return dict(record)\n"
)
RECORD = {"v": "a" * 40 + "!"}


@dataclass(frozen=True)
class Case:
    """One hostile registry directory: how to write it, and what to run on it."""

    name: str
    what: str
    build: Callable[[Path], None]
    commands: tuple[str, ...] = ("detect", "check")
    documented: bool = False
    """Trusted code that may legitimately hang: run and shown, not judged."""
    linear: bool = False
    """A pattern RE2 runs in linear time: judged on finishing cleanly, not on being refused."""


def _write(root: Path, manifest: str = MANIFEST, schemas: dict[str, Any] | None = None) -> None:
    (root / "registry").mkdir(parents=True)
    (root / "registry" / "acme.run.yaml").write_text(manifest, encoding="utf-8")
    for version, schema in (schemas or {"1.0": SCHEMA, "2.0": SCHEMA}).items():
        path = root / "schemas" / "acme.run" / f"{version}.schema.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(schema if isinstance(schema, str) else json.dumps(schema))


def _step(root: Path, body: str) -> None:
    _write(root)
    path = root / "migrations" / "acme.run" / "1.0_to_2.0.py"
    path.parent.mkdir(parents=True)
    path.write_text(STEP + body, encoding="utf-8")


def _schema(schema: Any) -> Callable[[Path], None]:
    return lambda root: _write(root, schemas={"1.0": schema, "2.0": SCHEMA})


def _manifest(extra: str, base: str = MANIFEST) -> Callable[[Path], None]:
    return lambda root: _write(root, base + extra)


def _family_dot_dot(root: Path) -> None:
    (root / "registry").mkdir(parents=True)
    (root / "registry" / "...yaml").write_text("name: ..\ntitle: t\nkind: json\n")


def _version_name(root: Path) -> None:
    _write(root, schemas={"1.0": SCHEMA, " 2.0": SCHEMA})


def _deep(depth: int) -> str:
    return '{"not":' * depth + "{}" + "}" * depth


def _huge(root: Path) -> None:
    _write(root)
    path = root / "schemas" / "acme.run" / "2.0.schema.json"
    filler = json.dumps("x" * 1_000_000)
    with path.open("w", encoding="utf-8") as out:
        out.write('{"examples": [')
        out.write(",".join([filler] * 17))
        out.write("]}")


REMOTE = "https://example.com/x.json"
LINEAR = ("detect", "check", "validate")
CASES = (
    Case(
        "marker-redos",
        "marker pattern (a+)+ on a 41-char value",
        _manifest("    pattern: '^(?P<version>(a+)+)$'\n"),
        commands=LINEAR,
        linear=True,
    ),
    Case(
        "marker-poly",
        "marker pattern with five .* in a row",
        _manifest("    pattern: '^(?P<version>.*.*.*.*.*x)$'\n"),
        commands=LINEAR,
        linear=True,
    ),
    Case(
        "rule-redos",
        "rule `matches` (\\w|\\w\\w)+$",
        _manifest(
            "rules:\n  - {id: acme.r, message: m, require: [{matches: [/v, '(\\w|\\w\\w)+$']}]}\n"
        ),
        commands=LINEAR,
        linear=True,
    ),
    Case(
        "marker-lookahead",
        "marker pattern with a lookahead (?=!)",
        _manifest("    pattern: '^(?P<version>(a+)+)(?=!)'\n"),
    ),
    Case(
        "rule-backref",
        "rule `matches` with a backreference \\1",
        _manifest(
            "rules:\n  - {id: acme.r, message: m, "
            "require: [{matches: [/v, '(\\w|\\w\\w)+\\1$']}]}\n"
        ),
    ),
    Case(
        "pattern-1mb",
        "marker pattern of 1 MB",
        _manifest(f"    pattern: '(?P<version>{'a' * 1_000_000})'\n"),
    ),
    Case("family-dotdot", "a family named ..", _family_dot_dot),
    Case("version-space", "a schema file ' 2.0.schema.json'", _version_name),
    Case(
        "ref-under-default",
        "$ref in a property named default",
        _schema({"properties": {"default": {"$ref": REMOTE}}}),
    ),
    Case(
        "ref-under-enum",
        "$ref in a property named enum",
        _schema({"properties": {"enum": {"$ref": REMOTE}}}),
    ),
    Case(
        "ref-under-examples",
        "$ref in a definition named examples",
        _schema({"$defs": {"examples": {"$ref": REMOTE}}}),
    ),
    Case("dynamic-ref", "remote $dynamicRef", _schema({"$defs": {"a": {"$dynamicRef": REMOTE}}})),
    Case(
        "unknown-dialect",
        "custom $schema URL",
        _schema({"$schema": "https://example.com/my-dialect"}),
    ),
    Case("ref-not-string", "$ref: 5", _schema({"properties": {"a": {"$ref": 5}}})),
    Case(
        "schema-redos",
        "schema pattern (a+)+$",
        _schema({"properties": {"v": {"pattern": "^(a+)+$"}}}),
        commands=LINEAR,
        linear=True,
    ),
    Case(
        "schema-poly",
        "schema pattern \\w*\\w*\\w*\\w*!$",
        _schema({"properties": {"v": {"pattern": "^\\w*\\w*\\w*\\w*!$"}}}),
        commands=LINEAR,
        linear=True,
    ),
    Case(
        "schema-lookbehind",
        "schema pattern with a lookbehind (?<=a)",
        _schema({"properties": {"v": {"pattern": "(?<=a)!"}}}),
    ),
    Case("schema-deep", "schema nested 10,000 deep", _schema(_deep(10_000))),
    Case("schema-huge", "schema file of 17 MB", _huge),
    Case("yaml-error", "manifest that is not YAML", _manifest("title: [unclosed\n")),
    Case("yaml-duplicate", "manifest naming a key twice", _manifest("title: again\n")),
    Case(
        "step-raises",
        "step raising on import",
        lambda r: _step(r, "raise RuntimeError('boom')\n"),
        commands=("check", "migrate"),
    ),
    Case(
        "step-exits",
        "step calling sys.exit(0) on import",
        lambda r: _step(r, "raise SystemExit(0)\n"),
        commands=("check", "migrate"),
    ),
    Case(
        "step-loops",
        "step looping for ever on import",
        lambda r: _step(r, "while True:\n    pass\n"),
        commands=("check", "migrate"),
        documented=True,
    ),
)


@dataclass(frozen=True)
class Outcome:
    """One command run against one case."""

    case: str
    command: str
    code: int | None
    error: str
    seconds: float
    verdict: str


def _evalreg(args: list[str], timeout: float) -> tuple[int | None, str, str, float]:
    began = time.monotonic()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "evalreg", *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            env={**os.environ, "EVALREG_PATH": "", "EVALREG_DEBUG": ""},
            check=False,
        )
    except subprocess.TimeoutExpired as err:
        out = err.stdout.decode() if isinstance(err.stdout, bytes) else (err.stdout or "")
        return None, out, "", time.monotonic() - began
    return done.returncode, done.stdout, done.stderr, time.monotonic() - began


def _judge(
    command: str, code: int | None, out: str, err: str, linear: bool = False
) -> tuple[str, bool]:
    """Return the error line shown and whether the run is a PASS."""
    if code is None:
        return "(timed out)", False
    text = out + err
    if linear:
        lines = [line for line in err.splitlines() if line.strip()]
        shown = lines[0] if lines else f"(finished, exit {code})"
        return shown, len(lines) <= 1 and "Traceback" not in text
    if command == "check":
        lines = out.splitlines()
        found = [i for i, line in enumerate(lines) if line.startswith("error:")]
        if not found:
            return (err.splitlines() or ["(no error)"])[0], False
        first = found[0]
        follows = lines[first + 1] if first + 1 < len(lines) else ""
        one = not follows.startswith((" ", "\t"))
        return lines[first], code != 0 and one and "Traceback" not in text
    lines = [line for line in err.splitlines() if line.strip()]
    shown = lines[0] if lines else "(no error)"
    return shown, code != 0 and len(lines) == 1 and "Traceback" not in text


def run_case(case: Case, work: Path, timeout: float) -> list[Outcome]:
    """Write one case's registry directory and run the commands on it."""
    root = work / case.name
    shutil.rmtree(root, ignore_errors=True)
    case.build(root)
    record = work / f"{case.name}.json"
    record.write_text(json.dumps(RECORD))
    every = {
        "detect": ["--registry", str(root), "detect", str(record)],
        "check": ["check", "--registry", str(root), "--examples", "5"],
        "validate": [
            "--registry",
            str(root),
            "validate",
            str(record),
            "--family",
            "acme.run",
            "--version",
            "1.0",
        ],
        "migrate": [
            "--registry",
            str(root),
            "migrate",
            str(record),
            "--to",
            "2.0",
            "--dry-run",
            "--family",
            "acme.run",
        ],
    }
    outcomes = []
    for command in case.commands:
        args = every[command]
        code, out, err, seconds = _evalreg(args, timeout)
        shown, passed = _judge(command, code, out, err, case.linear)
        verdict = "DOCUMENTED" if case.documented else ("PASS" if passed else "FAIL")
        outcomes.append(Outcome(case.name, command, code, shown, seconds, verdict))
    return outcomes


def main(argv: list[str] | None = None) -> int:
    """Run every case and print a line per command; return 1 if any judged run failed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per command")
    parser.add_argument("--work", type=Path, help="write the registries here (kept)")
    parser.add_argument("--only", action="append", help="run only the cases named")
    args = parser.parse_args(argv)
    cases = [c for c in CASES if not args.only or c.name in args.only]
    temporary = None
    if args.work is None:
        temporary = tempfile.TemporaryDirectory(prefix="evalreg-hostile-")
        work = Path(temporary.name)
    else:
        work = args.work
        work.mkdir(parents=True, exist_ok=True)
    results: list[Outcome] = []
    print(f"{'case':<20} {'command':<8} {'exit':>4} {'time':>7}  verdict     first error line")
    try:
        for case in cases:
            for outcome in run_case(case, work, args.timeout):
                results.append(outcome)
                code = "-" if outcome.code is None else str(outcome.code)
                error = outcome.error if len(outcome.error) <= 140 else outcome.error[:137] + "..."
                print(
                    f"{outcome.case:<20} {outcome.command:<8} {code:>4} {outcome.seconds:6.2f}s  "
                    f"{outcome.verdict:<10}  {error}",
                    flush=True,
                )
    finally:
        if temporary is not None:
            temporary.cleanup()
    judged = [r for r in results if r.verdict != "DOCUMENTED"]
    failed = [r for r in judged if r.verdict == "FAIL"]
    print(
        f"{len(judged)} runs judged: {len(judged) - len(failed)} PASS, {len(failed)} FAIL; "
        f"{len(results) - len(judged)} documented (trusted code that may hang)"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
