"""A small main window for desktops without a tray: the same state and actions."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QGridLayout,
    QLabel,
    QMainWindow,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from persona_desktop.ui.icons import state_pixmap
from persona_desktop.ui.shell import Shell
from persona_desktop.ui.window_setup import prepare_window


class MainWindow(QMainWindow):
    def __init__(self, shell: Shell) -> None:
        super().__init__()
        self.shell = shell
        prepare_window(self, "Persona Desktop", 520, 360)
        self.icon_label = QLabel()
        self.state_label = QLabel()
        self.state_label.setWordWrap(True)
        self.message_label = QLabel("")
        self.message_label.setWordWrap(True)
        self.message_label.setStyleSheet("color: palette(mid);")
        self.grid = grid = QGridLayout()
        self.buttons: list[QToolButton] = []
        for action in shell.menu_actions():
            if action is None or action in (shell.quit_action, shell.state_action):
                continue
            b = QToolButton()
            b.setDefaultAction(action)
            b.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
            b.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
            self.buttons.append(b)
        quit_button = QToolButton()
        quit_button.setDefaultAction(shell.quit_action)
        head = QGridLayout()
        head.addWidget(self.icon_label, 0, 0, Qt.AlignmentFlag.AlignTop)
        head.addWidget(self.state_label, 0, 1)
        head.setColumnStretch(1, 1)
        box = QWidget()
        v = QVBoxLayout(box)
        v.addLayout(head)
        v.addLayout(grid)
        v.addWidget(self.message_label)
        v.addWidget(quit_button, 0, Qt.AlignmentFlag.AlignRight)
        self.setCentralWidget(box)
        shell.state_changed.connect(self.refresh)
        shell.notified.connect(lambda title, msg: self.message_label.setText(f"{title}: {msg}"))
        shell.warned.connect(lambda title, msg: self.message_label.setText(f"{title}: {msg}"))
        self.refresh()

    def refresh(self) -> None:
        """Two columns of the actions visible now, without holes where hidden ones were."""
        for b in self.buttons:
            self.grid.removeWidget(b)
        shown = [b for b in self.buttons if (a := b.defaultAction()) is not None and a.isVisible()]
        for b in self.buttons:
            b.setVisible(b in shown)
        for i, b in enumerate(shown):
            self.grid.addWidget(b, i // 2, i % 2)
        self.icon_label.setPixmap(state_pixmap(self.shell.state(), 48, self.shell.pending))
        lines = self.shell.describe().removeprefix("Persona Desktop: ").split("; ")
        self.state_label.setText("\n".join(line[:1].upper() + line[1:] for line in lines))

    def closeEvent(self, event: QCloseEvent) -> None:
        # without a tray this window is the app: closing it quits
        self.shell.quit()
        super().closeEvent(event)
