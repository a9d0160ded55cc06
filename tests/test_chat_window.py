"""The chat window (pytest-qt, offscreen): type, stream, cancel, review in the background, no leaks."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from persona_desktop.bootstrap import Runtime
from persona_desktop.ui.chat_window import ChatWindow
from persona_desktop.ui.context import UiContext
from persona_desktop.ui.shell import Shell
from tests.chat_support import by_kind, use_server
from tests.ollama_server import OllamaServer, reply
from tests.ui_support import shell, ui_ctx

__all__ = ["shell", "ui_ctx"]

TIMEOUT = 10_000


@pytest.fixture
def window(
    runtime: Runtime, ollama_server: OllamaServer, ui_ctx: UiContext, qtbot: QtBot
) -> Iterator[ChatWindow]:
    use_server(runtime, ollama_server)
    w = ChatWindow(ui_ctx)
    qtbot.addWidget(w)
    with qtbot.waitSignal(w.loaded, timeout=TIMEOUT):
        w.show()
    yield w
    assert w.shutdown(wait_ms=20_000)
    assert w.stream is None and w.reviewer is None


def _type_and_send(qtbot: QtBot, w: ChatWindow, text: str) -> None:
    w.input.setFocus()
    qtbot.keyClicks(w.input, text)
    with qtbot.waitSignal(w.turn_finished, timeout=TIMEOUT):
        qtbot.keyClick(w.input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: w.stream is None, timeout=TIMEOUT)


def test_typing_streams_the_answer_into_the_transcript(
    window: ChatWindow, ollama_server: OllamaServer, qtbot: QtBot
) -> None:
    ollama_server.reply("", chunks=["Hello ", "Ann, ", "green tea it is."], chunk_delay=0.05)
    pieces: list[str] = []
    window.input.setFocus()
    qtbot.keyClicks(window.input, "I only drink green tea")
    qtbot.keyClick(window.input, Qt.Key.Key_Return)
    assert window.stream is not None
    window.stream.yielded.connect(pieces.append)
    assert not window.send_button.isEnabled() and window.stop_button.isEnabled()
    qtbot.waitUntil(lambda: window.stream is None, timeout=TIMEOUT)
    assert "".join(pieces).endswith("green tea it is.")
    text = window.transcript.toPlainText()
    assert "I only drink green tea" in text and "Hello Ann, green tea it is." in text
    assert window.input.toPlainText() == ""
    assert window.send_button.isEnabled() and not window.stop_button.isEnabled()
    assert [m.role for m in window.session.conversation.messages] == ["owner", "assistant"]


def test_stop_cancels_the_answer_and_keeps_what_came(
    window: ChatWindow, ollama_server: OllamaServer, qtbot: QtBot
) -> None:
    ollama_server.reply("", chunks=[f"word{i} " for i in range(200)], chunk_delay=0.05)
    window.send("count to two hundred")
    qtbot.waitUntil(lambda: "word2" in window.transcript.toPlainText(), timeout=TIMEOUT)
    with qtbot.waitSignal(window.turn_finished, timeout=TIMEOUT) as got:
        qtbot.mouseClick(window.stop_button, Qt.MouseButton.LeftButton)
    outcome = got.args[0]
    assert outcome.cancelled and outcome.reply is not None
    assert 2 < len(outcome.reply.text.split()) < 200
    assert "(stopped)" in window.transcript.toPlainText()
    qtbot.waitUntil(lambda: window.stream is None, timeout=TIMEOUT)
    assert window.send_button.isEnabled()


def test_a_failing_model_is_reported_and_the_chat_goes_on(
    window: ChatWindow, ollama_server: OllamaServer, qtbot: QtBot
) -> None:
    ollama_server.fail(500, "the runner crashed")
    ollama_server.reply("Back again.")
    _type_and_send(qtbot, window, "hello?")
    assert "could not answer" in window.transcript.toPlainText()
    _type_and_send(qtbot, window, "hello again")
    assert "Back again." in window.transcript.toPlainText()


def test_the_review_runs_in_the_background_and_its_summary_reaches_the_tray(
    runtime: Runtime, window: ChatWindow, ollama_server: OllamaServer, qtbot: QtBot
) -> None:
    use_server(runtime, ollama_server, review__enabled=True, review__memory_interval=2)
    first_ref = f"chat:assistant:{window.session.id}:0"
    review_turns: list[int] = []

    def respond(body):  # type: ignore[no-untyped-def]
        if not body.get("tools"):
            return reply("Okay.")
        review_turns.append(len(body["messages"]))
        if len(review_turns) > 1:
            return reply("Done.")
        return reply(
            "", tool_calls=[("propose_fact", {"statement": "The owner is a nurse", "refs": [first_ref]})]
        )

    ollama_server.default = respond
    summaries: list[str] = []
    window.review_summary.connect(summaries.append)
    _type_and_send(qtbot, window, "I work as a nurse")
    assert window.reviewer is None
    with qtbot.waitSignal(window.review_finished, timeout=TIMEOUT):
        _type_and_send(qtbot, window, "night shifts mostly")
        assert window.is_reviewing() or summaries  # started right after the turn
    qtbot.waitUntil(lambda: window.reviewer is None, timeout=TIMEOUT)
    assert summaries == ["Memory review: 1 fact proposed"]
    assert len(review_turns) == 2  # one tool round, then the model was done


def test_a_failing_review_is_reported_once_and_the_chat_goes_on(
    runtime: Runtime,
    window: ChatWindow,
    ollama_server: OllamaServer,
    qtbot: QtBot,
    logged_warnings: list[logging.LogRecord],
) -> None:
    use_server(runtime, ollama_server, review__enabled=True, review__memory_interval=1)

    def respond(body):  # type: ignore[no-untyped-def]
        from tests.ollama_server import error

        return error(500, "review model crashed") if body.get("tools") else reply("Fine.")

    ollama_server.default = respond
    failures: list[str] = []
    window.review_failed.connect(failures.append)
    for text in ("one", "two", "three"):
        with qtbot.waitSignal(window.review_finished, timeout=TIMEOUT):
            _type_and_send(qtbot, window, text)
        qtbot.waitUntil(lambda: window.reviewer is None, timeout=TIMEOUT)
    assert len(failures) == 1 and "review model crashed" in failures[0]
    assert window.transcript.toPlainText().count("Fine.") == 3
    failed = [r.getMessage() for r in logged_warnings]  # each failure is in the log, told once
    assert len(failed) == 3 and all("the turn review failed" in m for m in failed)


def test_a_bad_prompt_path_shows_a_visible_warning(
    runtime: Runtime,
    window: ChatWindow,
    ollama_server: OllamaServer,
    qtbot: QtBot,
    tmp_path: Path,
    logged_warnings: list[logging.LogRecord],
) -> None:
    use_server(
        runtime,
        ollama_server,
        review__enabled=True,
        review__memory_interval=1,
        review__memory_prompt_path=str(tmp_path / "missing.md"),
    )
    ollama_server.default = by_kind("Sure.")
    warnings: list[str] = []
    window.warning.connect(warnings.append)
    with qtbot.waitSignal(window.review_finished, timeout=TIMEOUT):
        _type_and_send(qtbot, window, "remember that I hate olives")
    assert len(warnings) == 1 and "missing.md" in warnings[0]
    assert window.banner.isVisible() and "built-in memory prompt" in window.banner.text()
    assert [r.getMessage() for r in logged_warnings] == warnings


def test_the_tray_menu_opens_the_chat_and_shows_the_review_summary(
    runtime: Runtime, ollama_server: OllamaServer, shell: Shell, qtbot: QtBot
) -> None:
    use_server(runtime, ollama_server, review__enabled=True, review__memory_interval=1)
    assert shell.chat_action in shell.menu_actions() and shell.chat_action.text() == "Chat\u2026"
    calls: list[int] = []

    def respond(body):  # type: ignore[no-untyped-def]
        if not body.get("tools"):
            return reply("Okay.")
        calls.append(1)
        if len(calls) > 1:
            return reply("Done.")
        return reply("", tool_calls=[("propose_fact", {"statement": "The owner hates olives", "refs": []})])

    ollama_server.default = respond
    told: list[tuple[str, str]] = []
    shell.notified.connect(lambda title, msg: told.append((title, msg)))
    shell.chat_action.trigger()
    chat = shell.chat
    assert chat is not None and chat.isVisible()
    with qtbot.waitSignal(chat.review_finished, timeout=TIMEOUT):
        _type_and_send(qtbot, chat, "I hate olives")
    assert ("Persona Desktop", "Memory review: 1 fact proposed") in told
    qtbot.waitUntil(lambda: shell.pending == 1, timeout=TIMEOUT)


def test_a_decision_in_the_review_window_rewrites_the_export(
    runtime: Runtime, ui_ctx: UiContext, shell: Shell, qtbot: QtBot, tmp_path: Path
) -> None:
    from persona_desktop.services.markdown_export import PROFILE
    from tests.ui_support import seed_memory

    seed_memory(runtime, pending=1, applied=0)
    vault = tmp_path / "vault"
    ui_ctx.settings.set("export.enabled", True)
    ui_ctx.settings.set("export.path", str(vault))
    window = shell.open_review()
    qtbot.waitUntil(lambda: len(window.pending.rows) == 1, timeout=TIMEOUT)
    assert not (vault / PROFILE).exists()  # written by the decision, not before
    window.pending_table.selectRow(0)
    window.approve_selected()
    qtbot.waitUntil(lambda: (vault / PROFILE).exists() and not shell.work.busy(), timeout=TIMEOUT)
    assert "The owner likes topic 0" in (vault / PROFILE).read_text(encoding="utf-8")


def test_the_conversation_goes_on_in_a_new_window_and_new_chat_starts_another(
    window: ChatWindow, ui_ctx: UiContext, ollama_server: OllamaServer, qtbot: QtBot
) -> None:
    ollama_server.reply("Hello Ann.")
    ollama_server.reply("Still here.")
    _type_and_send(qtbot, window, "hi, I am Ann")
    first_id = window.session.id
    again = ChatWindow(ui_ctx)
    qtbot.addWidget(again)
    qtbot.waitUntil(lambda: again.is_loaded, timeout=TIMEOUT)
    assert again.session.id == first_id
    assert "Hello Ann." in again.transcript.toPlainText()
    _type_and_send(qtbot, again, "still there?")
    refs = [m.ref for m in again.session.conversation.messages]
    assert refs == [f"chat:assistant:{first_id}:{n}" for n in range(4)]
    assert again.session.model_messages()[1]["content"] == "hi, I am Ann"  # the model sees the history
    assert again.new_chat()
    assert again.session.id != first_id and "Hello Ann." not in again.transcript.toPlainText()
    assert again.shutdown()


def test_a_slow_review_never_blocks_the_chat_and_only_one_runs_at_a_time(
    runtime: Runtime, window: ChatWindow, ollama_server: OllamaServer, qtbot: QtBot
) -> None:
    use_server(runtime, ollama_server, review__enabled=True, review__memory_interval=1)

    def respond(body):  # type: ignore[no-untyped-def]
        return reply("Nothing to save.", delay=1.5) if body.get("tools") else reply("Quick answer.")

    ollama_server.default = respond
    events: list[str] = []
    window.turn_finished.connect(lambda _o: events.append("answer"))
    window.review_finished.connect(lambda _o: events.append("review"))
    _type_and_send(qtbot, window, "first")
    assert window.is_reviewing()
    _type_and_send(qtbot, window, "second")  # answered while the review still runs
    assert window.is_reviewing() and window.skipped_reviews == 1
    qtbot.waitUntil(lambda: window.reviewer is None, timeout=TIMEOUT)
    assert events == ["answer", "answer", "review"]
    assert sum(1 for b in ollama_server.chat_bodies() if b.get("tools")) == 1
