"""The list-and-detail layout and the record table both the review window and the memory browser use."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QPainter, QPaintEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QGridLayout,
    QHeaderView,
    QLabel,
    QLayout,
    QScrollArea,
    QSizePolicy,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from persona_desktop.ui.table_model import RecordTableModel


class RecordTable(QTableView):
    """A read-only table of records that says what happens next when it has none."""

    def __init__(self, empty_text: str = "") -> None:
        super().__init__()
        self.empty_text = empty_text

    def set_empty_text(self, text: str) -> None:
        self.empty_text = text
        self.viewport().update()

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        model = self.model()
        if model is None or model.rowCount() or not self.empty_text:
            return
        painter = QPainter(self.viewport())
        painter.setPen(self.palette().placeholderText().color())
        area = self.viewport().rect().adjusted(24, 24, -24, -24)
        flags = Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop | Qt.TextFlag.TextWordWrap
        painter.drawText(area, int(flags), self.empty_text)
        painter.end()


def make_table(model: RecordTableModel[Any], fit: Sequence[str | None], empty_text: str = "") -> RecordTable:
    """A table over `model`; `fit` gives, per column, the widest text it must show in full.

    The column given None takes the space left (the statement); every other column is
    as wide as its header or its widest expected text, whichever is wider, so that no
    header or value is cut ("About", "Sources" were)."""
    view = RecordTable(empty_text)
    view.setModel(model)
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
    view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    view.setAlternatingRowColors(True)
    view.setWordWrap(False)
    view.setTextElideMode(Qt.TextElideMode.ElideRight)
    view.verticalHeader().setVisible(False)
    view.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
    view.verticalHeader().setDefaultSectionSize(view.fontMetrics().height() + 10)
    header = view.horizontalHeader()
    header.setHighlightSections(False)
    header.setStretchLastSection(False)
    header.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
    metrics = view.fontMetrics()
    header_metrics = header.fontMetrics()
    for i, widest in enumerate(fit):
        if widest is None:
            header.setSectionResizeMode(i, QHeaderView.ResizeMode.Stretch)
            continue
        title = str(model.headerData(i, Qt.Orientation.Horizontal) or "")
        width = max(header_metrics.horizontalAdvance(title) + 28, metrics.horizontalAdvance(widest) + 20)
        header.setSectionResizeMode(i, QHeaderView.ResizeMode.Interactive)
        view.setColumnWidth(i, width)
    return view


@dataclass(frozen=True)
class DetailPane:
    """The parts of a list-and-detail layout a window fills in."""

    split: QSplitter
    label: QLabel  # the rich-text head of the detail pane
    box: QVBoxLayout  # cards and buttons under it
    scroll: QScrollArea


def list_with_detail(controls: QLayout, table: QWidget, placeholder: str) -> DetailPane:
    """Controls above a table on the left; a vertically scrolling detail pane on the right.

    Nothing in the pane may be wider than the pane: text wraps and images scale
    (a screen crop used to run off the right edge, with no way to scroll to it)."""
    left = QWidget()
    lv = QVBoxLayout(left)
    lv.setContentsMargins(0, 0, 0, 0)
    lv.addLayout(controls)
    lv.addWidget(table)
    label = QLabel(placeholder)
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.RichText)
    label.setAlignment(Qt.AlignmentFlag.AlignTop)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
    label.setOpenExternalLinks(False)
    box = QVBoxLayout()
    pane = QWidget()
    pv = QVBoxLayout(pane)
    pv.addWidget(label)
    pv.addLayout(box)
    pv.addStretch(1)
    scroll = QScrollArea()
    scroll.setWidgetResizable(True)
    scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)  # text wraps instead
    scroll.setWidget(pane)
    split = QSplitter()
    split.setChildrenCollapsible(False)
    split.addWidget(left)
    split.addWidget(scroll)
    return DetailPane(split, label, box, scroll)


def with_margins(widget: QWidget, margin: int = 8) -> QWidget:
    """The window's content a little away from its edges, as desktop apps have it."""
    outer = QWidget()
    lay = QVBoxLayout(outer)
    lay.setContentsMargins(margin, margin, margin, 0)
    lay.addWidget(widget)
    return outer


def clear_layout(box: QLayout) -> None:
    """Remove and delete every widget of a layout (the cards of the previous item)."""
    while box.count():
        item = box.takeAt(0)
        w = item.widget() if item is not None else None
        if w is not None:
            w.hide()
            w.deleteLater()


def wrapping_label(text: str, style: str = "") -> QLabel:
    """A word-wrapped label that takes only the height its text needs in a form.

    Left to itself, a wrapped label asks for the height of its text at its narrowest, and
    a form leaves that much room under a one-line help text."""
    label = QLabel(text)
    label.setWordWrap(True)
    label.setMinimumHeight(label.fontMetrics().height())
    label.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
    if style:
        label.setStyleSheet(style)
    return label


class FormGrid(QGridLayout):
    """A two-column form (labels right-aligned, fields stretching) on a grid.

    QFormLayout leaves gaps under word-wrapped help texts (it sizes rows for a narrower
    width than they get); a grid sizes them for the width they really have."""

    def __init__(self) -> None:
        super().__init__()
        self.setColumnStretch(1, 1)
        self.setHorizontalSpacing(12)
        self.setVerticalSpacing(8)
        self._rows = 0

    def add_row(self, label: str, field: QWidget | QLayout) -> None:
        if label:
            title = QLabel(label)
            title.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignTop)
            title.setContentsMargins(0, 4, 0, 0)
            self.addWidget(title, self._rows, 0)
        if isinstance(field, QLayout):
            self.addLayout(field, self._rows, 1)
        else:
            self.addWidget(field, self._rows, 1)
        self._rows += 1

    def add_span(self, widget: QWidget) -> None:
        self.addWidget(widget, self._rows, 0, 1, 2)
        self._rows += 1
