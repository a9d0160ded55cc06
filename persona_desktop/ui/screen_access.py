"""Screen capture on Wayland desktops, in the ui: the focused "Enable screen capture" window,
the tray's "Capture this screen now", and what Settings says works on this desktop.

The desktop asks the owner whether Persona Desktop may take screenshots, and GNOME asks only
an app whose window has the focus. So on Wayland, switching screen capture on first opens
this window: one screenshot is taken from it (a probe, never stored), which gets the desktop's
question answered; periodic or on-demand capture starts after that. A refusal (the portal's
answer 2) switches capture off and says how to allow it again ("Ask the desktop again"
forgets the refusal in the desktop's permission store).

The composition root hands in the work as callables (`ScreenHooks`): the ui never builds a
grabber itself. Every hook runs on a worker thread.
"""

from __future__ import annotations

import html
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QCloseEvent
from PySide6.QtWidgets import (
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from persona_desktop.capture.screen_desktop import Desktop, ScreenSupport, Session
from persona_desktop.errors import CapturePermissionError, PersonaError
from persona_desktop.ui.capture_control import CaptureController, CaptureLoop
from persona_desktop.ui.context import UiContext
from persona_desktop.ui.memory_events import CAPTURED
from persona_desktop.ui.window_setup import prepare_window
from persona_desktop.ui.worker import WorkQueue

log = logging.getLogger(__name__)

CONFIRMED = "capture.screen_confirmed"


ONCE_RETRY_MS = 1000  # "Capture this screen now" while something of the app's own is in front
ONCE_TRIES = 20  # longer than one of its notifications stays (own_windows.NOTIFICATION_SECONDS)


class Summary(Protocol):
    @property
    def covered(self) -> bool:
        """Nothing was read: a window or notification of the app's own was in front."""
        ...

    def summary(self) -> str: ...


@dataclass
class ScreenHooks:
    support: Callable[[], ScreenSupport]
    probe: Callable[[], str]  # one screenshot, not stored; raises CapturePermissionError on refusal
    capture_once: Callable[[], Summary]  # one screenshot read and stored now
    capture_now: Callable[[], bool]  # (GUI thread) ask the running loop to capture now; False when none runs
    forget_refusal: Callable[[], list[str]]  # app ids whose stored answer was forgotten
    install_shortcut: Callable[[], str] | None = None  # GNOME: add the keyboard shortcut; its keys
    load: Callable[[], None] | None = None
    """Imports what `probe` and `capture_once` need; called on the GUI thread before either
    goes to a worker, as the Diagnoser is (a first import on a worker while the GUI thread
    imports is what broke a frozen build, see ui/context.py)."""


class ScreenAccess(QObject):
    """The owner's way to screen capture on this desktop; one per app."""

    notified = Signal(str, str)  # title, message
    changed = Signal()

    def __init__(self, ctx: UiContext, capture: CaptureController, hooks: ScreenHooks,
                 parent: QObject | None = None) -> None:  # fmt: skip
        super().__init__(parent)
        self._ctx = ctx
        self.capture = capture
        self.hooks = hooks
        self.work = WorkQueue(self, on_error=self._on_error, events=ctx.events, name="screen capture")
        self.window: EnableScreenWindow | None = None
        self.last_reason: str | None = None  # why periodic capture is off, from the last start
        self._after_enable: Callable[[], None] | None = None
        self.capture_now_action = QAction("Capture this screen now", self)
        self.capture_now_action.triggered.connect(self.capture_now)
        self._once_again = QTimer(self, singleShot=True, interval=ONCE_RETRY_MS)
        self._once_again.timeout.connect(self._capture_once)
        self._once_tries = 0

    # --- what works -------------------------------------------------------------------

    def support(self) -> ScreenSupport:
        return self.hooks.support()

    def needs_enable(self) -> bool:
        """On Wayland, until the desktop allowed a screenshot taken from the Enable window."""
        wayland = self.support().desktop.session is Session.WAYLAND
        return wayland and not self._ctx.settings.values.capture.screen_confirmed

    def describe(self) -> str:
        text = self.support().what_works()
        if self.last_reason:
            text += f" Last start: periodic capture was off: {self.last_reason}."
        return text

    # --- the Enable window ------------------------------------------------------------

    def open_enable_window(self, then: Callable[[], None] | None = None) -> EnableScreenWindow:
        """Show (and focus) the window; `then` runs once the desktop allowed screenshots."""
        self._after_enable = then
        if self.window is None:
            self.window = EnableScreenWindow(self)
        self.window.reset(self.support())
        self.window.show()
        self.window.raise_()
        self.window.activateWindow()
        return self.window

    def take_first_screenshot(self) -> None:
        assert self.window is not None
        self.window.set_busy(
            "Waiting for the desktop... (it may ask you whether Persona Desktop may take screenshots)"
        )
        self._load()
        self.work.run(self.hooks.probe, self._on_allowed, self._on_probe_failed)

    def _load(self) -> None:
        if self.hooks.load is not None:
            self.hooks.load()

    def _on_allowed(self, what: str) -> None:
        self._ctx.settings.set(CONFIRMED, True)
        self._ctx.save_settings()
        then, self._after_enable = self._after_enable, None
        if self.window is not None:
            self.window.done = True
            self.window.close()
        self.notified.emit(
            "Screen capture", f"The desktop allows screenshots ({what}). {self.support().what_works()}"
        )
        if then is not None:
            then()
        self.changed.emit()

    def _on_probe_failed(self, exc: PersonaError) -> None:
        refused = isinstance(exc, CapturePermissionError)
        if refused:
            self.on_refused()
        elif self.window is not None:
            self.window.show_problem(str(exc), refused=False)
        self._switch_off()

    def cancel_enable(self) -> None:
        """The window was closed without the desktop's yes: capture stays off."""
        self._after_enable = None
        self._switch_off()

    def _switch_off(self) -> None:
        if self.capture.is_enabled("screen"):
            self.capture.set_enabled("screen", False)

    def on_refused(self, message: str | None = None) -> None:
        """The desktop refused (here or in the running loop): forget the yes, say how to allow it."""
        self._ctx.settings.set(CONFIRMED, False)
        self._ctx.save_settings()
        text = message or (
            "The desktop refused Persona Desktop's screenshot, so screen capture is off. To allow it "
            "again, press 'Ask the desktop again' (Settings > Capture, or this window), then turn "
            "screen capture on and answer Allow."
        )
        if self.window is not None and self.window.isVisible():
            self.window.show_problem(text, refused=True)
        self.notified.emit("Screen capture", text)
        self.changed.emit()

    def ask_again(self) -> None:
        self.work.run(self.hooks.forget_refusal, self._on_forgotten)

    def _on_forgotten(self, apps: list[str]) -> None:
        what = "forgot its earlier answer" if apps else "had no stored answer"
        text = f"The desktop {what}: it asks again at the next screenshot taken from a window."
        if self.window is not None and self.window.isVisible():
            self.window.status.setText(text)
        self.notified.emit("Screen capture", text)

    # --- the keyboard shortcut (GNOME) -------------------------------------------------

    def can_add_shortcut(self) -> bool:
        return self.hooks.install_shortcut is not None and self.support().desktop.desktop is Desktop.GNOME

    def add_shortcut(self) -> None:
        if self.hooks.install_shortcut is not None:
            self.work.run(self.hooks.install_shortcut, self._on_shortcut)

    def _on_shortcut(self, keys: str) -> None:
        self.notified.emit(
            "Screen capture",
            f"{keys} now captures this screen (GNOME Settings > Keyboard > Custom Shortcuts lists it).",
        )

    # --- capture on demand ------------------------------------------------------------

    def capture_now(self) -> None:
        """The tray's "Capture this screen now": one screenshot, read and stored."""
        if self.needs_enable():
            self.open_enable_window(then=self.capture_now)
            return
        if self.hooks.capture_now():
            return  # the running loop takes it; it reports like any capture
        if self._once_again.isActive():
            return  # already waiting for the app's own notification to go
        self._once_tries = 0
        self._capture_once()

    def _capture_once(self) -> None:
        self._load()
        self.work.run(self.hooks.capture_once, self._on_captured, self._on_capture_failed, change=CAPTURED)

    def _on_captured(self, outcome: Summary) -> None:
        if outcome.covered and self._once_tries < ONCE_TRIES:
            self._once_tries += 1  # read the screen once the app's own notification has gone
            self._once_again.start()
            return
        self.notified.emit("Screen capture", outcome.summary())

    def _on_capture_failed(self, exc: PersonaError) -> None:
        if isinstance(exc, CapturePermissionError):
            self.on_refused()
            return
        self.notified.emit("Screen capture", str(exc))

    def _on_error(self, exc: PersonaError) -> None:
        self.notified.emit("Screen capture", str(exc))

    def on_mode(self, periodic: bool, reason: str | None) -> None:
        """The loop said how it runs here: on demand only, and why."""
        self.last_reason = None if periodic else reason
        if not periodic:
            self.notified.emit(
                "Screen capture",
                f"Screen capture is on, but only when you ask ('Capture this screen now'): {reason}.",
            )
        self.changed.emit()

    def shutdown(self) -> None:
        self._once_again.stop()
        self.work.shutdown()
        if self.window is not None:
            self.window.done = True
            self.window.close()


class GatedScreenLoop:
    """The screen loop behind the tray switch: on Wayland, the Enable window comes first."""

    def __init__(self, inner: CaptureLoop, access: ScreenAccess) -> None:
        self.inner = inner
        self.access = access

    def start(self) -> None:
        if self.access.needs_enable():
            self.access.open_enable_window(then=self._allowed)
            return
        self.inner.start()

    def _allowed(self) -> None:
        """The desktop said yes: run the loop; the switch may have gone off meanwhile
        (a first try failed), so it goes through the switch again then."""
        if self.access.capture.is_enabled("screen"):
            self.inner.start()
        else:
            self.access.capture.set_enabled("screen", True)

    def stop(self) -> None:
        self.inner.stop()

    def pause(self) -> None:
        self.inner.pause()

    def resume(self) -> None:
        self.inner.resume()


class EnableScreenWindow(QWidget):
    """A small focused window: what will happen, one button that takes the first screenshot."""

    def __init__(self, access: ScreenAccess) -> None:
        super().__init__(None, Qt.WindowType.Window)
        prepare_window(self, "Enable screen capture", 560, 320)
        self.access = access
        self.done = False
        self.text = QLabel()
        self.text.setWordWrap(True)
        self.text.setTextFormat(Qt.TextFormat.RichText)
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.enable_button = QPushButton("Take the first screenshot")
        self.enable_button.setDefault(True)
        self.enable_button.clicked.connect(access.take_first_screenshot)
        self.ask_again_button = QPushButton("Ask the desktop again")
        self.ask_again_button.clicked.connect(access.ask_again)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.close)
        buttons = QDialogButtonBox()
        buttons.addButton(self.enable_button, QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.addButton(self.ask_again_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.addButton(self.cancel_button, QDialogButtonBox.ButtonRole.RejectRole)
        layout = QVBoxLayout(self)
        layout.addWidget(self.text)
        layout.addWidget(self.status)
        layout.addStretch(1)
        layout.addWidget(buttons)

    def reset(self, support: ScreenSupport) -> None:
        self.done = False
        flash = (
            " On this desktop each screenshot flashes the screen and plays a sound."
            if support.flashes
            else ""
        )
        self.text.setText(
            "<h3>Enable screen capture</h3>"
            f"<p>{html.escape(support.what_works())}</p>"
            "<p>Persona Desktop takes a first screenshot now, from this window, so that the desktop "
            f"can ask you whether Persona Desktop may take screenshots.{flash} Nothing from this "
            "first screenshot is stored.</p>"
        )
        self.status.setText("")
        self.status.setStyleSheet("")
        self.enable_button.setEnabled(True)
        self.ask_again_button.setVisible(False)

    def set_busy(self, text: str) -> None:
        self.enable_button.setEnabled(False)
        self.status.setStyleSheet("")
        self.status.setText(text)

    def show_problem(self, text: str, refused: bool) -> None:
        self.enable_button.setEnabled(True)
        self.enable_button.setText("Try again")
        self.ask_again_button.setVisible(refused)
        self.status.setStyleSheet("color: #b3261e;")
        self.status.setText(text)

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self.done:
            self.access.cancel_enable()
        super().closeEvent(event)


class ScreenSupportBox(QWidget):
    """For Settings > Capture: what works on this desktop, and "Ask the desktop again"."""

    def __init__(self, access: ScreenAccess, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.access = access
        self.text = QLabel()
        self.text.setWordWrap(True)
        self.ask_again_button = QPushButton("Ask the desktop again")
        self.ask_again_button.setToolTip(
            "Forget an earlier refusal of screenshots in the desktop's permission store"
        )
        self.ask_again_button.clicked.connect(access.ask_again)
        self.shortcut_button = QPushButton("Add the keyboard shortcut Ctrl+Alt+P")
        self.shortcut_button.setToolTip(
            "A custom shortcut in GNOME Settings that runs 'persona-desktop capture screen'"
        )
        self.shortcut_button.clicked.connect(access.add_shortcut)
        row = QHBoxLayout()
        row.addWidget(self.ask_again_button)
        row.addWidget(self.shortcut_button)
        row.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 8)
        layout.addWidget(self.text)
        layout.addLayout(row)
        access.changed.connect(self.refresh)
        self.refresh()

    def refresh(self) -> None:
        self.text.setText(self.access.describe())
        self.ask_again_button.setVisible(self.access.support().desktop.session is Session.WAYLAND)
        self.shortcut_button.setVisible(self.access.can_add_shortcut())
