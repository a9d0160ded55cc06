"""The first start: what Persona can do, in plain words, with every part switched off.

Only the explicit button applies the ticks; Esc or the window's close button leaves
everything off (the explanation counts as seen, so it does not come back).
"""

from __future__ import annotations

import os
import sys

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from persona_desktop.capture.screen_desktop import detect, support_for
from persona_desktop.ui.capture_control import CaptureController
from persona_desktop.ui.context import UiContext
from persona_desktop.ui.icons import app_pixmap
from persona_desktop.ui.window_setup import prepare_window

EXPLANATION = """
<p>Persona builds a long-term memory for your assistant from what you do, on this computer
only. <b>Everything is off until you turn it on.</b> Nothing has been captured yet, and no
language model has been called.</p>
<p>Every remembered fact keeps a link to where it came from, and you can take back any fact, or
forget a whole source, at any time. Facts about you are added by themselves only when they are
your own words; everything else waits for your approval in the morning <b>review window</b>.</p>
"""

CHOICES = (
    (
        "Capture the screen",
        "Reads the text on your screen every few seconds. Password managers and private browser"
        " windows are never read; screenshots are thrown away, only text is kept.",
    ),
    (
        "Capture speech from the microphone",
        "Writes down what is said, with a speech model on this computer. The audio is thrown away.",
    ),
    (
        "Run the nightly sleep cycle",
        "At night, when you are away, your own Ollama model reads what was captured and proposes"
        " facts. It needs Ollama installed (Help explains how).",
    ),
)


class FirstRunDialog(QDialog):
    def __init__(self, ctx: UiContext, capture: CaptureController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        prepare_window(self, "Welcome", 640, 600)
        self._ctx = ctx
        self._capture = capture
        self.wants_settings = False
        icon = QLabel()
        icon.setPixmap(app_pixmap(48))
        title = QLabel("<h2>Welcome to Persona Desktop</h2>")
        head = QHBoxLayout()
        head.addWidget(icon)
        head.addWidget(title, 1)
        text = QLabel(EXPLANATION)
        text.setWordWrap(True)
        text.setTextFormat(Qt.TextFormat.RichText)
        layout = QVBoxLayout(self)
        layout.addLayout(head)
        layout.addWidget(text)
        layout.addWidget(QLabel("<b>Turn on now, if you like:</b>"))
        self.screen_box = self._choice(layout, *CHOICES[0])
        support = support_for(
            detect(os.environ, sys.platform), ctx.settings.values.capture.periodic_with_flash
        )
        self.screen_note = QLabel(support.headline())  # what works on this desktop
        self.screen_note.setWordWrap(True)
        self.screen_note.setContentsMargins(24, 0, 0, 6)
        self.screen_note.setStyleSheet("color: #5f6368;")
        layout.addWidget(self.screen_note)
        self.speech_box = self._choice(layout, *CHOICES[1])
        self.sleep_box = self._choice(layout, *CHOICES[2])
        later = QLabel("You can change each of these later in Settings.")
        later.setStyleSheet("color: #5f6368;")
        layout.addWidget(later)
        layout.addStretch(1)
        buttons = QDialogButtonBox()
        self.settings_button = QPushButton("Open Settings\u2026")
        buttons.addButton(self.settings_button, QDialogButtonBox.ButtonRole.ResetRole)
        self.done_button = buttons.addButton("Keep everything off", QDialogButtonBox.ButtonRole.AcceptRole)
        self.done_button.setDefault(True)
        buttons.accepted.connect(self.accept)
        self.settings_button.clicked.connect(self._on_settings)
        layout.addWidget(buttons)

    def _choice(self, layout: QVBoxLayout, label: str, help_text: str) -> QCheckBox:
        box = QCheckBox(label)
        box.setChecked(False)
        box.toggled.connect(lambda _on: self._update_button())
        note = QLabel(help_text)
        note.setWordWrap(True)
        note.setContentsMargins(24, 0, 0, 6)
        note.setStyleSheet("color: #5f6368;")
        layout.addWidget(box)
        layout.addWidget(note)
        return box

    def _update_button(self) -> None:
        if not hasattr(self, "done_button"):
            return
        ticked = sum(b.isChecked() for b in (self.screen_box, self.speech_box, self.sleep_box))
        self.done_button.setText("Turn on what I ticked" if ticked else "Keep everything off")

    def _on_settings(self) -> None:
        self.wants_settings = True
        self.accept()

    def accept(self) -> None:
        self._apply()
        super().accept()

    def reject(self) -> None:
        """Esc or the close button: the ticks were a draft, nothing is switched on."""
        self._ctx.settings.set("app.first_run_done", True)
        self._ctx.save_settings()
        super().reject()

    def _apply(self) -> None:
        s = self._ctx.settings
        s.set("sleep.enabled", self.sleep_box.isChecked())
        s.set("app.first_run_done", True)
        self._ctx.save_settings()
        if self.screen_box.isChecked():
            self._capture.set_enabled("screen", True)
        if self.speech_box.isChecked():
            self._capture.set_enabled("speech", True)
