"""The settings dialog: every key, validation as you type, weights kept at 1, test connection,
and deleting captured data without touching the journal."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from persona_desktop.bootstrap import Runtime
from persona_desktop.config import SETTINGS, Settings
from persona_desktop.domain.scoring import SIGNALS
from persona_desktop.services.ollama_diagnosis import Diagnosis, Problem
from persona_desktop.ui.context import UiContext
from persona_desktop.ui.settings_dialog import HIDDEN, WEIGHT_KEYS, SettingsDialog
from persona_desktop.ui.shell import Shell
from tests.ollama_server import OllamaServer
from tests.ui_support import candidate_status, journal_actions, seed_memory, shell, ui_ctx

__all__ = ["shell", "ui_ctx"]

TIMEOUT = 10_000


@pytest.fixture
def dialog(shell: Shell, qtbot: QtBot) -> Iterator[SettingsDialog]:
    d = shell.open_settings()
    yield d
    d.hide()


def _ok_enabled(d: SettingsDialog) -> bool:
    return d.buttons.button(d.buttons.StandardButton.Ok).isEnabled()


JARGON = ("fragment", "5xx", "toolset", "lease", "renormaliz", "llm", "document")


def test_every_setting_has_an_editor_in_plain_words(dialog: SettingsDialog) -> None:
    assert set(dialog.fields) == set(SETTINGS) - HIDDEN
    for key, field in dialog.fields.items():
        assert field.widget.toolTip() == field.help
        words = f"{field.text.label} {field.help}".lower()
        assert not any(j in words for j in JARGON), (key, words)
    assert dialog.fields["sleep.enabled"].raw() is False  # the master switch starts off


def test_general_page_first_everything_else_under_advanced(dialog: SettingsDialog) -> None:
    from persona_desktop.ui.setting_text import GENERAL_KEYS

    assert [dialog.tabs.tabText(i) for i in range(dialog.tabs.count())] == ["General", "Advanced"]
    general, advanced = dialog.tabs.widget(0), dialog.tabs.widget(1)
    for key, field in dialog.fields.items():
        page = general if key in GENERAL_KEYS else advanced
        assert page.isAncestorOf(field.widget), key
    assert general.isAncestorOf(dialog.delete_button)


def test_lists_are_edited_as_lists_and_paths_have_browse(dialog: SettingsDialog) -> None:
    from persona_desktop.ui.setting_widgets import ChoiceList, ListEditor, PathEdit

    apps = dialog.fields["capture.exclude_apps"].widget
    assert isinstance(apps, ListEditor) and "keepassxc" in apps.values()
    apps.set_values([*apps.values(), "signal-desktop"])
    assert dialog.fields["capture.exclude_apps"].raw()[-1] == "signal-desktop"
    assert isinstance(dialog.fields["review.allowed_toolsets"].widget, ChoiceList)
    for key in ("export.path", "capture.whisper_model", "review.memory_prompt_path"):
        assert isinstance(dialog.fields[key].widget, PathEdit), key


def test_a_bad_value_is_flagged_as_you_type_and_blocks_ok(dialog: SettingsDialog, ui_ctx: UiContext) -> None:
    langs = dialog.fields["capture.ocr_languages"]
    langs.widget.setText("eng+")  # type: ignore[attr-defined]
    assert langs.error and "'eng+' is not valid" in langs.error
    assert not _ok_enabled(dialog)
    assert (
        "Languages of the text" in dialog.error_label.text() and "e.g. eng+rus" in dialog.error_label.text()
    )
    langs.widget.setText("eng+rus")  # type: ignore[attr-defined]
    assert langs.error is None and _ok_enabled(dialog)
    assert dialog.error_label.text() == ""


def test_weights_are_kept_summing_to_one(dialog: SettingsDialog) -> None:
    dialog.fields["sleep.weights.relevance"].set_value(0.6)
    values = {k: float(dialog.fields[k].raw()) for k in WEIGHT_KEYS}
    assert values["sleep.weights.relevance"] == pytest.approx(0.6)
    assert sum(values.values()) == pytest.approx(1.0, abs=1e-9)
    # the others keep their proportions
    assert values["sleep.weights.frequency"] / values["sleep.weights.richness"] == pytest.approx(
        0.24 / 0.06, rel=0.05
    )
    assert "1.000" in dialog.weight_sum.text()


def _wheel(widget: QWidget, steps: int = -3) -> None:
    """What a mouse wheel sends to the widget under the pointer (down by `steps` notches)."""
    center = QPointF(widget.rect().center())
    for _ in range(abs(steps)):
        event = QWheelEvent(
            center,
            QPointF(widget.mapToGlobal(center.toPoint())),
            QPoint(0, 0),
            QPoint(0, 120 if steps > 0 else -120),
            Qt.MouseButton.NoButton,
            Qt.KeyboardModifier.NoModifier,
            Qt.ScrollPhase.NoScrollPhase,
            False,
        )
        QApplication.sendEvent(widget, event)


def test_the_wheel_scrolls_the_page_and_leaves_unfocused_numbers_alone(
    dialog: SettingsDialog, qtbot: QtBot
) -> None:
    """Scrolling over the form must not edit what passes under the pointer."""
    qtbot.waitExposed(dialog)
    before = {k: f.raw() for k, f in dialog.fields.items()}
    dialog.buttons.setFocus()
    for field in dialog.fields.values():
        if not field.widget.hasFocus():
            _wheel(field.widget)
            for child in field.widget.findChildren(QWidget):
                _wheel(child)
    after = {k: f.raw() for k, f in dialog.fields.items()}
    assert after == before
    # a field the owner clicked into still takes the wheel
    spin = dialog.fields["sleep.quiet_minutes"].widget
    spin.setFocus()
    qtbot.waitUntil(spin.hasFocus, timeout=TIMEOUT)
    _wheel(spin, steps=2)
    assert dialog.fields["sleep.quiet_minutes"].raw() == 62


def test_ok_saves_every_change_to_the_file(dialog: SettingsDialog, ui_ctx: UiContext, qtbot: QtBot) -> None:
    dialog.fields["sleep.enabled"].set_value(True)
    dialog.fields["sleep.quiet_minutes"].set_value(30)
    dialog.fields["sleep.window_start"].set_value("01:30")
    dialog.fields["capture.exclude_titles"].set_value("bank, diary")
    dialog.fields["sleep.weights.richness"].set_value(0.2)
    with qtbot.waitSignal(dialog.saved, timeout=TIMEOUT):
        dialog.accept()
    saved = Settings.load(ui_ctx.settings.path)  # type: ignore[arg-type]
    assert saved.get("sleep.enabled") is True
    assert saved.get("sleep.quiet_minutes") == 30
    assert saved.get("sleep.window_start") == "01:30"
    assert saved.get("capture.exclude_titles") == ["bank", "diary"]
    assert sum(saved.weights_raw().values()) == pytest.approx(1.0, abs=1e-6)
    assert saved.get("sleep.weights.richness") == pytest.approx(0.2)
    assert set(saved.weights()) == set(SIGNALS)


def test_start_at_login_writes_and_removes_the_autostart_entry(
    shell: Shell, ui_ctx: UiContext, qtbot: QtBot
) -> None:
    from persona_desktop import autostart

    dialog = shell.open_settings()
    dialog.fields["app.start_at_login"].set_value(True)
    with qtbot.waitSignal(dialog.saved, timeout=TIMEOUT):
        dialog.accept()
    entry = autostart.autostart_path()
    assert entry.is_file() and str(ui_ctx.data_dir) in entry.read_text()  # the same data dir at login
    dialog = shell.open_settings()
    dialog.fields["app.start_at_login"].set_value(False)
    with qtbot.waitSignal(dialog.saved, timeout=TIMEOUT):
        dialog.accept()
    assert not entry.exists()


def test_cancel_stores_nothing(dialog: SettingsDialog, ui_ctx: UiContext) -> None:
    dialog.fields["sleep.enabled"].set_value(True)
    dialog.reject()
    assert ui_ctx.settings.get("sleep.enabled") is False
    assert not ui_ctx.settings.path.exists()  # type: ignore[union-attr]


def _check(dialog: SettingsDialog, qtbot: QtBot) -> Diagnosis:
    with qtbot.waitSignal(dialog.checked, timeout=TIMEOUT) as done:
        dialog.test_connection()
    return done.args[0]


def test_the_model_picker_lists_the_hosts_models(dialog: SettingsDialog, qtbot: QtBot) -> None:
    with OllamaServer(models=("llama3.1:8b", "qwen2.5:7b")) as server:
        dialog.fields["ollama.host"].set_value(server.url)
        assert _check(dialog, qtbot).ready
        assert "ready with llama3.1:8b" in dialog.connection_label.text()
        assert [dialog.models.itemText(i) for i in range(dialog.models.count())] == [
            "llama3.1:8b",
            "qwen2.5:7b",
        ]
        with qtbot.waitSignal(dialog.checked, timeout=TIMEOUT):  # the owner picks the next one
            dialog.models.setFocus()
            qtbot.keyClick(dialog.models, Qt.Key.Key_Down)
    assert dialog.fields["ollama.model"].raw() == "qwen2.5:7b"


def test_a_new_address_is_checked_as_you_type(dialog: SettingsDialog, qtbot: QtBot) -> None:
    with OllamaServer(models=("gemma3:4b",)) as server:
        with qtbot.waitSignal(
            dialog.checked, timeout=TIMEOUT, check_params_cb=lambda d: d.host == server.url
        ) as done:
            dialog.fields["ollama.host"].set_value(server.url)
        assert done.args[0].models == ["gemma3:4b"]
    assert "llama3.1:8b is not there" in dialog.connection_label.text()
    assert "ollama pull llama3.1:8b" in dialog.connection_label.text()


def test_a_failed_connection_says_what_to_do(
    dialog: SettingsDialog, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no `ollama` program on this computer
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed once we leave: nobody listens there
    dialog.fields["ollama.host"].set_value(f"http://127.0.0.1:{port}")
    d = _check(dialog, qtbot)
    text = dialog.connection_label.text()
    assert d.problem is Problem.NOT_INSTALLED
    assert "not installed" in text and "ollama serve" in text and f"127.0.0.1:{port}" in text


def test_delete_all_captured_data_keeps_the_journal(
    dialog: SettingsDialog, runtime: Runtime, ui_ctx: UiContext, qtbot: QtBot
) -> None:
    seeded = seed_memory(runtime, pending=2, applied=1)
    clip = ui_ctx.data_dir / "clips" / "speech" / "r1" / "0000.ogg"
    clip.parent.mkdir(parents=True)
    clip.write_bytes(b"OggS")
    before = journal_actions(runtime)
    with qtbot.waitSignal(dialog.data_deleted, timeout=TIMEOUT) as deleted:
        dialog.delete_captured()
    counts = deleted.args[0]
    assert counts["fragments"] == len(seeded.fragment_refs) and counts["media files"] == 1
    after = journal_actions(runtime)
    assert after[: len(before)] == before and after[len(before) :] == ["captured_data.deleted"]
    with runtime.uow.read() as uow:
        assert uow.fragments.all() == []
        assert uow.facts.get(seeded.applied[0]) is not None  # memory stays
    assert all(candidate_status(runtime, c) == "dropped" for c in seeded.pending)
    assert not clip.exists()
    assert "Deleted at" in dialog.delete_label.text()
