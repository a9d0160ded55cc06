"""The passphrase dialog and the Storage tab of the settings."""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtWidgets import QDialogButtonBox, QLineEdit
from pytestqt.qtbot import QtBot

from persona_desktop.bootstrap import Runtime
from persona_desktop.ports import PassphraseRequest
from persona_desktop.ui.context import UiContext
from persona_desktop.ui.passphrase_dialog import PassphraseDialog
from tests.ui_support import ui_ctx

__all__ = ["ui_ctx"]


def test_a_new_passphrase_must_be_typed_twice_alike_and_is_masked(qtbot: QtBot, tmp_path: Path) -> None:
    dialog = PassphraseDialog(PassphraseRequest(tmp_path, new=True))
    qtbot.addWidget(dialog)
    ok = dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)
    assert dialog.first.echoMode() == QLineEdit.EchoMode.Password
    assert not ok.isEnabled()
    qtbot.keyClicks(dialog.first, "tulip sky")
    qtbot.keyClicks(dialog.second, "tulip skx")
    assert not ok.isEnabled()
    dialog.second.clear()
    qtbot.keyClicks(dialog.second, "tulip sky")
    assert ok.isEnabled() and dialog.passphrase() == "tulip sky"


def test_unlocking_shows_why_the_last_try_was_refused(qtbot: QtBot, tmp_path: Path) -> None:
    dialog = PassphraseDialog(PassphraseRequest(tmp_path, retry="That passphrase does not open the store."))
    qtbot.addWidget(dialog)
    dialog.show()
    assert dialog.retry.isVisible() and "does not open" in dialog.retry.text()
    assert not dialog.second.isVisible()


def test_the_storage_tab_shows_what_uses_the_space(ui_ctx: UiContext, runtime: Runtime, qtbot: QtBot) -> None:
    from persona_desktop.app import build_shell

    runtime.media.write(runtime.data_dir / "screens" / "d" / "c.png", os.urandom(250_000))
    shell = build_shell(ui_ctx)
    dialog = shell.open_settings()
    qtbot.waitUntil(lambda: dialog.storage_panel.report is not None, timeout=10_000)
    text = dialog.storage_panel.summary.text()
    assert "screen crops" in text and "250.0 kB" in text and "encrypted" in text
    assert "storage.encrypted" in dialog.fields
    shell.shutdown()
