"""Store work off the GUI thread, results back on the GUI thread.

Like Anki's `CollectionOp`/`QueryOp`: `ops.run(fn, on_done, on_error)` calls `fn()` on
a worker thread and `on_done(result)` (or `on_error(exc)` for a PersonaError) on the
GUI thread. `fn` must never touch a widget. Writes run one after another on one
thread, so two decisions never race; reads (`read=True`) use a second thread, so
a slow read never delays a decision (SQLite's WAL lets readers run beside a writer).
The sleep cycle's own worker is separate; BEGIN IMMEDIATE queues writers.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThread, QThreadPool, Signal

from persona_desktop.errors import PersonaError

log = logging.getLogger(__name__)

OnDone = Callable[[Any], None]
OnError = Callable[[PersonaError], None]


class _Relay(QObject):
    """Lives on the GUI thread; the worker emits, Qt queues the slot to the GUI thread."""

    done = Signal(object)
    failed = Signal(object)


class _Op(QRunnable):
    def __init__(self, fn: Callable[[], Any], relay: _Relay) -> None:
        super().__init__()
        self.setAutoDelete(True)
        self._fn = fn
        self._relay = relay

    def run(self) -> None:
        try:
            try:
                result = self._fn()
            except BaseException as exc:  # handed to the GUI thread, which decides
                self._relay.failed.emit(exc)
                return
            self._relay.done.emit(result)
        except RuntimeError:
            pass  # the relay's window is gone (app exit): nobody is left to tell


class Ops(QObject):
    """The background runner of one window or of the app."""

    idle = Signal()

    def __init__(self, parent: QObject | None = None, on_error: OnError | None = None) -> None:
        super().__init__(parent)
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)
        self._pool.setExpiryTimeout(2000)
        self._read_pool = QThreadPool(self)
        self._read_pool.setMaxThreadCount(1)  # reads in priority order; one GIL anyway
        self._read_pool.setExpiryTimeout(2000)
        self._relays: set[_Relay] = set()
        self._default_error = on_error
        self._closed = False

    def run(
        self,
        fn: Callable[[], Any],
        on_done: OnDone | None = None,
        on_error: OnError | None = None,
        priority: int = 0,
        read: bool = False,
    ) -> None:
        """Queue `fn`; a higher `priority` goes before queued lower ones (never before a running one).

        `read=True` promises that `fn` only reads: it may run beside other reads and a write,
        so its result can be older than a write queued after it (callers tag results).
        """
        if self._closed:
            return
        relay = _Relay()
        self._relays.add(relay)

        def finish() -> None:
            self._relays.discard(relay)
            relay.deleteLater()
            if not self._relays:
                self.idle.emit()

        def done(result: Any) -> None:
            finish()
            if on_done is not None and not self._closed:
                on_done(result)

        def failed(exc: BaseException) -> None:
            finish()
            if self._closed:
                return
            if isinstance(exc, PersonaError):
                handler = on_error or self._default_error
                if handler is not None:
                    handler(exc)
                    return
                log.warning("%s", exc)
                return
            raise exc  # a bug: the GUI thread's excepthook (or pytest-qt) reports it

        relay.done.connect(done)
        relay.failed.connect(failed)
        (self._read_pool if read else self._pool).start(_Op(fn, relay), priority)

    def busy(self) -> bool:
        return bool(self._relays)

    def active_threads(self) -> int:
        return int(self._pool.activeThreadCount() + self._read_pool.activeThreadCount())

    def wait(self, msecs: int = -1) -> bool:
        """Block until queued ops ran (their callbacks still need the event loop)."""
        return self._pool.waitForDone(msecs) and self._read_pool.waitForDone(msecs)

    def shutdown(self) -> None:
        """Drop callbacks, finish the op in flight, and let the worker thread exit."""
        self._closed = True
        for pool in (self._pool, self._read_pool):
            pool.clear()
            pool.waitForDone(-1)
            pool.setExpiryTimeout(0)
        self._relays.clear()  # their queued results are dropped: nobody is left to show them


class CancellableThread(QThread):
    """A worker thread with a cancel flag its long work checks between steps."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._cancel = False

    def cancel(self) -> None:
        self._cancel = True

    def cancelled(self) -> bool:
        return self._cancel
