"""The Storage tab's report: what uses the space (text per kind, crops, clips) and how it is kept."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QPushButton, QVBoxLayout, QWidget
from shiboken6 import isValid

from persona_desktop.services.storage_budget import SpaceReport, human, measure
from persona_desktop.ui.context import UiContext
from persona_desktop.ui.worker import WorkQueue


class StoragePanel(QWidget):
    def __init__(self, ctx: UiContext, work: WorkQueue, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._ctx = ctx
        self._work = work
        self.report: SpaceReport | None = None
        self.summary = QLabel("Measuring...")
        self.summary.setWordWrap(True)
        self.note = QLabel(
            "A change of encryption takes effect at the next start (the store is then encrypted or "
            "decrypted in place). To change the passphrase, run <code>persona-desktop storage passphrase</code> "
            "with the app closed."
        )
        self.note.setWordWrap(True)
        self.note.setStyleSheet("color: #5f6368; font-size: 9pt;")
        self.refresh_button = QPushButton("Measure again")
        self.refresh_button.clicked.connect(self.refresh)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 8, 0, 0)
        lay.addWidget(self.summary)
        lay.addWidget(self.refresh_button, 0, Qt.AlignmentFlag.AlignLeft)
        lay.addWidget(self.note)
        self.refresh()

    def refresh(self) -> None:
        uow, data_dir = self._ctx.uow, self._ctx.data_dir
        storage = self._ctx.settings.values.storage
        budget, encrypted = storage.max_mb, storage.encrypted
        self.refresh_button.setEnabled(False)

        def done(report: SpaceReport) -> None:
            if not isValid(self.summary):
                return  # the settings closed before the measure came back
            self.report = report
            self.refresh_button.setEnabled(True)
            rows = "".join(
                f"<tr><td>{name}</td><td align='right'>{human(size)}</td></tr>"
                for name, size in [
                    *((f"text: {kind}", n) for kind, n in sorted(report.text_by_kind.items())),
                    ("database in all (text, memory, journal, indexes)", report.database),
                    ("screen crops", report.files.get("crops", 0)),
                    ("speech clips", report.files.get("clips", 0)),
                    ("logs", report.files.get("logs", 0)),
                ]
            )
            self.summary.setText(
                f"<b>{human(report.used)} of {human(report.budget)} ({report.fraction:.0%})</b>, "
                f"{human(report.free_disk)} free on the disk; "
                f"{'encrypted' if encrypted else '<b>not encrypted</b>'}."
                f"<table cellspacing='6'>{rows}</table>"
            )

        def failed(exc: Exception) -> None:
            if not isValid(self.summary):
                return
            self.refresh_button.setEnabled(True)
            self.summary.setText(f"Cannot measure: {exc}")

        self._work.run(lambda: measure(uow, data_dir, budget, detailed=True), done, failed, read=True)
