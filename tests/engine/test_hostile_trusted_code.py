"""Trusted code that misbehaves: steps and rules that exit, print, or report several lines.

A registry directory's steps and rules are user code. Whatever they raise, `sys.exit()` and
other `BaseException`s included, is the failure of the record they ran on, and the run goes on;
Ctrl-C keeps its meaning. What a rule prints never reaches the report, and a finding is one line.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evalreg.batch.signals import Terminated
from evalreg.cli import main
from tests.conftest import RegistryFactory

MANIFEST = "name: acme.run\ntitle: Acme runs\nkind: json\nmarkers:\n  - pointer: /v\n"
SCHEMAS = {v: {"type": "object"} for v in ("1.0", "2.0")}


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as info:
        main(list(args))
    out, err = capsys.readouterr()
    return int(info.value.code or 0), out, err


def step(body: str) -> str:
    """A step from 1.0 to 2.0 that runs `body` on the record numbered 6, then copies it."""
    return (
        '"""Copy the record."""\n\nimport os\nimport sys\n\nFROM = "1.0"\nTO = "2.0"\n\n\n'
        "class Odd(BaseException):\n    pass\n\n\n"
        "def upgrade(record, ctx):\n"
        "    if record.get('n') == 6:\n"
        f"        {body}\n"
        "    return dict(record, v='2.0')\n"
    )


def rule(body: str, scope: str = "record") -> str:
    return (
        f'"""Misbehave."""\n\nimport sys\n\nID = "acme.odd"\nSCOPE = "{scope}"\n\n\n'
        f"def check(record, ctx):\n    {body}\n"
    )


def registry_with(make: RegistryFactory, **parts: Any) -> Path:
    return make({"acme.run": {"manifest": MANIFEST, "schemas": SCHEMAS, **parts}})


@pytest.fixture
def ten(tmp_path: Path) -> Path:
    folder = tmp_path / "in"
    folder.mkdir()
    for n in range(1, 11):
        (folder / f"f{n:02d}.json").write_text(json.dumps({"v": "1.0", "n": n}))
    return folder


@pytest.mark.parametrize(
    "body", ["sys.exit(0)", "sys.exit()", "raise SystemExit('bye')", "raise Odd('odd')"]
)
@pytest.mark.parametrize("where", ["--out", "--in-place"])
def test_a_step_that_exits_fails_its_record_and_the_run_goes_on(
    make_registry_dir: RegistryFactory,
    ten: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    body: str,
    where: str,
) -> None:
    root = registry_with(make_registry_dir, steps={"1.0_to_2.0.py": step(body)})
    target = ["--out", str(tmp_path / "out")] if where == "--out" else ["--in-place"]
    code, out, err = run(
        capsys, "--registry", str(root), "migrate", str(ten), "--to", "2.0", *target
    )
    assert code == 1
    assert f"{ten / 'f06.json'}: failed at step 1.0 -> 2.0: " in out
    assert "f06.json: failed: 0 migrated, 0 current, 1 failed" in out
    assert err.strip() == (
        "10 files: 9 written, 0 unchanged, 1 failed; records: 9 migrated, 0 current, 1 failed"
    )
    written = tmp_path / "out" if where == "--out" else ten
    versions = {p.name: json.loads(p.read_text())["v"] for p in written.glob("*.json")}
    assert versions == {f"f{n:02d}.json": "1.0" if n == 6 else "2.0" for n in range(1, 11)} or (
        where == "--out" and versions == {f"f{n:02d}.json": "2.0" for n in range(1, 11) if n != 6}
    )


def test_ctrl_c_in_a_step_still_stops_the_run(
    make_registry_dir: RegistryFactory,
    ten: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    root = registry_with(
        make_registry_dir, steps={"1.0_to_2.0.py": step("raise KeyboardInterrupt")}
    )
    code, out, err = run(
        capsys,
        "--registry",
        str(root),
        "migrate",
        str(ten),
        "--to",
        "2.0",
        "--out",
        str(tmp_path / "o"),
    )
    assert code == 130 and err.strip().endswith("evalreg: interrupted")
    assert "f07.json" not in out


def test_the_runs_own_stops_are_not_a_records_failure() -> None:
    from evalreg.engine.modules import fails_alone

    assert fails_alone(SystemExit(0)) and fails_alone(ValueError()) and fails_alone(MemoryError())
    assert not fails_alone(Terminated(15))
    assert not fails_alone(KeyboardInterrupt()) and not fails_alone(GeneratorExit())


@pytest.mark.parametrize("body", ["sys.exit(0)", "raise SystemExit(3)"])
def test_a_rule_that_exits_is_a_finding(
    make_registry_dir: RegistryFactory, ten: Path, capsys: pytest.CaptureFixture[str], body: str
) -> None:
    root = registry_with(make_registry_dir, rules={"odd.py": rule(body)})
    code, out, _ = run(capsys, "--registry", str(root), "validate", str(ten))
    assert code == 1
    assert out.count(": /: the rule failed: SystemExit: ") == 10
    assert out.strip().splitlines()[-1] == "10 files, 10 records: 0 valid, 10 invalid, 0 unreadable"


def test_what_a_rule_prints_stays_out_of_the_json_report(
    make_registry_dir: RegistryFactory, ten: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = "print('hello from a rule'); sys.stdout.write('{not json')"
    root = registry_with(make_registry_dir, rules={"odd.py": rule(body)})
    code, out, err = run(capsys, "--registry", str(root), "validate", str(ten), "--format", "json")
    rows = [json.loads(line) for line in out.splitlines()]  # every line is JSON
    assert code == 1 and "hello" not in err
    messages = {row.get("message") for row in rows if "message" in row}
    assert messages == {"the rule wrote to standard output: 'hello from a rule\\n{not json'"}


def test_a_finding_is_one_line(
    make_registry_dir: RegistryFactory, ten: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = "ctx.report('/v', 'line one\\nline two\\r\\n{\"fake\": 1}' + 'x' * 5000)"
    root = registry_with(make_registry_dir, rules={"odd.py": rule(body)})
    code, out, _ = run(capsys, "--registry", str(root), "validate", "-q", str(ten / "f01.json"))
    lines = out.strip().splitlines()
    assert code == 1 and len(lines) == 1
    assert lines[0].startswith(f'{ten / "f01.json"}: /v: line one line two {{"fake": 1}}xxx')
    assert len(lines[0]) < 1100


COLLECTION = '''"""Count records."""

import sys

ID = "acme.count"
SCOPE = "collection"


class Collector:
    def __init__(self, path):
        {init}

    def add(self, record, ctx):
        {add}

    def summary(self):
        {summary}
        return 1


def finish(summaries, ctx):
    {finish}
'''


@pytest.mark.parametrize(
    ("part", "found"),
    [
        ("init", "the rule failed: SystemExit: 2"),
        ("add", "the rule failed: SystemExit: 2"),
        ("summary", "the rule failed: SystemExit: 2"),
        ("finish", "the rule failed: SystemExit: 2"),
    ],
)
def test_a_collection_rule_that_exits_is_a_finding(
    make_registry_dir: RegistryFactory,
    ten: Path,
    capsys: pytest.CaptureFixture[str],
    part: str,
    found: str,
) -> None:
    code = {p: "pass" for p in ("init", "add", "summary", "finish")} | {part: "sys.exit(2)"}
    root = registry_with(make_registry_dir, rules={"count.py": COLLECTION.format(**code)})
    status, out, err = run(capsys, "--registry", str(root), "validate", str(ten))
    assert status == 1 and err == "" and "Traceback" not in out
    assert found in out and "[acme.count]" in out
    assert out.strip().splitlines()[-1].startswith("10 files, 10 records: ")
