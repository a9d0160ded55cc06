"""Settings: every key of the registry, grouped in tabs, validated as the owner types.

Nothing is stored until OK; OK is disabled while a value is invalid. The six score
weights are kept summing to 1: changing one rescales the others.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
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
from persona_desktop.errors import LLMError, PersonaError
from persona_desktop.ui.background import Ops
from persona_desktop.ui.capture_control import CaptureController
from persona_desktop.ui.context import UiContext
from persona_desktop.ui.screen_access import ScreenAccess, ScreenSupportBox
from persona_desktop.ui.setting_fields import Field, focus_first_error, label_for

TABS = (
    ("sleep", "Sleep cycle"),
    ("ollama", "Ollama"),
    ("capture", "Capture"),
    ("review", "Chat review"),
    ("chat", "Chat and export"),
    ("export", "Chat and export"),
    ("recall", "Chat and export"),
    ("mcp", "Other assistants (MCP)"),
    ("app", "App and data"),
)
HIDDEN = {"app.first_run_done", "capture.paused_until", "capture.screen_confirmed"}  # state set elsewhere
WEIGHT_KEYS = tuple(f"sleep.weights.{name}" for name in SIGNALS)


def _delete_captured(ctx: UiContext) -> Callable[[], Any]:
    from persona_desktop.services.data_admin import delete_captured_data

    return lambda: delete_captured_data(ctx.uow, ctx.clock.now(), ctx.media_dirs)


class SettingsDialog(QDialog):
    saved = Signal()
    data_deleted = Signal(object)

    def __init__(
        self,
        ctx: UiContext,
        capture: CaptureController,
        ops: Ops,
        parent: QWidget | None = None,
        screen: ScreenAccess | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Persona Desktop: settings")
        self._ctx = ctx
        self._capture = capture
        self._ops = ops
        self._rebalancing = False
        self.fields: dict[str, Field] = {}
        self.tabs = QTabWidget()
        self._forms: dict[str, QFormLayout] = {}
        for key, setting in SETTINGS.items():
            if key in HIDDEN:
                continue
            field = Field(setting, ctx.settings.get(key))
            field.edited.connect(self._on_edited)
            self.fields[key] = field
            form = self._form(key.split(".", 1)[0])
            form.addRow(label_for(key), self._with_help(field))
            if key == "ollama.model":
                form.addRow("", self._connection_row())
            if key == WEIGHT_KEYS[-1]:
                self.weight_sum = QLabel()
                form.addRow("", self.weight_sum)
        self._add_data_section()
        if screen is not None:  # what screen capture can do on this desktop, first in its tab
            self.screen_box = ScreenSupportBox(screen)
            self._form("capture").insertRow(0, self.screen_box)
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
        self._update_weight_sum()
        self._revalidate()
        self.resize(700, 620)

    # --- layout -------------------------------------------------------------------------

    def _form(self, prefix: str) -> QFormLayout:
        title = dict(TABS).get(prefix, prefix.capitalize())
        if title not in self._forms:
            page = QWidget()
            form = QFormLayout(page)
            form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
            scroll = QScrollArea()
            scroll.setWidgetResizable(True)
            scroll.setWidget(page)
            self.tabs.addTab(scroll, title)
            self._forms[title] = form
        return self._forms[title]

    @staticmethod
    def _with_help(field: Field) -> QWidget:
        box = QWidget()
        lay = QVBoxLayout(box)
        lay.setContentsMargins(0, 0, 0, 4)
        lay.setSpacing(1)
        lay.addWidget(field.widget)
        help_label = QLabel(field.setting.help)
        help_label.setWordWrap(True)
        help_label.setStyleSheet("color: #5f6368; font-size: 9pt;")
        lay.addWidget(help_label)
        return box

    def _connection_row(self) -> QWidget:
        row = QWidget()
        lay = QHBoxLayout(row)
        lay.setContentsMargins(0, 0, 0, 0)
        self.test_button = QPushButton("Test connection")
        self.test_button.clicked.connect(self.test_connection)
        self.models = QComboBox()
        self.models.setPlaceholderText("models on the host")
        self.models.setEnabled(False)
        self.models.activated.connect(self._on_model_picked)
        self.connection_label = QLabel("")
        self.connection_label.setWordWrap(True)
        lay.addWidget(self.test_button)
        lay.addWidget(self.models, 1)
        outer = QWidget()
        v = QVBoxLayout(outer)
        v.setContentsMargins(0, 0, 0, 0)
        v.addWidget(row)
        v.addWidget(self.connection_label)
        return outer

    def _add_data_section(self) -> None:
        form = self._form("app")
        where = QLineEdit(str(self._ctx.data_dir))
        where.setReadOnly(True)
        form.addRow("Data location", where)
        self.delete_button = QPushButton("Delete all captured data...")
        self.delete_button.setStyleSheet("color: #b3261e;")
        self.delete_button.clicked.connect(self.confirm_delete)
        self.delete_label = QLabel("")
        self.delete_label.setWordWrap(True)
        form.addRow("", self.delete_button)
        form.addRow("", self.delete_label)

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
        self.weight_sum.setText(f"The weights sum to {total:.3f} (each change rescales the others).")

    # --- actions ------------------------------------------------------------------------

    def accept(self) -> None:
        if not self._revalidate():
            focus_first_error(list(self.fields.values()))
            return
        s = self._ctx.settings
        capture_changes: list[tuple[str, bool]] = []
        old_autostart = bool(s.get("app.start_at_login"))
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
        new_autostart = bool(s.get("app.start_at_login"))
        if new_autostart != old_autostart and self._ctx.autostart is not None:
            try:
                self._ctx.autostart(new_autostart)
            except (PersonaError, OSError) as exc:
                QMessageBox.warning(self, "Start at login", f"Could not change start at login: {exc}")
        self.saved.emit()
        super().accept()

    def test_connection(self) -> None:
        host_field, model_field = self.fields["ollama.host"], self.fields["ollama.model"]
        trial = self._ctx.settings.__class__(None, {"ollama.host": str(host_field.raw())})
        host = trial.ollama_host()
        model = str(model_field.raw())
        llm_for = self._ctx.llm_for

        def probe() -> list[str]:
            try:
                return llm_for(host, model).list_models()
            except PersonaError:
                raise
            except Exception as exc:  # any client failure is "unreachable" to the owner
                raise LLMError(f"cannot reach {host}: {exc}") from None

        self.test_button.setEnabled(False)
        self.connection_label.setText(f"Connecting to {host}...")
        self._ops.run(probe, lambda names: self._on_models(host, model, names), self._on_unreachable)

    def _on_models(self, host: str, model: str, names: list[str]) -> None:
        self.test_button.setEnabled(True)
        self.models.clear()
        self.models.addItems(names)
        self.models.setEnabled(bool(names))
        if not names:
            self.connection_label.setText(
                f"Connected to {host}, but it has no models: run `ollama pull {model}`."
            )
            return
        have = "is there" if model in names else f"is NOT there; pick one of the {len(names)} listed"
        self.connection_label.setText(
            f"Connected to {host}: {len(names)} model(s): {', '.join(names)}. The model {model!r} {have}."
        )
        if model in names:
            self.models.setCurrentText(model)

    def _on_unreachable(self, exc: PersonaError) -> None:
        self.test_button.setEnabled(True)
        self.connection_label.setText(f"Not reachable: {exc}")

    def _on_model_picked(self, _index: int) -> None:
        self.fields["ollama.model"].set_value(self.models.currentText())

    def confirm_delete(self) -> None:
        answer = QMessageBox.warning(
            self,
            "Delete all captured data",
            "Delete every captured fragment (screen text, speech transcripts, imported chats),"
            " their sources and any kept screen crops and speech clips?\n\n"
            "Facts already in memory stay, but lose their link to these sources. Candidates"
            " still waiting for review lose their evidence. The deletion is written to the"
            " journal. This cannot be undone.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Cancel,
        )
        if answer == QMessageBox.StandardButton.Yes:
            self.delete_captured()

    def delete_captured(self) -> None:
        self.delete_button.setEnabled(False)
        self.delete_label.setText("Deleting...")
        self._ops.run(_delete_captured(self._ctx), self._on_deleted, self._on_delete_failed)

    def _on_deleted(self, counts: dict[str, int]) -> None:
        self.delete_button.setEnabled(True)
        stamp = datetime.now().strftime("%H:%M")
        what = ", ".join(f"{v} {k}" for k, v in counts.items()) or "nothing to delete"
        self.delete_label.setText(f"Deleted at {stamp}: {what}.")
        self.data_deleted.emit(counts)

    def _on_delete_failed(self, exc: PersonaError) -> None:
        self.delete_button.setEnabled(True)
        self.delete_label.setText(f"Nothing was deleted: {exc}")
