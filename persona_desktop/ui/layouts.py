"""The master-detail layout both the review window and the memory browser use."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QLayout, QScrollArea, QSplitter, QVBoxLayout, QWidget


def list_with_detail(
    controls: QLayout, table: QWidget, placeholder: str
) -> tuple[QSplitter, QLabel, QVBoxLayout]:
    """Controls above a table on the left; a scrolling rich-text pane on the right.

    Returns the splitter, the pane's label and the layout under it (for evidence cards).
    """
    left = QWidget()
    lv = QVBoxLayout(left)
    lv.setContentsMargins(0, 0, 0, 0)
    lv.addLayout(controls)
    lv.addWidget(table)
    label = QLabel(placeholder)
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.RichText)
    label.setAlignment(Qt.AlignmentFlag.AlignTop)
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
    split.addWidget(left)
    split.addWidget(scroll)
    return split, label, box
