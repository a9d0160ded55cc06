"""One worker for all long work off the GUI thread, after napari's `create_worker`.

`create_worker(work)` runs `work(cancelled)` on a worker thread. `work` returns its
result, or a generator: each value the generator yields is progress (`yielded`), the
value it returns is the result (`returned`). `quit()` asks the work to stop:
`cancelled()` turns True, and the work checks it between its own steps (the services'
generators take it as their cancel flag and return what they have; a step is never
cut off midway).

The owner's side gets every signal on the GUI thread, in order: `started`, `yielded`
..., then `returned` or `errored`, then `finished`. Errors are sorted one way:

- a `PersonaError` (the input's or the environment's fault, already one line) goes to
  `errored` as it is, for the window to show where the owner looks;
- anything else is a bug. Its traceback goes to the app's crash path, `sys.excepthook`
  (the error boundary logs it and shows the owner one line; under pytest-qt the test
  fails), and `errored` gets a `WorkCrashed`: a PersonaError naming only the
  exception's type, so that the window can put itself right and say what stopped.

`WorkQueue` runs a window's store work as workers, like Anki's collection ops:
writes one after another on one thread (two decisions never race), reads on a second
(a slow read never delays a decision; SQLite's WAL lets them run beside a write), the
higher priority first among those queued. A write that succeeded announces its
`MemoryChange` (memory_events.py), which every window follows.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Callable, Generator
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

from persona_desktop.errors import PersonaError
from persona_desktop.ui.memory_events import MemoryChange, MemoryEvents

log = logging.getLogger(__name__)

Cancelled = Callable[[], bool]
Work = Callable[[Cancelled], Any]
"""Runs on the worker thread; returns the result, or a generator of progress that returns it.
It must never touch a widget."""

OnDone = Callable[[Any], None]
OnError = Callable[[PersonaError], None]

_unfinished: set[Worker] = set()  # started, `finished` not yet delivered (for the leak check)
_own_threads: QThreadPool | None = None


class WorkCrashed(PersonaError):
    """A bug stopped a worker. The words name the exception's type only: its message may
    quote the owner's own text, and the traceback is in the log already."""

    def __init__(self, name: str, exc: BaseException) -> None:
        super().__init__(
            f"{name} stopped on an internal error ({type(exc).__name__}); the details are in the log"
        )
        self.exc_type = type(exc).__name__


def report_bug(exc: BaseException) -> None:
    """The app's crash path, on the GUI thread: the crash hook (crash_hook.py) logs the
    traceback through the error boundary and shows the owner one line."""
    sys.excepthook(type(exc), exc, exc.__traceback__)


def drain(gen: Generator[Any, None, Any], each: Callable[[Any], None]) -> Any:
    """Every value `gen` yields to `each`; what it returns."""
    while True:
        try:
            value = next(gen)
        except StopIteration as stop:
            return stop.value
        each(value)


class _Run(QRunnable):
    """Runs the work on a pool thread. What it learns goes out through the worker's private
    signals, which Qt queues to the GUI thread, where the worker lives."""

    def __init__(self, worker: Worker) -> None:
        super().__init__()
        self.setAutoDelete(True)
        self._worker = worker

    def run(self) -> None:
        w = self._worker
        try:
            try:
                w._began.emit()
                result = w._work(w.cancelled)
                if isinstance(result, Generator):
                    result = drain(result, w._progress.emit)
            except BaseException as exc:  # handed to the GUI thread, which sorts it
                w._raised.emit(exc)
            else:
                w._result.emit(result)
        except RuntimeError:
            pass  # the worker is gone (app exit): nobody is left to tell
        finally:
            w._ran.set()


class Worker(QObject):
    """One piece of long work on a worker thread, with progress, cancel, result and error."""

    started = Signal()
    yielded = Signal(object)
    returned = Signal(object)
    errored = Signal(object)  # a PersonaError; a bug arrives as WorkCrashed
    finished = Signal()  # after `returned` or `errored`

    # emitted on the worker thread, delivered on the GUI thread
    _began = Signal()
    _progress = Signal(object)
    _result = Signal(object)
    _raised = Signal(object)

    def __init__(self, work: Work, parent: QObject, name: str = "the background work") -> None:
        # Always owned by a parent: Qt, not Python's reference count, deletes it after `finished`.
        super().__init__(parent)
        self.name = name
        self._work = work
        self._cancel = threading.Event()
        self._ran = threading.Event()  # the work returned or raised on its thread
        self._queued = False
        self._done = False  # `finished` was delivered
        self._abandoned = False
        self._began.connect(self._on_began)
        self._progress.connect(self._on_progress)
        self._result.connect(self._on_result)
        self._raised.connect(self._on_raised)

    # --- the owner's side -------------------------------------------------------------

    def start(self, pool: QThreadPool | None = None, priority: int = 0) -> Worker:
        """Queue the work on `pool` (by default a thread of its own); a worker runs once."""
        if self._queued:
            raise RuntimeError(f"{self.name} was started already")
        self._queued = True
        _unfinished.add(self)
        (pool or _threads()).start(_Run(self), priority)
        return self

    def quit(self) -> None:
        """Ask the work to stop at its next check; it returns what it has."""
        self._cancel.set()

    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def is_running(self) -> bool:
        """Queued or running, and `finished` not yet delivered."""
        return self._queued and not self._done

    def ran(self) -> bool:
        """The work is over on its thread (its signals may still be on their way)."""
        return self._ran.is_set()

    def wait(self, msecs: int = -1) -> bool:
        """Block until the work is over on its thread (at once when it never started);
        False when `msecs` passed first."""
        if not self._queued:
            return True
        return self._ran.wait(None if msecs < 0 else msecs / 1000)

    def abandon(self) -> None:
        """Stop, and tell the owner nothing more (it is going away), `finished` included."""
        self._abandoned = True
        self.quit()

    def drop(self) -> None:
        """A queued worker that will never run (its pool was cleared): only `finished` comes."""
        self._abandoned = True
        self._ran.set()  # nothing is left to wait for
        self._finish(tell=True)

    # --- the GUI thread's side of the work's signals -----------------------------------

    def _on_began(self) -> None:
        if not self._abandoned:
            self.started.emit()

    def _on_progress(self, value: object) -> None:
        if not self._abandoned:
            self.yielded.emit(value)

    def _on_result(self, result: object) -> None:
        if not self._abandoned:
            self.returned.emit(result)
        self._finish()

    def _on_raised(self, exc: BaseException) -> None:
        if isinstance(exc, PersonaError):
            error = exc
        else:
            report_bug(exc)
            error = WorkCrashed(self.name, exc)
        if not self._abandoned:
            self.errored.emit(error)
        self._finish()

    def _finish(self, tell: bool = False) -> None:
        if self._done:
            return
        self._done = True
        if tell or not self._abandoned:
            self.finished.emit()
        _unfinished.discard(self)
        self.deleteLater()


def create_worker(
    work: Work,
    parent: QObject,
    name: str = "the background work",
    *,
    on_yielded: Callable[[Any], None] | None = None,
    on_returned: OnDone | None = None,
    on_errored: OnError | None = None,
    on_finished: Callable[[], None] | None = None,
    start: bool = True,
    pool: QThreadPool | None = None,
    priority: int = 0,
) -> Worker:
    """A worker for `work`, connected and (unless `start=False`) started, as napari's
    `create_worker(..., _connect=..., _start_thread=...)`."""
    worker = Worker(work, parent, name)
    for signal, slot in (
        (worker.yielded, on_yielded),
        (worker.returned, on_returned),
        (worker.errored, on_errored),
        (worker.finished, on_finished),
    ):
        if slot is not None:
            signal.connect(slot)
    if start:
        worker.start(pool, priority)
    return worker


def _threads() -> QThreadPool:
    """Threads for workers that run beside everything else (a chat answer, a sleep cycle)."""
    global _own_threads
    if _own_threads is None:
        _own_threads = QThreadPool()
        _own_threads.setMaxThreadCount(64)  # each such worker gets a thread at once
        _own_threads.setExpiryTimeout(0)  # and gives it back when its work ends
    return _own_threads


def unfinished_workers() -> list[Worker]:
    """Workers whose work has not ended on its thread yet (the test suite's leak check)."""
    return [w for w in _unfinished if not w.ran()]


def _lane(parent: QObject) -> QThreadPool:
    pool = QThreadPool(parent)
    pool.setMaxThreadCount(1)  # in priority order; one GIL anyway
    pool.setExpiryTimeout(2000)
    return pool


class WorkQueue(QObject):
    """The store work of one window (or of the app), on two lanes of one thread each."""

    idle = Signal()

    def __init__(
        self,
        parent: QObject,
        on_error: OnError | None = None,
        events: MemoryEvents | None = None,
        name: str = "the store work",
    ) -> None:
        super().__init__(parent)
        self._writes = _lane(self)
        self._reads = _lane(self)
        self._workers: set[Worker] = set()
        self._default_error = on_error
        self._events = events
        self._name = name
        self._closed = False

    def run(
        self,
        fn: Callable[[], Any],
        on_done: OnDone | None = None,
        on_error: OnError | None = None,
        priority: int = 0,
        read: bool = False,
        change: MemoryChange | None = None,
    ) -> Worker | None:
        """Queue `fn`; a higher `priority` goes before queued lower ones (never before a running one).

        `read=True` promises that `fn` only reads: it may run beside other reads and a write,
        so its result can be older than a write queued after it (callers tag results).
        `change`: what `fn` writes; announced once it succeeded, on behalf of this queue's parent.
        """
        if self._closed:
            return None
        worker = Worker(lambda _cancelled: fn(), self, self._name)
        self._workers.add(worker)
        worker.returned.connect(lambda result: self._done(result, on_done, change))
        worker.errored.connect(lambda exc: self._failed(exc, on_error))
        worker.finished.connect(lambda: self._finished(worker))
        return worker.start(self._reads if read else self._writes, priority)

    def _done(self, result: Any, on_done: OnDone | None, change: MemoryChange | None) -> None:
        if change is not None and self._events is not None:
            # announced even when the window closed meanwhile: the write happened
            self._events.announce(change.by(self.parent()))
        if on_done is not None and not self._closed:
            on_done(result)

    def _failed(self, exc: PersonaError, on_error: OnError | None) -> None:
        if self._closed:
            return
        handler = on_error or self._default_error
        if handler is not None:
            handler(exc)
        elif not isinstance(exc, WorkCrashed):  # a bug was reported already
            log.warning("%s", exc)

    def _finished(self, worker: Worker) -> None:
        self._workers.discard(worker)
        if not self._workers:
            self.idle.emit()

    def busy(self) -> bool:
        return bool(self._workers)

    def active_threads(self) -> int:
        return int(self._writes.activeThreadCount() + self._reads.activeThreadCount())

    def wait(self, msecs: int = -1) -> bool:
        """Block until queued work ran (its callbacks still need the event loop)."""
        return self._writes.waitForDone(msecs) and self._reads.waitForDone(msecs)

    def shutdown(self) -> None:
        """Drop what is queued and every callback, finish the work in flight, let the threads exit."""
        self._closed = True
        for pool in (self._writes, self._reads):
            pool.clear()
            pool.waitForDone(-1)
            pool.setExpiryTimeout(0)
        for worker in list(self._workers):
            if worker.ran():
                worker.abandon()  # its result is on the way to a window that is gone
            else:
                worker.drop()  # cleared from its pool: it never runs
        self._workers.clear()
