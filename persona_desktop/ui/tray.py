"""The tray icon: the state as an icon and in words, the shell's actions as its menu."""

from __future__ import annotations

from PySide6.QtCore import QObject
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QLabel, QMenu, QSystemTrayIcon, QWidgetAction

from persona_desktop.ui.icons import TrayState, state_icon
from persona_desktop.ui.shell import Shell


class Tray(QObject):
    def __init__(self, shell: Shell) -> None:
        super().__init__()
        self.shell = shell
        self.menu = QMenu()
        self.state_label = QLabel()
        self.state_label.setContentsMargins(12, 6, 12, 6)
        self.state_label.setStyleSheet("font-weight: bold;")
        self.state_line = QWidgetAction(self.menu)  # readable, unlike a greyed-out menu item
        self.state_line.setDefaultWidget(self.state_label)
        for action in shell.menu_actions():
            if action is None:
                self.menu.addSeparator()
            elif action is shell.state_action:
                self.menu.addAction(self.state_line)
            else:
                self.menu.addAction(action)
        self.icon = QSystemTrayIcon(self)
        self.icon.setContextMenu(self.menu)
        self.icon.activated.connect(self._on_activated)
        self.shown_state: TrayState | None = None
        self._icons: dict[tuple[TrayState, int], QIcon] = {}
        shell.state_changed.connect(self.refresh)
        shell.notified.connect(self._on_notified)
        shell.warned.connect(self._on_warned)
        self.refresh()

    def show(self) -> None:
        self.icon.show()

    def refresh(self) -> None:
        state = self.shell.state()
        # the waiting state's icon is the count itself; other states show it as a badge
        badge = self.shell.pending
        key = (state, min(badge, 10))
        if key not in self._icons:
            self._icons[key] = state_icon(state, badge)
        self.icon.setIcon(self._icons[key])
        self.shown_state = state
        self.icon.setToolTip(self.shell.describe())
        self.state_label.setText(self.shell.state_action.text())
        self.state_line.setText(self.shell.state_action.text())

    def _on_activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason in (QSystemTrayIcon.ActivationReason.Trigger, QSystemTrayIcon.ActivationReason.DoubleClick):
            self.shell.open_review()

    def _on_notified(self, title: str, message: str) -> None:
        if self.icon.isVisible() and QSystemTrayIcon.supportsMessages():
            self.icon.showMessage(title, message, QSystemTrayIcon.MessageIcon.Information, 10_000)

    def _on_warned(self, title: str, message: str) -> None:
        if self.icon.isVisible() and QSystemTrayIcon.supportsMessages():
            self.icon.showMessage(title, message, QSystemTrayIcon.MessageIcon.Warning, 30_000)

    def hide(self) -> None:
        self.icon.hide()
