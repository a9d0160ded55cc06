"""Every fact, searchable; why each is known, down to its sources; revert (with undo); forget a source.

The detail pane always belongs to the fact selected now: it is emptied the moment
the selection changes, before the new fact's sources are read, so a "Forget
everything learned from ..." button of the previous fact can never be clicked. Its
writes announce a memory change; it reloads on the changes others make.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from datetime import date

from PySide6.QtCore import QItemSelectionModel, Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent, QKeySequence, QResizeEvent, QShortcut
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMainWindow,
    QPushButton,
    QSizePolicy,
    QWidget,
)

from persona_desktop.domain.dates import as_local
from persona_desktop.domain.model import Fact, FactStatus, Kind
from persona_desktop.errors import PersonaError
from persona_desktop.services import review, review_views
from persona_desktop.services.explain import decision_words, reason_words
from persona_desktop.services.explain import local_time as local
from persona_desktop.services.review import Provenance
from persona_desktop.ui.context import UiContext
from persona_desktop.ui.dialogs import confirm, quoted
from persona_desktop.ui.evidence_view import AudioPlayer, EvidenceCard
from persona_desktop.ui.layouts import clear_layout, list_with_detail, make_table, with_margins
from persona_desktop.ui.memory_events import FORGOTTEN, REVERTED, MemoryChange
from persona_desktop.ui.review_columns import MEMORY_COLUMNS
from persona_desktop.ui.table_model import RecordTableModel
from persona_desktop.ui.window_setup import prepare_window
from persona_desktop.ui.worker import WorkQueue

PLACEHOLDER = "<p style='color:#5f6368'>Select a fact to see why it is known, down to its sources.</p>"
EMPTY = (
    "Nothing is remembered yet.\n\nFacts appear here once you approve a candidate in the review window,"
    " or when the nightly sleep cycle finds something you said yourself."
)


class MemoryBrowser(QMainWindow):
    loaded = Signal()
    provenance_shown = Signal(object)

    def __init__(self, ctx: UiContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        prepare_window(self, "Memory", 1180, 700)
        self._ctx = ctx
        self.work = WorkQueue(self, on_error=self._show_error, events=ctx.events, name="the memory browser")
        self._why_seq = 0
        self._undo_target: tuple[str, int] | None = None
        self.provenance: Provenance | None = None
        self.player = AudioPlayer()
        self.forget_buttons: dict[int, QPushButton] = {}
        self.forget_day_buttons: dict[date, QPushButton] = {}
        self.facts = RecordTableModel(MEMORY_COLUMNS, lambda f: f.id)
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search what is remembered\u2026")
        self.search.setClearButtonEnabled(True)
        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(250)
        self._debounce.timeout.connect(self.reload)
        self.search.textChanged.connect(lambda _t: self._debounce.start())
        self.table = make_table(self.facts, [None, "someone else", "superseded", "2026-11-30 16:27"], EMPTY)
        self.table.selectionModel().currentRowChanged.connect(lambda cur, _p: self._on_current(cur.row()))
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._on_selection())
        self.revert_button = QPushButton("Revert\u2026")
        self.revert_button.setToolTip("Take this fact out of memory (you can undo it)")
        self.revert_button.clicked.connect(self.revert_selected)
        self.revert_button.setEnabled(False)
        top = QHBoxLayout()
        top.addWidget(self.search, 1)
        top.addWidget(self.revert_button)
        self.pane = list_with_detail(top, self.table, PLACEHOLDER)
        self.why_label, self.why_box = self.pane.label, self.pane.box
        self.pane.split.setStretchFactor(0, 3)
        self.pane.split.setStretchFactor(1, 2)
        self.pane.split.setSizes([self.width() * 3 // 5, self.width() * 2 // 5])
        self.setCentralWidget(with_margins(self.pane.split))
        self.status = QLabel("")
        self.status.setWordWrap(True)
        self.undo_button = QPushButton("Undo")
        self.undo_button.clicked.connect(self.undo_last)
        self.undo_button.setVisible(False)
        self.count_label = QLabel("")
        self.statusBar().addWidget(self.status, 1)
        self.statusBar().addWidget(self.undo_button)
        self.statusBar().addPermanentWidget(self.count_label)
        QShortcut(QKeySequence.StandardKey.Find, self, self.search.setFocus)
        ctx.events.changed.connect(self._on_memory_changed)
        self.reload()

    # --- loading ------------------------------------------------------------------------

    def _on_memory_changed(self, change: MemoryChange) -> None:
        """Someone else changed memory (a decision in the review window, a sleep run)."""
        if change.origin is not self and change.facts:
            self.reload()

    def reload(self) -> None:
        uow, needle = self._ctx.uow, self.search.text()
        self.work.run(lambda: review_views.all_facts(uow, needle), self._on_facts, read=True)

    def _on_facts(self, rows: list[Fact]) -> None:
        keep = self._selected_id()
        self.facts.set_rows(rows)
        applied = sum(1 for f in rows if f.status is FactStatus.APPLIED)
        if self.search.text().strip():
            self.count_label.setText(f"{len(rows)} found, {applied} of them in memory now")
            self.table.set_empty_text(f"Nothing remembered matches \u201c{self.search.text().strip()}\u201d.")
        else:
            gone = len(rows) - applied
            self.count_label.setText(
                f"{applied} in memory" + (f", {gone} taken back or replaced" if gone else "")
            )
            self.table.set_empty_text(EMPTY)
        if keep is not None and self.facts.row_of(keep) is not None:
            self.select_fact(keep)
        else:
            self._show_nothing()
        self.loaded.emit()

    def _selected_id(self) -> int | None:
        rows = self.table.selectionModel().selectedRows()
        return self.facts.key_at(rows[0].row()) if rows else None

    def select_fact(self, fact_id: int) -> None:
        """Select exactly this fact (not `selectRow`, which toggles while Ctrl is held) and show why."""
        row = self.facts.row_of(fact_id)
        if row is not None:
            flags = QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
            index = self.facts.index(row, 0)
            self.table.selectionModel().setCurrentIndex(index, flags)
            self.table.scrollTo(index)
            self.show_why()

    def _on_current(self, row: int) -> None:
        if 0 <= row < len(self.facts.rows):
            self.show_why()

    def _on_selection(self) -> None:
        if self._selected_id() is None:
            self._show_nothing()

    def _show_nothing(self) -> None:
        self._why_seq += 1  # a read still on its way belongs to a fact no longer selected
        self.provenance = None
        self.why_label.setText(PLACEHOLDER)
        self._clear()
        self.revert_button.setEnabled(False)

    # --- why ----------------------------------------------------------------------------

    def show_why(self) -> None:
        fact_id = self._selected_id()
        if fact_id is None:
            self._show_nothing()
            return
        row = self.facts.row_of(fact_id)
        fact = self.facts.rows[row] if row is not None else None
        self._why_seq += 1
        self.provenance = None
        self._clear()  # at once: nothing of the previous fact may stay clickable
        if fact is not None:
            self.why_label.setText(
                f"<h3>{html.escape(fact.statement)}</h3><p style='color:#5f6368'>Reading its sources\u2026</p>"
            )
            self.revert_button.setEnabled(fact.status is FactStatus.APPLIED)
        seq, uow = self._why_seq, self._ctx.uow
        self.work.run(lambda: review.why(uow, fact_id), lambda p: self._on_why(seq, p), read=True)

    def _on_why(self, seq: int, prov: Provenance) -> None:
        if seq != self._why_seq or self._selected_id() != prov.fact.id:
            return
        self.provenance = prov
        self.why_label.setText(provenance_html(prov))
        self._clear()
        sources: dict[int, str] = {}
        for item in prov.evidence:
            self.why_box.addWidget(EvidenceCard(item, self._ctx.media, self.player))
            sources.setdefault(item.fragment.source_id, item.source_label)
        if sources:
            self.why_box.addWidget(_section("Forget"))
        for source_id, label in sources.items():
            b = ElidedButton(f"Forget everything learned from \u201c{label}\u201d\u2026")
            b.clicked.connect(lambda _=False, s=source_id, lab=label: self.confirm_forget(s, lab))
            self.forget_buttons[source_id] = b
            self.why_box.addWidget(b)
        screen_days = sorted(
            {as_local(i.fragment.captured_at).date() for i in prov.evidence if i.fragment.kind is Kind.SCREEN}
        )
        for day in screen_days:
            b = ElidedButton(f"Forget all screen captures of {day:%A %d %B %Y}\u2026")
            b.clicked.connect(lambda _=False, d=day: self.confirm_forget_day(d))
            self.forget_day_buttons[day] = b
            self.why_box.addWidget(b)
        self.provenance_shown.emit(prov)

    def _clear(self) -> None:
        clear_layout(self.why_box)
        self.forget_buttons = {}
        self.forget_day_buttons = {}

    # --- actions ------------------------------------------------------------------------

    def revert_selected(self) -> None:
        fact_id = self._selected_id()
        row = self.facts.row_of(fact_id) if fact_id is not None else None
        if fact_id is None or row is None:
            return
        statement = self.facts.rows[row].statement
        if not confirm(
            self,
            "Revert a fact",
            f"Take {quoted(statement)} out of memory?",
            "Your assistant stops knowing it. The fact and where it came from stay in the"
            " journal, and you can undo this.",
            "Revert",
        ):
            return
        uow, now = self._ctx.uow, self._ctx.clock.now()

        def done(_r: object) -> None:
            self._undo_target = ("fact.reverted", fact_id)
            self._after(f"Reverted: {quoted(statement)}.", undoable=True)

        self.work.run(lambda: review.revert_fact(uow, fact_id, now), done, change=REVERTED)

    def undo_last(self) -> None:
        target = self._undo_target
        if target is None:
            return
        uow, now = self._ctx.uow, self._ctx.clock.now()
        self._undo_target = None
        self.undo_button.setVisible(False)
        self.work.run(
            lambda: review.undo(uow, now, expect=target),
            lambda _d: self._after("Undone: the fact is back."),
            change=REVERTED,
        )

    def confirm_forget(self, source_id: int, label: str) -> None:
        if confirm(
            self,
            "Forget a source",
            f"Forget everything learned from \u201c{label}\u201d?",
            "Facts learned from it are reverted, candidates citing it stop waiting, and its"
            " captured text is deleted. The journal keeps a record of what was forgotten."
            " This cannot be undone.",
            "Forget",
            destructive=True,
        ):
            self.forget(source_id, label)

    def confirm_forget_day(self, day: date) -> None:
        if confirm(
            self,
            "Forget a day of screen captures",
            f"Forget everything read from the screen on {day:%A %d %B %Y}?",
            "Facts citing those captures are reverted, candidates citing them stop waiting, and"
            " that day's screen text is deleted. The journal keeps a record. This cannot be undone.",
            "Forget",
            destructive=True,
        ):
            self.forget_day(day)

    def forget_day(self, day: date) -> None:
        uow, now, data_dir = self._ctx.uow, self._ctx.clock.now(), self._ctx.data_dir
        self._forget(
            lambda: review.forget_day(uow, Kind.SCREEN, day, now, data_dir),
            f"Forgotten: the screen captures of {day:%d %B %Y}:",
        )

    def forget(self, source_id: int, label: str = "") -> None:
        uow, now, data_dir = self._ctx.uow, self._ctx.clock.now(), self._ctx.data_dir
        head = f"Forgotten: \u201c{label}\u201d:" if label else "Forgotten:"
        self._forget(lambda: review.forget_source(uow, source_id, now, data_dir), head)

    def _forget(self, call: Callable[[], dict[str, int]], head: str) -> None:
        def done(counts: dict[str, int]) -> None:
            self._undo_target = None
            self._after(
                f"{head} {_n(counts.get('fragments', 0), 'captured line')} deleted,"
                f" {_n(counts.get('facts_reverted', 0), 'fact')} reverted,"
                f" {_n(counts.get('candidates_dropped', 0), 'candidate')} no longer waiting."
            )

        self.work.run(call, done, change=FORGOTTEN)

    def _after(self, message: str, undoable: bool = False) -> None:
        self.status.setStyleSheet("")
        self.status.setText(message)
        self.undo_button.setVisible(undoable)
        self.reload()

    def _show_error(self, exc: PersonaError) -> None:
        self.status.setStyleSheet("color: #b3261e;")
        self.status.setText(str(exc))
        self.undo_button.setVisible(False)

    def shutdown(self) -> None:
        self._debounce.stop()
        self.player.close()
        self.work.shutdown()

    def closeEvent(self, event: QCloseEvent) -> None:
        self._debounce.stop()
        self.player.stop()
        super().closeEvent(event)


class ElidedButton(QPushButton):
    """A button that never makes the pane wider than it is: a long label is shortened with "…"."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.full_text = text
        self.setToolTip(text)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        room = max(10, event.size().width() - 24)
        self.setText(self.fontMetrics().elidedText(self.full_text, Qt.TextElideMode.ElideMiddle, room))


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _section(title: str) -> QLabel:
    label = QLabel(f"<b>{html.escape(title)}</b>")
    label.setContentsMargins(0, 8, 0, 0)
    return label


def provenance_html(prov: Provenance) -> str:
    """Why a fact is known, in words: how it got into memory, the decisions, then the evidence."""
    f, c = prov.fact, prov.candidate
    status = {
        FactStatus.APPLIED: f"In memory since {local(f.valid_from)}",
        FactStatus.SUPERSEDED: f"Replaced by a newer fact on {local(f.valid_to)}",
        FactStatus.REVERTED: f"Taken back on {local(f.valid_to)}",
    }[f.status]
    lines = [f"<h3>{html.escape(f.statement)}</h3>", f"<p>{status}.</p>"]
    if c is None:
        lines.append("<p>Written directly, without a proposal to review.</p>")
    else:
        how = (
            "approved by you" if any(d["actor"] == "owner" for d in prov.decisions) else "added automatically"
        )
        score = "" if c.score is None else f", score {c.score:.2f}"
        lines.append(f"<p>Proposed by the {html.escape(_ORIGINS.get(c.origin, c.origin))}{score}; {how}.</p>")
        if c.reason:
            lines.append(f"<p style='color:#5f6368'>{html.escape(reason_words(c.reason))}</p>")
    if prov.decisions:
        lines.append("<p><b>History</b></p><ul style='margin-left:-20px'>")
        for d in prov.decisions:
            lines.append(
                f"<li>{html.escape(d['at'][:16].replace('T', ' '))}: {html.escape(decision_words(d))}</li>"
            )
        lines.append("</ul>")
    n = len(prov.evidence)
    lines.append(f"<p><b>Where it came from</b> ({n} {'piece' if n == 1 else 'pieces'} of evidence)</p>")
    if not n:
        lines.append("<p style='color:#5f6368'>No evidence is left: its sources were forgotten.</p>")
    return "".join(lines)


_ORIGINS = {
    "sleep": "nightly sleep cycle",
    "review": "chat review",
    "owner": "owner",
    "mcp": "other assistant (MCP)",
}
