"""The search window and the chat's "Used N memories" (pytest-qt, offscreen)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from persona_desktop.bootstrap import Runtime
from persona_desktop.domain.model import Author, Kind, Subject, Trust
from persona_desktop.domain.proposals import NewFact
from persona_desktop.domain.text import statement_key
from persona_desktop.services import review
from persona_desktop.services.review import EvidenceItem, Provenance
from persona_desktop.ui.chat_window import ChatWindow
from persona_desktop.ui.shell import Shell
from tests.chat_support import add_fact, use_server
from tests.ollama_server import OllamaServer
from tests.search_support import add_source, approved_fact, source_id
from tests.ui_support import click_link, seed_media_evidence, shell, ui_ctx

__all__ = ["shell", "ui_ctx"]

TIMEOUT = 10_000


def _search(qtbot: QtBot, shell: Shell, text: str) -> list[str]:
    w = shell.open_search()
    with qtbot.waitSignal(w.searched, timeout=TIMEOUT):
        w.query.setText(text)
    return [r.hit.ref or f"fact:{r.hit.fact_id}" for r in w.results]


def test_hits_as_a_timeline_with_highlights_and_forgotten_ones_gone(
    runtime: Runtime, shell: Shell, qtbot: QtBot
) -> None:
    yesterday = datetime.now(UTC) - timedelta(days=1)
    refs = add_source(
        runtime, "chat:saved", Kind.CHAT, ["we looked at heat pumps <b>today</b>"], at=yesterday
    )
    add_source(runtime, "screen:1", Kind.SCREEN, ["Heat pump prices 2026"], author=Author.UNKNOWN)
    approved_fact(runtime, "The owner wants a heat pump", refs)
    assert set(_search(qtbot, shell, "heat pump")) == {"chat:saved:0", "screen:1:0", "fact:1"}
    w = shell.search
    assert w is not None
    html = w.timeline.toHtml()
    assert html.index("label of screen:1") < html.index("label of chat:saved")  # newest day first
    assert "Facts you know" in html
    assert "&lt;b&gt;today&lt;/b&gt;" in html  # captured text is text, never markup
    assert w.timeline.toPlainText().count("heat") + w.timeline.toPlainText().count("Heat") == 3
    marked = [r.line[a:b] for r in w.results for a, b in r.spans]
    assert sorted(m.lower() for m in marked) == ["heat", "heat", "heat", "pump", "pump", "pumps"]

    review.forget_source(runtime.uow, source_id(runtime, "chat:saved"), datetime.now(UTC))
    assert _search(qtbot, shell, "heat pumps") == ["screen:1:0"]  # the fact was reverted with it


def test_a_hit_opens_its_evidence_screen_crop_and_speech_clip(
    runtime: Runtime, shell: Shell, qtbot: QtBot
) -> None:
    with runtime.uow() as uow:
        cid = uow.candidates.add(
            statement="The owner prefers aisle seats",
            subject=Subject.OWNER,
            key=statement_key("The owner prefers aisle seats"),
            category=None,
            origin="test",
            run_id=None,
            proposal=NewFact(),
            supersedes_fact_id=None,
            created_at=datetime.now(UTC),
        )
        uow.commit()
    seed_media_evidence(runtime, cid)
    found = _search(qtbot, shell, "aisle")
    assert set(found) == {"screen:c1:m0:l1", "speech:rec1:0"}
    w = shell.search
    assert w is not None
    for ref in ("screen:c1:m0:l1", "speech:rec1:0"):
        index = found.index(ref)
        with qtbot.waitSignal(w.evidence_shown, timeout=TIMEOUT) as shown:
            click_link(qtbot, w.timeline, f"hit:{index}")
        item = shown.args[0]
        assert isinstance(item, EvidenceItem) and item.fragment.ref == ref
        [card] = w.cards
        if ref.startswith("screen"):
            assert card.image_label is not None  # the crop, with the line's box drawn on it
        else:
            assert card.play_button is not None  # the clip of that segment


def test_a_fact_hit_opens_its_provenance(runtime: Runtime, shell: Shell, qtbot: QtBot) -> None:
    refs = add_source(runtime, "chat:saved", Kind.CHAT, ["my bike is a green Brompton"])
    fact = approved_fact(runtime, "The owner rides a green Brompton", refs)
    found = _search(qtbot, shell, "Brompton")
    w = shell.search
    assert w is not None
    with qtbot.waitSignal(w.evidence_shown, timeout=TIMEOUT) as shown:
        w.open_hit(found.index(f"fact:{fact}"))
    prov = shown.args[0]
    assert isinstance(prov, Provenance) and prov.fact.id == fact
    assert [c.item.fragment.ref for c in w.cards] == refs


def test_ctrl_shift_f_opens_search_from_any_window(shell: Shell, qtbot: QtBot) -> None:
    memory = shell.open_memory()
    qtbot.waitUntil(lambda: memory.isVisible(), timeout=TIMEOUT)
    assert shell.search is None
    qtbot.keyClick(
        memory.search, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
    )
    assert shell.search is not None and shell.search.isVisible()
    assert shell.search_action in shell.menu_actions()


def test_hostile_text_in_the_search_box_never_breaks_the_window(
    runtime: Runtime, shell: Shell, qtbot: QtBot
) -> None:
    add_source(runtime, "chat:saved", Kind.CHAT, ["NEAR the heat"], trust=Trust.TRUSTED)
    for text in ['"', "NEAR(", "*", "-heat", "text:heat", "\ue000heat"]:
        _search(qtbot, shell, text)
    assert shell.search is not None and "error" not in shell.search.status.text().lower()


def test_the_chat_shows_which_memories_a_reply_used_and_why(
    runtime: Runtime, ollama_server: OllamaServer, shell: Shell, qtbot: QtBot
) -> None:
    use_server(runtime, ollama_server)
    bike = add_fact(runtime, "The owner rides a red Cannondale bicycle")
    add_fact(runtime, "The owner drinks oolong tea")
    ollama_server.reply("A red one.")
    chat: ChatWindow = shell.open_chat()
    assert chat.used_memories.isHidden()
    with qtbot.waitSignal(chat.turn_finished, timeout=TIMEOUT):
        chat.send("which bicycle do I have?")
    qtbot.waitUntil(lambda: chat.stream is None, timeout=TIMEOUT)
    used = chat.used_memories
    assert not used.isHidden() and used.toggle.text().endswith("Used 1 memory")
    assert not used.expanded()
    used.toggle.click()
    assert used.expanded() and "Cannondale" in used.rows[0][0].text()
    used.rows[0][1].click()  # "Why do I know this?"
    memory = shell.memory
    assert memory is not None
    qtbot.waitUntil(
        lambda: memory.provenance is not None and memory.provenance.fact.id == bike, timeout=TIMEOUT
    )
    chat.shutdown()
