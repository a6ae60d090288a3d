"""Stopping a run on SIGTERM or SIGHUP as on Ctrl-C: cleanly, in the parent and in its workers.

A termination signal becomes an exception (`Terminated`) in the main thread, so that every write
in progress is abandoned (its temporary file removed), a pool of workers is stopped, and the
caller decides what to print and how to exit. Workers ignore Ctrl-C (the parent, which gets it
too, stops them) and end at once on SIGTERM, the signal a pool stops them with: no Python code
runs then, so none can print a traceback or keep a worker waiting for work that never comes.
What a worker was writing is a temporary file with its process id, removed by the parent once
the workers are gone (`writers.leftovers`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator
from types import FrameType
from typing import Any

SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))
"""The signals handled like Ctrl-C."""


class Terminated(SystemExit):
    """Raised in the main thread when the process gets a termination signal.

    A `SystemExit` whose code is 128 + the signal number, as a shell reports a process killed by
    it: a worker that gets one leaves without a traceback.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(128 + signum)
        self.signum = signum

    @property
    def name(self) -> str:
        """Return the signal's name (`SIGTERM`)."""
        return signal.Signals(self.signum).name


def _raise(signum: int, frame: FrameType | None) -> None:
    raise Terminated(signum)


@contextlib.contextmanager
def stop_on_signals() -> Iterator[None]:
    """Raise `Terminated` in the main thread on SIGTERM or SIGHUP, within the block."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous: dict[int, Any] = {}
    for signum in SIGNALS:
        previous[signum] = signal.signal(signum, _raise)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


_prctl: Any = None


def prepare_workers() -> None:
    """Load, in the parent, what `quiet_worker` needs, so that a forked worker loads nothing."""
    global _prctl
    if _prctl is None and sys.platform.startswith("linux"):
        with contextlib.suppress(Exception):
            import ctypes

            _prctl = ctypes.CDLL(None, use_errno=True).prctl


def quiet_worker() -> None:
    """Set up a worker process: Ctrl-C ignored, SIGTERM and SIGHUP end it at once.

    On Linux the worker also gets SIGTERM when its parent dies (`kill -9`), rather than waiting
    for work forever (`prepare_workers` must have run in the parent).
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for signum in SIGNALS:
        signal.signal(signum, signal.SIG_DFL)
    if _prctl is not None:
        parent = os.getppid()
        _prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG
        if os.getppid() != parent:  # the parent died before the call
            os.kill(os.getpid(), signal.SIGTERM)
