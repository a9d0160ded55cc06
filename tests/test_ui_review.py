"""The morning review window and the memory browser on a real store, through real services."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from persona_desktop.bootstrap import Runtime
from persona_desktop.domain.model import CandidateStatus, FactStatus
from persona_desktop.domain.proposals import Forget, NewFact, NewSkill, SkillPatch, Via
from persona_desktop.ui.context import UiContext
from persona_desktop.ui.evidence_view import EvidenceCard
from persona_desktop.ui.memory_browser import MemoryBrowser
from persona_desktop.ui.review_window import ReviewWindow
from tests.ui_support import (
    Seeded,
    answer_modal,
    candidate_status,
    journal_actions,
    seed_media_evidence,
    seed_memory,
    shell,
    ui_ctx,
)

__all__ = ["shell", "ui_ctx"]

TIMEOUT = 10_000


@pytest.fixture
def seeded(runtime: Runtime) -> Seeded:
    return seed_memory(runtime, pending=4, applied=2, observations=1)


@pytest.fixture
def review(ui_ctx: UiContext, seeded: Seeded, qtbot: QtBot) -> Iterator[ReviewWindow]:
    window = ReviewWindow(ui_ctx)
    qtbot.addWidget(window)
    with qtbot.waitSignal(window.loaded, timeout=TIMEOUT):
        window.show()
    qtbot.waitUntil(lambda: bool(window.evidence_cards), timeout=TIMEOUT)
    yield window
    window.shutdown()
    assert window.work.active_threads() == 0


def _press(
    qtbot: QtBot, window: ReviewWindow, key: Qt.Key, mod: Qt.KeyboardModifier = Qt.KeyboardModifier.NoModifier
) -> None:
    with qtbot.waitSignal(window.work.idle, timeout=TIMEOUT):
        window.pending_table.setFocus()
        qtbot.keyClick(window.pending_table, key, mod)
    qtbot.waitUntil(lambda: not window.work.busy(), timeout=TIMEOUT)


def _fact_of(rt: Runtime, cid: int) -> tuple[str, str] | None:
    with rt.uow.read() as uow:
        fact = uow.facts.by_candidate(cid)
        return (fact.statement, fact.status.value) if fact else None


def test_window_shows_every_tab_and_the_evidence_with_its_context(
    review: ReviewWindow, seeded: Seeded, qtbot: QtBot
) -> None:
    assert [v.candidate.id for v in review.pending.rows] == seeded.pending
    assert review.tabs.tabText(0) == "Waiting (4)"
    assert {v.fact.id for v in review.recent.rows} == set(seeded.applied)
    assert {v.origin for v in review.recent.rows} == {"policy"}
    assert "hypotheses" in review.tabs.tabText(3).lower()
    assert len(review.observations.rows) == 1
    assert review.journal.rows == []  # History: the owner's own decisions, and there are none yet
    with qtbot.waitSignal(review.loaded, timeout=TIMEOUT):
        review.full_journal.setChecked(True)  # the full journal, one click away
    assert review.journal.rows[0].action == "candidate.applied"  # newest first
    card = review.evidence_cards[0]
    assert card.item.fragment.ref == seeded.fragment_refs[0]
    assert [f.ref for f in card.item.context][:2] == seeded.fragment_refs[:2]  # the chat around it
    detail = review.detail.text()
    assert "How often it came up" in detail and "Score 0.55" in detail
    assert "Not sure enough yet" in detail  # why it waits, in words
    assert "relevance" not in detail  # the arithmetic waits behind a link
    review.detail.setFocus()  # the link, by keyboard: Tab to it, Enter opens it
    qtbot.keyClick(review.detail, Qt.Key.Key_Tab)
    qtbot.keyClick(review.detail, Qt.Key.Key_Return)
    assert "0.30&times;relevance" in review.detail.text()
    score_tip = review.pending.data(review.pending.index(0, 3), Qt.ItemDataRole.ToolTipRole)
    assert "recency: 0.95" in score_tip


def test_evidence_shows_the_screen_crop_and_plays_the_speech_clip(
    ui_ctx: UiContext, runtime: Runtime, seeded: Seeded, qtbot: QtBot, pulse_server: object
) -> None:
    crop, clip = seed_media_evidence(runtime, seeded.pending[0])
    assert not crop.read_bytes().startswith(b"\x89PNG") and not clip.read_bytes().startswith(b"OggS")
    window = ReviewWindow(ui_ctx)
    qtbot.addWidget(window)
    with qtbot.waitSignal(window.loaded, timeout=TIMEOUT):
        window.show()
    qtbot.waitUntil(lambda: len(window.evidence_cards) == 3, timeout=TIMEOUT)
    by_kind = {c.item.fragment.kind.value: c for c in window.evidence_cards}
    screen, speech = by_kind["screen"], by_kind["speech"]
    assert screen.image_label is not None and not screen.image_label.pixmap().isNull()
    assert speech.play_button is not None
    heads = [w.text() for w in speech.findChildren(QLabel)]
    assert any("likely you" in t for t in heads) and not any("unknown" in t for t in heads)
    speech.play_button.click()
    assert window.player.current == clip
    qtbot.waitUntil(lambda: window.player.playing() or window.player.finished_or_failed(), timeout=TIMEOUT)
    assert window.player.decoded(), "the sealed clip did not decode from memory"
    window.player.stop()
    assert window.player.current is None and not window.player.playing()
    clip.unlink()  # retention removed the clip: the card says so instead of offering play
    crop.unlink()
    window.pending_table.selectRow(1)
    window.pending_table.selectRow(0)
    qtbot.waitUntil(
        lambda: len(window.evidence_cards) == 3 and window.evidence_cards[0].item.fragment.ref != "",
        timeout=TIMEOUT,
    )
    qtbot.waitUntil(
        lambda: {c.item.fragment.kind.value: c for c in window.evidence_cards}["speech"].play_button is None,
        timeout=TIMEOUT,
    )
    cards = {c.item.fragment.kind.value: c for c in window.evidence_cards}
    assert cards["screen"].image_label is None
    window.shutdown()


def test_approve_by_keyboard_writes_a_fact_and_the_journal(
    review: ReviewWindow, seeded: Seeded, runtime: Runtime, qtbot: QtBot
) -> None:
    first = seeded.pending[0]
    statement = review.pending.rows[0].candidate.statement
    _press(qtbot, review, Qt.Key.Key_A)
    assert candidate_status(runtime, first) == "approved"
    assert review.status.text().startswith(f"Approved: \u201c{statement}\u201d")  # names the fact
    assert _fact_of(runtime, first) is not None
    assert journal_actions(runtime)[-1] == "candidate.approved"
    assert first not in [v.candidate.id for v in review.pending.rows]
    assert review.tabs.tabText(0) == "Waiting (3)"
    # the next candidate is selected, ready for the next key press
    assert review._selected_ids(review.pending_table) == [seeded.pending[1]]


def test_reject_then_undo_twice_walks_back(
    review: ReviewWindow, seeded: Seeded, runtime: Runtime, qtbot: QtBot
) -> None:
    a, b = seeded.pending[0], seeded.pending[1]
    _press(qtbot, review, Qt.Key.Key_Delete)  # reject a
    _press(qtbot, review, Qt.Key.Key_A)  # approve b
    assert candidate_status(runtime, a) == "rejected"
    assert candidate_status(runtime, b) == "approved"
    before = len(journal_actions(runtime))
    _press(qtbot, review, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert candidate_status(runtime, b) == "pending" and _fact_of(runtime, b) is None
    assert candidate_status(runtime, a) == "rejected"
    _press(qtbot, review, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert candidate_status(runtime, a) == "pending"
    actions = journal_actions(runtime)
    assert actions[before:] == ["decision.undone", "decision.undone"]  # appended, never rewritten
    assert {v.candidate.id for v in review.pending.rows} == set(seeded.pending)
    assert "undone" in review.status.text().lower()
    # the History tab catches up when the owner opens it
    with qtbot.waitSignal(review.loaded, timeout=TIMEOUT):
        review.tabs.setCurrentIndex(2)
    assert [r.action for r in review.journal.rows[:2]] == ["decision.undone", "decision.undone"]


def test_undo_with_nothing_to_undo_says_so(review: ReviewWindow, qtbot: QtBot) -> None:
    review.undo()
    qtbot.waitUntil(lambda: "nothing to undo" in review.status.text(), timeout=TIMEOUT)


def test_edit_then_approve_keeps_the_owners_wording(
    review: ReviewWindow, seeded: Seeded, runtime: Runtime, ui_ctx: UiContext, qtbot: QtBot
) -> None:
    cid = seeded.pending[2]
    with qtbot.waitSignal(ui_ctx.events.changed, timeout=TIMEOUT):
        review.approve_edited(cid, "I am vegetarian")
    assert _fact_of(runtime, cid) == ("I am vegetarian", "applied")


def test_bulk_approve_every_selected_row(
    review: ReviewWindow, seeded: Seeded, runtime: Runtime, qtbot: QtBot
) -> None:
    review.pending_table.setFocus()
    review.pending_table.selectAll()
    _press(qtbot, review, Qt.Key.Key_A)
    assert all(candidate_status(runtime, c) == "approved" for c in seeded.pending)
    assert review.pending.rows == []
    assert "Nothing is waiting" in review.pending_table.empty_text and review.evidence_cards == []


def test_revert_an_overnight_fact_from_recently_applied(
    review: ReviewWindow, seeded: Seeded, runtime: Runtime, qtbot: QtBot
) -> None:
    review.tabs.setCurrentIndex(1)
    review.recent_table.selectRow(0)
    fid = review.recent.key_at(0)
    answer_modal("Revert")
    with qtbot.waitSignal(review.loaded, timeout=TIMEOUT):
        qtbot.keyClick(review.recent_table, Qt.Key.Key_V)
    with runtime.uow.read() as uow:
        fact = uow.facts.get(fid)
    assert fact is not None and fact.status is FactStatus.REVERTED
    assert journal_actions(runtime)[-1] == "fact.reverted"
    assert fid not in [v.fact.id for v in review.recent.rows]


def test_deselecting_empties_the_detail_pane(review: ReviewWindow, seeded: Seeded, qtbot: QtBot) -> None:
    first = review.pending.rows[0].candidate.statement
    assert first in review.detail.text()
    review.pending_table.clearSelection()
    assert first not in review.detail.text()
    assert review.evidence_cards == [] and review.evidence_box.count() == 0
    assert not review.approve_button.isEnabled() and not review.reject_button.isEnabled()
    # the evidence read still on its way must not bring the old cards back once it lands
    qtbot.waitUntil(lambda: not review.work.busy(), timeout=TIMEOUT)
    assert review.evidence_cards == []


def test_several_selected_rows_are_all_shown_and_counted_on_the_buttons(
    review: ReviewWindow, seeded: Seeded, qtbot: QtBot
) -> None:
    review.pending_table.selectRow(0)
    review.pending_table.selectionModel().select(
        review.pending.index(2, 0),
        review.pending_table.selectionModel().SelectionFlag.Select
        | review.pending_table.selectionModel().SelectionFlag.Rows,
    )
    text = review.detail.text()
    for row in (0, 2):
        assert review.pending.rows[row].candidate.statement in text
    assert "2 selected" in text
    assert review.evidence_cards == []
    assert review.approve_button.text().startswith("Approve 2")
    assert review.reject_button.text().startswith("Reject 2")
    assert not review.edit_button.isEnabled()  # one wording cannot fit two facts
    review.pending_table.selectRow(1)
    assert review.approve_button.text().startswith("Approve") and "2" not in review.approve_button.text()
    assert review.edit_button.isEnabled()


def test_recently_applied_never_calls_an_afternoon_run_overnight(
    ui_ctx: UiContext, runtime: Runtime, qtbot: QtBot
) -> None:
    from datetime import datetime

    from persona_desktop.domain.model import Subject
    from persona_desktop.domain.text import statement_key

    afternoon = datetime.now().astimezone().replace(hour=15, minute=5, second=0, microsecond=0)
    with runtime.uow() as uow:
        cid = uow.candidates.add(
            statement="Goes running on Tuesdays",
            subject=Subject.OWNER,
            key=statement_key("Goes running on Tuesdays"),
            category=None,
            origin="sleep",
            run_id=None,
            proposal=NewFact(),
            supersedes_fact_id=None,
            created_at=afternoon,
        )
        uow.candidates.set_status(cid, CandidateStatus.APPLIED, "proven owner fact over threshold", afternoon)
        uow.facts.add(
            statement="Goes running on Tuesdays",
            subject=Subject.OWNER,
            key=statement_key("Goes running on Tuesdays"),
            category=None,
            candidate_id=cid,
            valid_from=afternoon,
        )
        uow.commit()
    window = ReviewWindow(ui_ctx)
    qtbot.addWidget(window)
    with qtbot.waitSignal(window.loaded, timeout=TIMEOUT):
        window.show()
    window.tabs.setCurrentIndex(1)
    assert len(window.recent.rows) == 1
    shown = [window.recent.data(window.recent.index(0, c)) for c in range(window.recent.columnCount())] + [
        label.text() for label in window.tabs.currentWidget().findChildren(QLabel)
    ]
    assert not any("overnight" in str(t).lower() for t in shown), shown
    window.shutdown()


def test_revert_asks_first(review: ReviewWindow, seeded: Seeded, runtime: Runtime, qtbot: QtBot) -> None:
    review.tabs.setCurrentIndex(1)
    review.recent_table.selectRow(0)
    fid = review.recent.key_at(0)
    asked = answer_modal("Cancel")
    qtbot.keyClick(review.recent_table, Qt.Key.Key_V)
    qtbot.waitUntil(lambda: asked.asked, timeout=TIMEOUT)
    assert review.recent.rows[0].fact.statement in asked.text
    qtbot.waitUntil(lambda: not review.work.busy(), timeout=TIMEOUT)
    assert _fact_status(runtime, fid) is FactStatus.APPLIED


def test_edit_then_approve_is_reachable_by_keyboard(qtbot: QtBot) -> None:
    """Tab leaves the text box for the buttons; Enter approves (Shift+Enter would start a new line)."""
    from persona_desktop.ui.review_window import EditDialog

    dialog = EditDialog("Goes running on Tuesdays")
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    dialog.editor.setFocus()
    qtbot.waitUntil(dialog.editor.hasFocus, timeout=TIMEOUT)
    qtbot.keyClick(dialog.editor, Qt.Key.Key_Tab)
    assert "\t" not in dialog.editor.toPlainText()
    assert not dialog.editor.hasFocus()
    dialog.editor.setFocus()
    qtbot.keyClicks(dialog.editor, " and Fridays")
    with qtbot.waitSignal(dialog.accepted, timeout=TIMEOUT):
        qtbot.keyClick(dialog.editor, Qt.Key.Key_Return)
    assert dialog.text() == "Goes running on Tuesdays and Fridays"


# --- memory browser -------------------------------------------------------------------------


@pytest.fixture
def memory(ui_ctx: UiContext, seeded: Seeded, qtbot: QtBot) -> Iterator[MemoryBrowser]:
    window = MemoryBrowser(ui_ctx)
    qtbot.addWidget(window)
    with qtbot.waitSignal(window.loaded, timeout=TIMEOUT):
        window.show()
    yield window
    window.shutdown()
    assert window.work.active_threads() == 0


def test_memory_search_and_why(memory: MemoryBrowser, seeded: Seeded, qtbot: QtBot) -> None:
    assert {f.id for f in memory.facts.rows} == set(seeded.applied)
    with qtbot.waitSignal(memory.loaded, timeout=TIMEOUT):
        memory.search.setText("topic 5")
    assert [f.statement for f in memory.facts.rows] == ["The owner likes topic 5 (chat:test:saved)"]
    with qtbot.waitSignal(memory.provenance_shown, timeout=TIMEOUT) as shown:
        memory.select_fact(memory.facts.key_at(0))
    prov = shown.args[0]
    assert prov.fact.id == memory.facts.key_at(0)
    assert prov.evidence and prov.evidence[0].source_label == "Saved messages"
    assert "Automatic rule added to memory" in memory.why_label.text()
    assert seeded.source_id in memory.forget_buttons


def test_memory_revert_and_forget_source_are_journaled(
    memory: MemoryBrowser, seeded: Seeded, runtime: Runtime, ui_ctx: UiContext, qtbot: QtBot
) -> None:
    other = seed_memory(runtime, pending=1, applied=1, observations=0, key="chat:test:other", label="Bob")
    with qtbot.waitSignal(memory.loaded, timeout=TIMEOUT):
        memory.reload()
    memory.select_fact(seeded.applied[0])
    answer_modal("Revert")
    with qtbot.waitSignal(ui_ctx.events.changed, timeout=TIMEOUT):
        memory.revert_selected()
    assert journal_actions(runtime)[-1] == "fact.reverted"
    with qtbot.waitSignal(ui_ctx.events.changed, timeout=TIMEOUT):
        memory.forget(other.source_id)
    qtbot.waitUntil(lambda: "Forgotten" in memory.status.text(), timeout=TIMEOUT)
    assert journal_actions(runtime)[-1] == "source.forgotten"
    with runtime.uow.read() as uow:
        assert uow.fragments.of_source(other.source_id) == []
        assert uow.facts.get(other.applied[0]).status is FactStatus.REVERTED  # type: ignore[union-attr]
        assert uow.fragments.of_source(seeded.source_id) != []  # the other source is untouched


def test_memory_selecting_another_fact_never_leaves_the_old_forget_button(
    memory: MemoryBrowser, seeded: Seeded, runtime: Runtime, qtbot: QtBot
) -> None:
    """One click on a button left over from the previous fact would forget the wrong source."""
    other = seed_memory(runtime, pending=0, applied=1, observations=0, key="chat:test:bob", label="Bob")
    with qtbot.waitSignal(memory.loaded, timeout=TIMEOUT):
        memory.reload()
    with qtbot.waitSignal(memory.provenance_shown, timeout=TIMEOUT):
        memory.select_fact(seeded.applied[0])
    assert list(memory.forget_buttons) == [seeded.source_id]
    memory.select_fact(other.applied[0])
    # at once, before the new fact's sources have been read: nothing of the old one is left
    assert memory.forget_buttons == {} and memory.forget_day_buttons == {}
    assert "Saved messages" not in memory.why_label.text()
    with qtbot.waitSignal(memory.provenance_shown, timeout=TIMEOUT):
        pass
    assert list(memory.forget_buttons) == [other.source_id]
    memory.table.clearSelection()  # nothing selected: nothing to act on
    assert memory.forget_buttons == {} and "Bob" not in memory.why_label.text()


def test_memory_screen_evidence_fits_the_pane(
    ui_ctx: UiContext, runtime: Runtime, seeded: Seeded, qtbot: QtBot
) -> None:
    with runtime.uow.read() as uow:
        fact = uow.facts.get(seeded.applied[0])
    assert fact is not None and fact.candidate_id is not None
    seed_media_evidence(runtime, fact.candidate_id)
    window = MemoryBrowser(ui_ctx)
    qtbot.addWidget(window)
    with qtbot.waitSignal(window.loaded, timeout=TIMEOUT):
        window.show()
    qtbot.waitExposed(window)
    with qtbot.waitSignal(window.provenance_shown, timeout=TIMEOUT):
        window.select_fact(seeded.applied[0])
    qtbot.waitUntil(lambda: window.why_box.count() > 0, timeout=TIMEOUT)
    pane = window.pane.scroll
    inner = pane.widget()
    screen_cards = [c for c in window.findChildren(EvidenceCard) if c.image_label is not None]
    assert screen_cards
    image = screen_cards[0].image_label
    assert image is not None
    # laid out: a widget no layout placed yet sits at its parent's corner
    qtbot.waitUntil(lambda: image.mapTo(inner, QPoint(0, 0)) != QPoint(0, 0), timeout=TIMEOUT)
    assert inner.width() <= pane.viewport().width(), "the evidence is cut off on the right"
    assert image.mapTo(inner, image.rect().topRight()).x() <= pane.viewport().width()
    window.shutdown()


def test_a_screen_picture_opens_full_size_on_click(
    ui_ctx: UiContext, runtime: Runtime, seeded: Seeded, qtbot: QtBot
) -> None:
    from PySide6.QtCore import QPoint

    from persona_desktop.ui.image_viewer import ImageViewer

    seed_media_evidence(runtime, seeded.pending[0])
    window = ReviewWindow(ui_ctx)
    qtbot.addWidget(window)
    with qtbot.waitSignal(window.loaded, timeout=TIMEOUT):
        window.show()
    qtbot.waitUntil(lambda: any(c.image_label is not None for c in window.evidence_cards), timeout=TIMEOUT)
    card = next(c for c in window.evidence_cards if c.image_label is not None)
    assert card.image_label is not None
    qtbot.mouseClick(card.image_label, Qt.MouseButton.LeftButton, pos=QPoint(5, 5))
    viewer = card.viewer
    assert isinstance(viewer, ImageViewer) and viewer.isVisible()
    full = viewer.image.pixmap()
    assert (full.width(), full.height()) == (480, 120)  # the kept picture, not the scaled one
    viewer.close()
    window.shutdown()


def test_memory_revert_asks_first_and_can_be_undone(
    memory: MemoryBrowser, seeded: Seeded, runtime: Runtime, ui_ctx: UiContext, qtbot: QtBot
) -> None:
    fid = seeded.applied[0]
    with qtbot.waitSignal(memory.provenance_shown, timeout=TIMEOUT):
        memory.select_fact(fid)
    statement = memory.provenance.fact.statement  # type: ignore[union-attr]
    asked = answer_modal("Cancel")
    memory.revert_button.click()
    qtbot.waitUntil(lambda: asked.asked, timeout=TIMEOUT)
    assert statement in asked.text
    qtbot.waitUntil(lambda: not memory.work.busy(), timeout=TIMEOUT)
    assert _fact_status(runtime, fid) is FactStatus.APPLIED  # cancelled: nothing happened
    asked = answer_modal("Revert")
    with qtbot.waitSignal(ui_ctx.events.changed, timeout=TIMEOUT):
        memory.revert_button.click()
    assert asked.asked and _fact_status(runtime, fid) is FactStatus.REVERTED
    assert statement in memory.status.text()
    assert memory.undo_button.isVisible()
    with qtbot.waitSignal(ui_ctx.events.changed, timeout=TIMEOUT):
        memory.undo_button.click()
    assert _fact_status(runtime, fid) is FactStatus.APPLIED
    assert journal_actions(runtime)[-2:] == ["fact.reverted", "decision.undone"]
    assert not memory.undo_button.isVisible()


def _fact_status(rt: Runtime, fact_id: int) -> FactStatus:
    with rt.uow.read() as uow:
        fact = uow.facts.get(fact_id)
    assert fact is not None
    return fact.status


def test_qt_model_calls_keep_python_singletons_alive(qapp: object) -> None:
    """PySide6 6.12.0 on CPython 3.11 dropped a reference to None on every void call
    (beginResetModel, clearSelection...) and a long review session died with
    "Fatal Python error: none_dealloc". pyproject pins below 6.12; this guards the pin."""
    import sys

    from persona_desktop.ui.table_model import Column, RecordTableModel

    model = RecordTableModel([Column("n", str)], key=int)
    before = sys.getrefcount(None)
    for _ in range(200):
        model.set_rows(range(3))
        model.remove_keys([1])
    assert sys.getrefcount(None) >= before - 5  # a few may move elsewhere; 400 lost would be the bug


def test_memory_forgets_a_day_of_screen_captures(
    memory: MemoryBrowser, seeded: Seeded, runtime: Runtime, ui_ctx: UiContext, qtbot: QtBot
) -> None:
    from persona_desktop.domain.model import Author, Kind, NewFragment, SourceInfo, Subject, Trust
    from persona_desktop.services import review
    from persona_desktop.services.ingest import store_fragments

    when = runtime.clock.now()
    line = NewFragment(
        "scr:t1:m1:l0",
        Kind.SCREEN,
        Author.UNKNOWN,
        Trust.UNTRUSTED,
        "Flight to Oslo on Friday",
        when,
        {"bbox": [0, 0, 10, 10]},
        "screen:day",
        0,
    )
    with runtime.uow() as uow:
        store_fragments(uow, SourceInfo("screen:t1", Kind.SCREEN, "capture t1"), [line], when)
        cid = uow.candidates.add(
            statement="The owner flies to Oslo on Friday",
            subject=Subject.OWNER,
            key="the owner flies to oslo on friday",
            category=None,
            origin="sleep",
            run_id=None,
            proposal=NewFact(),
            supersedes_fact_id=None,
            created_at=when,
        )
        uow.candidates.add_evidence(cid, [uow.fragments.by_refs(["scr:t1:m1:l0"])["scr:t1:m1:l0"].id], None)
        uow.commit()
    fact_id = review.approve(runtime.uow, cid, when)
    with qtbot.waitSignal(memory.loaded, timeout=TIMEOUT):
        memory.reload()
    with qtbot.waitSignal(memory.provenance_shown, timeout=TIMEOUT):
        memory.select_fact(fact_id)
    day = when.astimezone().date()
    assert list(memory.forget_day_buttons) == [day]
    with qtbot.waitSignal(ui_ctx.events.changed, timeout=TIMEOUT):
        memory.forget_day(day)
    with runtime.uow.read() as uow:
        assert uow.fragments.by_refs(["scr:t1:m1:l0"]) == {}
        assert uow.facts.get(fact_id).status is FactStatus.REVERTED  # type: ignore[union-attr]
        assert uow.fragments.of_source(seeded.source_id) != []  # chat sources are untouched


def test_review_proposals_show_what_they_would_change() -> None:
    from persona_desktop.ui.review_detail import proposal_html

    skill = proposal_html(NewSkill("brew-tea", "1. Boil <water>"))
    assert "New skill brew-tea" in skill and "1. Boil &lt;water&gt;" in skill
    patch = proposal_html(SkillPatch("brew-tea", "Boil", "Heat"))
    assert "replace" in patch and "Boil" in patch and "Heat" in patch
    assert "Forget fact 4" in proposal_html(Forget(4, "moved"))
    assert proposal_html(NewFact(Via(confidence=0.9))) == ""
