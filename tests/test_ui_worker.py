"""The app's one worker and its one "memory changed" signal (pytest-qt, offscreen, real store).

The worker: progress, result, cancel, and a bug that is logged and shown, never swallowed,
without the exception's words. The change signal: a write in one window reaches the
others, the tray count and the export with no wiring between them. The chat window:
nothing of the store is read on the GUI thread.
"""

from __future__ import annotations

import logging
import threading
import traceback
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QObject
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from persona_desktop.app import CrashDialog, build_context
from persona_desktop.bootstrap import Runtime
from persona_desktop.crash_hook import CrashHook
from persona_desktop.ports import UnitOfWork
from persona_desktop.ui.chat_window import ChatWindow
from persona_desktop.ui.context import UiContext
from persona_desktop.ui.memory_events import MemoryChange
from persona_desktop.ui.shell import Shell
from persona_desktop.ui.worker import WorkCrashed, create_worker
from tests.chat_support import by_kind, use_server
from tests.ollama_server import OllamaServer
from tests.ui_support import crash, seed_memory, shell, ui_ctx

__all__ = ["crash", "shell", "ui_ctx"]

TIMEOUT = 10_000
PEANUTS = "I am allergic to peanuts"


@pytest.fixture
def owner(qapp: QApplication) -> QObject:
    return QObject()


def test_a_worker_reports_progress_then_its_result_and_stops_when_asked(owner: QObject, qtbot: QtBot) -> None:
    asked = threading.Event()
    seen: list[tuple[str, Any]] = []

    def count(cancelled: Callable[[], bool]) -> Iterator[int]:
        yield 1
        asked.wait(TIMEOUT / 1000)  # until the owner pressed Stop
        if cancelled():
            return "stopped after 1"  # type: ignore[return-value]
        yield 2
        return "all done"  # type: ignore[return-value]

    worker = create_worker(count, owner, "the count", start=False)
    worker.started.connect(lambda: seen.append(("started", None)))
    worker.yielded.connect(lambda n: seen.append(("yielded", n)))
    worker.returned.connect(lambda r: seen.append(("returned", r)))
    worker.finished.connect(lambda: seen.append(("finished", None)))
    with qtbot.waitSignal(worker.yielded, timeout=TIMEOUT):
        worker.start()
    assert worker.is_running()
    with qtbot.waitSignal(worker.finished, timeout=TIMEOUT):
        worker.quit()
        asked.set()
    assert seen == [("started", None), ("yielded", 1), ("returned", "stopped after 1"), ("finished", None)]
    assert not worker.is_running()


def test_a_bug_in_a_worker_is_logged_and_shown_in_one_line_never_swallowed(
    owner: QObject,
    crash: tuple[CrashHook, CrashDialog],
    logged_warnings: list[logging.LogRecord],
    data_dir: Path,
    qtbot: QtBot,
) -> None:
    hook, dialog = crash

    def broken(_cancelled: Callable[[], bool]) -> None:
        raise TypeError(f"unsupported operand: {PEANUTS!r} + 1")

    errors: list[Exception] = []
    with qtbot.waitSignal(create_worker(broken, owner, "the test work", on_errored=errors.append).finished):
        pass
    [error] = errors  # the owner of the work hears of it, to put itself right
    assert isinstance(error, WorkCrashed)
    assert str(error) == (
        "the test work stopped on an internal error (TypeError); the details are in the log"
    )
    assert hook.seen == 1  # the crash path had it: the traceback is in the log, one line on screen
    qtbot.waitUntil(lambda: dialog.box is not None and dialog.box.isVisible(), timeout=TIMEOUT)
    assert dialog.box is not None and "internal error (TypeError)" in dialog.box.text()
    assert "peanuts" not in dialog.box.text()
    text = (data_dir / "logs" / "persona-desktop.log").read_text()
    assert "Traceback" in text and "TypeError" in text and "broken" in text
    assert [r.levelname for r in logged_warnings] == ["ERROR"]


def test_a_bug_in_the_chat_turn_is_said_in_the_window_and_the_chat_goes_on(
    runtime: Runtime,
    ui_ctx: UiContext,
    ollama_server: OllamaServer,
    crash: tuple[CrashHook, CrashDialog],
    qtbot: QtBot,
    monkeypatch: pytest.MonkeyPatch,
    logged_warnings: list[logging.LogRecord],
) -> None:
    from persona_desktop.services import chat

    use_server(runtime, ollama_server)
    ollama_server.reply("Noted.")
    window = ChatWindow(ui_ctx)
    qtbot.addWidget(window)
    with qtbot.waitSignal(window.loaded, timeout=TIMEOUT):
        window.show()
    real = chat.build_prompt

    def broken(*_args: object, **_kw: object) -> object:
        raise TypeError(f"cannot recall {PEANUTS!r}")

    monkeypatch.setattr(chat, "build_prompt", broken)
    window.send("what should I avoid?")
    qtbot.waitUntil(lambda: window.stream is None, timeout=TIMEOUT)
    text = window.transcript.toPlainText()
    assert "the chat stopped on an internal error (TypeError); the details are in the log" in text
    assert "peanuts" not in text
    assert window.send_button.isEnabled()
    assert crash[0].seen == 1
    monkeypatch.setattr(chat, "build_prompt", real)
    with qtbot.waitSignal(window.turn_finished, timeout=TIMEOUT):
        window.send("hello again")
    assert "Noted." in window.transcript.toPlainText()
    assert window.shutdown()
    assert [r.levelname for r in logged_warnings] == ["ERROR"]


class _ThreadWatch:
    """A unit-of-work factory that notes every store access made on the GUI thread."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls = 0
        self.on_gui_thread: list[str] = []

    def _note(self) -> None:
        self.calls += 1
        if threading.current_thread() is threading.main_thread():
            self.on_gui_thread.append("".join(traceback.format_stack(limit=8)))

    def __call__(self) -> AbstractContextManager[UnitOfWork]:
        self._note()
        return self.inner()  # type: ignore[no-any-return]

    def read(self) -> AbstractContextManager[UnitOfWork]:
        self._note()
        return self.inner.read()  # type: ignore[no-any-return]


def test_the_chat_window_reads_nothing_on_the_gui_thread(
    runtime: Runtime, ollama_server: OllamaServer, qtbot: QtBot
) -> None:
    use_server(runtime, ollama_server, review__enabled=True, review__memory_interval=1)
    ollama_server.default = by_kind("Sure.")
    watch = _ThreadWatch(runtime.uow)
    ctx = build_context(runtime)
    ctx.uow = watch  # type: ignore[assignment]
    window = ChatWindow(ctx)  # reads the conversation to go on with
    qtbot.addWidget(window)
    with qtbot.waitSignal(window.loaded, timeout=TIMEOUT):
        window.show()
    with qtbot.waitSignal(window.review_finished, timeout=TIMEOUT):  # a turn, then its review
        window.send("I only drink green tea")
    qtbot.waitUntil(lambda: window.reviewer is None and window.stream is None, timeout=TIMEOUT)
    assert window.new_chat()
    assert window.shutdown()
    assert watch.calls >= 3, "the store was not used at all: the check proves nothing"
    assert watch.on_gui_thread == [], "\n\n".join(watch.on_gui_thread)


def test_a_decision_in_the_review_window_reaches_every_window_the_tray_and_the_export(
    runtime: Runtime, ui_ctx: UiContext, shell: Shell, qtbot: QtBot, tmp_path: Path
) -> None:
    from persona_desktop.services.markdown_export import PROFILE

    seeded = seed_memory(runtime, pending=2, applied=1, observations=0)
    vault = tmp_path / "vault"
    ui_ctx.settings.set("export.enabled", True)
    ui_ctx.settings.set("export.path", str(vault))
    shell.refresh_counts()
    qtbot.waitUntil(lambda: shell.pending == 2, timeout=TIMEOUT)
    memory = shell.open_memory()
    qtbot.waitUntil(lambda: len(memory.facts.rows) == 1, timeout=TIMEOUT)
    search = shell.open_search()
    with qtbot.waitSignal(search.searched, timeout=TIMEOUT):
        search.query.setText("topic")
    assert not any(r.hit.fact_id is not None and "topic 0" in r.line for r in search.results)
    review = shell.open_review()
    qtbot.waitUntil(lambda: len(review.pending.rows) == 2, timeout=TIMEOUT)
    changes: list[MemoryChange] = []
    ui_ctx.events.changed.connect(changes.append)
    review.pending_table.selectRow(review.pending.row_of(seeded.pending[0]))  # type: ignore[arg-type]
    review.approve_selected()
    qtbot.waitUntil(lambda: len(memory.facts.rows) == 2, timeout=TIMEOUT)  # the browser follows
    qtbot.waitUntil(lambda: shell.pending == 1, timeout=TIMEOUT)  # so does the tray's count
    qtbot.waitUntil(  # and the search shown
        lambda: any(r.hit.fact_id is not None and "topic 0" in r.line for r in search.results),
        timeout=TIMEOUT,
    )
    qtbot.waitUntil(lambda: (vault / PROFILE).exists(), timeout=TIMEOUT)  # and the export
    assert "The owner likes topic 0" in (vault / PROFILE).read_text(encoding="utf-8")
    assert [(c.facts, c.candidates, c.origin) for c in changes] == [(True, True, review)]  # announced once


def test_forgetting_a_source_in_the_memory_browser_empties_the_review_and_the_search(
    runtime: Runtime, ui_ctx: UiContext, shell: Shell, qtbot: QtBot
) -> None:
    seeded = seed_memory(runtime, pending=2, applied=1, observations=0)
    review = shell.open_review()
    qtbot.waitUntil(lambda: len(review.pending.rows) == 2, timeout=TIMEOUT)
    search = shell.open_search()
    with qtbot.waitSignal(search.searched, timeout=TIMEOUT):
        search.query.setText("message number")
    assert search.results
    memory = shell.open_memory()
    qtbot.waitUntil(lambda: len(memory.facts.rows) == 1, timeout=TIMEOUT)
    memory.forget(seeded.source_id, "Saved messages")
    qtbot.waitUntil(lambda: review.pending.rows == [], timeout=TIMEOUT)  # nothing cites it any more
    qtbot.waitUntil(lambda: search.results == [], timeout=TIMEOUT)  # its lines are gone
    qtbot.waitUntil(lambda: shell.pending == 0, timeout=TIMEOUT)
