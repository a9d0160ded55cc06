"""Settings: a short General page with what people change, everything else under Advanced.

Nothing is stored until OK; OK is disabled while a value is invalid. The six score
weights are kept summing to 1: changing one rescales the others. The model list comes
from the Ollama host itself (its /api/tags), checked when the window opens and when
the address changes; when the host cannot be used, the window says why and what to do.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from datetime import datetime
from typing import Any

from PySide6.QtCore import Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QDesktopServices, QShowEvent
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QScrollArea,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from persona_desktop.config import SETTINGS
from persona_desktop.domain.scoring import SIGNALS
from persona_desktop.errors import PersonaError
from persona_desktop.services.ollama_diagnosis import Diagnosis
from persona_desktop.ui.capture_control import CaptureController
from persona_desktop.ui.context import UiContext
from persona_desktop.ui.dialogs import confirm
from persona_desktop.ui.layouts import FormGrid, wrapping_label
from persona_desktop.ui.memory_events import CAPTURED_DELETED
from persona_desktop.ui.screen_access import ScreenAccess, ScreenSupportBox
from persona_desktop.ui.setting_fields import Field, focus_first_error
from persona_desktop.ui.setting_text import (
    ADVANCED,
    ADVANCED_SECTIONS,
    GENERAL,
    GENERAL_KEYS,
    GENERAL_SECTIONS,
    SCORE,
    STORAGE,
    text_for,
)
from persona_desktop.ui.setting_widgets import NamedChoice
from persona_desktop.ui.storage_panel import StoragePanel
from persona_desktop.ui.window_setup import prepare_window
from persona_desktop.ui.worker import WorkQueue

HIDDEN = {"app.first_run_done", "capture.paused_until", "capture.screen_confirmed"}  # state set elsewhere
WEIGHT_KEYS = tuple(f"sleep.weights.{name}" for name in SIGNALS)
WINDOW_KEYS = ("sleep.window_start", "sleep.window_end")
HOST_RECHECK_MS = 900
MUTED = "color: #5f6368;"


def _delete_captured(ctx: UiContext) -> Callable[[], Any]:
    from persona_desktop.services.data_admin import delete_captured_data

    return lambda: delete_captured_data(ctx.uow, ctx.clock.now(), ctx.media_dirs)


def _commands(text: str) -> str:
    """`ollama serve` -> <code>ollama serve</code>, the rest escaped."""
    parts = re.split(r"`([^`]*)`", text)
    return "".join(
        f"<code style='background:#eef1f5;color:#202124'>&nbsp;{html.escape(p)}&nbsp;</code>"
        if i % 2
        else html.escape(p)
        for i, p in enumerate(parts)
    )


class SettingsDialog(QDialog):
    saved = Signal()
    data_deleted = Signal(object)
    checked = Signal(object)  # a Diagnosis of the Ollama host, shown

    def __init__(
        self,
        ctx: UiContext,
        capture: CaptureController,
        work: WorkQueue,
        parent: QWidget | None = None,
        screen: ScreenAccess | None = None,
    ) -> None:
        super().__init__(parent)
        self._screen = screen
        prepare_window(self, "Settings", 780, 700)
        self._ctx = ctx
        self._capture = capture
        self._work = work
        self._rebalancing = False
        self._check_seq = 0
        self._checked_once = False
        self.fields: dict[str, Field] = {}
        for key, setting in SETTINGS.items():
            if key in HIDDEN:
                continue
            field = Field(setting, ctx.settings.get(key))
            field.edited.connect(self._on_edited)
            self.fields[key] = field
        self.tabs = QTabWidget()
        self.tabs.addTab(self._scrolling(self._general_page()), GENERAL)
        self.tabs.addTab(self._scrolling(self._advanced_page()), ADVANCED)
        self.error_label = QLabel()
        self.error_label.setStyleSheet("color: #b3261e;")
        self.error_label.setWordWrap(True)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.tabs)
        layout.addWidget(self.error_label)
        layout.addWidget(self.buttons)
        self._host_timer = QTimer(self)
        self._host_timer.setSingleShot(True)
        self._host_timer.setInterval(HOST_RECHECK_MS)
        self._host_timer.timeout.connect(self.test_connection)
        self._update_weight_sum()
        self._revalidate()

    # --- layout -------------------------------------------------------------------------

    @staticmethod
    def _scrolling(page: QWidget) -> QScrollArea:
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setWidget(page)
        return scroll

    @staticmethod
    def _form() -> FormGrid:
        return FormGrid()

    @staticmethod
    def _heading(text: str, first: bool = False) -> QLabel:
        label = QLabel(f"<b>{html.escape(text)}</b>")
        label.setContentsMargins(0, 0 if first else 12, 0, 0)
        return label

    @staticmethod
    def _help(text: str) -> QLabel:
        return wrapping_label(text, MUTED + " font-size: 9pt;")

    def _add(self, form: FormGrid, key: str) -> None:
        field = self.fields[key]
        self._row(form, "" if field.has_own_label else field.text.label, field.widget, field.help)

    def _row(self, form: FormGrid, label: str, widget: QWidget, help_text: str = "") -> None:
        """A form row: the editor (numbers and times stay narrow) with its help line under it."""
        box = QWidget()
        lay = QVBoxLayout(box)
        lay.setContentsMargins(0, 0, 0, 2)
        lay.setSpacing(1)
        if isinstance(widget, QAbstractSpinBox):
            widget.setFixedWidth(self.fontMetrics().horizontalAdvance("00000 messages") + 44)
            line = QHBoxLayout()
            line.setContentsMargins(0, 0, 0, 0)
            line.addWidget(widget)
            line.addStretch(1)
            lay.addLayout(line)
        else:
            lay.addWidget(widget)
        if help_text:
            lay.addWidget(self._help(help_text))
        form.add_row(label, box)

    def _general_page(self) -> QWidget:
        page = QWidget()
        v = QVBoxLayout(page)
        form = self._form()
        v.addLayout(form)
        for key in GENERAL_KEYS:
            if key in GENERAL_SECTIONS:
                form.add_span(self._heading(GENERAL_SECTIONS[key], first=key == GENERAL_KEYS[0]))
            if key == GENERAL_KEYS[0] and self._screen is not None:  # what works on this desktop
                self.screen_box = ScreenSupportBox(self._screen)
                form.add_row("", self.screen_box)
            if key == "sleep.window_end":
                continue
            if key == "sleep.window_start":
                self._row(form, "Between", self._window_row(), text_for(key).help)
            elif key == "ollama.model":
                self._row(form, text_for(key).label, self._model_row())
                form.add_row("", self._connection_note())
            else:
                self._add(form, key)
        self._row(form, "Data folder", self._data_row())
        self.delete_button = QPushButton("Delete all captured data\u2026")
        self.delete_button.setStyleSheet("color: #b3261e;")
        self.delete_button.clicked.connect(self.confirm_delete)
        self.delete_label = QLabel("")
        self.delete_label.setWordWrap(True)
        self.delete_label.hide()
        row = QHBoxLayout()
        row.addWidget(self.delete_button, 0, Qt.AlignmentFlag.AlignLeft)
        row.addWidget(self.delete_label, 1)
        form.add_row("", row)
        v.addStretch(1)
        return page

    def _window_row(self) -> QWidget:
        row = QWidget()
        h = QHBoxLayout(row)
        h.setContentsMargins(0, 0, 0, 0)
        h.addWidget(self.fields["sleep.window_start"].widget)
        h.addWidget(QLabel("and"))
        h.addWidget(self.fields["sleep.window_end"].widget)
        h.addStretch(1)
        return row

    def _model_row(self) -> QWidget:
        widget = self.fields["ollama.model"].widget
        assert isinstance(widget, NamedChoice)
        self.models = widget
        self.models.activated.connect(self._on_model_picked)
        self.test_button = QPushButton("Check")
        self.test_button.setToolTip("Ask the Ollama host which models it has")
        self.test_button.clicked.connect(self.test_connection)
        row = QWidget()
        h = QHBoxLayout(row)
        h.setContentsMargins(0, 0, 0, 0)
        h.addWidget(self.models, 1)
        h.addWidget(self.test_button)
        self.fields["ollama.host"].edited.connect(lambda _k: self._host_timer.start())
        return row

    def _connection_note(self) -> QLabel:
        self.connection_label = wrapping_label("")
        self.connection_label.setTextFormat(Qt.TextFormat.RichText)
        self.connection_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        return self.connection_label

    def _data_row(self) -> QWidget:
        where = QLineEdit(str(self._ctx.data_dir))
        where.setReadOnly(True)
        where.setToolTip("Chosen when the app starts (--data-dir); everything Persona keeps is in it.")
        open_button = QPushButton("Open")
        open_button.clicked.connect(
            lambda: QDesktopServices.openUrl(QUrl.fromLocalFile(str(self._ctx.data_dir)))
        )
        row = QWidget()
        h = QHBoxLayout(row)
        h.setContentsMargins(0, 0, 0, 0)
        h.addWidget(where, 1)
        h.addWidget(open_button)
        return row

    def _advanced_page(self) -> QWidget:
        page = QWidget()
        v = QVBoxLayout(page)
        v.addWidget(self._help("These rarely need changing. OK stores your changes."))
        form = self._form()
        v.addLayout(form)
        for section in ADVANCED_SECTIONS:
            keys = [k for k in self.fields if k not in GENERAL_KEYS and text_for(k).section == section]
            if not keys:
                continue
            form.add_span(self._heading(section))
            if section == STORAGE:  # what uses the space, then the budget
                self.storage_panel = StoragePanel(self._ctx, self._work)
                form.add_row("", self.storage_panel)
            for key in keys:
                self._add(form, key)
            if section == SCORE:
                self.weight_sum = QLabel()
                self.weight_sum.setStyleSheet(MUTED + " font-size: 9pt;")
                form.add_row("", self.weight_sum)
        v.addStretch(1)
        return page

    # --- validation ---------------------------------------------------------------------

    def _on_edited(self, key: str) -> None:
        if key in WEIGHT_KEYS and not self._rebalancing:
            self._rebalance(key)
        self._revalidate()

    def _revalidate(self) -> bool:
        errors = []
        for f in self.fields.values():
            f.validate(self._ctx.settings)
            if f.error:
                errors.append(f.error)
        if sum(float(self.fields[k].raw()) for k in WEIGHT_KEYS) <= 0:
            errors.append("The six weights must not all be 0.")
        self.error_label.setText("\n".join(errors))
        ok = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        ok.setEnabled(not errors)
        return not errors

    def _rebalance(self, changed: str) -> None:
        """Keep the six weights summing to 1: the others share what is left, pro rata."""
        self._rebalancing = True
        try:
            fixed = min(1.0, float(self.fields[changed].raw()))
            others = [k for k in WEIGHT_KEYS if k != changed]
            rest = sum(float(self.fields[k].raw()) for k in others)
            left = max(0.0, 1.0 - fixed)
            for k in others:
                share = float(self.fields[k].raw()) / rest if rest > 0 else 1.0 / len(others)
                self.fields[k].set_value(round(left * share, 3))
            # rounding: the last one takes the remainder so the sum is exactly 1
            drift = 1.0 - sum(float(self.fields[k].raw()) for k in WEIGHT_KEYS)
            last = max(others, key=lambda k: float(self.fields[k].raw()))
            self.fields[last].set_value(round(float(self.fields[last].raw()) + drift, 3))
        finally:
            self._rebalancing = False
        self._update_weight_sum()

    def _update_weight_sum(self) -> None:
        total = sum(float(self.fields[k].raw()) for k in WEIGHT_KEYS)
        self.weight_sum.setText(f"The weights add up to {total:.3f}; changing one rescales the others.")

    # --- actions ------------------------------------------------------------------------

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self._checked_once:
            self._checked_once = True
            self.test_connection()  # fills the model list from the host

    def accept(self) -> None:
        if not self._revalidate():
            focus_first_error(list(self.fields.values()))
            return
        s = self._ctx.settings
        capture_changes: list[tuple[str, bool]] = []
        old_autostart = s.values.app.start_at_login
        try:
            for key, field in self.fields.items():
                value = s.validate(key, field.raw())
                if key in ("capture.screen_enabled", "capture.speech_enabled"):
                    if value != s.get(key):
                        capture_changes.append((key.split(".")[1].removesuffix("_enabled"), bool(value)))
                    continue
                if key in WEIGHT_KEYS:
                    continue
                s.set(key, value)
            # biggest first, so that going one by one never passes through all zeros
            for key in sorted(WEIGHT_KEYS, key=lambda k: -float(self.fields[k].raw())):
                s.set(key, self.fields[key].raw())
            self._ctx.save_settings()
        except PersonaError as exc:
            self.error_label.setText(str(exc))
            return
        for kind, on in capture_changes:
            self._capture.set_enabled(kind, on)
        new_autostart = s.values.app.start_at_login
        if new_autostart != old_autostart and self._ctx.autostart is not None:
            try:
                self._ctx.autostart(new_autostart)
            except (PersonaError, OSError) as exc:
                QMessageBox.warning(self, "Start at login", f"Could not change start at login: {exc}")
        self._host_timer.stop()
        self.saved.emit()
        super().accept()

    def reject(self) -> None:
        self._host_timer.stop()
        super().reject()

    def test_connection(self) -> None:
        """Ask the host (as typed, not yet saved) which models it has, in the background."""
        self._host_timer.stop()
        trial = self._ctx.settings.__class__(None, {"ollama.host": str(self.fields["ollama.host"].raw())})
        host = trial.ollama_host()
        model = str(self.fields["ollama.model"].raw())
        if self._ctx.diagnoser is None:
            self.connection_label.setText("This build cannot check the model host.")
            return
        diagnose = self._ctx.diagnoser()
        self._check_seq += 1
        seq = self._check_seq
        self.test_button.setEnabled(False)
        self.connection_label.setText(f"<span style='{MUTED}'>Asking {html.escape(host)}\u2026</span>")
        self._work.run(
            lambda: diagnose(host, model),
            lambda d: self._on_checked(seq, d),
            lambda exc: self._on_check_failed(seq, exc),
        )

    def _on_checked(self, seq: int, d: Diagnosis) -> None:
        if seq != self._check_seq:
            return
        self.test_button.setEnabled(True)
        if d.models:
            self.models.set_choices(d.models)
        if d.ready:
            self.connection_label.setText(
                f"<span style='color:#1e7e34'>\u2714 {html.escape(d.summary)}</span>"
            )
        else:
            self.connection_label.setText(
                f"<span style='color:#b3261e'>{html.escape(d.summary)}</span><br>{_commands(d.next_step)}"
            )
        self.checked.emit(d)

    def _on_check_failed(self, seq: int, exc: PersonaError) -> None:
        if seq == self._check_seq:
            self.test_button.setEnabled(True)
            self.connection_label.setText(f"<span style='color:#b3261e'>{html.escape(str(exc))}</span>")

    def _on_model_picked(self, _index: int) -> None:
        self._revalidate()
        self.test_connection()

    def confirm_delete(self) -> None:
        if confirm(
            self,
            "Delete all captured data",
            "Delete everything Persona captured?",
            "Every piece of screen text, speech transcript and imported chat goes, with the kept"
            " screen pictures and recordings. What is remembered stays, but loses its link to"
            " these sources, and proposals still waiting lose their evidence. The deletion is"
            " written to the journal. This cannot be undone.",
            "Delete",
            destructive=True,
        ):
            self.delete_captured()

    def delete_captured(self) -> None:
        self.delete_button.setEnabled(False)
        self.delete_label.setText("Deleting\u2026")
        self.delete_label.show()
        self._work.run(
            _delete_captured(self._ctx), self._on_deleted, self._on_delete_failed, change=CAPTURED_DELETED
        )

    def _on_deleted(self, counts: dict[str, int]) -> None:
        self.delete_button.setEnabled(True)
        stamp = datetime.now().strftime("%H:%M")
        what = ", ".join(f"{v} {k}" for k, v in counts.items()) or "nothing to delete"
        self.delete_label.setText(f"Deleted at {stamp}: {what}.")
        self.data_deleted.emit(counts)

    def _on_delete_failed(self, exc: PersonaError) -> None:
        self.delete_button.setEnabled(True)
        self.delete_label.setText(f"Nothing was deleted: {exc}")
