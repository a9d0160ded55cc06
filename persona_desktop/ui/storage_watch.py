"""Watches the room the store takes and the disk it is on; tells the owner through the tray.

Every minute, off the GUI thread: under `storage.min_free_mb` free on the disk, capture
is held (paused without touching the owner's own pause) and resumes by itself once
there is room again; past 80 % of `storage.max_mb` the tray warns once; past 100 %
the oldest captures no fact cites are deleted (`enforce_budget`, journaled) and the
tray says how many. A store opened read-only (damaged) is measured, never trimmed; a
check that fails is told once, not every minute.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QObject, QTimer, Signal

from persona_desktop.services.storage_budget import (
    MB,
    WARN_AT,
    SpaceReport,
    TrimResult,
    enforce_budget,
    human,
    measure,
)
from persona_desktop.ui.context import UiContext
from persona_desktop.ui.memory_events import CAPTURED_DELETED
from persona_desktop.ui.worker import WorkQueue

CHECK_EVERY_MS = 60_000
RESUME_MARGIN = 1.1  # resume once free space is 10 % above the floor, so it does not flap


@dataclass(frozen=True, slots=True)
class _Check:
    report: SpaceReport
    trimmed: TrimResult | None


class StorageWatch(QObject):
    message = Signal(str)  # for the tray
    held_changed = Signal(bool)

    def __init__(
        self,
        ctx: UiContext,
        hold: Callable[[bool], None],
        parent: QObject | None = None,
        interval_ms: int = CHECK_EVERY_MS,
        trim: bool = True,
    ) -> None:
        super().__init__(parent)
        self._ctx = ctx
        self._trim = trim
        self._failed: str | None = None
        self._hold = hold
        self._work = WorkQueue(self, events=ctx.events, name="the storage check")
        self.held = False
        self.warned = False
        self.last: SpaceReport | None = None
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self.check)

    def start(self) -> None:
        self._timer.start()
        self.check()

    def stop(self) -> None:
        self._timer.stop()
        self._work.shutdown()

    def check(self) -> None:
        if self._work.busy():
            return  # the last check (a trim, maybe) is still running
        uow, data_dir, clock = self._ctx.uow, self._ctx.data_dir, self._ctx.clock
        budget = self._ctx.settings.values.storage.max_mb
        trim = self._trim

        def work() -> _Check:
            report = measure(uow, data_dir, budget)
            if report.fraction <= 1.0 or not trim:
                return _Check(report, None)
            trimmed = enforce_budget(uow, data_dir, budget, clock.now())
            return _Check(trimmed.after, trimmed)

        self._work.run(work, self._on_checked, self._on_failed)

    def _on_failed(self, exc: Exception) -> None:
        text = f"Storage check failed: {exc}"
        if text != self._failed:
            self._failed = text
            self.message.emit(text)

    def _on_checked(self, result: _Check) -> None:
        self._failed = None
        report = result.report
        self.last = report
        floor = self._ctx.settings.values.storage.min_free_mb * MB
        if not self.held and report.free_disk < floor:
            self._set_held(True)
            self.message.emit(
                f"Capture paused: only {human(report.free_disk)} free on the disk holding {self._ctx.data_dir} "
                f"(below {human(floor)}). It resumes by itself when there is room again."
            )
        elif self.held and report.free_disk >= floor * RESUME_MARGIN:
            self._set_held(False)
            self.message.emit(f"Capture resumed: {human(report.free_disk)} free on the disk again.")
        if result.trimmed is not None and result.trimmed.captures:
            t = result.trimmed
            self._ctx.events.announce(CAPTURED_DELETED.by(self))
            self.message.emit(
                f"Storage budget reached: the {t.captures} oldest capture(s) no fact cites were deleted "
                f"({t.fragments} lines, {t.media_files} crop/clip files; see the journal). "
                f"Now {report.fraction:.0%} of {human(report.budget)}."
            )
        elif result.trimmed is not None and result.trimmed.still_over:
            self.message.emit(
                f"Over the storage budget ({report.fraction:.0%} of {human(report.budget)}) and nothing "
                "uncited is left to delete: raise storage.max_mb or forget some sources."
            )
        if report.fraction >= WARN_AT and not self.warned:
            self.warned = True
            self.message.emit(
                f"Storage is at {report.fraction:.0%} of its budget ({human(report.used)} of "
                f"{human(report.budget)}). Past 100 % the oldest captures no fact cites are deleted."
            )
        elif report.fraction < WARN_AT * 0.95:
            self.warned = False

    def _set_held(self, on: bool) -> None:
        self.held = on
        self._hold(on)
        self.held_changed.emit(on)
