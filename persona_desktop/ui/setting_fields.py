"""One editor per setting, chosen from the setting's kind, validated as the owner types."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Qt, QTime, Signal
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QLineEdit,
    QSpinBox,
    QTimeEdit,
    QWidget,
)

from persona_desktop.config import Setting, Settings
from persona_desktop.errors import ConfigError

LABELS = {
    "sleep.enabled": "Run the nightly sleep cycle",
    "sleep.window_start": "Window starts at",
    "sleep.window_end": "Window ends at",
    "ollama.host": "Ollama host",
    "ollama.model": "Model",
    "capture.screen_enabled": "Capture the screen",
    "capture.speech_enabled": "Capture speech",
    "capture.ocr_languages": "OCR languages",
    "capture.ocr_min_confidence": "OCR minimum confidence",
    "capture.exclude_apps": "Never capture these apps",
    "capture.exclude_titles": "Never capture windows titled",
    "capture.keep_images": "Keep screen crops",
    "capture.periodic_with_flash": "Capture periodically although the screen flashes",
    "capture.keep_audio": "Keep speech clips",
    "review.enabled": "Review the live chat",
    "chat.include_observations": "Observations in the chat prompt",
    "export.enabled": "Export to Markdown",
    "app.start_at_login": "Start at login",
}


def label_for(key: str) -> str:
    if key in LABELS:
        return LABELS[key]
    if key.startswith("sleep.weights."):
        return f"Weight: {key.removeprefix('sleep.weights.')}"
    tail = key.split(".", 1)[1].replace("_", " ")
    return tail[:1].upper() + tail[1:]


class _WheelOnlyWhenFocused:
    """A number or time field that ignores the wheel unless the owner clicked into it.

    Otherwise scrolling the settings page edits whatever passes under the pointer
    (a weight went 0.100 -> 0.020 that way, and the others were rescaled with it).
    The ignored event goes on to the scroll area, which scrolls."""

    def wheelEvent(self, event: QWheelEvent) -> None:
        if self.hasFocus():  # type: ignore[attr-defined]
            super().wheelEvent(event)  # type: ignore[misc]
        else:
            event.ignore()


class SpinBox(_WheelOnlyWhenFocused, QSpinBox):
    pass


class DoubleSpinBox(_WheelOnlyWhenFocused, QDoubleSpinBox):
    pass


class TimeEdit(_WheelOnlyWhenFocused, QTimeEdit):
    pass


class ComboBox(_WheelOnlyWhenFocused, QComboBox):
    pass


def _no_wheel_focus(widget: QWidget) -> QWidget:
    widget.setFocusPolicy(Qt.FocusPolicy.StrongFocus)  # the wheel never focuses it either
    return widget


class Field(QObject):
    """A setting's editor: `raw()` is what the owner typed, `error` what is wrong with it."""

    edited = Signal(str)

    def __init__(self, setting: Setting, value: Any) -> None:
        super().__init__()
        self.setting = setting
        self.key = setting.key
        self.error: str | None = None
        self.widget = self._build(setting)
        self.set_value(value)
        self.widget.setToolTip(setting.help)

    def _build(self, s: Setting) -> QWidget:
        if s.kind is bool:
            box = QCheckBox()
            box.toggled.connect(lambda _=False: self.edited.emit(self.key))
            return box
        if s.kind is int:
            spin = SpinBox()
            _no_wheel_focus(spin)
            spin.setRange(int(s.minimum if s.minimum is not None else -(2**31)), int(s.maximum or 2**31 - 1))
            spin.valueChanged.connect(lambda _=0: self.edited.emit(self.key))
            return spin
        if s.kind is float:
            dspin = DoubleSpinBox()
            _no_wheel_focus(dspin)
            is_weight = s.key.startswith("sleep.weights.")
            dspin.setDecimals(3 if is_weight or (s.maximum or 0) <= 1 else 1)
            dspin.setSingleStep(0.01 if (s.maximum or 0) <= 1 else 1.0)
            dspin.setRange(float(s.minimum or 0.0), float(s.maximum if s.maximum is not None else 1e9))
            if is_weight:
                dspin.setKeyboardTracking(False)  # rebalance on Enter/arrows, not per keystroke
            dspin.valueChanged.connect(lambda _=0.0: self.edited.emit(self.key))
            return dspin
        if s.pattern is not None and s.pattern_help == "a time as HH:MM":
            t = TimeEdit()
            _no_wheel_focus(t)
            t.setDisplayFormat("HH:mm")
            t.timeChanged.connect(lambda _=None: self.edited.emit(self.key))
            return t
        line = QLineEdit()
        line.setClearButtonEnabled(True)
        if s.kind is list:
            line.setPlaceholderText("comma-separated")
        line.textChanged.connect(self._on_text)
        return line

    def _on_text(self, _text: str) -> None:
        self.edited.emit(self.key)

    def set_value(self, value: Any) -> None:
        w = self.widget
        if isinstance(w, QCheckBox):
            w.setChecked(bool(value))
        elif isinstance(w, QSpinBox):
            w.setValue(int(value))
        elif isinstance(w, QDoubleSpinBox):
            w.setValue(float(value))
        elif isinstance(w, QTimeEdit):
            w.setTime(QTime.fromString(str(value), "HH:mm"))
        elif isinstance(w, QLineEdit):
            w.setText(",".join(value) if isinstance(value, list) else str(value))

    def raw(self) -> Any:
        w = self.widget
        if isinstance(w, QCheckBox):
            return w.isChecked()
        if isinstance(w, QSpinBox):
            return w.value()
        if isinstance(w, QDoubleSpinBox):
            return w.value()
        if isinstance(w, QTimeEdit):
            return w.time().toString("HH:mm")
        assert isinstance(w, QLineEdit)
        return w.text()

    def validate(self, settings: Settings) -> Any:
        """The parsed value, or None with `error` set."""
        try:
            value = settings.validate(self.key, self.raw())
        except ConfigError as exc:
            self.error = str(exc)
            self._mark(True)
            return None
        self.error = None
        self._mark(False)
        return value

    def _mark(self, bad: bool) -> None:
        self.widget.setStyleSheet("background: #fde2e0;" if bad else "")
        self.widget.setToolTip(self.error if bad and self.error else self.setting.help)

    @property
    def is_text(self) -> bool:
        return isinstance(self.widget, QLineEdit)


def focus_first_error(fields: list[Field]) -> None:
    for f in fields:
        if f.error:
            f.widget.setFocus(Qt.FocusReason.OtherFocusReason)
            return
