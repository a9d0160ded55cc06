"""Every fact, searchable; why each is known, down to its sources; revert; forget a source."""

from __future__ import annotations

import html
from collections.abc import Callable
from datetime import date

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMessageBox,
    QPushButton,
    QWidget,
)

from persona_desktop.domain.dates import as_local
from persona_desktop.domain.model import Fact, Kind
from persona_desktop.errors import PersonaError
from persona_desktop.services import review, review_views
from persona_desktop.services.review import Provenance
from persona_desktop.ui.background import Ops
from persona_desktop.ui.context import UiContext
from persona_desktop.ui.evidence_view import EvidenceCard
from persona_desktop.ui.layouts import list_with_detail
from persona_desktop.ui.review_columns import MEMORY_COLUMNS, local
from persona_desktop.ui.review_window import make_table
from persona_desktop.ui.table_model import RecordTableModel


class MemoryBrowser(QMainWindow):
    changed = Signal()
    loaded = Signal()
    provenance_shown = Signal(object)

    def __init__(self, ctx: UiContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Persona Desktop: memory")
        self._ctx = ctx
        self.ops = Ops(self, on_error=self._show_error)
        self._why_seq = 0
        self.provenance: Provenance | None = None
        self.forget_buttons: dict[int, QPushButton] = {}
        self.forget_day_buttons: dict[date, QPushButton] = {}
        self.facts = RecordTableModel(MEMORY_COLUMNS, lambda f: f.id)
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search facts...")
        self.search.setClearButtonEnabled(True)
        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(250)
        self._debounce.timeout.connect(self.reload)
        self.search.textChanged.connect(lambda _t: self._debounce.start())
        self.table = make_table(self.facts, [420, 60, 80, 115, 115])
        self.table.selectionModel().currentRowChanged.connect(lambda cur, _p: self._on_current(cur.row()))
        self.why_button = QPushButton("Why do I know this?")
        self.why_button.clicked.connect(self.show_why)
        self.revert_button = QPushButton("Revert")
        self.revert_button.clicked.connect(self.revert_selected)
        top = QHBoxLayout()
        top.addWidget(self.search, 1)
        top.addWidget(self.why_button)
        top.addWidget(self.revert_button)
        split, self.why_label, self.why_box = list_with_detail(
            top, self.table, "Select a fact, then \u201cWhy do I know this?\u201d"
        )
        split.setSizes([740, 360])
        self.setCentralWidget(split)
        self.status = QLabel("")
        self.count_label = QLabel("")
        self.statusBar().addWidget(self.status, 1)
        self.statusBar().addPermanentWidget(self.count_label)
        self.resize(1100, 640)
        self.reload()

    # --- loading ------------------------------------------------------------------------

    def reload(self) -> None:
        uow, needle = self._ctx.uow, self.search.text()
        self.ops.run(lambda: review_views.all_facts(uow, needle), self._on_facts, read=True)

    def _on_facts(self, rows: list[Fact]) -> None:
        self.facts.set_rows(rows)
        applied = sum(1 for f in rows if f.status.value == "applied")
        self.count_label.setText(f"{len(rows)} fact(s) shown, {applied} in memory now")
        self.loaded.emit()

    def _selected_id(self) -> int | None:
        rows = self.table.selectionModel().selectedRows()
        if not rows:
            cur = self.table.currentIndex()
            return self.facts.key_at(cur.row()) if cur.isValid() else None
        return self.facts.key_at(rows[0].row())

    def select_fact(self, fact_id: int) -> None:
        row = self.facts.row_of(fact_id)
        if row is not None:
            self.table.selectRow(row)

    def _on_current(self, row: int) -> None:
        if 0 <= row < len(self.facts.rows):
            self.show_why()

    # --- why ----------------------------------------------------------------------------

    def show_why(self) -> None:
        fact_id = self._selected_id()
        if fact_id is None:
            return
        self._why_seq += 1
        seq, uow = self._why_seq, self._ctx.uow
        self.ops.run(lambda: review.why(uow, fact_id), lambda p: self._on_why(seq, p), read=True)

    def _on_why(self, seq: int, prov: Provenance) -> None:
        if seq != self._why_seq:
            return
        self.provenance = prov
        f, c = prov.fact, prov.candidate
        lines = [
            f"<h3>{html.escape(f.statement)}</h3>",
            f"<p>Fact {f.id}, {f.status.value} since {local(f.valid_from)}",
        ]
        if f.valid_to is not None:
            lines.append(f" until {local(f.valid_to)}")
        lines.append("</p>")
        if c is not None:
            score = "not scored" if c.score is None else f"{c.score:.2f}"
            lines.append(
                f"<p>From candidate {c.id} ({c.origin}, score {score}), {html.escape(c.status.value)}:"
                f" <i>{html.escape(c.reason or '')}</i></p>"
            )
        else:
            lines.append("<p>No candidate: this fact was written directly.</p>")
        if prov.decisions:
            lines.append("<p><b>Decisions</b></p><ul>")
            for d in prov.decisions:
                lines.append(
                    f"<li>{html.escape(d['at'][:16].replace('T', ' '))} {html.escape(d['actor'])}: {html.escape(d['action'])}</li>"
                )
            lines.append("</ul>")
        lines.append(f"<p><b>Evidence ({len(prov.evidence)})</b></p>")
        self.why_label.setText("".join(lines))
        self._clear()
        sources: dict[int, str] = {}
        for item in prov.evidence:
            self.why_box.addWidget(EvidenceCard(item, self._ctx.data_dir, None))
            sources.setdefault(item.fragment.source_id, item.source_label)
        for source_id, label in sources.items():
            b = QPushButton(f"Forget everything learned from \u201c{label}\u201d...")
            b.clicked.connect(lambda _=False, s=source_id, lab=label: self.confirm_forget(s, lab))
            self.forget_buttons[source_id] = b
            self.why_box.addWidget(b)
        screen_days = sorted(
            {as_local(i.fragment.captured_at).date() for i in prov.evidence if i.fragment.kind is Kind.SCREEN}
        )
        for day in screen_days:
            b = QPushButton(f"Forget all screen captures of {day.isoformat()}...")
            b.clicked.connect(lambda _=False, d=day: self.confirm_forget_day(d))
            self.forget_day_buttons[day] = b
            self.why_box.addWidget(b)
        self.provenance_shown.emit(prov)

    def _clear(self) -> None:
        while self.why_box.count():
            item = self.why_box.takeAt(0)
            w = item.widget() if item is not None else None
            if w is not None:
                w.deleteLater()
        self.forget_buttons = {}
        self.forget_day_buttons = {}

    # --- actions ------------------------------------------------------------------------

    def revert_selected(self) -> None:
        fact_id = self._selected_id()
        if fact_id is None:
            return
        uow, now = self._ctx.uow, self._ctx.clock.now()
        self.ops.run(
            lambda: review.revert_fact(uow, fact_id, now), lambda _r: self._after(f"Fact {fact_id} reverted.")
        )

    def confirm_forget(self, source_id: int, label: str) -> None:
        if self._confirm(
            "Forget a source",
            f"Forget everything learned from \u201c{label}\u201d?\n\nIts facts are reverted, candidates"
            " citing it stop waiting, and its captured text is deleted. The journal keeps a record"
            " of what was forgotten. This cannot be undone.",
        ):
            self.forget(source_id)

    def confirm_forget_day(self, day: date) -> None:
        if self._confirm(
            "Forget a day of screen captures",
            f"Forget everything learned from the screen captures of {day.isoformat()}?\n\n"
            "Facts citing them are reverted, candidates citing them stop waiting, and that day's"
            " screen text is deleted. The journal keeps a record. This cannot be undone.",
        ):
            self.forget_day(day)

    def forget_day(self, day: date) -> None:
        uow, now, data_dir = self._ctx.uow, self._ctx.clock.now(), self._ctx.data_dir
        self._forget(
            lambda: review.forget_day(uow, Kind.SCREEN, day, now, data_dir),
            lambda c: f"Forgotten: {c.get('sources', 0)} capture(s) of {day.isoformat()},",
        )

    def forget(self, source_id: int) -> None:
        uow, now, data_dir = self._ctx.uow, self._ctx.clock.now(), self._ctx.data_dir
        self._forget(lambda: review.forget_source(uow, source_id, now, data_dir), lambda _c: "Forgotten:")

    def _confirm(self, title: str, question: str) -> bool:
        buttons = QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel
        answer = QMessageBox.question(self, title, question, buttons, QMessageBox.StandardButton.Cancel)
        return answer == QMessageBox.StandardButton.Yes

    def _forget(self, call: Callable[[], dict[str, int]], head: Callable[[dict[str, int]], str]) -> None:
        def done(counts: dict[str, int]) -> None:
            self._after(
                f"{head(counts)} {counts.get('fragments', 0)} fragment(s) deleted,"
                f" {counts.get('facts_reverted', 0)} fact(s) reverted,"
                f" {counts.get('candidates_dropped', 0)} candidate(s) dropped."
            )

        self.ops.run(call, done)

    def _after(self, message: str) -> None:
        self.status.setStyleSheet("")
        self.status.setText(message)
        self.changed.emit()
        self.reload()
        self.show_why()

    def _show_error(self, exc: PersonaError) -> None:
        self.status.setStyleSheet("color: #b3261e;")
        self.status.setText(str(exc))

    def shutdown(self) -> None:
        self._debounce.stop()
        self.ops.shutdown()
