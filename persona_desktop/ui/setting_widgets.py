"""Editors for the settings that are not a plain number or word: lists, paths, choices, combos."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QHBoxLayout,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSpinBox,
    QTimeEdit,
    QVBoxLayout,
    QWidget,
)

if TYPE_CHECKING:  # a mixin for widgets: typed as one, a plain class at run time
    _WidgetMixin = QWidget
else:
    _WidgetMixin = object


class _WheelOnlyWhenFocused(_WidgetMixin):
    """A number, time or choice field that ignores the wheel unless the owner clicked into it.

    Otherwise scrolling the settings page edits whatever passes under the pointer
    (a weight went 0.100 -> 0.020 that way, and the others were rescaled with it).
    The ignored event goes on to the scroll area, which scrolls."""

    def wheelEvent(self, event: QWheelEvent) -> None:
        if self.hasFocus():
            super().wheelEvent(event)
        else:
            event.ignore()


def no_wheel_focus(widget: QWidget) -> QWidget:
    widget.setFocusPolicy(Qt.FocusPolicy.StrongFocus)  # the wheel never focuses it either
    return widget


class SpinBox(_WheelOnlyWhenFocused, QSpinBox):
    pass


class DoubleSpinBox(_WheelOnlyWhenFocused, QDoubleSpinBox):
    pass


class TimeEdit(_WheelOnlyWhenFocused, QTimeEdit):
    pass


class ComboBox(_WheelOnlyWhenFocused, QComboBox):
    pass


def as_list(value: object) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value]
    return [p.strip() for p in str(value or "").split(",") if p.strip()]


class ListEditor(QWidget):
    """A list of words edited as a list: double-click to change one, Add, Remove."""

    changed = Signal()

    def __init__(self) -> None:
        super().__init__()
        self.items = QListWidget()
        self.items.setEditTriggers(
            QListWidget.EditTrigger.DoubleClicked
            | QListWidget.EditTrigger.EditKeyPressed
            | QListWidget.EditTrigger.SelectedClicked
        )
        self.items.setMaximumHeight(self.items.fontMetrics().height() * 6 + 8)
        self.items.itemChanged.connect(lambda _i: self.changed.emit())
        add = QPushButton("Add")
        add.clicked.connect(self.add_new)
        self.remove = QPushButton("Remove")
        self.remove.clicked.connect(self.remove_selected)
        buttons = QVBoxLayout()
        buttons.addWidget(add)
        buttons.addWidget(self.remove)
        buttons.addStretch(1)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.items, 1)
        lay.addLayout(buttons)

    def _item(self, text: str) -> QListWidgetItem:
        item = QListWidgetItem(text)
        item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)
        return item

    def set_values(self, values: Sequence[str]) -> None:
        self.items.blockSignals(True)
        self.items.clear()
        for v in values:
            self.items.addItem(self._item(v))
        self.items.blockSignals(False)
        self.changed.emit()

    def values(self) -> list[str]:
        texts = (self.items.item(i).text().strip() for i in range(self.items.count()))
        return [t for t in texts if t]

    def add_new(self) -> None:
        item = self._item("")
        self.items.addItem(item)
        self.items.setCurrentItem(item)
        self.items.editItem(item)

    def remove_selected(self) -> None:
        for item in self.items.selectedItems():
            self.items.takeItem(self.items.row(item))
        self.changed.emit()


class PathEdit(QWidget):
    """A path typed or picked with Browse (a folder or a file)."""

    changed = Signal()

    def __init__(self, folder: bool, title: str) -> None:
        super().__init__()
        self._folder = folder
        self._title = title
        self.line = QLineEdit()
        self.line.setClearButtonEnabled(True)
        self.line.setPlaceholderText("not set")
        self.line.textChanged.connect(lambda _t: self.changed.emit())
        self.browse = QPushButton("Browse\u2026")
        self.browse.clicked.connect(self.pick)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.line, 1)
        lay.addWidget(self.browse)

    def pick(self) -> None:
        start = self.line.text()
        if self._folder:
            chosen = QFileDialog.getExistingDirectory(self, self._title, start)
        else:
            chosen, _filter = QFileDialog.getOpenFileName(self, self._title, start)
        if chosen:
            self.line.setText(chosen)


class ChoiceList(QWidget):
    """A list setting whose values come from a fixed set: one checkbox each."""

    changed = Signal()

    def __init__(self, choices: Sequence[tuple[str, str]]) -> None:
        super().__init__()
        self.boxes: dict[str, QCheckBox] = {}
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        for value, label in choices:
            box = QCheckBox(label)
            box.toggled.connect(lambda _on: self.changed.emit())
            self.boxes[value] = box
            lay.addWidget(box)

    def set_values(self, values: Sequence[str]) -> None:
        for value, box in self.boxes.items():
            box.setChecked(value in values)

    def values(self) -> list[str]:
        return [v for v, box in self.boxes.items() if box.isChecked()]


class NamedChoice(ComboBox):
    """An editable combo: pick a known name (a model, a microphone) or type another one.

    An empty value may read as something else ("System default"); `value()` gives it back empty."""

    changed = Signal()

    def __init__(self, empty_label: str = "") -> None:
        super().__init__()
        no_wheel_focus(self)
        self.setEditable(True)
        self.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self._empty = empty_label
        if empty_label and (line := self.lineEdit()) is not None:
            line.setPlaceholderText(empty_label)
        self.currentTextChanged.connect(lambda _t: self.changed.emit())

    def load_choices_on_open(self, loader: Callable[[], Sequence[str]]) -> None:
        """Fill the list the first time the owner opens it (listing microphones wakes the sound
        system, which the window should not do just by opening)."""
        self._loader: Callable[[], Sequence[str]] | None = loader

    def showPopup(self) -> None:
        loader = getattr(self, "_loader", None)
        if loader is not None:
            self._loader = None
            self.set_choices(loader())
        super().showPopup()

    def set_choices(self, names: Sequence[str]) -> None:
        keep = self.value()
        self.blockSignals(True)
        self.clear()
        if self._empty:
            self.addItem(self._empty, "")
        for name in names:
            self.addItem(name, name)
        self.blockSignals(False)
        self.set_value(keep)

    def set_value(self, value: str) -> None:
        index = self.findData(value)
        if index >= 0:
            self.setCurrentIndex(index)
        else:
            self.setEditText(value)

    def value(self) -> str:
        text = self.currentText().strip()
        return "" if self._empty and text == self._empty else text
