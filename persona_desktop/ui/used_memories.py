"""Under a chat reply: "Used 3 memories", expandable, each with "Why do I know this?"."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from persona_desktop.services.recall import RecalledFact
from persona_desktop.ui.layouts import clear_layout

_REASON = {"words": "matched your words", "meaning": "close in meaning", "both": "matched words and meaning"}


class UsedMemories(QWidget):
    """The facts recalled as relevant to the last reply; hidden when there were none."""

    why_requested = Signal(int)  # a fact id

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.memories: list[RecalledFact] = []
        self.rows: list[tuple[QLabel, QPushButton]] = []
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.toggle = QPushButton()
        self.toggle.setFlat(True)
        self.toggle.setCheckable(True)
        self.toggle.setStyleSheet("QPushButton { text-align: left; color: #1a57b6; border: none; }")
        self.toggle.toggled.connect(self._show_list)
        layout.addWidget(self.toggle)
        self.list = QWidget()
        self._list_layout = QVBoxLayout(self.list)
        self._list_layout.setContentsMargins(12, 0, 0, 0)
        layout.addWidget(self.list)
        self.set_memories([])

    def set_memories(self, memories: Sequence[RecalledFact]) -> None:
        self.memories = list(memories)
        clear_layout(self._list_layout)
        self.rows = []
        for memory in self.memories:
            row = QWidget()
            h = QHBoxLayout(row)
            h.setContentsMargins(0, 0, 0, 0)
            label = QLabel(f"{memory.fact.statement}  ({_REASON.get(memory.reason, memory.reason)})")
            label.setWordWrap(True)
            why = QPushButton("Why do I know this?")
            why.clicked.connect(lambda _=False, fid=memory.fact.id: self.why_requested.emit(fid))
            h.addWidget(label, 1)
            h.addWidget(why)
            self._list_layout.addWidget(row)
            self.rows.append((label, why))
        self.setVisible(bool(self.memories))
        self.toggle.setChecked(False)
        self._show_list(False)

    def _show_list(self, expanded: bool) -> None:
        n = len(self.memories)
        noun = "memory" if n == 1 else "memories"
        arrow = "\u25be" if expanded else "\u25b8"
        self.toggle.setText(f"{arrow} Used {n} {noun}")
        self.list.setVisible(expanded)

    def expanded(self) -> bool:
        return self.toggle.isChecked()
