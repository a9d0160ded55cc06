"""The app's side of durability: the crash dialog, the journal warning, the history backlog."""

from __future__ import annotations

import logging
import sys
import threading
from datetime import timedelta
from pathlib import Path

from pytestqt.qtbot import QtBot

from persona_desktop.app import CrashDialog
from persona_desktop.bootstrap import Runtime
from persona_desktop.crash_hook import CrashHook
from persona_desktop.ui.shell import Shell
from tests.conftest import Cli, chat_line, write_jsonl
from tests.store_support import raw_connect
from tests.ui_support import crash, shell, ui_ctx

__all__ = ["crash", "shell", "ui_ctx"]


def test_an_uncaught_exception_shows_a_dialog_and_is_logged(
    crash: tuple[CrashHook, CrashDialog],
    data_dir: Path,
    qtbot: QtBot,
    logged_warnings: list[logging.LogRecord],
) -> None:
    hook, dialog = crash
    quoted = "a bug that quotes 'I am allergic to " + "peanuts'"
    try:
        raise RuntimeError(quoted)
    except RuntimeError as exc:
        sys.excepthook(type(exc), exc, exc.__traceback__)
    qtbot.waitUntil(lambda: dialog.box is not None and dialog.box.isVisible(), timeout=5000)
    assert dialog.box is not None
    text = dialog.box.text()
    assert "internal error (RuntimeError)" in text and "peanuts" not in text
    log = data_dir / "logs" / "persona-desktop.log"
    logged = log.read_text()
    assert "Traceback" in logged and "RuntimeError: message withheld" in logged
    assert "peanuts" not in logged, "message text reached the log file"

    def worker() -> None:
        raise ValueError("from a worker thread")

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    qtbot.waitUntil(lambda: len(dialog.shown) == 2, timeout=5000)
    assert "internal error (ValueError)" in dialog.shown[1]
    assert "1 more error(s) since" in dialog.box.informativeText()  # one dialog, not a pile
    assert hook.seen == 2
    assert [r.levelname for r in logged_warnings] == ["ERROR", "ERROR"]  # both went to the log


def test_a_tampered_journal_is_a_warning_in_the_tray(
    runtime: Runtime, shell: Shell, data_dir: Path, qtbot: QtBot, logged_warnings: list[logging.LogRecord]
) -> None:
    with runtime.uow() as uow:
        for i in range(3):
            uow.journal.append(at=runtime.clock.now(), actor="test", action=f"probe.{i}", entity="none")
        uow.commit()
    raw = raw_connect(data_dir, isolation_level=None)  # SQLCipher with the key
    raw.execute("DROP TRIGGER revisions_no_update")
    raw.execute("""UPDATE revisions SET data = '{"forged": true}' WHERE id = 2""")
    raw.close()
    with qtbot.waitSignal(shell.warned, timeout=10_000) as warned:
        shell.check_journal()
    title, message = warned.args
    assert "journal warning" in title
    assert "revisions_no_update" in message
    assert "WARNING: the journal was tampered with" in shell.describe()
    assert [r.getMessage() for r in logged_warnings] == [f"journal verify: {message.split('. Run')[0]}"]


def test_an_intact_journal_says_nothing(runtime: Runtime, shell: Shell, qtbot: QtBot) -> None:
    warned: list[tuple[str, str]] = []
    shell.warned.connect(lambda title, message: warned.append((title, message)))
    with qtbot.waitSignal(shell.work.idle, timeout=5000):  # the check ran and its answer was read
        shell.check_journal()
    assert warned == []
    assert "WARNING" not in shell.describe()


def test_the_tooltip_shows_the_history_backlog(
    runtime: Runtime, shell: Shell, cli: Cli, tmp_path: Path, qtbot: QtBot
) -> None:
    old = [chat_line(str(i), f"old message {i}", ago=timedelta(days=40 + i)) for i in range(5)]
    assert cli("ingest", "chat", str(write_jsonl(tmp_path / "old.jsonl", old))).code == 0
    shell.refresh_counts()
    qtbot.waitUntil(lambda: shell.backlog is not None and shell.backlog.history_left == 5, timeout=5000)
    assert "history: 5 of 5 older messages left to read" in shell.describe()
