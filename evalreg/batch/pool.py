"""A pool of worker processes that notices when one dies, and says what it held.

Each worker has a pipe of its own for tasks and one for results, and works through its tasks in
the order it got them, so the parent knows at every moment which unit each worker is working on:
the oldest it holds. When a worker dies (the kernel's out-of-memory killer, `kill -9`,
`os._exit()`), the parent sees its process end, reports the unit it was working on as lost with
the reason (`worker process 1234 killed by signal 9 (SIGKILL)`), hands the units it had not
started to the others, and starts another worker in its place; the run goes on. Nothing is shared
between workers, so no lock can be left held by a dead one, and stopping the pool (at the end,
on an error, on SIGTERM) ends every worker within `STOP_GRACE` seconds whatever it is doing.
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import threading
from collections import deque
from collections.abc import Callable, Generator, Iterator
from multiprocessing.connection import Connection, wait
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from evalreg.errors import WorkerError

if TYPE_CHECKING:
    from multiprocessing.context import BaseContext
    from multiprocessing.process import BaseProcess

U = TypeVar("U")
R = TypeVar("R")

STOP_GRACE = 2.0
"""Seconds a worker has to end after SIGTERM when the pool stops early, before SIGKILL."""
START_FAILURES = 3
"""Workers that may die in a row before they are ready, before the run stops with an error."""

Lost = Callable[[U, str], R]
"""Makes the result of a unit whose worker died, from the unit and the reason."""


def reason(pid: int, exitcode: int | None) -> str:
    """Return why a worker ended, from its exit code (negative: the signal that killed it)."""
    if exitcode is not None and exitcode < 0:
        number = -exitcode
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = "an unknown signal"
        hint = "; out of memory?" if number == getattr(signal, "SIGKILL", -1) else ""
        return f"worker process {pid} killed by signal {number} ({name}{hint})"
    return f"worker process {pid} exited with code {exitcode}"


# -- in a worker -----------------------------------------------------------------------------------


_STOPS = tuple(getattr(signal, n) for n in ("SIGTERM", "SIGHUP") if hasattr(signal, n))
_MASKS = hasattr(signal, "pthread_sigmask")


def _serve(tasks: Connection, results: Connection, start: Callable[..., None], args: Any) -> None:
    """Run in a worker: set it up, then compute tasks in order until the parent says stop.

    The worker starts with SIGTERM and SIGHUP blocked (see `_Worker`): they end it at once from
    the moment they are unblocked here, never running the parent's handler in its place. A
    thread takes the tasks off the pipe as they come, so that the parent never waits to hand
    one out while this worker waits to hand back a result.
    """
    for signum in _STOPS:
        signal.signal(signum, signal.SIG_DFL)
    if _MASKS:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPS)
    try:
        start(*args)
    except Exception as err:  # a registry that cannot load, say: the parent says why
        with contextlib.suppress(OSError):
            results.send(("failed", f"{type(err).__name__}: {err}"))
        return
    taken: queue.SimpleQueue[Any] = queue.SimpleQueue()

    def take() -> None:
        while True:
            try:
                taken.put(tasks.recv())
            except (EOFError, OSError):
                taken.put(None)
                return

    threading.Thread(target=take, daemon=True).start()
    with contextlib.suppress(OSError):  # the parent is gone: nothing to say
        results.send(("ready", None))
        while (task := taken.get()) is not None:
            function, unit, more = task
            try:
                outcome = ("done", function(unit, *more))
            except Exception as err:  # a fault of evalreg itself: the parent raises it again
                outcome = ("error", err)
            results.send(outcome)


# -- in the parent ---------------------------------------------------------------------------------


class _Worker:
    """A worker process, its two pipes, and the numbers of the units it holds (oldest first)."""

    def __init__(self, context: BaseContext, start: Callable[..., None], args: Any) -> None:
        task_out, task_in = context.Pipe(duplex=False)
        result_out, result_in = context.Pipe(duplex=False)
        self.process: BaseProcess = context.Process(  # type: ignore[attr-defined]
            target=_serve, args=(task_out, result_in, start, args), daemon=True
        )
        # A forked worker must never run this process's SIGTERM handler (which stops the run:
        # it would go on as a copy of it): it starts with them blocked, until `_serve`.
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, _STOPS) if _MASKS else None
        try:
            self.process.start()
        finally:
            if blocked is not None:
                signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        task_out.close()
        result_in.close()
        self.tasks: Connection = task_in
        self.results: Connection = result_out
        self.held: deque[int] = deque()
        self.ready = False

    def close(self) -> None:
        for end in (self.tasks, self.results):
            with contextlib.suppress(OSError):
                end.close()


class Pool(Generic[U, R]):
    """`jobs` worker processes computing `function(unit, *args)` for units, results in order."""

    def __init__(
        self,
        context: BaseContext,
        jobs: int,
        start: Callable[..., None],
        start_args: tuple[Any, ...],
        window: int,
    ) -> None:
        self._context = context
        self._jobs = jobs
        self._start = start
        self._start_args = start_args
        self._window = window
        self._per_worker = max(1, window // jobs)
        self._workers: list[_Worker] = []
        self._failures = 0

    def _spawn(self) -> _Worker:
        worker = _Worker(self._context, self._start, self._start_args)
        self._workers.append(worker)
        return worker

    def imap(
        self,
        function: Callable[..., R],
        units: Iterator[U],
        args: tuple[Any, ...],
        lost: Lost[U, R],
    ) -> Generator[tuple[U, R], None, None]:
        """Yield each unit with its result, in the order of `units`.

        Units are taken from `units` as workers have room for them (`window` in all). A unit
        whose worker died gets `lost(unit, reason)` as its result.

        Raises:
            WorkerError: workers die before they are ready, `START_FAILURES` times in a row.
        """
        sent: dict[int, U] = {}  # handed out, result not yet yielded
        done: dict[int, R] = {}  # results not yet yielded
        again: deque[int] = deque()  # handed to a worker that died before starting them
        taken = given = 0  # units taken from `units`; results yielded
        more = True
        while True:
            while given in done:
                result = done.pop(given)
                yield sent.pop(given), result
                given += 1
            while len(self._workers) < self._jobs and (again or more):
                self._spawn()  # at the start, and in place of a worker that died
            for worker in sorted(self._workers, key=lambda w: len(w.held)):
                while len(worker.held) < self._per_worker and (again or more):
                    if again:
                        number = again.popleft()
                    else:
                        if len(sent) >= self._window:  # results waiting stay bounded too
                            break
                        unit = next(units, None)
                        if unit is None:
                            more = False
                            break
                        number, taken = taken, taken + 1
                        sent[number] = unit
                    worker.held.append(number)
                    self._send(worker, (function, sent[number], args))
            if not sent:
                return
            self._wait(done, again, sent, lost)

    def _send(self, worker: _Worker, task: Any) -> None:
        with contextlib.suppress(OSError):  # it died: `_wait` will tell
            worker.tasks.send(task)

    def _wait(
        self, done: dict[int, R], again: deque[int], sent: dict[int, U], lost: Lost[U, R]
    ) -> None:
        """Wait for results or deaths; file what came back, hand lost units to `lost`."""
        by_end: dict[Any, _Worker] = {}
        for worker in self._workers:
            by_end[worker.results] = by_end[worker.process.sentinel] = worker
        for end in wait(list(by_end)):
            worker = by_end[end]
            if worker not in self._workers:
                continue  # both of its ends were ready, and it died
            if end is worker.results:
                try:
                    kind, value = worker.results.recv()
                except (EOFError, OSError):
                    kind, value = "gone", None
                if kind == "ready":
                    worker.ready = True
                    self._failures = 0
                elif kind == "done":
                    done[worker.held.popleft()] = value
                elif kind == "error":
                    raise value
                elif kind == "failed":
                    raise WorkerError(f"a worker process cannot start: {value}")
                if kind != "gone":
                    continue
            self._bury(worker, done, again, sent, lost)

    def _bury(
        self,
        worker: _Worker,
        done: dict[int, R],
        again: deque[int],
        sent: dict[int, U],
        lost: Lost[U, R],
    ) -> None:
        """Handle a worker that ended: its current unit lost, the others handed out again."""
        with contextlib.suppress(EOFError, OSError):
            while worker.held and worker.results.poll():  # what it finished before it ended
                kind, value = worker.results.recv()
                if kind == "done":
                    done[worker.held.popleft()] = value
                elif kind == "ready":
                    worker.ready = True
                elif kind == "error":
                    raise value
        worker.process.join(STOP_GRACE)
        if worker.process.exitcode is None:  # its pipe broke, but it runs: end it
            worker.process.kill()
            worker.process.join()
        self._workers.remove(worker)
        worker.close()
        why = reason(worker.process.pid or 0, worker.process.exitcode)
        if not worker.ready:
            self._failures += 1
            if self._failures >= START_FAILURES:
                raise WorkerError(f"worker processes die as they start ({why}); try --jobs 1")
        if worker.held and worker.ready:
            number = worker.held.popleft()
            done[number] = lost(sent[number], why)
        again.extendleft(reversed(worker.held))

    def stop(self, *, finished: bool) -> None:
        """End every worker: those done with their work as they finish, the others at once."""
        for worker in self._workers:
            if finished:  # a worker waiting for work ends on this (its siblings, forked after
                with contextlib.suppress(OSError):  # it, hold its pipe open: no end of file)
                    worker.tasks.send(None)
            worker.close()
        if not finished:
            for worker in self._workers:
                if worker.process.pid is not None:
                    with contextlib.suppress(OSError):
                        os.kill(worker.process.pid, signal.SIGTERM)
        for worker in self._workers:
            worker.process.join(STOP_GRACE)
            if worker.process.exitcode is None:
                worker.process.kill()
                worker.process.join()
        self._workers.clear()
