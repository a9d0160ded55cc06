"""A read-only table model over a list of records, one `Column` per shown attribute.

Cheap for thousands of rows: `data()` only formats what the view paints, and rows
are removed in place (no reset) when the owner decides on them.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt

T = TypeVar("T")
Index = QModelIndex | QPersistentModelIndex


@dataclass(frozen=True)
class Column(Generic[T]):
    header: str
    text: Callable[[T], str]
    tip: Callable[[T], str] | None = None
    align_right: bool = False


class RecordTableModel(QAbstractTableModel, Generic[T]):
    def __init__(self, columns: Sequence[Column[T]], key: Callable[[T], int]) -> None:
        super().__init__()
        self.columns = list(columns)
        self._key = key
        self.rows: list[T] = []

    # --- Qt model API -------------------------------------------------------------------

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.columns)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row, col = self.rows[index.row()], self.columns[index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            return col.text(row)
        if role == Qt.ItemDataRole.ToolTipRole:
            return col.tip(row) if col.tip is not None else col.text(row)
        if role == Qt.ItemDataRole.TextAlignmentRole and col.align_right:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.UserRole:
            return self._key(row)
        return None

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return self.columns[section].header
        return None

    # --- records ------------------------------------------------------------------------

    def set_rows(self, rows: Iterable[T]) -> None:
        self.beginResetModel()
        self.rows = list(rows)
        self.endResetModel()

    def key_at(self, row: int) -> int:
        return self._key(self.rows[row])

    def row_of(self, key: int) -> int | None:
        for i, r in enumerate(self.rows):
            if self._key(r) == key:
                return i
        return None

    def insert_sorted(self, record: T) -> int:
        """Insert keeping rows in key order (as the store lists them); returns the row."""
        key = self._key(record)
        pos = bisect.bisect_left([self._key(r) for r in self.rows], key)
        self.beginInsertRows(QModelIndex(), pos, pos)
        self.rows.insert(pos, record)
        self.endInsertRows()
        return pos

    def refresh_rows(self, rows: Iterable[int]) -> None:
        """Repaint rows whose records changed in place."""
        last = len(self.columns) - 1
        for r in rows:
            self.dataChanged.emit(self.index(r, 0), self.index(r, last))

    def remove_keys(self, keys: Iterable[int]) -> int:
        """Remove rows by key, in contiguous runs from the bottom up; returns how many."""
        wanted = set(keys)
        positions = [i for i, r in enumerate(self.rows) if self._key(r) in wanted]
        removed = 0
        while positions:
            end = positions.pop()
            start = end
            while positions and positions[-1] == start - 1:
                start = positions.pop()
            self.beginRemoveRows(QModelIndex(), start, end)
            del self.rows[start : end + 1]
            self.endRemoveRows()
            removed += end - start + 1
        return removed
