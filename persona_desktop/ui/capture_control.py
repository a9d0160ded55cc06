"""The capture switches behind the tray menu: on/off per kind, pause for a while.

The switch is the setting (`capture.screen_enabled`, `capture.speech_enabled`),
saved at once, so the choice survives a restart. So does a pause
(`capture.paused_until`): an owner who paused capture "until I resume" must not
find it running again after a restart. When the composition root attaches
a capture loop for a kind, the controller also starts, stops, pauses and resumes it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Protocol

from PySide6.QtCore import QObject, QTimer, Signal

from persona_desktop.config import Settings
from persona_desktop.errors import PersonaError
from persona_desktop.ports import Clock

log = logging.getLogger(__name__)

KINDS = ("screen", "speech")


class CaptureLoop(Protocol):
    """What a capture module offers the ui. All four calls return quickly."""

    def start(self) -> None: ...
    def stop(self) -> None: ...
    def pause(self) -> None: ...
    def resume(self) -> None: ...


class CaptureController(QObject):
    changed = Signal()
    failed = Signal(str)

    def __init__(
        self, settings: Settings, clock: Clock, save: Callable[[], None], parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self._settings = settings
        self._clock = clock
        self._save = save
        self._loops: dict[str, CaptureLoop] = {}
        self._running: set[str] = set()
        self.paused_until: datetime | None = None
        self.paused_indefinitely = False
        self.held_for = ""  # why the app holds capture (disk space); never saved, released by the app
        self._resume_timer = QTimer(self)
        self._resume_timer.setSingleShot(True)
        self._resume_timer.timeout.connect(self.resume)
        self._restore_pause()

    # --- wiring -------------------------------------------------------------------------

    def attach(self, kind: str, loop: CaptureLoop) -> None:
        """Give the controller the real loop of a kind; it starts now if switched on."""
        self._check(kind)
        self._loops[kind] = loop
        if self.is_enabled(kind) and not self.is_paused():
            self._start(kind)

    def attached(self, kind: str) -> bool:
        return kind in self._loops

    def loop(self, kind: str) -> CaptureLoop | None:
        """The loop attached for a kind, if any."""
        return self._loops.get(kind)

    # --- state --------------------------------------------------------------------------

    def is_enabled(self, kind: str) -> bool:
        self._check(kind)
        capture = self._settings.values.capture
        return capture.screen_enabled if kind == "screen" else capture.speech_enabled

    def is_paused(self) -> bool:
        return self.paused_indefinitely or self.paused_until is not None

    def any_enabled(self) -> bool:
        return any(self.is_enabled(k) for k in KINDS)

    def describe(self) -> str:
        on = [k for k in KINDS if self.is_enabled(k)]
        if not on:
            return "capture off"
        what = " and ".join(on)
        if self.held_for:
            return f"{what} capture paused: {self.held_for}"
        if self.paused_indefinitely:
            return f"{what} capture paused until you resume"
        if self.paused_until is not None:
            local = self.paused_until.astimezone()
            return f"{what} capture paused until {local:%H:%M}"
        return f"capturing {what}"

    # --- actions ------------------------------------------------------------------------

    def set_enabled(self, kind: str, on: bool) -> bool:
        """Switch a kind on or off; False when it could not start (it then stays off)."""
        self._check(kind)
        self._settings.set(f"capture.{kind}_enabled", on)
        started = True
        if on and not self.is_paused():
            started = self._start(kind)
            if not started:
                self._settings.set(f"capture.{kind}_enabled", False)
        elif not on:
            self._stop(kind)
        self._save()
        self.changed.emit()
        return started

    def pause(self, minutes: float | None) -> None:
        """Pause every capture for `minutes`, or until `resume()` when None."""
        if minutes is None:
            self.paused_indefinitely, self.paused_until = True, None
            self._resume_timer.stop()
            self._settings.set("capture.paused_until", "resume")
        else:
            self.paused_indefinitely = False
            self.paused_until = self._clock.now() + timedelta(minutes=minutes)
            self._resume_timer.start(int(minutes * 60_000))
            self._settings.set("capture.paused_until", self.paused_until.isoformat())
        self._save()
        for kind in list(self._running):
            self._call(kind, "pause")
        self.changed.emit()

    def hold(self, reason: str) -> None:
        """Pause capture for the app's own reason (the disk is full), apart from the owner's pause."""
        first = not self.held_for
        self.held_for = reason
        if first:
            for kind in list(self._running):
                self._call(kind, "pause")
            self.changed.emit()

    def release(self) -> None:
        """End the app's hold; capture resumes unless the owner paused it."""
        if not self.held_for:
            return
        self.held_for = ""
        if not self.is_paused():
            for kind in list(self._running):
                self._call(kind, "resume")
        self.changed.emit()

    def resume(self) -> None:
        self._resume_timer.stop()
        was_paused = self.is_paused()
        self.paused_until = None
        self.paused_indefinitely = False
        if self._settings.values.capture.paused_until:
            self._settings.set("capture.paused_until", "")
            self._save()
        for kind in KINDS:
            if not self.is_enabled(kind):
                continue
            if kind not in self._running:
                self._start(kind)
            elif not self.held_for:
                self._call(kind, "resume")
        if was_paused:
            self.changed.emit()

    def shutdown(self) -> None:
        self._resume_timer.stop()
        for kind in list(self._running):
            self._stop(kind)

    # --- internals ----------------------------------------------------------------------

    def _restore_pause(self) -> None:
        saved = self._settings.values.capture.paused_until
        if saved == "resume":
            self.paused_indefinitely = True
            return
        if not saved:
            return
        try:
            until: datetime | None = datetime.fromisoformat(saved)
        except ValueError:
            until = None
        if until is None or until.tzinfo is None:
            log.warning("capture.paused_until %r is not a time; capture stays paused until resumed", saved)
            self.paused_indefinitely = True  # unreadable: err on the side of not capturing
            return
        left = (until - self._clock.now()).total_seconds()
        if left > 0:
            self.paused_until = until
            self._resume_timer.start(int(left * 1000))
        else:
            self._settings.set("capture.paused_until", "")

    def _start(self, kind: str) -> bool:
        if kind not in self._loops or kind in self._running:
            return True
        if not self._call(kind, "start"):
            return False
        self._running.add(kind)
        if self.held_for:
            self._call(kind, "pause")
        return True

    def _stop(self, kind: str) -> None:
        if kind in self._running:
            self._running.discard(kind)
            self._call(kind, "stop")

    def _call(self, kind: str, action: str) -> bool:
        try:
            getattr(self._loops[kind], action)()
        except PersonaError as exc:
            log.warning("%s capture: %s", kind, exc)
            self.failed.emit(f"{kind.capitalize()} capture: {exc}")
            return False
        return True

    @staticmethod
    def _check(kind: str) -> None:
        if kind not in KINDS:
            raise ValueError(f"unknown capture kind {kind!r}")
