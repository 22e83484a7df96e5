"""Qt adapters for the core's long jobs: run off the UI thread, report progress, honour Cancel.

A :class:`Job` runs one core call in a ``QThreadPool``. The core sees plain callables (``progress(label,
fraction)``, ``log(line)``) and a :class:`~gpusetup.cancel.CancelToken`; the job turns them into Qt signals,
which Qt delivers to the UI thread as queued calls. Progress and log lines are coalesced (at most one
progress update per ``interval`` and log lines in batches) so a chatty core cannot flood the event loop.
The page that starts a job keeps a reference to it until it finishes (a collected signal holder loses
its signals).
"""

from __future__ import annotations

import logging
import sys
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, QTimer, Signal

from gpusetup.cancel import Cancelled, CancelToken
from gpusetup.gui.i18n import current_language
from gpusetup.messages import render
from gpusetup.model import Message

log = logging.getLogger("gpusetup.gui.workers")

JobFn = Callable[["JobContext"], Any]
START_DELAY_MS = 40


class JobSignals(QObject):
    progress = Signal(str, float)  # label, fraction (-1 when unknown)
    log = Signal(str)  # one or more lines joined by "\n"
    finished = Signal(object)  # the core call's return value
    failed = Signal(str, object)  # plain message, the exception (tracebacks go to the log file)
    cancelled = Signal()
    told = Signal(object)  # a Message the page needs as data, not as a progress label (JobContext.tell)
    done = Signal()  # always last, whatever happened


class JobContext:
    """What the job body receives: callbacks to hand to the core, and the cancel token."""

    def __init__(self, signals: JobSignals, token: CancelToken, interval: float) -> None:
        self._signals = signals
        self.cancel = token
        self._interval = interval
        self._lock = threading.Lock()
        self._last_progress = 0.0
        self._last_label = ""
        self._last_log = 0.0
        self._pending_lines: list[str] = []

    def progress(self, label: str | Message, fraction: float | None = None) -> None:
        """Core progress callback (``Progress``): a new label and the final 1.0 always get through; repeated
        updates of the same label are rate-limited. A label said as data (the installer's Message) is worded
        here, once, in the interface's language: no page parses the core's words."""
        now = time.monotonic()
        frac = -1.0 if fraction is None else max(0.0, min(1.0, float(fraction)))
        label = render(label, current_language()) if isinstance(label, Message) else str(label)
        if frac >= 1.0 or label != self._last_label or now - self._last_progress >= self._interval:
            self._last_progress = now
            self._last_label = label
            self._signals.progress.emit(label, frac)

    def tell(self, message: Message) -> None:
        """Hand the page a message as data, never dropped or coalesced (what the user must keep seeing, such
        as the one-time password of a Secure Boot key enrolment)."""
        self._signals.told.emit(message)

    def log(self, line: str) -> None:
        """Core log callback: lines are batched and delivered together."""
        with self._lock:
            self._pending_lines.append(str(line).rstrip("\n"))
            now = time.monotonic()
            if now - self._last_log < self._interval:
                return
            self._last_log = now
            lines, self._pending_lines = self._pending_lines, []
        self._signals.log.emit("\n".join(lines))

    def flush(self) -> None:
        with self._lock:
            lines, self._pending_lines = self._pending_lines, []
        if lines:
            self._signals.log.emit("\n".join(lines))


class Job(QRunnable):
    """One core call on a pool thread. Connect to ``job.signals`` before :meth:`start`."""

    def __init__(self, fn: JobFn, name: str = "job", interval: float = 0.05) -> None:
        super().__init__()
        self.setAutoDelete(False)  # Python owns it; the page keeps the reference
        self.fn = fn
        self.name = name
        self.signals = JobSignals()
        self.token = CancelToken()
        self.context = JobContext(self.signals, self.token, interval)
        self.running = False
        self.result: Any = None
        self.error: str | None = None
        self.exception: BaseException | None = None
        self.was_cancelled = False

    def start(self, pool: QThreadPool, defer: bool = True) -> Job:
        """Queue the job; ``defer`` starts it a moment later, once the UI has built and painted the page,
        so the worker does not compete for the GIL meanwhile."""
        self.running = True
        if defer:
            # after the page is laid out and painted: every virtual call on a Python widget needs the GIL,
            # and a busy worker would make each one wait (benchmarks/gui_responsiveness.py)
            QTimer.singleShot(START_DELAY_MS, lambda: self._start_now(pool))
        else:
            pool.start(self)
        return self

    def _start_now(self, pool: QThreadPool) -> None:
        if self.token.cancelled:  # cancelled before it began: never run it
            self.running = False
            self.was_cancelled = True
            self.signals.cancelled.emit()
            self.signals.done.emit()
            return
        pool.start(self)

    def cancel(self) -> None:
        self.token.cancel()

    def run(self) -> None:  # pool thread
        t0 = time.perf_counter()
        log.info("job %s started", self.name)
        try:
            result = self.fn(self.context)
        except Cancelled:
            log.info("job %s cancelled after %.1f s", self.name, time.perf_counter() - t0)
            self.context.flush()
            self.was_cancelled = True
            self.running = False
            self.signals.cancelled.emit()
        except Exception as exc:  # noqa: BLE001 - every failure is shown to the user, never lost
            self.context.flush()
            tb = traceback.format_exc()
            if type(exc).__name__ == "Unavailable":
                log.info("job %s: %s", self.name, exc)
            else:
                log.error("job %s failed: %s", self.name, tb)
            self.error = _plain(exc)
            self.running = False
            self.exception = exc
            self.signals.failed.emit(self.error, exc)
        else:
            log.info("job %s finished in %.1f s", self.name, time.perf_counter() - t0)
            self.context.flush()
            self.result = result
            self.running = False
            if self.token.cancelled:
                self.was_cancelled = True
            self.signals.finished.emit(result)
        self.signals.done.emit()


def _plain(exc: BaseException) -> str:
    text = str(exc).strip()
    return text if text else type(exc).__name__


def make_pool(max_threads: int = 4) -> QThreadPool:
    """The wizard's pool. Also shortens the GIL switch interval (5 ms -> 1 ms): every Qt call from the UI
    thread gives the GIL up and must get it back from a busy worker, and at 5 ms a page with a few dozen
    widget calls would stall for hundreds of milliseconds (measured by benchmarks/gui_responsiveness.py)."""
    if sys.getswitchinterval() > 0.001:
        sys.setswitchinterval(0.001)
    pool = QThreadPool()
    pool.setMaxThreadCount(max_threads)
    return pool
