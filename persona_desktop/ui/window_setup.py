"""What every window of the app gets: its icon, a short title, a size that fits, a place in the middle.

Qt appends the application's display name ("Persona Desktop") to every window title
on its own, so a title here names only the window ("Morning review", not
"Persona Desktop: morning review", which showed the app name twice).
"""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QCursor, QGuiApplication, QScreen
from PySide6.QtWidgets import QWidget

from persona_desktop.ui.icons import app_icon


def current_screen(widget: QWidget | None = None) -> QScreen:
    """The screen the owner is working on: the one under the pointer, else the widget's, else the primary."""
    screen = QGuiApplication.screenAt(QCursor.pos())
    if screen is None and widget is not None:
        screen = widget.screen()
    return screen or QGuiApplication.primaryScreen()


def fit_and_center(widget: QWidget, width: int, height: int) -> None:
    """Resize to `width` x `height`, or less where the screen is smaller, and centre on the current screen."""
    area = current_screen(widget).availableGeometry()
    w = min(width, int(area.width() * 0.94))
    h = min(height, int(area.height() * 0.92))
    widget.resize(w, h)
    widget.move(area.center() - QPoint(w // 2, h // 2))


def prepare_window(widget: QWidget, title: str, width: int, height: int) -> None:
    """Title, app icon, size and position of a top-level window, before it is first shown."""
    widget.setWindowTitle(title)
    widget.setWindowIcon(app_icon())
    fit_and_center(widget, width, height)


def bring_forward(widget: QWidget) -> None:
    """Show a window that may be hidden, minimized or behind others, and give it the focus."""
    widget.show()
    widget.setWindowState(widget.windowState() & ~Qt.WindowState.WindowMinimized)
    widget.raise_()
    widget.activateWindow()
