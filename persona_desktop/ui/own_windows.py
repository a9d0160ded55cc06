"""Where the app's own windows are, for the screen capture loop (which never reads them).

An event filter on the application sees every top-level widget shown, hidden,
moved or resized (windows, dialogs, menus, tooltips, balloon messages) on the GUI
thread, before the window system draws it, and keeps a snapshot of their frames in
device pixels. The capture thread reads the snapshot under a lock (`OwnWindows`
port). A notification is drawn by the desktop's notification server, somewhere the
app cannot know: while one of the app's may be showing, the loop reads no frame.
On Wayland a client does not know where its windows are: the snapshot says so
(`placed` false) and tells whether a window, a menu or a tooltip is showing.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QApplication, QWidget

from persona_desktop.ports.screen import Box, OwnScreen

_WATCHED = frozenset(
    {
        QEvent.Type.Show,
        QEvent.Type.Hide,
        QEvent.Type.Move,
        QEvent.Type.Resize,
        QEvent.Type.Close,
        QEvent.Type.WindowStateChange,
        QEvent.Type.ScreenChangeInternal,
    }
)
NOTIFICATION_MARGIN_S = 3.0  # servers animate in and out, and some keep a message a little longer
NOTIFICATION_SECONDS = 10.0  # how long the tray asks the desktop to show a message (tray.py)
LINGER_S = 1.0  # a window just hidden may still fade out on a compositing desktop


def _is_popup(widget: QWidget) -> bool:
    kind = widget.windowType()
    return kind in (Qt.WindowType.Popup, Qt.WindowType.ToolTip)


def window_boxes(widgets: list[QWidget]) -> list[Box]:
    """Frames (title bar included) of these top-level widgets, in device pixels."""
    out: list[Box] = []
    for widget in widgets:
        frame = widget.frameGeometry()
        screen = widget.screen()
        ratio = screen.devicePixelRatio() if screen is not None else 1.0
        left, top = int(frame.x() * ratio), int(frame.y() * ratio)
        right = int((frame.x() + frame.width()) * ratio + 0.999)
        bottom = int((frame.y() + frame.height()) * ratio + 0.999)
        if right > left and bottom > top:
            out.append((left, top, right, bottom))
    return out


class OwnWindowTracker(QObject):
    """Thread-safe snapshot of the app's visible windows; implements the capture `OwnWindows` port."""

    def __init__(
        self,
        app: QApplication,
        parent: QObject | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(parent)
        self._app = app
        self._lock = threading.Lock()
        self._boxes: list[Box] = []
        self._gone: dict[Box, float] = {}  # hidden a moment ago: still masked until then
        self._windows = self._popups = False
        self._windows_gone = self._popups_gone = 0.0  # when the last one hid, plus LINGER_S
        self._notice_until = 0.0
        # a Wayland client cannot know where the compositor put its windows
        self._placed = not QApplication.platformName().startswith("wayland")
        self._monotonic = monotonic
        self._watching = False

    def watch(self) -> None:
        """Follow the windows (while screen capture runs: the filter costs a few µs an event)."""
        if not self._watching:
            self._app.installEventFilter(self)
            self._watching = True
        self.refresh()

    def unwatch(self) -> None:
        if self._watching:
            self._app.removeEventFilter(self)
            self._watching = False

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() in _WATCHED and isinstance(watched, QWidget) and watched.isWindow():
            self.refresh()
        return False

    def refresh(self) -> None:
        shown = [w for w in self._app.topLevelWidgets() if w.isVisible()]
        boxes = window_boxes(shown)
        now = self._monotonic()
        with self._lock:
            for box in self._boxes:
                if box not in boxes:
                    self._gone[box] = now + LINGER_S
            self._boxes = boxes
            popups, windows = any(_is_popup(w) for w in shown), any(not _is_popup(w) for w in shown)
            if self._popups and not popups:
                self._popups_gone = now + LINGER_S
            if self._windows and not windows:
                self._windows_gone = now + LINGER_S
            self._popups, self._windows = popups, windows

    def notification_shown(self, seconds: float) -> None:
        """A notification went to the desktop: read no frame until it has surely gone."""
        with self._lock:
            self._notice_until = max(self._notice_until, self._monotonic() + seconds + NOTIFICATION_MARGIN_S)

    # --- the OwnWindows port (any thread) ----------------------------------------------

    def screen(self) -> OwnScreen:
        now = self._monotonic()
        with self._lock:
            self._gone = {box: until for box, until in self._gone.items() if until > now}
            return OwnScreen(
                boxes=tuple(dict.fromkeys([*self._boxes, *self._gone])),
                placed=self._placed,
                windows=self._windows or now < self._windows_gone,
                popups=self._popups or now < self._popups_gone,
                notification=now < self._notice_until,
            )

    def close(self) -> None:
        self.unwatch()
