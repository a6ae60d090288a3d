"""A progress display for long runs, on standard error: files, records, rate and time left.

Shown when standard error is a terminal (and not in CI) once a run has lasted about a second,
or from the start with `--progress`; never with `--no-progress`, in pipes or in CI logs. The
main process counts what the run reports and redraws the display itself, at most a few times
a second (no thread); a run that shows no progress pays nothing for it.

While the display shows, what the run prints to the display's terminal (standard error, and
standard output when it is the same terminal) goes through the display's rich console, which
prints it above the display: kept until the next redraw and printed in one go, since rich
redraws its display after every print (rich's own `redirect_stdout` prints each line at once,
which costs a redraw per line, and sends standard output to the console whatever it is).
"""

from __future__ import annotations

import atexit
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import accumulate
from typing import IO, TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions
    from rich.progress import Progress as RichProgress
    from rich.progress import Task
    from rich.segment import Segment

T = TypeVar("T")

DELAY = 1.0
"""Seconds a run lasts before its progress shows (unless forced)."""
INTERVAL = 0.2
"""Seconds between two redraws of the display."""
CHECK_EVERY = 10_000
"""Records counted between two looks at the clock within one file."""

progress_option = click.option(
    "--progress/--no-progress",
    "progress",
    default=None,
    help="Show progress on standard error (files, records, rate, time left), or never. "
    "Default: when standard error is a terminal, outside CI, for runs over a second.",
)


def wanted(forced: bool | None) -> bool:
    """Return whether a run may show its progress: forced, or standard error is a terminal."""
    if forced is not None:
        return forced
    if os.environ.get("CI") or os.environ.get("TERM") == "dumb":
        return False
    return _isatty(sys.stderr)


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _same_terminal(one: Any, other: Any) -> bool:
    """Return whether two streams write to one terminal (so that one can print for the other)."""
    try:
        first, second = os.fstat(one.fileno()), os.fstat(other.fileno())
    except (AttributeError, ValueError, OSError):
        return False
    return _isatty(one) and (first.st_dev, first.st_ino) == (second.st_dev, second.st_ino)


class _Held:
    """A stand-in for a stream while the display shows: its text kept, in order with the other's."""

    def __init__(self, real: IO[str], queue: list[str]) -> None:
        self.real = real
        self.queue = queue

    def write(self, text: str) -> int:
        self.queue.append(text)
        return len(text)

    def flush(self) -> None:
        """Keep the text until the display is redrawn."""

    def isatty(self) -> bool:
        return _isatty(self.real)

    def fileno(self) -> int:
        return self.real.fileno()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


class _Printed:
    """What the run printed, for the display's console to print above it as it is.

    One segment of text, which the console neither wraps, crops nor styles: it costs nothing per
    line (`Console.out` makes rich text of every line, which a run printing thousands feels).
    """

    def __init__(self, text: str) -> None:
        self.text = text

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Segment]:
        from rich.segment import Segment

        yield Segment(self.text)


class Progress:
    """The counts of a run, and the display that shows them once the run has lasted.

    `wrap` the stream of what the run reports (in reading order) to count it.
    """

    def __init__(
        self, label: str, sizes: Callable[[], Sequence[int]], *, forced: bool | None = None
    ) -> None:
        self.label = label
        self.enabled = wanted(forced)
        self.delay = 0.0 if forced else DELAY
        self.files = 0
        self.records = 0
        self._sizes = sizes
        self._done_bytes: list[int] = [0]
        self._path: str | None = None
        self._check_at = CHECK_EVERY
        self._start = time.monotonic()
        self._last = 0.0
        self._display: RichProgress | None = None
        self._task: Any = None
        self._queue: list[str] = []
        self._streams: tuple[Any, Any] | None = None

    def wrap(self, items: Iterable[T], count: Callable[[T], tuple[str, int] | None]) -> Iterable[T]:
        """Return `items`, counted as they pass when the run may show its progress.

        `count` tells an item's file and number of records (None: the item is no record). The
        display goes away when the items are exhausted, so that the run's summary line comes
        after it; without a display, `items` is returned as it is.
        """
        if not self.enabled:
            return items
        return self._counted(items, count)

    def _counted(
        self, items: Iterable[T], count: Callable[[T], tuple[str, int] | None]
    ) -> Iterator[T]:
        try:
            if not self.delay:
                self._show(time.monotonic())
            for item in items:
                seen = count(item)
                if seen is not None:
                    self.see(*seen)
                yield item
        finally:
            self.close()

    def see(self, path: str, records: int = 1) -> None:
        """Count `records` records of the file at `path` (a new file when the path changes)."""
        self.records += records
        if path != self._path:
            self._path = path
            self.files += 1
        elif self.records < self._check_at:
            return
        self._check_at = self.records + CHECK_EVERY
        now = time.monotonic()
        if now - self._last < INTERVAL:
            return
        if self._display is None:
            if now - self._start < self.delay:
                return
            self._show(now)
        self._redraw(now)

    def _show(self, now: float) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, TaskProgressColumn, TextColumn, TimeRemainingColumn
        from rich.progress import Progress as RichProgress
        from rich.table import Column

        self._done_bytes = [0, *accumulate(self._sizes())]
        console = Console(file=sys.stderr, force_terminal=True, highlight=False)

        def text(template: str) -> TextColumn:
            return TextColumn(template, table_column=Column(no_wrap=True, overflow="ellipsis"))

        self._display = RichProgress(
            text("[bold]{task.description}"),
            BarColumn(bar_width=30),
            TaskProgressColumn(),
            text("{task.fields[files]} files"),
            text("{task.fields[records]} records"),
            text("{task.fields[rate]}/s"),
            TimeRemainingColumn(),
            console=console,
            auto_refresh=False,
            transient=True,
            redirect_stdout=False,
            redirect_stderr=False,
        )
        fields: dict[str, Any] = self._fields(now)
        total = self._done_bytes[-1] or None
        self._task = self._display.add_task(self.label, total=total, **fields)
        self._hold()
        self._display.start()
        atexit.register(self.close)  # an interrupted run leaves the terminal as it found it
        self._redraw(now)

    def _hold(self) -> None:
        """Keep what the run prints to the display's terminal until the next redraw."""
        self._streams = (sys.stdout, sys.stderr)
        if _same_terminal(sys.stdout, sys.stderr):
            sys.stdout = _Held(sys.stdout, self._queue)
        sys.stderr = _Held(sys.stderr, self._queue)

    def _release(self, *, final: bool = False) -> None:
        """Print the lines held through the display's console, which prints them above it."""
        assert self._display is not None
        held = "".join(self._queue)
        # A line being written waits for its end, unless the display goes away.
        cut = len(held) if final else held.rfind("\n") + 1
        self._queue[:] = [held[cut:]] if held[cut:] else []
        if cut:
            self._display.console.print(_Printed(held[:cut]), end="", crop=False, soft_wrap=True)

    def _redraw(self, now: float, *, final: bool = False) -> None:
        assert self._display is not None
        self._last = now
        self._release(final=final)
        # The file being read is not done until the next one starts, or the run ends.
        finished = min(max(self.files - (not final), 0), len(self._done_bytes) - 1)
        fields: dict[str, Any] = self._fields(now)
        self._display.update(self._task, completed=self._done_bytes[finished], **fields)
        self._display.refresh()

    def _fields(self, now: float) -> dict[str, str]:
        """Return the figures the display's columns show."""
        elapsed = max(now - self._start, 1e-9)
        return {
            "files": f"{self.files:,}/{len(self._done_bytes) - 1:,}",
            "records": f"{self.records:,}",
            "rate": f"{self.records / elapsed:,.0f} records",
        }

    def close(self) -> None:
        """Take the display away, writing what was held above it, and give the streams back."""
        if self._display is None:
            return
        self._redraw(time.monotonic(), final=True)
        display, self._display = self._display, None
        if self._streams is not None:
            sys.stdout, sys.stderr = self._streams
            self._streams = None
        display.stop()

    @property
    def task(self) -> Task | None:
        """Return the display's task, once it shows (for tests)."""
        return None if self._display is None else self._display.tasks[0]


def progress_for(
    label: str,
    paths: Sequence[str],
    include: Sequence[str],
    exclude: Sequence[str],
    forced: bool | None,
) -> Progress:
    """Return the progress of a run over `paths` (the walk for its extent happens on showing)."""
    from evalreg.batch.extent import input_sizes
    from evalreg.cli.options import project_config

    config = project_config()
    return Progress(label, lambda: input_sizes(paths, include, exclude, config), forced=forced)
