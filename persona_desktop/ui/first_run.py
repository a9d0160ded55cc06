"""The first start: what Persona can do, in plain words, with every part switched off."""

from __future__ import annotations

import os
import sys

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from persona_desktop.capture.screen_desktop import detect, support_for
from persona_desktop.ui.capture_control import CaptureController
from persona_desktop.ui.context import UiContext
from persona_desktop.ui.window_setup import prepare_window

EXPLANATION = """
<h2>Welcome to Persona Desktop</h2>
<p>Persona builds a long-term memory for your assistant from what you do, on this
computer only. <b>Everything is off until you turn it on.</b> Nothing has been
captured and no language model has been called.</p>
<p>What it can do, each part separately:</p>
<ul>
<li><b>Screen capture</b> takes a screenshot every few seconds and reads its text
(OCR). Password managers and private browser windows are never captured.
Screenshots are thrown away; only text is kept, unless you choose to keep crops.</li>
<li><b>Speech capture</b> listens to your microphone and writes down what is said,
with a local speech model. Audio is thrown away unless you choose to keep clips.</li>
<li><b>The sleep cycle</b> runs at night, when you are not using the computer. It
asks your local Ollama model which lasting facts about you the captured text
shows. Only facts proven by your own words apply by themselves; everything else
waits for you in the morning <b>review window</b>, where you approve, edit,
reject or undo.</li>
</ul>
<p>Every fact keeps a link to where it came from ("Why do I know this?"), and you
can revert any fact or forget a whole source at any time.</p>
"""


class FirstRunDialog(QDialog):
    def __init__(self, ctx: UiContext, capture: CaptureController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        prepare_window(self, "Welcome", 640, 560)
        self._ctx = ctx
        self._capture = capture
        self.wants_settings = False
        text = QLabel(EXPLANATION)
        text.setWordWrap(True)
        text.setTextFormat(Qt.TextFormat.RichText)
        self.screen_box = QCheckBox("Capture the screen")
        support = support_for(
            detect(os.environ, sys.platform), bool(ctx.settings.get("capture.periodic_with_flash"))
        )
        self.screen_note = QLabel(support.headline())  # what works on this desktop
        self.screen_note.setWordWrap(True)
        self.screen_note.setStyleSheet("color: #5f6368; margin-left: 22px;")
        self.speech_box = QCheckBox("Capture speech from the microphone")
        self.sleep_box = QCheckBox("Run the nightly sleep cycle (uses your Ollama model)")
        for box in (self.screen_box, self.speech_box, self.sleep_box):
            box.setChecked(False)
        note = QLabel("You can change each of these later in Settings.")
        note.setStyleSheet("color: #5f6368;")
        buttons = QDialogButtonBox()
        self.settings_button = QPushButton("Open Settings...")
        buttons.addButton(self.settings_button, QDialogButtonBox.ButtonRole.ActionRole)
        done = buttons.addButton("Done", QDialogButtonBox.ButtonRole.AcceptRole)
        done.setDefault(True)
        buttons.accepted.connect(self.accept)
        self.settings_button.clicked.connect(self._on_settings)
        layout = QVBoxLayout(self)
        layout.addWidget(text)
        for box in (self.screen_box, self.speech_box, self.sleep_box):
            layout.addWidget(box)
            if box is self.screen_box:
                layout.addWidget(self.screen_note)
        layout.addWidget(note)
        layout.addStretch(1)
        layout.addWidget(buttons)

    def _on_settings(self) -> None:
        self.wants_settings = True
        self.accept()

    def accept(self) -> None:
        self._apply()
        super().accept()

    def reject(self) -> None:
        """Esc or the close button: the ticks were a draft, nothing is switched on.

        The explanation counts as seen, so it does not come back at every start."""
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
