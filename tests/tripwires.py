"""What a test may not leave behind or log unexpectedly, after napari's and qutebrowser's suites.

`LeakWatch` (napari's `_dangling_qthreads`, `_dangling_qtimers`, widget leak check)
records, while a Qt test runs, every QThread, QThreadPool job, Python thread and QTimer
the app starts, and the top-level widgets there were before; `leaks()` names what is
still running or open once the test and its fixtures are done: a thread still running,
an app worker not finished, an active QTimer owned by one of the app's objects (or a
single-shot timer of the app's that has not fired), a new top-level widget left open.

`LogTripwire` (qutebrowser's `logfail`) collects every record of WARNING and above
that the app logs; a test fails on any it did not ask for (the `logged_warnings`
fixture in conftest.py).

The fixtures that use both are in conftest.py.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

APP = "persona_desktop"
GRACE_S = 5.0
"""How long a thread that is ending may take once the test is over: the owners joined or
waited already, only the pools' own bookkeeping is left; a real leak runs far longer."""


def _caller(depth: int = 2) -> str:
    """The module and line that called the patched function."""
    frame = sys._getframe(depth)
    return f"{frame.f_globals.get('__name__', '?')}:{frame.f_lineno}"


def _from_app(place: str) -> bool:
    return place.startswith(APP + ".") or place.startswith(APP + ":")


def _owned_by_app(obj: Any) -> bool:
    """Whether the object, or one of its parents, is one of the app's own QObjects."""
    while obj is not None:
        if type(obj).__module__.startswith(APP):
            return True
        obj = obj.parent()
    return False


def _alive(obj: Any) -> bool:
    from shiboken6 import isValid

    return obj is not None and isValid(obj)


@dataclass
class LeakWatch:
    timers: list[tuple[weakref.ref[Any], str]] = field(default_factory=list)
    single_shots: list[tuple[list[bool], str]] = field(default_factory=list)
    qthreads: list[tuple[weakref.ref[Any], str]] = field(default_factory=list)
    pools: list[tuple[weakref.ref[Any], str]] = field(default_factory=list)
    threads: list[tuple[threading.Thread, str]] = field(default_factory=list)
    widgets_before: set[int] = field(default_factory=set)

    @contextmanager
    def watching(self) -> Iterator[LeakWatch]:
        from PySide6.QtCore import QThread, QThreadPool, QTimer
        from PySide6.QtWidgets import QApplication

        self.widgets_before = {id(w) for w in QApplication.topLevelWidgets()}
        patches: list[tuple[Any, str, Any]] = []

        def patch(owner: Any, name: str, value: Any) -> None:
            patches.append((owner, name, owner.__dict__[name]))
            setattr(owner, name, value)

        timer_start, qthread_start, pool_start = QTimer.start, QThread.start, QThreadPool.start
        thread_start, single_shot = threading.Thread.start, QTimer.singleShot

        def start_timer(timer: Any, *args: Any) -> None:
            self.timers.append((weakref.ref(timer), _caller()))
            timer_start(timer, *args)

        def start_qthread(thread: Any, *args: Any) -> None:
            self.qthreads.append((weakref.ref(thread), _caller()))
            qthread_start(thread, *args)

        def start_in_pool(pool: Any, *args: Any) -> None:
            self.pools.append((weakref.ref(pool), _caller()))
            pool_start(pool, *args)

        def start_thread(thread: threading.Thread) -> None:
            place = _caller()
            if _from_app(place):
                self.threads.append((thread, place))
            thread_start(thread)

        def shot(msec: int, *args: Any) -> None:
            place = _caller()
            if not _from_app(place) or not args or not callable(args[-1]):
                single_shot(msec, *args)
                return
            fired = [False]
            target = args[-1]

            def fire(*a: Any) -> Any:
                fired[0] = True
                return target(*a)

            self.single_shots.append((fired, place))
            single_shot(msec, *args[:-1], fire)

        patch(QTimer, "start", start_timer)
        patch(QThread, "start", start_qthread)
        patch(QThreadPool, "start", start_in_pool)
        patch(threading.Thread, "start", start_thread)
        patch(QTimer, "singleShot", staticmethod(shot))
        try:
            yield self
        finally:
            for owner, name, original in reversed(patches):
                setattr(owner, name, original)

    def leaks(self) -> list[str]:
        from PySide6.QtWidgets import QApplication

        from persona_desktop.ui.worker import unfinished_workers

        found = []
        for ref, place in self.qthreads:
            thread = ref()
            if _alive(thread) and thread.isRunning():
                found.append(f"a QThread started at {place} is still running")
        for ref, place in self.pools:
            pool = ref()
            if _alive(pool) and pool.activeThreadCount():
                found.append(f"a thread pool used at {place} still runs {pool.activeThreadCount()} job(s)")
        found += [f"the app's worker for {w.name} has not finished" for w in unfinished_workers()]
        found += [
            f"a thread started at {place} ({t.name}) is still running"
            for t, place in self.threads
            if t.is_alive()
        ]
        for ref, place in self.timers:
            timer = ref()
            if _alive(timer) and timer.isActive() and (_owned_by_app(timer) or _from_app(place)):
                owner = timer.parent()
                whose = f" of {type(owner).__name__}" if owner is not None else ""
                found.append(f"a QTimer{whose} started at {place} is still active")
        found += [
            f"a single-shot timer set at {place} has not fired"
            for fired, place in self.single_shots
            if not fired[0]
        ]
        for w in QApplication.topLevelWidgets():
            if id(w) not in self.widgets_before and w.isVisible():
                found.append(f"a top-level {type(w).__name__} ({w.windowTitle()!r}) was left open")
        return found

    def settle(self) -> list[str]:
        """The leaks left once pending events ran and ending threads had `GRACE_S` to end."""
        from PySide6.QtCore import QCoreApplication, QEvent

        deadline = time.monotonic() + GRACE_S
        while True:
            QCoreApplication.processEvents()
            QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
            found = self.leaks()
            if not found or time.monotonic() > deadline:
                return found
            threading.Event().wait(0.02)  # poll the condition; the threads need the CPU

    def clean_up(self) -> None:
        """After a failure: close what was left open and stop the app's timers, for the next test."""
        from PySide6.QtWidgets import QApplication

        for ref, _place in self.timers:
            timer = ref()
            if _alive(timer):
                timer.stop()
        for w in QApplication.topLevelWidgets():
            if id(w) not in self.widgets_before and w.isVisible():
                w.close()


class LogTripwire(logging.Handler):
    """Collects the app's records of WARNING and above, from any thread."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def describe(self) -> str:
        return "\n".join(f"  {r.levelname} {r.name}: {r.getMessage()}" for r in self.records)

    @contextmanager
    def attached(self, logger: str = APP) -> Iterator[LogTripwire]:
        target = logging.getLogger(logger)
        target.addHandler(self)
        try:
            yield self
        finally:
            target.removeHandler(self)
