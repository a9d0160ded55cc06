"""The nightly scheduler: a QTimer tick, a time window, and the sleep cycle in the worker.

The cycle itself is the Qt-free generator of `services.sleep_cycle`; the app's one
worker (worker.py) iterates it, relays its progress and hands it the cancel flag. A
`deferred` or `skipped` outcome is retried on the next tick inside the window; a run
that finished (or that the owner cancelled) is not repeated the same night. A run that
read anything announces a memory change (memory_events.py) once it ended.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import date, datetime, time, timedelta

from PySide6.QtCore import QObject, QTimer, Signal

from persona_desktop.config import Settings
from persona_desktop.domain.model import RunStatus
from persona_desktop.errors import PersonaError
from persona_desktop.service_configs import sleep_config
from persona_desktop.services.sleep_cycle import Progress, RunOutcome, SleepCycle
from persona_desktop.ui.context import UiContext
from persona_desktop.ui.memory_events import MemoryChange
from persona_desktop.ui.worker import Worker, create_worker

log = logging.getLogger(__name__)

TICK_MS = 60_000
_RETRY = {RunStatus.DEFERRED, RunStatus.SKIPPED, RunStatus.FAILED}
_WROTE_NOTHING = {RunStatus.DEFERRED, RunStatus.SKIPPED, RunStatus.DISABLED}


def _hhmm(text: str) -> time:
    hours, minutes = text.split(":")
    return time(int(hours), int(minutes))


def in_window(now: time, start: time, end: time) -> bool:
    """Whether a local time falls in [start, end); a window may wrap past midnight."""
    if start == end:
        return True
    if start < end:
        return start <= now < end
    return now >= start or now < end


def night_of(now: datetime, start: time) -> date:
    """The date a window belongs to: times after midnight count for the night before."""
    shift = timedelta(hours=start.hour, minutes=start.minute)
    return (now - shift).date()


class SleepScheduler(QObject):
    started = Signal()
    progress = Signal(object)  # Progress
    finished = Signal(object)  # RunOutcome
    failed = Signal(str)
    idle = Signal()  # the worker thread is gone: `is_running()` is now False

    def __init__(
        self,
        ctx: UiContext,
        tick_ms: int = TICK_MS,
        now: Callable[[], datetime] | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._ctx = ctx
        self._now = now or (lambda: ctx.clock.now().astimezone())
        self.worker: Worker | None = None
        self.last_progress: Progress | None = None
        self.last_outcome: RunOutcome | None = None
        self._done_night: date | None = None
        self.timer = QTimer(self)
        self.timer.setInterval(tick_ms)
        self.timer.timeout.connect(self.tick)

    @property
    def settings(self) -> Settings:
        return self._ctx.settings

    def start(self) -> None:
        self.timer.start()

    def is_running(self) -> bool:
        return self.worker is not None and self.worker.is_running()

    def window(self) -> tuple[time, time]:
        sleep = self.settings.values.sleep
        return _hhmm(sleep.window_start), _hhmm(sleep.window_end)

    def tick(self) -> bool:
        """Start a run if it is time; returns whether one started."""
        if not self.settings.values.sleep.enabled or self.is_running():
            return False
        now = self._now()
        start, end = self.window()
        if not in_window(now.time(), start, end) or self._done_night == night_of(now, start):
            return False
        return self.run_now()

    def run_now(self, skip_quiet: bool = False) -> bool:
        """Start a run; `skip_quiet` for the owner's "run anyway" (the lease still applies)."""
        if self.is_running():
            return False
        cycle = SleepCycle(self._ctx.uow, self._ctx.llm, sleep_config(self.settings.values), self._ctx.clock)
        worker = create_worker(
            lambda cancelled: cycle.run(cancelled, skip_quiet=skip_quiet),
            self,
            "the sleep cycle",
            on_yielded=self._on_progress,
            on_returned=self._on_outcome,
            on_errored=self._on_failed,
            start=False,
        )
        worker.finished.connect(lambda: self._on_worker_finished(worker))
        self.worker = worker
        self.last_progress = None
        worker.start()
        self.started.emit()
        return True

    def cancel(self) -> None:
        if self.worker is not None:
            self.worker.quit()

    def _on_progress(self, event: Progress) -> None:
        self.last_progress = event
        self.progress.emit(event)

    def _on_outcome(self, outcome: RunOutcome) -> None:
        self.last_outcome = outcome
        if outcome.status not in _RETRY:
            start, _ = self.window()
            self._done_night = night_of(self._now(), start)
        if outcome.status not in _WROTE_NOTHING:
            applied = bool(outcome.counters.get("applied"))
            self._ctx.events.announce(MemoryChange(facts=applied, candidates=True, origin=self))
        self.finished.emit(outcome)

    def _on_failed(self, exc: PersonaError) -> None:
        # documents read before the failure stay committed: what they proposed is new
        self._ctx.events.announce(MemoryChange(candidates=True, origin=self))
        self.failed.emit(str(exc))

    def _on_worker_finished(self, worker: Worker) -> None:
        if self.worker is worker:
            self.worker = None
            self.last_progress = None
            self.idle.emit()

    def shutdown(self, wait_ms: int = 5000) -> bool:
        """Stop ticking, ask a running cycle to stop; True when no thread is left running.

        A cycle blocked in an LLM call may take until that call returns; every step is
        its own transaction, so leaving it behind at exit loses nothing stored.
        """
        self.timer.stop()
        worker = self.worker
        if worker is None:
            return True
        worker.quit()
        return worker.wait(wait_ms)
