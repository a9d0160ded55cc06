"""Questions the app asks before it does something the owner may not have meant."""

from __future__ import annotations

from PySide6.QtWidgets import QMessageBox, QWidget


def confirm(
    parent: QWidget | None,
    title: str,
    question: str,
    details: str,
    action: str,
    destructive: bool = False,
) -> bool:
    """Ask; True only when the owner clicked the button named after the action.

    The safe answer (Cancel) is the default, so Enter or Esc never acts by accident."""
    box = QMessageBox(parent)
    box.setIcon(QMessageBox.Icon.Warning if destructive else QMessageBox.Icon.Question)
    box.setWindowTitle(title)
    box.setText(question)
    box.setInformativeText(details)
    act = box.addButton(action, QMessageBox.ButtonRole.AcceptRole)
    cancel = box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(cancel)
    box.setEscapeButton(cancel)
    box.exec()
    return box.clickedButton() is act


def quoted(statement: str, limit: int = 80) -> str:
    """A statement as a status message or a question names it: in quotes, shortened if long."""
    text = " ".join(statement.split())
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "\u2026"
    return f"\u201c{text}\u201d"
