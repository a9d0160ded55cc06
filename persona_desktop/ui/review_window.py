"""The morning review: what waits for the owner, what was added, their decisions, observations.

Keyboard-driven: A approves, E (or F2) edits then approves, R (or Delete) rejects,
Ctrl+Z undoes the last decision (again and again), V reverts an added fact (after
asking). Approve and Reject work on all selected rows, and their buttons say how
many. The detail pane always shows the selection of now: one candidate, several,
or none. All store work runs in the background. A decision announces a memory change;
the window follows the changes others make (a sleep run, a chat review, the memory
browser) by reloading.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from PySide6.QtCore import QEvent, QItemSelectionModel, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeyEvent, QKeySequence, QTextCursor
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QPlainTextEdit,
    QPushButton,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from persona_desktop.domain.model import Candidate, Observation, Revision
from persona_desktop.errors import PersonaError
from persona_desktop.services import queries, review, review_views
from persona_desktop.services.queries import FactView
from persona_desktop.services.review import EvidenceItem
from persona_desktop.services.review_views import EvidenceSummary
from persona_desktop.ui.context import UiContext
from persona_desktop.ui.dialogs import confirm, quoted
from persona_desktop.ui.evidence_view import AudioPlayer, EvidenceCard
from persona_desktop.ui.layouts import clear_layout, list_with_detail, make_table, with_margins
from persona_desktop.ui.memory_events import DECIDED, REVERTED, MemoryChange
from persona_desktop.ui.review_columns import (
    CANDIDATE_COLUMNS,
    FACT_COLUMNS,
    JOURNAL_COLUMNS,
    OBSERVATION_COLUMNS,
    WaitingRow,
)
from persona_desktop.ui.review_detail import (
    WEIGHTS_LINK,
    candidate_html,
    proposal_html,
    selection_html,
)
from persona_desktop.ui.table_model import Column, RecordTableModel
from persona_desktop.ui.window_setup import bring_forward, prepare_window
from persona_desktop.ui.worker import WorkQueue

T = TypeVar("T")
JOURNAL_LIMIT = 1000
OBSERVATIONS_BANNER = (
    "<b>Observations are hypotheses, not facts.</b> They are patterns the sleep cycle noticed"
    " over a period. They are never stored as facts and never reach the assistant as facts."
)
PICK_ONE = "<p style='color:#5f6368'>Select a proposal to see why it waits, its score and its evidence.</p>"
NOTHING_TO_SHOW = (
    "<p style='color:#5f6368'>When something waits for you, select it here to see why it waits,"
    " how sure Persona is, and exactly where it comes from.</p>"
)
RECENT_EMPTY = (
    "Nothing was added to memory in the last 7 days.\n\nWhat you approve, and what the"
    " sleep cycle adds by itself (only facts proven by your own words), is listed here."
)
HISTORY_EMPTY = (
    "You have not decided anything yet.\n\nYour approvals, rejections, reverts and undos will be"
    " listed here, newest first."
)
OBSERVATIONS_EMPTY = (
    "No observations yet.\n\nAfter a sleep cycle, patterns it noticed over the week appear here,"
    " as hypotheses to read, never as facts."
)


@dataclass(frozen=True)
class SideTabs:
    recent: list[FactView]
    journal: list[Revision]
    observations: list[Observation]


# Work priorities: what the owner is looking at goes before background filling.
SHOW, DECIDE, FILL = 20, 10, 0


@dataclass(frozen=True)
class Outcome:
    done: list[int]
    errors: list[str]


class EditDialog(QDialog):
    """The owner's own wording of a fact. Tab moves on to the buttons; Enter approves;
    Shift+Enter starts a new line."""

    def __init__(self, statement: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Edit, then approve")
        self.editor = QPlainTextEdit(statement)
        self.editor.setTabChangesFocus(True)
        self.editor.installEventFilter(self)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.approve_button = buttons.addButton("Approve", QDialogButtonBox.ButtonRole.AcceptRole)
        self.approve_button.setDefault(True)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.editor.textChanged.connect(lambda: self.approve_button.setEnabled(bool(self.text())))
        hint = QLabel("Enter approves, Shift+Enter starts a new line, Esc cancels.")
        hint.setStyleSheet("color: #5f6368;")
        lay = QVBoxLayout(self)
        lay.addWidget(QLabel("Write the fact the way you want it remembered:"))
        lay.addWidget(self.editor)
        lay.addWidget(hint)
        lay.addWidget(buttons)
        self.resize(520, 220)
        self.editor.moveCursor(QTextCursor.MoveOperation.End)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.editor and event.type() == QEvent.Type.KeyPress:
            assert isinstance(event, QKeyEvent)
            enter = event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
            if enter and not event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
                if self.text():
                    self.accept()
                return True
        return super().eventFilter(watched, event)

    def text(self) -> str:
        return self.editor.toPlainText().strip()


class ReviewWindow(QMainWindow):
    waiting_loaded = Signal()  # the Waiting tab shows the store's list
    loaded = Signal()  # every tab shows the store's state

    def __init__(self, ctx: UiContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        prepare_window(self, "Morning review", 1280, 760)
        self._ctx = ctx
        self.work = WorkQueue(self, on_error=self._show_error, events=ctx.events, name="the review")
        self._evidence_seq = 0
        self._summaries: dict[int, EvidenceSummary] = {}  # evidence does not change while waiting
        self._asked: set[int] = set()  # summaries on their way
        self._waiting_seq = 0
        self._side_seq = 0
        self._side_applied = 0
        self._show_weights = False
        self._shown: tuple[int, ...] | None = None  # the ids the detail pane shows
        self.player = AudioPlayer()
        self.evidence_cards: list[EvidenceCard] = []
        self.edit_dialog: EditDialog | None = None
        self.pending = RecordTableModel(CANDIDATE_COLUMNS, lambda v: v.candidate.id)
        self.recent = RecordTableModel(FACT_COLUMNS, lambda v: v.fact.id)
        self.journal = RecordTableModel(JOURNAL_COLUMNS, lambda r: r.id)
        self.observations = RecordTableModel(OBSERVATION_COLUMNS, lambda o: o.id)
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self._side_dirty = False
        self._side_timer = QTimer(self)
        self._side_timer.setSingleShot(True)
        self._side_timer.setInterval(300)
        self._side_timer.timeout.connect(lambda: self._reload_side_tabs(FILL))
        self.tabs.addTab(self._waiting_tab(), "Waiting")
        self.tabs.addTab(self._recent_tab(), "Recently added")
        self.tabs.addTab(self._history_tab(), "History")
        self.observations_table = make_table(
            self.observations, ["2026-11-30 16:27", None, "work, running, family"], OBSERVATIONS_EMPTY
        )
        self.observations_table.setWordWrap(True)
        banner = self._labelled(self.observations_table, OBSERVATIONS_BANNER, warn=True)
        self.tabs.addTab(banner, "Observations (hypotheses)")
        self.status = QLabel("Loading\u2026")
        self.status.setWordWrap(True)
        self.statusBar().addWidget(self.status, 1)
        self.setCentralWidget(with_margins(self.tabs, 6))
        self._add_actions()
        self.tabs.currentChanged.connect(self._on_tab_changed)
        self._update_buttons()
        ctx.events.changed.connect(self._on_memory_changed)
        self.reload()

    # --- layout -------------------------------------------------------------------------

    def _waiting_tab(self) -> QWidget:
        self.pending_table = make_table(
            self.pending,
            [None, "About someone else (+1)", "someone else", "0.55", "12 lines in 3 places"],
            self._waiting_empty_text(),
        )
        sel = self.pending_table.selectionModel()
        sel.selectionChanged.connect(lambda *_: self._on_selection())
        self.pending_table.verticalScrollBar().valueChanged.connect(lambda _v: self._fill_visible_summaries())
        self.pending_table.doubleClicked.connect(lambda _i: self.edit_and_approve())
        buttons = QHBoxLayout()
        self.approve_button = self._button("Approve (A)", self.approve_selected)
        self.edit_button = self._button("Edit, then approve (E)", self.edit_and_approve)
        self.reject_button = self._button("Reject (R)", self.reject_selected)
        self.undo_button = self._button("Undo (Ctrl+Z)", self.undo)
        for b in (self.approve_button, self.edit_button, self.reject_button):
            buttons.addWidget(b)
        buttons.addStretch(1)
        buttons.addWidget(self.undo_button)
        pane = list_with_detail(buttons, self.pending_table, PICK_ONE)
        self.detail, self.evidence_box, self.detail_scroll = pane.label, pane.box, pane.scroll
        self.detail.linkActivated.connect(self._on_link)
        pane.split.setStretchFactor(0, 5)
        pane.split.setStretchFactor(1, 3)
        pane.split.setSizes([self.width() * 5 // 8, self.width() * 3 // 8])
        return pane.split

    def _recent_tab(self) -> QWidget:
        self.recent_table = make_table(
            self.recent, [None, "added automatically", "2026-11-30 16:27", "Sources"], RECENT_EMPTY
        )
        self.revert_button = self._button("Revert\u2026 (V)", self.revert_selected)
        note = QLabel(
            "Added to memory in the last 7 days: approved by you, or added automatically when"
            " the evidence is your own words."
        )
        note.setWordWrap(True)
        return self._headed(self.recent_table, note, self.revert_button)

    def _history_tab(self) -> QWidget:
        self.history_table = make_table(
            self.journal, ["2026-11-30 16:27", "Automatic rule", "asked for your review", None], HISTORY_EMPTY
        )
        self.full_journal = QCheckBox("Show everything the app did (capture, sleep cycle, automatic rule)")
        self.full_journal.toggled.connect(lambda _on: self._reload_side_tabs(SHOW))
        self.history_note = QLabel("Your decisions, newest first.")
        return self._headed(self.history_table, self.history_note, self.full_journal)

    @staticmethod
    def _headed(table: QTableView, note: QLabel, control: QWidget) -> QWidget:
        """A table under a line of text with a control at its right."""
        row = QHBoxLayout()
        row.addWidget(note, 1)
        row.addWidget(control)
        box = QWidget()
        v = QVBoxLayout(box)
        v.addLayout(row)
        v.addWidget(table)
        return box

    @staticmethod
    def _labelled(table: QTableView, text: str, warn: bool = False) -> QWidget:
        box = QWidget()
        v = QVBoxLayout(box)
        label = QLabel(text)
        label.setWordWrap(True)
        if warn:
            label.setStyleSheet("background:#fff4ce;color:#5c4400;border:1px solid #e0c36a;padding:6px;")
        v.addWidget(label)
        v.addWidget(table)
        return box

    def _button(self, text: str, slot: Callable[[], None]) -> QPushButton:
        b = QPushButton(text)
        b.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # keep the keyboard on the table
        b.clicked.connect(slot)
        return b

    def _add_actions(self) -> None:
        def act(keys: list[QKeySequence | QKeySequence.StandardKey | str], slot: Callable[[], None]) -> None:
            a = QAction(self)
            a.setShortcuts([QKeySequence(k) for k in keys])
            a.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
            a.triggered.connect(slot)
            self.addAction(a)

        act(["A"], self.approve_selected)
        act(["E", "F2"], self.edit_and_approve)
        act(["R", "Delete"], self.reject_selected)
        act([QKeySequence.StandardKey.Undo], self.undo)
        act(["V"], self.revert_selected)
        act([QKeySequence.StandardKey.Refresh], self.reload)

    def _waiting_empty_text(self) -> str:
        sleep = self._ctx.settings.values.sleep
        if sleep.enabled:
            nxt = f"The next sleep cycle runs tonight between {sleep.window_start} and {sleep.window_end}"
            return f"Nothing is waiting for you.\n\n{nxt}; what it cannot add by itself will wait here."
        return (
            "Nothing is waiting for you.\n\nProposals appear here after a sleep cycle (it is off:"
            " turn it on in Settings) or a review of your chat with the assistant."
        )

    # --- loading ------------------------------------------------------------------------

    def _on_memory_changed(self, change: MemoryChange) -> None:
        """Someone else changed memory (a sleep run, a chat review, the memory browser)."""
        if change.origin is not self and (change.candidates or change.facts):
            self.reload()

    def reload(self) -> None:
        """Waiting list first (one query), then the other tabs, then evidence summaries."""
        uow = self._ctx.uow
        self._waiting_seq += 1
        seq = self._waiting_seq
        self.work.run(
            lambda: review_views.waiting(uow),
            lambda cs: self._on_waiting(seq, cs),
            priority=DECIDE,
            read=True,
        )
        self._reload_side_tabs(DECIDE)

    def _on_waiting(self, seq: int, candidates: list[Candidate]) -> None:
        if seq != self._waiting_seq:
            return  # the list changed here since this read began: the read is stale
        keep = self._selected_ids(self.pending_table)
        self.pending_table.set_empty_text(self._waiting_empty_text())
        self.pending.set_rows(WaitingRow(c, self._summaries.get(c.id)) for c in candidates)
        self._update_tab_titles()
        self._reselect(keep)
        self.waiting_loaded.emit()
        self._fill_visible_summaries()

    def _fill_visible_summaries(self) -> None:
        """Evidence counts for the rows on screen (and a screenful around them) only."""
        table, rows = self.pending_table, self.pending.rows
        if not rows:
            return
        top = max(0, table.rowAt(0))
        bottom = table.rowAt(table.viewport().height() - 1)
        if bottom < 0:  # the rows end above the bottom edge, or the view is not laid out yet
            bottom = min(len(rows) - 1, top + 50)
        span = bottom - top + 1
        lo, hi = max(0, top - span), min(len(rows), bottom + span + 1)
        wanted = [
            r.candidate.id
            for r in rows[lo:hi]
            if r.summary is None
            and r.candidate.id not in self._summaries
            and r.candidate.id not in self._asked
        ]
        if not wanted:
            return
        self._asked.update(wanted)
        uow = self._ctx.uow
        self.work.run(
            lambda: review_views.evidence_summaries(uow, wanted), self._on_summaries, priority=FILL, read=True
        )

    def _on_summaries(self, found: dict[int, EvidenceSummary]) -> None:
        self._asked.difference_update(found)
        self._summaries.update(found)
        changed = []
        for i, row in enumerate(self.pending.rows):
            if row.summary is None and row.candidate.id in found:
                row.summary = found[row.candidate.id]
                changed.append(i)
        self.pending.refresh_rows(changed)

    def _on_side_tabs(self, seq: int, side: SideTabs) -> None:
        if seq < self._side_applied:
            return  # an older read finished after a newer one
        self._side_applied = seq
        self.recent.set_rows(side.recent)
        self.journal.set_rows(side.journal)
        self.observations.set_rows(side.observations)
        self._update_tab_titles()
        self.loaded.emit()

    def _update_tab_titles(self) -> None:
        self.tabs.setTabText(0, f"Waiting ({len(self.pending.rows)})")
        self.tabs.setTabText(1, f"Recently added ({len(self.recent.rows)})")
        self.tabs.setTabText(3, f"Observations: hypotheses ({len(self.observations.rows)})")
        if self.status.text() == "Loading\u2026":
            n = len(self.pending.rows)
            self.status.setText(
                f"{n} waiting for your review." if n else "Nothing is waiting for your review."
            )

    def _reselect(self, ids: list[int]) -> None:
        rows = [r for r in (self.pending.row_of(i) for i in ids) if r is not None]
        if not rows and self.pending.rows:
            rows = [0]
        self._select_rows(self.pending_table, rows)

    # --- selection and the detail pane --------------------------------------------------

    @staticmethod
    def _selected_rows(table: QTableView) -> list[int]:
        count = table.model().rowCount()
        return sorted({i.row() for i in table.selectionModel().selectedRows() if i.row() < count})

    @classmethod
    def _selected_ids(cls, table: QTableView) -> list[int]:
        model = table.model()
        assert isinstance(model, RecordTableModel)
        return [model.key_at(r) for r in cls._selected_rows(table)]

    def _select_rows(self, table: QTableView, rows: list[int]) -> None:
        sel = table.selectionModel()
        model = table.model()
        flags = QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows
        sel.blockSignals(True)  # one update of the pane at the end, not one per row
        try:
            sel.clearSelection()
            for r in rows:
                sel.select(model.index(r, 0), flags)
            if rows:
                current = model.index(rows[0], 0)
                sel.setCurrentIndex(current, QItemSelectionModel.SelectionFlag.NoUpdate)
                table.scrollTo(current)
        finally:
            sel.blockSignals(False)
        table.viewport().update()
        if table is self.pending_table:
            self._on_selection(force=True)  # the rows may be new even where the ids are not

    def _on_selection(self, force: bool = False) -> None:
        ids = tuple(self._selected_ids(self.pending_table))
        if ids == self._shown and not force:
            return
        self._shown = ids
        self._evidence_seq += 1  # an evidence read on its way is for another selection now
        self._clear_cards()
        self._update_buttons()
        if not ids:
            self.detail.setText(PICK_ONE if self.pending.rows else NOTHING_TO_SHOW)
            return
        rows = [self.pending.rows[r] for r in self._selected_rows(self.pending_table)]
        if len(rows) > 1:
            self.detail.setText(selection_html([r.candidate for r in rows]))
            return
        self._show_candidate(rows[0])
        seq, cid, uow = self._evidence_seq, rows[0].candidate.id, self._ctx.uow
        self.work.run(
            lambda: queries.evidence(uow, cid),
            lambda items: self._on_evidence(seq, items),
            priority=SHOW,
            read=True,
        )

    def _show_candidate(self, view: WaitingRow) -> None:
        s = self._ctx.settings
        self.detail.setText(
            candidate_html(view.candidate, s.weights(), s.values.sleep.threshold, self._show_weights)
        )

    def _on_link(self, link: str) -> None:
        if link == WEIGHTS_LINK:
            self._show_weights = not self._show_weights
            ids = self._selected_ids(self.pending_table)
            row = self.pending.row_of(ids[0]) if len(ids) == 1 else None
            if row is not None:
                self._show_candidate(self.pending.rows[row])

    def _on_evidence(self, seq: int, items: list[EvidenceItem]) -> None:
        if seq != self._evidence_seq:
            return  # the owner moved on; a newer request is on its way
        self._clear_cards()
        holder = QWidget()  # built whole, then shown: one relayout of the pane, not one per card
        lay = QVBoxLayout(holder)
        lay.setContentsMargins(0, 0, 0, 0)
        for item in items:
            card = EvidenceCard(item, self._ctx.media, self.player)
            self.evidence_cards.append(card)
            lay.addWidget(card)
        if not items:
            lay.addWidget(QLabel("No evidence is left (its source was forgotten)."))
        self.evidence_box.addWidget(holder)

    def _clear_cards(self) -> None:
        if self.evidence_box.count():
            clear_layout(self.evidence_box)
        self.evidence_cards = []

    def _update_buttons(self) -> None:
        n = len(self._selected_ids(self.pending_table))
        count = f" {n}" if n > 1 else ""
        self.approve_button.setText(f"Approve{count} (A)")
        self.reject_button.setText(f"Reject{count} (R)")
        self.approve_button.setEnabled(n > 0)
        self.reject_button.setEnabled(n > 0)
        self.edit_button.setEnabled(n == 1)

    # --- decisions ----------------------------------------------------------------------

    def _statements(self, ids: list[int]) -> dict[int, str]:
        wanted = set(ids)  # one pass: thousands of selected rows must not cost n*n lookups
        return {r.candidate.id: r.candidate.statement for r in self.pending.rows if r.candidate.id in wanted}

    def approve_selected(self) -> None:
        self._decide(self._selected_ids(self.pending_table), "Approved", self._approve_fn(None))

    def approve_edited(self, candidate_id: int, statement: str) -> None:
        self._decide(
            [candidate_id], "Approved in your words", self._approve_fn(statement), {candidate_id: statement}
        )

    def edit_and_approve(self) -> None:
        ids = self._selected_ids(self.pending_table)
        if self.tabs.currentIndex() != 0 or len(ids) != 1:
            return
        row = self.pending.row_of(ids[0])
        assert row is not None
        dialog = EditDialog(self.pending.rows[row].candidate.statement, self)
        cid = ids[0]
        dialog.accepted.connect(lambda: self.approve_edited(cid, dialog.text()) if dialog.text() else None)
        dialog.finished.connect(lambda _r: self.pending_table.setFocus())
        self.edit_dialog = dialog
        dialog.open()

    def reject_selected(self) -> None:
        uow, now = self._ctx.uow, self._ctx.clock.now()
        self._decide(
            self._selected_ids(self.pending_table), "Rejected", lambda cid: review.reject(uow, cid, now)
        )

    def _approve_fn(self, statement: str | None) -> Callable[[int], Any]:
        uow, now = self._ctx.uow, self._ctx.clock.now()
        return lambda cid: review.approve(uow, cid, now, statement)

    def _decide(
        self, ids: list[int], verb: str, fn: Callable[[int], Any], names: dict[int, str] | None = None
    ) -> None:
        if self.tabs.currentIndex() != 0 or not ids:
            return
        first_row = self.pending.row_of(ids[0]) or 0
        statements = names or self._statements(ids)
        self.work.run(
            lambda: _each(ids, fn),
            lambda out: self._on_decided(out, verb, first_row, statements),
            priority=DECIDE,
            change=DECIDED,
        )

    def _on_decided(self, out: Outcome, verb: str, first_row: int, statements: dict[int, str]) -> None:
        self._waiting_seq += 1
        self.pending.remove_keys(out.done)
        self._fill_visible_summaries()  # rows moved up into view
        self._update_tab_titles()
        if self.pending.rows:
            self._select_rows(self.pending_table, [min(first_row, len(self.pending.rows) - 1)])
        else:
            self._select_rows(self.pending_table, [])
        msg = ""
        if out.done:
            msg = f"{verb}: {_names([statements.get(i, f'#{i}') for i in out.done])}. Ctrl+Z undoes."
        if out.errors:
            msg += " Not done: " + "; ".join(out.errors)
        self._say(msg.strip(), bad=bool(out.errors))
        self._side_tabs_changed()

    def revert_selected(self) -> None:
        if self.tabs.currentIndex() != 1:
            return
        ids = self._selected_ids(self.recent_table)
        if not ids:
            return
        wanted = set(ids)
        names = {v.fact.id: v.fact.statement for v in self.recent.rows if v.fact.id in wanted}
        question = (
            f"Take {quoted(names[ids[0]])} out of memory?"
            if len(ids) == 1
            else f"Take these {len(ids)} facts out of memory?\n\n"
            + "\n".join(quoted(n) for n in names.values())
        )
        if not confirm(
            self,
            "Revert",
            question,
            "Your assistant stops knowing it. The journal keeps the record; Ctrl+Z brings it back.",
            "Revert",
        ):
            return
        uow, now = self._ctx.uow, self._ctx.clock.now()
        self.work.run(
            lambda: _each(ids, lambda fid: review.revert_fact(uow, fid, now)),
            lambda out: self._on_reverted(out, names),
            priority=DECIDE,
            change=REVERTED,
        )

    def _on_reverted(self, out: Outcome, names: dict[int, str]) -> None:
        msg = (
            f"Reverted: {_names([names.get(i, f'#{i}') for i in out.done])}. Ctrl+Z undoes."
            if out.done
            else ""
        )
        if out.errors:
            msg += " Not done: " + "; ".join(out.errors)
        self._say(msg.strip(), bad=bool(out.errors))
        self.reload()

    def undo(self) -> None:
        uow, now = self._ctx.uow, self._ctx.clock.now()

        def undo() -> tuple[str, Candidate | None]:
            return review.undo(uow, now), review_views.undone_candidate(uow)

        self.work.run(undo, self._on_undone, priority=DECIDE, change=DECIDED)

    def _on_undone(self, result: tuple[str, Candidate | None]) -> None:
        description, candidate = result
        if candidate is not None:
            self._say(f"Undone: {quoted(candidate.statement)} is waiting again.")
        else:
            self._say(f"Undone: {description}.")
        if candidate is not None and self.pending.row_of(candidate.id) is None:
            self._waiting_seq += 1
            row = self.pending.insert_sorted(WaitingRow(candidate, self._summaries.get(candidate.id)))
            self._update_tab_titles()
            self._select_rows(self.pending_table, [row])
            if candidate.id not in self._summaries:
                uow = self._ctx.uow
                self.work.run(
                    lambda: review_views.evidence_summaries(uow, [candidate.id]),
                    self._on_summaries,
                    read=True,
                )
        self._side_tabs_changed()
        if self.tabs.currentIndex() == 1:
            self._reload_side_tabs(SHOW)

    def _side_tabs_changed(self) -> None:
        """After a decision: the other tabs reload once the owner looks at them, and
        rapid decisions coalesce; reading 10,000 facts per keystroke would slow the next one."""
        self._side_dirty = True
        if self.tabs.currentIndex() != 0:
            self._side_timer.start()

    def _on_tab_changed(self, index: int) -> None:
        if index != 0 and self._side_dirty:
            self._reload_side_tabs(SHOW)

    def _reload_side_tabs(self, priority: int) -> None:
        self._side_dirty = False
        self._side_timer.stop()
        uow, now = self._ctx.uow, self._ctx.clock.now()
        owner_only = not self.full_journal.isChecked()
        self.history_note.setText(
            "Your decisions, newest first." if owner_only else "Everything in the journal, newest first."
        )
        self._side_seq += 1
        seq = self._side_seq

        def side() -> SideTabs:
            return SideTabs(
                review_views.recent_facts(uow, now),
                review_views.journal_newest_first(uow, JOURNAL_LIMIT, owner_only),
                queries.observations(uow),
            )

        self.work.run(side, lambda tabs: self._on_side_tabs(seq, tabs), priority=priority, read=True)

    # --- feedback -----------------------------------------------------------------------

    def _say(self, text: str, bad: bool = False) -> None:
        self.status.setStyleSheet("color: #b3261e;" if bad else "")
        self.status.setText(text)

    def _show_error(self, exc: PersonaError) -> None:
        self._say(str(exc), bad=True)

    def bring_forward(self) -> None:
        bring_forward(self)
        self.pending_table.setFocus()

    def shutdown(self) -> None:
        self._side_timer.stop()
        self.player.close()
        self.work.shutdown()

    def closeEvent(self, event: Any) -> None:
        self._side_timer.stop()  # the coalesced reload is for a window someone looks at
        self.player.stop()
        super().closeEvent(event)


def _names(statements: list[str], shown: int = 2) -> str:
    """'“A”', '“A” and “B”', '“A”, “B” and 3 more'."""
    quoted_all = [quoted(s, 60) for s in statements]
    if len(quoted_all) <= shown:
        return " and ".join(quoted_all)
    return ", ".join(quoted_all[:shown]) + f" and {len(quoted_all) - shown} more"


def _each(ids: list[int], fn: Callable[[int], Any]) -> Outcome:
    """One transaction per id, so one refusal does not undo the others."""
    done, errors = [], []
    for i in ids:
        try:
            fn(i)
        except PersonaError as exc:
            errors.append(str(exc))
        else:
            done.append(i)
    return Outcome(done, errors)


__all__ = ["Column", "EditDialog", "ReviewWindow", "proposal_html"]
