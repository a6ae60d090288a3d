"""The `evalreg` command group, the context every command shares, and the entry point.

Options are parsed here, the work is done by library functions, and results are printed by
reporters chosen by name. Exit codes: 0 success, 1 problems found, 2 usage or registry errors.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import os
import re
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from evalreg import __version__
from evalreg.errors import EvalregError

if TYPE_CHECKING:
    from evalreg.engine.registry import Registry

F = TypeVar("F", bound=Callable[..., Any])
EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE = 0, 1, 2


class Context:
    """What every command shares: the registry directories asked for, and the loaded registry."""

    def __init__(self, registry_dirs: tuple[str, ...], drafts: bool = False) -> None:
        self.registry_dirs = registry_dirs
        self.drafts = drafts
        self._registry: Registry | None = None

    @property
    def target_directory(self) -> str | None:
        """Return the registry directory to write into: the one --registry gave, if one."""
        return self.registry_dirs[0] if len(self.registry_dirs) == 1 else None

    @property
    def registry(self) -> Registry:
        """Return the registry, loaded on first use."""
        if self._registry is None:
            from evalreg.engine.registry import load_registry

            self._registry = load_registry(self.registry_dirs, drafts=self.drafts)
        return self._registry


class OutputLost(Exception):
    """Standard output cannot be written (closed, or on a full disk): the report is lost."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    """Print one error line and exit."""
    emit(f"evalreg: error: {message}", err=True)
    sys.exit(code)


# Compiled on first use (by `re`'s own cache): few names and lines need them, and the first
# takes a millisecond to compile, at every start.
_UNPRINTABLE = "[\x00-\x1f\x7f-\x9f\ud800-\udfff]"
_SURROGATES = "[\ud800-\udfff]"
_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escaped(char: str, backslash: str = "\\") -> str:
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # a byte of a name that is not UTF-8 (surrogateescape)
        return f"{backslash}x{code - 0xDC00:02x}"
    if 0xD800 <= code <= 0xDFFF:
        return f"{backslash}u{code:04x}"
    return _ESCAPES.get(char) or f"\\x{code:02x}"


def shown_path(path: str) -> str:
    """Return a file name as printable text on one line: control characters (a newline, an
    escape) and bytes that are not UTF-8 are written as backslash escapes (`\\n`, `\\xff`)."""
    if path.isprintable():
        return path
    return re.sub(_UNPRINTABLE, lambda found: _escaped(found.group()), path)


def json_text(value: Any, **options: Any) -> str:
    """Return `value` as JSON text that is valid UTF-8 (`json.dumps` keyword arguments apply).

    The bytes of a file name that are not UTF-8 (held as lone surrogates) become the text
    `\\xff`, as in the text output.
    """
    import json  # not at start: most commands print text

    text = json.dumps(value, ensure_ascii=False, **options)
    if text.isascii():
        return text
    return re.sub(_SURROGATES, lambda found: _escaped(found.group(), "\\\\"), text)


def emit(line: str = "", *, err: bool = False) -> None:
    """Print one line of output, or with `err` of diagnostics (on standard error).

    Standard output is buffered when it is not a terminal; it is flushed before anything goes to
    standard error, so the two stay in order when they share a file. Characters that cannot be
    written (the bytes of a name that is not UTF-8) are escaped, as by `shown_path`.
    """
    if not line.isascii():
        line = re.sub(_SURROGATES, lambda found: _escaped(found.group()), line)
    if err:
        _flush()
        click.echo(line, err=True)
    else:
        sys.stdout.write(line + "\n")


def emit_json(value: Any) -> None:
    """Print one compact JSON value on its own line."""
    emit(json_text(value, default=str))


pass_context = click.make_pass_decorator(Context)

COMMANDS = {
    "detect": "evalreg.cli.detection",
    "status": "evalreg.cli.detection",
    "migrate": "evalreg.cli.migrating",
    "export": "evalreg.cli.exporting",
    "sync": "evalreg.cli.upstream",
    "steps": "evalreg.cli.upstream",
    "check": "evalreg.cli.publishing",
    "init": "evalreg.cli.publishing",
    "new-version": "evalreg.cli.publishing",
    "release": "evalreg.cli.publishing",
    "amend": "evalreg.cli.publishing",
    "publish": "evalreg.cli.publishing",
    "list": "evalreg.cli.schemas",
    "show": "evalreg.cli.schemas",
    "diff": "evalreg.cli.schemas",
    "changelog": "evalreg.cli.schemas",
    "validate": "evalreg.cli.validating",
}
"""Each command and the module that defines it (registering it on `cli` when imported): a
command line imports only the module of the command it runs (`--help` imports them all)."""


class LazyGroup(click.Group):
    """A command group whose commands are defined in modules imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            importlib.import_module(COMMANDS[cmd_name])
        return self.commands.get(cmd_name)


@click.group(
    cls=LazyGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(__version__, prog_name="evalreg")
@click.option(
    "--registry",
    "registry_dirs",
    multiple=True,
    type=click.Path(file_okay=False),
    metavar="DIR",
    help="Add a registry directory (registry/, schemas/, migrations/); repeatable. "
    "EVALREG_PATH adds more, separated by the OS path separator.",
)
@click.option(
    "--drafts",
    is_flag=True,
    help="Count draft versions (not recorded in registry.lock) as `latest`, in every command.",
)
@click.option(
    "--allow-redirect",
    "redirects",
    multiple=True,
    metavar="ORIGIN",
    help="Let redirects of http(s):// URLs lead to ORIGIN (https://HOST[:PORT]), beyond the "
    "origin of the URL given; `*` for any; repeatable. EVALREG_ALLOW_REDIRECTS adds more.",
)
@click.pass_context
def cli(
    ctx: click.Context, registry_dirs: tuple[str, ...], drafts: bool, redirects: tuple[str, ...]
) -> None:
    """Detect, validate, migrate, diff and publish versioned LLM-evaluation data.

    Families and versions come from the built-in registry directory, the directories in
    EVALREG_PATH, and --registry. `latest` means the newest released version (recorded in
    registry.lock) unless --drafts is given.
    """
    ctx.obj = Context(registry_dirs, drafts)
    if redirects:  # in the environment, so that worker processes see them too
        from evalreg.io.http import ALLOW_REDIRECTS

        given = os.environ.get(ALLOW_REDIRECTS, "")
        os.environ[ALLOW_REDIRECTS] = " ".join([given, *redirects]).strip()


# -- entry point -------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> None:
    """Run the command line; errors become one line on standard error and exit code 2.

    SIGTERM and SIGHUP stop a run as Ctrl-C does (writes in progress abandoned, workers
    stopped), with one line and exit code 128 + the signal number (143, 129).
    """
    from evalreg.batch.signals import Terminated, stop_on_signals

    if sys.stdout is None:  # started with `>&-`: the next file opened would take its place
        _quiet_stdout()
        fail("standard output is closed: the report would be lost; nothing was done")
    stdout = sys.stdout
    redirects = os.environ.get("EVALREG_ALLOW_REDIRECTS")
    try:
        with stop_on_signals():
            sys.stdout = _Stdout(stdout)
            try:
                cli.main(args=argv, prog_name="evalreg", standalone_mode=False)
            finally:
                sys.stdout = stdout
                if redirects is None:  # as it was, for a next call in this process
                    os.environ.pop("EVALREG_ALLOW_REDIRECTS", None)
                else:
                    os.environ["EVALREG_ALLOW_REDIRECTS"] = redirects
    except Terminated as err:
        with contextlib.suppress(OSError):  # after SIGHUP, the terminal may be gone
            emit(
                f"evalreg: stopped by {err.name}; files being written were left as they were",
                err=True,
            )
        _quiet_stdout()
        os._exit(128 + err.signum)
    except click.exceptions.Abort:
        emit("evalreg: interrupted", err=True)
        sys.exit(130)
    except click.exceptions.NoArgsIsHelpError as err:
        _flush()
        err.show()  # the help, asked for by giving no arguments
        sys.exit(EXIT_USAGE)
    except click.ClickException as err:
        fail(usage_line(err, sys.argv[1:] if argv is None else argv))
    except EvalregError as err:
        fail(str(err), getattr(err, "exit_code", EXIT_USAGE))
    except OutputLost as err:
        _lost(err.reason)
    except BrokenPipeError:
        _quiet_stdout()
        sys.exit(EXIT_OK)
    except KeyboardInterrupt:
        emit("evalreg: interrupted", err=True)
        sys.exit(130)
    except SystemExit:
        _flush()
        raise
    except Exception as err:  # the last guard: a one-line message instead of a traceback
        if os.environ.get("EVALREG_DEBUG"):
            raise
        fail(f"internal error: {type(err).__name__}: {err} (set EVALREG_DEBUG=1 for details)", 3)
    _flush()
    sys.exit(EXIT_OK)


def program() -> NoReturn:
    """Run the `evalreg` program (`main`), then end the process at once if nothing is left to
    finish.

    Tearing the interpreter down (every module and object freed one by one, for the system to
    free again) takes a short command a tenth of its time. With no exit handler registered (by
    `atexit`, as multiprocessing, logging and coverage register theirs) and no thread but this
    one, standard output and error are flushed and the process ends with `main`'s exit code;
    otherwise, or if a flush fails, Python exits as usual.
    """
    try:
        main()
        code: str | int | None = EXIT_OK
    except SystemExit as err:
        code = EXIT_OK if err.code is None else err.code
    # `_ncallbacks` is CPython's: elsewhere, exit handlers may be waiting, and Python exits.
    handlers = getattr(atexit, "_ncallbacks", None)
    idle = handlers is not None and handlers() == 0 and threading.active_count() == 1
    if type(code) is int and idle:
        try:
            for stream in (sys.stdout, sys.stderr):
                if stream is not None:
                    stream.flush()
        except (OSError, ValueError):
            pass  # as Python would report it, below
        else:
            os._exit(code)
    sys.exit(code)


def usage_line(err: click.ClickException, argv: list[str]) -> str:
    """Return a usage error as one line: the message, and which help to read."""
    message = " ".join(err.format_message().split()).rstrip(".")
    context = getattr(err, "ctx", None)
    if context is not None:
        command = context.command_path
    else:  # found while parsing, before the command's context exists
        named = [a for a in argv if a in cli.commands or a in COMMANDS]
        command = " ".join(["evalreg", *named[:1]])
    return f"{message}; see {command} --help"


def _flush() -> None:
    """Flush standard output; a reader that went away (`| head`) is no error.

    Raises:
        OutputLost: standard output cannot be written (a full disk, say).
    """
    if sys.stdout is None:
        return
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _quiet_stdout()
    except (OSError, ValueError) as err:
        raise OutputLost(_reason(err)) from None


class _Stdout:
    """Standard output, whose failures (a full disk; but a reader gone, `| head`) end the run.

    Every writer goes through it (`emit`, click's help, rich's tables), so that a write that
    fails is `OutputLost`, one line on standard error, rather than an internal error.
    """

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return int(self._stream.write(text))
        except BrokenPipeError:
            raise
        except (OSError, ValueError) as err:
            raise OutputLost(_reason(err)) from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise
        except (OSError, ValueError) as err:
            raise OutputLost(_reason(err)) from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _reason(err: BaseException) -> str:
    if isinstance(err, OSError) and err.strerror:
        return err.strerror
    return "it is closed" if not isinstance(err, OSError) else str(err) or type(err).__name__


def _lost(reason: str) -> NoReturn:
    """Say on standard error that the report could not be written, and exit with code 2."""
    _quiet_stdout()
    emit(
        f"evalreg: error: cannot write to standard output ({reason}): the run stopped there; "
        "files written before it are complete",
        err=True,
    )
    sys.exit(EXIT_USAGE)


def _quiet_stdout() -> None:
    """Point standard output at the null device, so that exiting flushes nowhere.

    With standard output closed (`>&-`), the null device takes its descriptor, so that no file
    opened later does.
    """
    devnull = os.open(os.devnull, os.O_WRONLY)
    if devnull != 1:
        os.dup2(devnull, 1)
        os.close(devnull)
