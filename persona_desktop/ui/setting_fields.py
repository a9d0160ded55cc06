"""One editor per setting, chosen from the setting's kind and its words, validated as the owner types."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Qt, QTime, Signal
from PySide6.QtWidgets import QCheckBox, QLineEdit, QWidget

from persona_desktop.config import Setting, Settings
from persona_desktop.errors import ConfigError
from persona_desktop.ui.setting_text import CHOICES, Text, text_for
from persona_desktop.ui.setting_widgets import (
    ChoiceList,
    DoubleSpinBox,
    ListEditor,
    NamedChoice,
    PathEdit,
    SpinBox,
    TimeEdit,
    as_list,
    no_wheel_focus,
)


def _microphones() -> list[str]:
    from persona_desktop.ui.audio_source import list_microphones

    return list_microphones()


class Field(QObject):
    """A setting's editor: `raw()` is what the owner entered, `error` what is wrong with it."""

    edited = Signal(str)

    def __init__(self, setting: Setting, value: Any) -> None:
        super().__init__()
        self.setting = setting
        self.key = setting.key
        self.text: Text = text_for(setting.key)
        self.help = self.text.help
        self.error: str | None = None
        self.widget = self._build(setting)
        self.set_value(value)
        self.widget.setToolTip(self.help)

    def _emit(self, *_args: object) -> None:
        self.edited.emit(self.key)

    def _build(self, s: Setting) -> QWidget:
        t = self.text
        if s.kind is bool:
            box = QCheckBox(t.label)
            box.toggled.connect(self._emit)
            return box
        if t.kind in ("folder", "file"):
            path = PathEdit(folder=t.kind == "folder", title=t.label)
            path.changed.connect(self._emit)
            return path
        if t.kind == "choices":
            choices = ChoiceList(CHOICES[s.key])
            choices.changed.connect(self._emit)
            return choices
        if t.kind in ("model", "microphone"):
            named = NamedChoice("System default" if t.kind == "microphone" else "")
            if t.kind == "microphone":
                named.load_choices_on_open(_microphones)
            named.changed.connect(self._emit)
            return named
        if s.kind is list:
            editor = ListEditor()
            editor.changed.connect(self._emit)
            return editor
        if s.kind is int:
            spin = SpinBox()
            no_wheel_focus(spin)
            spin.setRange(int(s.minimum if s.minimum is not None else -(2**31)), int(s.maximum or 2**31 - 1))
            spin.setSuffix(t.unit)
            spin.valueChanged.connect(self._emit)
            return spin
        if s.kind is float:
            dspin = DoubleSpinBox()
            no_wheel_focus(dspin)
            is_weight = s.key.startswith("sleep.weights.")
            if (s.maximum or 0) <= 1:
                dspin.setDecimals(3 if is_weight else 2)
            else:  # whole seconds and percents, but half a second of backoff is a fair choice
                dspin.setDecimals(1 if s.key == "ollama.retry_backoff_seconds" else 0)
            dspin.setSingleStep(0.01 if (s.maximum or 0) <= 1 else 1.0)
            dspin.setRange(float(s.minimum or 0.0), float(s.maximum if s.maximum is not None else 1e9))
            dspin.setSuffix(t.unit)
            if is_weight:
                dspin.setKeyboardTracking(False)  # rebalance on Enter/arrows, not per keystroke
            dspin.valueChanged.connect(self._emit)
            return dspin
        if s.pattern is not None and s.pattern_help == "a time as HH:MM":
            time = TimeEdit()
            no_wheel_focus(time)
            time.setDisplayFormat("HH:mm")
            time.timeChanged.connect(self._emit)
            return time
        line = QLineEdit()
        line.setClearButtonEnabled(True)
        line.textChanged.connect(self._emit)
        if s.key == "ollama.host":
            line.setPlaceholderText("http://127.0.0.1:11434")
        return line

    @property
    def has_own_label(self) -> bool:
        """A checkbox carries its label itself; the form shows no second one."""
        return isinstance(self.widget, QCheckBox)

    def set_value(self, value: Any) -> None:
        w = self.widget
        if isinstance(w, QCheckBox):
            w.setChecked(bool(value))
        elif isinstance(w, SpinBox):
            w.setValue(int(value))
        elif isinstance(w, DoubleSpinBox):
            w.setValue(float(value))
        elif isinstance(w, TimeEdit):
            w.setTime(QTime.fromString(str(value), "HH:mm"))
        elif isinstance(w, ListEditor | ChoiceList):
            w.set_values(as_list(value))
        elif isinstance(w, PathEdit):
            w.line.setText(str(value))
        elif isinstance(w, NamedChoice):
            w.set_value(str(value))
        elif isinstance(w, QLineEdit):
            w.setText(",".join(value) if isinstance(value, list) else str(value))

    def raw(self) -> Any:
        w = self.widget
        if isinstance(w, QCheckBox):
            return w.isChecked()
        if isinstance(w, SpinBox | DoubleSpinBox):
            return w.value()
        if isinstance(w, TimeEdit):
            return w.time().toString("HH:mm")
        if isinstance(w, ListEditor | ChoiceList):
            return w.values()
        if isinstance(w, PathEdit):
            return w.line.text().strip()
        if isinstance(w, NamedChoice):
            return w.value()
        assert isinstance(w, QLineEdit)
        return w.text()

    def validate(self, settings: Settings) -> Any:
        """The parsed value, or None with `error` set."""
        try:
            value = settings.validate(self.key, self.raw())
        except ConfigError as exc:
            self.error = f"{self.text.label}: {_plain_error(str(exc), self.key)}"
            self._mark(True)
            return None
        self.error = None
        self._mark(False)
        return value

    def _mark(self, bad: bool) -> None:
        target = self.widget.line if isinstance(self.widget, PathEdit) else self.widget
        target.setStyleSheet("background: #fde2e0; color: #202124;" if bad else "")
        self.widget.setToolTip(self.error if bad and self.error else self.help)


def _plain_error(message: str, key: str) -> str:
    """'capture.ocr_languages: 'eng+' is not valid; allowed: X' -> ''eng+' is not valid; allowed: X'."""
    return message.removeprefix(f"{key}: ")


def focus_first_error(fields: list[Field]) -> None:
    for f in fields:
        if f.error:
            f.widget.setFocus(Qt.FocusReason.OtherFocusReason)
            return
