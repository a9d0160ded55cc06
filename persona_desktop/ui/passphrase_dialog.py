"""The app's passphrase prompt: when no OS keyring holds the store's key.

Modal, before any window opens. Typing is masked; nothing typed is logged or kept
once the dialog closes. For a new passphrase it asks twice and OK waits for both to
match.
"""

from __future__ import annotations

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QFormLayout, QLabel, QLineEdit, QVBoxLayout, QWidget

from persona_desktop.ports import PassphraseRequest


class PassphraseDialog(QDialog):
    def __init__(self, request: PassphraseRequest, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Persona Desktop: passphrase")
        self._new = request.new
        if request.new:
            intro = (
                "<b>Choose a passphrase for your memory store.</b><br>"
                "No keyring is available to keep its key, so the store, kept screen crops and speech "
                "clips are encrypted under this passphrase. Without it they cannot be read: "
                "there is no way to recover it."
            )
        else:
            intro = "<b>Your memory store is encrypted.</b><br>Type its passphrase to open it."
        text = QLabel(f"{intro}<br><span style='color:#5f6368'>{request.data_dir}</span>")
        text.setWordWrap(True)
        self.retry = QLabel(request.retry)
        self.retry.setStyleSheet("color: #b3261e;")
        self.retry.setVisible(bool(request.retry))
        self.first = QLineEdit()
        self.first.setEchoMode(QLineEdit.EchoMode.Password)
        self.second = QLineEdit()
        self.second.setEchoMode(QLineEdit.EchoMode.Password)
        form = QFormLayout()
        form.addRow("Passphrase", self.first)
        if request.new:
            form.addRow("Again", self.second)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(text)
        lay.addWidget(self.retry)
        lay.addLayout(form)
        lay.addWidget(self.buttons)
        self.first.textChanged.connect(self._check)
        self.second.textChanged.connect(self._check)
        self._check()
        self.resize(460, self.sizeHint().height())

    def _check(self) -> None:
        ok = bool(self.first.text()) and (not self._new or self.first.text() == self.second.text())
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(ok)

    def passphrase(self) -> str:
        return self.first.text()

    def done(self, result: int) -> None:
        super().done(result)


def ask_passphrase(request: PassphraseRequest) -> str | None:
    """The passphrase typed, or None when the owner cancelled."""
    dialog = PassphraseDialog(request)
    try:
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return None
        return dialog.passphrase()
    finally:
        dialog.first.clear()
        dialog.second.clear()
        dialog.deleteLater()
