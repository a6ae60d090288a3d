"""Every example of the documentation site (and of the README) runs as shown, on the bundled
examples.

Each page under docs/, and the README, runs in a temporary folder holding a copy of
`evalreg/examples/`, its ```python and ```console blocks in page order (so a block may use what
an earlier one made):
- a ```python block runs in one namespace per page and must not raise;
- a ```console block is a series of `$ COMMAND` lines, each followed by the output it shows
  (standard output and standard error as they interleave). A command exits 0 unless it ends
  with a comment `# exits N`. Shown output must match: a line `...` stands for any number of
  lines, `...` inside a line for any text, and trailing spaces are ignored. A command shown
  without output is checked only for its exit code.

A command that is a plain `evalreg ...` runs in this process (as `evalreg.cli.main`); one with
shell syntax (pipes, redirections, `&&`, variables) runs in bash, with this environment's
`evalreg` first on the PATH. Other fences (```sh, ```yaml, ```text) are not run: they show
commands that need what a test cannot have (a cloud store, a cluster, an editor) and files.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest

import evalreg
from evalreg.cli import main

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = [
    ROOT / "README.md",
    *sorted(p for p in DOCS.rglob("*.md") if "hooks" not in p.relative_to(DOCS).parts),
]
FENCE = re.compile(
    r"^(?P<indent> *)```(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^(?P=indent)```\s*$", re.M | re.S
)
EXIT = re.compile(r"\s+#\s*exits\s+(\d+)\s*$")
SHELL = re.compile(r"[|<>;&$`*?]|^\w+=")
ELLIPSIS = "..."


@dataclass
class Command:
    """One `$ COMMAND` line of a console block, the exit code it expects and its shown output."""

    line: str
    exit_code: int
    output: list[str]


@dataclass
class Block:
    """One fenced block of a page: its language, its text, and the line it starts on."""

    lang: str
    text: str
    line: int


def blocks(text: str) -> Iterator[Block]:
    """Yield the fenced blocks of a Markdown page, indented ones (in lists) included."""
    for found in FENCE.finditer(text):
        indent = len(found.group("indent"))
        body = "\n".join(line[indent:] for line in found.group("body").splitlines())
        yield Block(found.group("lang"), body, text.count("\n", 0, found.start()) + 1)


def commands(block: str) -> list[Command]:
    """Return the commands of a console block, with their expected exit codes and output."""
    found: list[Command] = []
    lines = block.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        if not line.startswith("$ "):
            raise ValueError(f"console output before any `$ ` command: {line!r}")
        command = line[2:]
        while command.endswith("\\") and index + 1 < len(lines):
            index += 1
            command = command[:-1].rstrip() + " " + lines[index].strip()
        code = 0
        exits = EXIT.search(command)
        if exits:
            code = int(exits.group(1))
            command = command[: exits.start()]
        output = []
        while index + 1 < len(lines) and not lines[index + 1].startswith("$ "):
            index += 1
            output.append(lines[index])
        found.append(Command(command.strip(), code, output))
        index += 1
    return found


def _line_matches(expected: str, actual: str) -> bool:
    if ELLIPSIS not in expected:
        return expected == actual
    pattern = ".*".join(re.escape(part) for part in expected.split(ELLIPSIS))
    return re.fullmatch(pattern, actual, re.S) is not None


def output_matches(expected: list[str], actual: list[str]) -> bool:
    """Return whether `actual` lines fit `expected`, where a `...` line is any run of lines
    (trailing spaces and blank lines at the end do not count)."""
    expected = "\n".join(line.rstrip() for line in expected).rstrip("\n").split("\n")
    actual = "\n".join(line.rstrip() for line in actual).rstrip("\n").split("\n")

    def fits(e: int, a: int) -> bool:
        if e == len(expected):
            return a == len(actual)
        if expected[e] == ELLIPSIS:
            return any(fits(e + 1, later) for later in range(a, len(actual) + 1))
        return a < len(actual) and _line_matches(expected[e], actual[a]) and fits(e + 1, a + 1)

    return fits(0, 0)


def run_command(command: str) -> tuple[int, str]:
    """Run one documented command in the current folder; return its exit code and output."""
    if command.startswith("evalreg ") and not SHELL.search(command):
        output = io.StringIO()
        with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
            try:
                main(shlex.split(command)[1:])
            except SystemExit as stop:
                code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
            else:
                code = 0
        return code, output.getvalue()
    environment = os.environ | {
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    }
    done = subprocess.run(
        ["bash", "-c", command],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
        env=environment,
        check=False,
        timeout=120,
    )
    return done.returncode, done.stdout


def run_page(page: Path, where: str) -> None:
    """Run every python and console block of `page`, in order, in the current folder; name
    the page `where` in failures."""
    namespace: dict[str, object] = {"__name__": f"docs_{page.stem}"}
    for block in blocks(page.read_text(encoding="utf-8")):
        if block.lang == "python":
            code = compile(block.text, f"{where}:{block.line}", "exec")
            exec(code, namespace)
        elif block.lang == "console":
            for command in commands(block.text):
                code, output = run_command(command.line)
                shown = f"{where}:{block.line}: $ {command.line}\n{output}"
                assert code == command.exit_code, (
                    f"exit code {code}, not {command.exit_code}\n{shown}"
                )
                if command.output:
                    assert output_matches(command.output, output.splitlines()), (
                        "output differs from the page's\n--- page\n"
                        + "\n".join(command.output)
                        + f"\n--- run\n{shown}"
                    )


@pytest.fixture
def examples_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temporary folder holding a copy of the bundled examples at evalreg/examples/."""
    shutil.copytree(ROOT / "evalreg" / "examples", tmp_path / "evalreg" / "examples")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_example_of_the_page_runs_as_shown(page: Path, examples_folder: Path) -> None:
    run_page(page, page.relative_to(ROOT).as_posix())


def test_the_pages_have_examples_that_run() -> None:
    counted = {"python": 0, "console": 0}
    for page in PAGES:
        for block in blocks(page.read_text(encoding="utf-8")):
            if block.lang in counted:
                counted[block.lang] += 1
    assert counted["python"] >= 10 and counted["console"] >= 20, counted


# -- the checker itself ----------------------------------------------------------------------------


def test_a_console_block_is_split_into_commands_codes_and_output() -> None:
    block = "$ evalreg validate a \\\n    b  # exits 1\nproblem\n...\n$ evalreg list\n"
    found = commands(block)
    assert [(c.line, c.exit_code, c.output) for c in found] == [
        ("evalreg validate a b", 1, ["problem", "..."]),
        ("evalreg list", 0, []),
    ]
    with pytest.raises(ValueError, match="before any"):
        commands("output\n$ evalreg list\n")


@pytest.mark.parametrize(
    ("expected", "actual", "fits"),
    [
        (["a", "b"], ["a", "b  "], True),
        (["a", "b"], ["a", "c"], False),
        (["a"], ["a", "b"], False),
        (["a", "...", "d"], ["a", "b", "c", "d"], True),
        (["a", "...", "d"], ["a", "d"], True),
        (["a", "...", "d"], ["a", "b"], False),
        (["x: ... (3 records)"], ["x: moved /a (3 records)"], True),
        (["x: ... (3 records)"], ["x: moved /a (4 records)"], False),
        (["..."], [], True),
        (["a"], ["a", "", ""], True),
    ],
)
def test_shown_output_matches_with_ellipses(
    expected: list[str], actual: list[str], fits: bool
) -> None:
    assert output_matches(expected, actual) is fits


def test_a_failing_example_is_reported_with_its_page_and_line(examples_folder: Path) -> None:
    page = examples_folder / "wrong.md"
    page.write_text("# x\n\n```console\n$ evalreg validate evalreg/examples\n```\n")
    with pytest.raises(AssertionError, match="exit code 1, not 0") as failed:
        run_page(page, "docs/wrong.md")
    assert "docs/wrong.md:3: $ evalreg validate evalreg/examples" in str(failed.value)
    page.write_text("```console\n$ evalreg validate evalreg/examples  # exits 1\n2 files\n```\n")
    with pytest.raises(AssertionError, match="output differs"):
        run_page(page, "docs/wrong.md")
    page.write_text("```python\nassert 1 + 1 == 3\n```\n")
    with pytest.raises(AssertionError):
        run_page(page, "docs/wrong.md")


# -- the generated pages ---------------------------------------------------------------------------


def _hooks() -> ModuleType:
    """Import docs/hooks/generate.py, the MkDocs hook that generates pages."""
    spec = importlib.util.spec_from_file_location("docs_hooks", DOCS / "hooks" / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_command_of_the_click_group_gets_a_page_with_its_reference() -> None:
    hooks = _hooks()
    found = hooks.commands()
    assert {"detect", "validate", "migrate", "diff", "publish"} <= set(found)
    for name, command in found.items():
        page = hooks.command_page(name, command)
        assert page.startswith(f"# evalreg {name}\n") and f":prog_name: evalreg {name}" in page
    table = hooks.commands_table()
    assert all(f"[`evalreg {name}`]({name}.md)" in table for name in found)


def test_the_api_page_documents_every_public_name() -> None:
    import evalreg

    reference = _hooks().api_reference()
    documented = set(re.findall(r"^::: evalreg\.(\w+)$", reference, re.M))
    assert documented == {name for name in evalreg.__all__ if name != "__version__"}


def test_the_families_page_lists_every_version_of_every_builtin_family(
    registry: evalreg.Registry,
) -> None:
    reference = _hooks().families_reference()
    for family in registry.families():
        assert f"## {family} " in reference
        for version in registry.versions(family):
            assert re.search(rf"^\| {re.escape(version)} \| (released|draft) \|", reference, re.M)
