"""The morning review: what waits for the owner, what was applied, the journal, observations.

Keyboard-driven: A approves, E (or F2) edits then approves, R (or Delete) rejects,
Ctrl+Z undoes the last decision (again and again), V reverts an applied fact.
Every action works on all selected rows. All store work runs in the background.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from PySide6.QtCore import QItemSelectionModel, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
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
from persona_desktop.domain.scoring import SIGNALS
from persona_desktop.errors import PersonaError
from persona_desktop.services import queries, review, review_views
from persona_desktop.services.queries import FactView
from persona_desktop.services.review import EvidenceItem
from persona_desktop.services.review_views import EvidenceSummary
from persona_desktop.ui.background import Ops
from persona_desktop.ui.context import UiContext
from persona_desktop.ui.evidence_view import AudioPlayer, EvidenceCard
from persona_desktop.ui.layouts import list_with_detail, make_table
from persona_desktop.ui.review_columns import (
    CANDIDATE_COLUMNS,
    FACT_COLUMNS,
    JOURNAL_COLUMNS,
    OBSERVATION_COLUMNS,
    WaitingRow,
)
from persona_desktop.ui.table_model import Column, RecordTableModel

T = TypeVar("T")
JOURNAL_LIMIT = 1000
OBSERVATIONS_BANNER = (
    "<b>Observations are hypotheses, not facts.</b> They are patterns the sleep cycle noticed"
    " over a period. They are never stored as facts and never reach the assistant as facts."
)


@dataclass(frozen=True)
class SideTabs:
    recent: list[FactView]
    journal: list[Revision]
    observations: list[Observation]


# Ops priorities: what the owner is looking at goes before background filling.
SHOW, DECIDE, FILL = 20, 10, 0


@dataclass(frozen=True)
class Outcome:
    done: list[int]
    errors: list[str]


class EditDialog(QDialog):
    def __init__(self, statement: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Edit, then approve")
        self.editor = QPlainTextEdit(statement)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        buttons.addButton("Approve", QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(QLabel("Write the fact the way you want it remembered:"))
        lay.addWidget(self.editor)
        lay.addWidget(buttons)
        self.resize(480, 180)

    def text(self) -> str:
        return self.editor.toPlainText().strip()


def proposal_html(payload: dict[str, Any]) -> str:
    """What a chat-review proposal would change, in full: a skill's Markdown, a patch, a forget."""
    pre = "<pre style='white-space: pre-wrap; background:#f6f6f6'>{}</pre>"
    if payload.get("kind") == "skill" and payload.get("action") == "create":
        return f"<p><b>New skill {html.escape(str(payload.get('name')))}</b></p>" + pre.format(
            html.escape(str(payload.get("content", "")))
        )
    if payload.get("kind") == "skill" and payload.get("action") == "patch":
        return (
            f"<p><b>Patch of skill {html.escape(str(payload.get('name')))}</b>: replace</p>"
            + pre.format(html.escape(str(payload.get("old", ""))))
            + "<p>with</p>"
            + pre.format(html.escape(str(payload.get("new", ""))))
        )
    if payload.get("action") == "forget":
        return f"<p><b>Forget fact {payload.get('fact_id')}</b>, because: {html.escape(str(payload.get('reason', '')))}</p>"
    return ""


class ReviewWindow(QMainWindow):
    changed = Signal()  # a decision landed: the tray recounts
    waiting_loaded = Signal()  # the Waiting tab shows the store's list
    loaded = Signal()  # every tab shows the store's state

    def __init__(self, ctx: UiContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Persona Desktop: morning review")
        self._ctx = ctx
        self.ops = Ops(self, on_error=self._show_error)
        self._evidence_seq = 0
        self._summaries: dict[int, EvidenceSummary] = {}  # evidence does not change while waiting
        self._asked: set[int] = set()  # summaries on their way
        self._waiting_seq = 0
        self._side_seq = 0
        self._side_applied = 0
        self.player = AudioPlayer()
        self.evidence_cards: list[EvidenceCard] = []
        self.pending = RecordTableModel(CANDIDATE_COLUMNS, lambda v: v.candidate.id)
        self.recent = RecordTableModel(FACT_COLUMNS, lambda v: v.fact.id)
        self.journal = RecordTableModel(JOURNAL_COLUMNS, lambda r: r.id)
        self.observations = RecordTableModel(OBSERVATION_COLUMNS, lambda o: o.id)
        self.tabs = QTabWidget()
        self._side_dirty = False
        self._side_timer = QTimer(self)
        self._side_timer.setSingleShot(True)
        self._side_timer.setInterval(300)
        self._side_timer.timeout.connect(lambda: self._reload_side_tabs(FILL))
        self.tabs.addTab(self._waiting_tab(), "Waiting")
        self.tabs.addTab(self._recent_tab(), "Recently applied")
        self.history_table = make_table(
            self.journal, ["2026-11-30 16:27", "Sleep cycle", "asked for your review", None]
        )
        self.tabs.addTab(
            self._labelled(self.history_table, "The decision journal, newest first. Read-only."), "History"
        )
        self.observations_table = make_table(
            self.observations, ["2026-11-30 16:27", None, "a few themes here"]
        )
        self.observations_table.setWordWrap(True)
        banner = self._labelled(self.observations_table, OBSERVATIONS_BANNER, warn=True)
        self.tabs.addTab(banner, "Observations (hypotheses)")
        self.status = QLabel("Loading...")
        self.statusBar().addWidget(self.status, 1)
        self.setCentralWidget(self.tabs)
        self._add_actions()
        self.tabs.currentChanged.connect(self._on_tab_changed)
        self.resize(1100, 680)
        self.reload()

    # --- layout -------------------------------------------------------------------------

    def _waiting_tab(self) -> QWidget:
        self.pending_table = make_table(
            self.pending,
            [None, "Contradicts what is remembered", "someone else", "0.55", "12 lines in 3 places"],
        )
        self.pending_table.selectionModel().currentRowChanged.connect(self._on_current_candidate)
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
        pane = list_with_detail(
            buttons, self.pending_table, "Select a candidate to see its score and evidence."
        )
        split, self.detail, self.evidence_box = pane.split, pane.label, pane.box
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        split.setSizes([720, 380])
        return split

    def _recent_tab(self) -> QWidget:
        self.recent_table = make_table(
            self.recent, [None, "added automatically", "2026-11-30 16:27", "Sources"]
        )
        row = QHBoxLayout()
        self.revert_button = self._button("Revert (V)", self.revert_selected)
        row.addWidget(QLabel("Facts added in the last 7 days, including what the policy applied overnight."))
        row.addStretch(1)
        row.addWidget(self.revert_button)
        box = QWidget()
        v = QVBoxLayout(box)
        v.addLayout(row)
        v.addWidget(self.recent_table)
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
        def act(keys: list[QKeySequence | str], slot: Callable[[], None]) -> None:
            a = QAction(self)
            a.setShortcuts([QKeySequence(k) for k in keys])
            a.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
            a.triggered.connect(slot)
            self.addAction(a)

        act(["A"], self.approve_selected)
        act(["E", "F2"], self.edit_and_approve)
        act(["R", "Delete"], self.reject_selected)
        act([QKeySequence.StandardKey.Undo], self.undo)  # type: ignore[list-item]
        act(["V"], self.revert_selected)
        act([QKeySequence.StandardKey.Refresh], self.reload)  # type: ignore[list-item]

    # --- loading ------------------------------------------------------------------------

    def reload(self) -> None:
        """Waiting list first (one query), then the other tabs, then evidence summaries."""
        uow = self._ctx.uow
        self._waiting_seq += 1
        seq = self._waiting_seq
        self.ops.run(
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
        self.pending.set_rows(WaitingRow(c, self._summaries.get(c.id)) for c in candidates)
        self._update_tab_titles()
        self._reselect(keep)
        if not candidates:
            self._clear_detail("Nothing is waiting for your review.")
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
        self.ops.run(
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
        self.tabs.setTabText(1, f"Recently applied ({len(self.recent.rows)})")
        self.tabs.setTabText(3, f"Observations: hypotheses ({len(self.observations.rows)})")
        if self.status.text() == "Loading...":
            self.status.setText(f"{len(self.pending.rows)} waiting for your review.")

    def _reselect(self, ids: list[int]) -> None:
        rows = [r for r in (self.pending.row_of(i) for i in ids) if r is not None]
        if not rows and self.pending.rows:
            rows = [0]
        self._select_rows(self.pending_table, rows)

    # --- selection and evidence ---------------------------------------------------------

    @staticmethod
    def _selected_ids(table: QTableView) -> list[int]:
        model = table.model()
        assert isinstance(model, RecordTableModel)
        rows = sorted({i.row() for i in table.selectionModel().selectedRows()})
        return [model.key_at(r) for r in rows if r < model.rowCount()]

    def _select_rows(self, table: QTableView, rows: list[int]) -> None:
        sel = table.selectionModel()
        sel.clearSelection()
        model = table.model()
        flags = QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows
        for r in rows:
            sel.select(model.index(r, 0), flags)
        if rows:
            current = model.index(rows[0], 0)
            unchanged = sel.currentIndex().row() == rows[0]
            sel.setCurrentIndex(current, QItemSelectionModel.SelectionFlag.NoUpdate)
            table.scrollTo(current)
            if unchanged and table is self.pending_table:
                # an unchanged current row is not re-announced, yet its content may be new
                self._on_current_candidate(current, None)

    def _on_current_candidate(self, current: Any, _previous: Any) -> None:
        if not current.isValid() or current.row() >= len(self.pending.rows):
            return
        view = self.pending.rows[current.row()]
        self._show_candidate(view)
        self._evidence_seq += 1
        seq, cid, uow = self._evidence_seq, view.candidate.id, self._ctx.uow
        self.ops.run(
            lambda: queries.evidence(uow, cid),
            lambda items: self._on_evidence(seq, items),
            priority=SHOW,
            read=True,
        )

    def _show_candidate(self, view: WaitingRow) -> None:
        c = view.candidate
        weights = self._ctx.settings.weights()
        rows = "".join(
            f"<tr><td>{name}</td><td align=right>{c.signals.get(name, 0.0):.2f}</td>"
            f"<td align=right>&times; {weights[name]:.2f}</td>"
            f"<td style='color:#4a7bd0'>{_bar(c.signals.get(name, 0.0))}</td></tr>"
            for name in SIGNALS
        )
        score = "not scored" if c.score is None else f"{c.score:.2f}"
        self.detail.setText(
            f"<h3>{html.escape(c.statement)}</h3>"
            f"<p>About <b>{html.escape(c.subject.value)}</b> &middot; score <b>{score}</b>"
            f" (threshold {float(self._ctx.settings.get('sleep.threshold')):.2f})"
            f" &middot; category {html.escape(c.category or 'none')}</p>"
            f"<table cellspacing=4>{rows}</table>"
            f"<p><i>{html.escape(c.reason or '')}</i></p>"
            f"{proposal_html(c.payload)}"
            "<p><b>Evidence</b></p>"
        )

    def _on_evidence(self, seq: int, items: list[EvidenceItem]) -> None:
        if seq != self._evidence_seq:
            return  # the owner moved on; a newer request is on its way
        self._clear_cards()
        for item in items:
            card = EvidenceCard(item, self._ctx.data_dir, self.player)
            self.evidence_cards.append(card)
            self.evidence_box.addWidget(card)
        if not items:
            self.evidence_box.addWidget(QLabel("No evidence is left (its source was forgotten)."))

    def _clear_cards(self) -> None:
        while self.evidence_box.count():
            item = self.evidence_box.takeAt(0)
            w = item.widget() if item is not None else None
            if w is not None:
                w.deleteLater()
        self.evidence_cards = []

    def _clear_detail(self, text: str) -> None:
        self._evidence_seq += 1
        self.detail.setText(text)
        self._clear_cards()

    # --- decisions ----------------------------------------------------------------------

    def approve_selected(self) -> None:
        self._decide(self._selected_ids(self.pending_table), "Approved", self._approve_fn(None))

    def approve_edited(self, candidate_id: int, statement: str) -> None:
        self._decide([candidate_id], "Approved (edited)", self._approve_fn(statement))

    def edit_and_approve(self) -> None:
        ids = self._selected_ids(self.pending_table)
        if self.tabs.currentIndex() != 0 or not ids:
            return
        row = self.pending.row_of(ids[0])
        assert row is not None
        dialog = EditDialog(self.pending.rows[row].candidate.statement, self)
        if dialog.exec() == QDialog.DialogCode.Accepted and dialog.text():
            self.approve_edited(ids[0], dialog.text())

    def reject_selected(self) -> None:
        uow, now = self._ctx.uow, self._ctx.clock.now()
        self._decide(
            self._selected_ids(self.pending_table), "Rejected", lambda cid: review.reject(uow, cid, now)
        )

    def _approve_fn(self, statement: str | None) -> Callable[[int], Any]:
        uow, now = self._ctx.uow, self._ctx.clock.now()
        return lambda cid: review.approve(uow, cid, now, statement)

    def _decide(self, ids: list[int], verb: str, fn: Callable[[int], Any]) -> None:
        if self.tabs.currentIndex() != 0 or not ids:
            return
        first_row = self.pending.row_of(ids[0]) or 0
        self.ops.run(
            lambda: _each(ids, fn), lambda out: self._on_decided(out, verb, first_row), priority=DECIDE
        )

    def _on_decided(self, out: Outcome, verb: str, first_row: int) -> None:
        self._waiting_seq += 1
        self.pending.remove_keys(out.done)
        self._fill_visible_summaries()  # rows moved up into view
        self._update_tab_titles()
        if self.pending.rows:
            self._select_rows(self.pending_table, [min(first_row, len(self.pending.rows) - 1)])
        else:
            self._clear_detail("Nothing is waiting for your review.")
        msg = f"{verb} {len(out.done)}." if out.done else ""
        if out.errors:
            msg += " Not done: " + "; ".join(out.errors)
        self._say(msg.strip(), bad=bool(out.errors))
        self.changed.emit()
        self._side_tabs_changed()

    def revert_selected(self) -> None:
        if self.tabs.currentIndex() != 1:
            return
        ids = self._selected_ids(self.recent_table)
        if not ids:
            return
        uow, now = self._ctx.uow, self._ctx.clock.now()
        self.ops.run(
            lambda: _each(ids, lambda fid: review.revert_fact(uow, fid, now)),
            lambda out: self._on_reverted(out),
            priority=DECIDE,
        )

    def _on_reverted(self, out: Outcome) -> None:
        self._say(f"Reverted {len(out.done)} fact(s)." + (" " + "; ".join(out.errors) if out.errors else ""))
        self.changed.emit()
        self.reload()

    def undo(self) -> None:
        uow, now = self._ctx.uow, self._ctx.clock.now()

        def undo() -> tuple[str, Candidate | None]:
            return review.undo(uow, now), review_views.undone_candidate(uow)

        self.ops.run(undo, self._on_undone, priority=DECIDE)

    def _on_undone(self, result: tuple[str, Candidate | None]) -> None:
        description, candidate = result
        self._say(f"Undone: {description}.")
        if candidate is not None and self.pending.row_of(candidate.id) is None:
            self._waiting_seq += 1
            row = self.pending.insert_sorted(WaitingRow(candidate, self._summaries.get(candidate.id)))
            self._update_tab_titles()
            self._select_rows(self.pending_table, [row])
            if candidate.id not in self._summaries:
                uow = self._ctx.uow
                self.ops.run(
                    lambda: review_views.evidence_summaries(uow, [candidate.id]),
                    self._on_summaries,
                    read=True,
                )
        self.changed.emit()
        self._side_tabs_changed()

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
        self._side_seq += 1
        seq = self._side_seq

        def side() -> SideTabs:
            return SideTabs(
                review_views.recent_facts(uow, now),
                list(reversed(queries.journal(uow, JOURNAL_LIMIT))),
                queries.observations(uow),
            )

        self.ops.run(side, lambda tabs: self._on_side_tabs(seq, tabs), priority=priority, read=True)

    # --- feedback -----------------------------------------------------------------------

    def _say(self, text: str, bad: bool = False) -> None:
        self.status.setStyleSheet("color: #b3261e;" if bad else "")
        self.status.setText(text)

    def _show_error(self, exc: PersonaError) -> None:
        self._say(str(exc), bad=True)

    def bring_forward(self) -> None:
        self.show()
        self.setWindowState(self.windowState() & ~Qt.WindowState.WindowMinimized)
        self.raise_()
        self.activateWindow()
        self.pending_table.setFocus()

    def shutdown(self) -> None:
        self._side_timer.stop()
        self.player.close()
        self.ops.shutdown()

    def closeEvent(self, event: Any) -> None:
        self.player.stop()
        super().closeEvent(event)


def _bar(value: float, width: int = 12) -> str:
    filled = max(0, min(width, round(value * width)))
    return "\u2588" * filled + "<span style='color:#c8d3e6'>" + "\u2588" * (width - filled) + "</span>"


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


__all__ = ["Column", "ReviewWindow"]
