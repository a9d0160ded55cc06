"""The tray's shell: scheduler in a worker against the loopback Ollama, first run, capture
switches, single instance, and the self-test."""

from __future__ import annotations

import logging
import os
import select
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from persona_desktop.app import build_shell, self_test
from persona_desktop.bootstrap import Runtime
from persona_desktop.config import Settings
from persona_desktop.domain.model import RunStatus
from persona_desktop.services.ingest import note_owner_activity
from persona_desktop.ui.context import UiContext
from persona_desktop.ui.first_run import FirstRunDialog
from persona_desktop.ui.icons import TrayState
from persona_desktop.ui.scheduler import in_window, night_of
from persona_desktop.ui.shell import Shell
from persona_desktop.ui.single_instance import SingleInstance, notify_running
from tests.conftest import Cli, chat_line, write_jsonl
from tests.ollama_server import OllamaServer
from tests.sleep_support import Claim, ScriptedModel
from tests.ui_support import shell, ui_ctx

__all__ = ["shell", "ui_ctx"]

TIMEOUT = 20_000
PEANUTS = "I am allergic to peanuts, so please never suggest peanut dishes."
CYCLING = "I usually cycle to work along the river, even in winter."


def _enable_cycle(ctx: UiContext, server: OllamaServer) -> None:
    s = ctx.settings
    s.set("sleep.enabled", True)
    s.set("ollama.host", server.url)
    s.set("ollama.retry_backoff_seconds", 0)
    s.set("ollama.timeout_seconds", 2)
    s.save()


def _chat(cli: Cli, tmp_path: Path) -> None:
    lines = [
        chat_line("1", PEANUTS, ago=timedelta(hours=3)),
        chat_line("2", "Noted, no peanuts.", role="assistant", ago=timedelta(hours=3)),
        chat_line("3", PEANUTS, ago=timedelta(hours=2)),
        chat_line("4", CYCLING, chat="Bob", chat_type="group", role="other", ago=timedelta(hours=2)),
    ]
    assert cli("ingest", "chat", str(write_jsonl(tmp_path / "chat.jsonl", lines))).code == 0


def _local(hour: int, minute: int = 0) -> datetime:
    return datetime.now().astimezone().replace(hour=hour, minute=minute, second=0, microsecond=0)


def test_window_arithmetic() -> None:
    t = datetime(2026, 1, 2, 3, 0).time()
    assert in_window(t, datetime(2026, 1, 1, 2, 0).time(), datetime(2026, 1, 1, 5, 0).time())
    assert not in_window(t, datetime(2026, 1, 1, 4, 0).time(), datetime(2026, 1, 1, 5, 0).time())
    assert in_window(t, datetime(2026, 1, 1, 23, 0).time(), datetime(2026, 1, 1, 4, 0).time())  # wraps
    start = datetime(2026, 1, 1, 23, 0).time()
    assert night_of(datetime(2026, 1, 2, 1, 0), start) == night_of(datetime(2026, 1, 1, 23, 30), start)


def test_scheduled_cycle_runs_in_a_worker_and_the_ui_follows(
    shell: Shell, ui_ctx: UiContext, cli: Cli, ollama_server: OllamaServer, tmp_path: Path, qtbot: QtBot
) -> None:
    model = ScriptedModel(
        {PEANUTS: Claim("The owner is allergic to peanuts"), CYCLING: Claim("Bob cycles to work", "other")}
    )
    ollama_server.default = model
    _enable_cycle(ui_ctx, ollama_server)
    _chat(cli, tmp_path)
    notes: list[tuple[str, str]] = []
    shell.notified.connect(lambda t, m: notes.append((t, m)))
    review = shell.open_review()
    qtbot.waitUntil(lambda: not review.work.busy(), timeout=TIMEOUT)
    assert review.pending.rows == []
    sched = shell.scheduler
    sched._now = lambda: _local(12)
    assert sched.tick() is False
    sched._now = lambda: _local(3)
    progress: list[object] = []
    sched.progress.connect(progress.append)
    with qtbot.waitSignal(sched.finished, timeout=TIMEOUT) as done:
        assert sched.tick() is True
        assert shell.state() is TrayState.RUNNING
        assert "sleep cycle running" in shell.describe()
    outcome = done.args[0]
    assert outcome.status is RunStatus.DONE, outcome
    assert progress, "no progress reached the GUI thread"
    qtbot.waitUntil(lambda: sched.worker is None, timeout=TIMEOUT)
    assert ("Persona Desktop", outcome.message) in notes
    assert outcome.message.startswith("Memory: 1 fact added, 1 waiting")
    qtbot.waitUntil(lambda: shell.pending == 1, timeout=TIMEOUT)
    assert shell.state() is TrayState.WAITING
    assert "1 waiting for your review" in shell.describe()
    assert shell.review_action.text() == "Review 1 waiting\u2026"
    assert shell.state_action.text() == "Capture off \u00b7 1 waiting \u00b7 next cycle 02:00"
    qtbot.waitUntil(
        lambda: [v.candidate.statement for v in review.pending.rows] == ["Bob cycles to work"],
        timeout=TIMEOUT,
    )
    qtbot.waitUntil(lambda: len(review.recent.rows) == 1, timeout=TIMEOUT)
    assert review.recent.rows[0].origin == "policy"
    assert sched.tick() is False  # done for tonight
    assert model.extraction_calls >= 1


def test_deferred_run_retries_on_the_next_tick(
    shell: Shell, ui_ctx: UiContext, runtime: Runtime, ollama_server: OllamaServer, qtbot: QtBot
) -> None:
    _enable_cycle(ui_ctx, ollama_server)
    note_owner_activity(runtime.uow, ui_ctx.clock.now() - timedelta(minutes=5))
    sched = shell.scheduler
    sched._now = lambda: _local(2, 30)
    with qtbot.waitSignal(sched.finished, timeout=TIMEOUT) as first:
        assert sched.tick()
    assert first.args[0].status is RunStatus.DEFERRED
    qtbot.waitUntil(lambda: sched.worker is None, timeout=TIMEOUT)
    with qtbot.waitSignal(sched.finished, timeout=TIMEOUT) as second:
        assert sched.tick(), "a deferred night must be retried"
    assert second.args[0].status is RunStatus.DEFERRED
    qtbot.waitUntil(lambda: sched.worker is None, timeout=TIMEOUT)
    assert ollama_server.chat_bodies() == []  # the gate held: no LLM call while the owner is active


def test_cancel_from_the_menu_stops_the_run(
    shell: Shell,
    ui_ctx: UiContext,
    runtime: Runtime,
    cli: Cli,
    ollama_server: OllamaServer,
    tmp_path: Path,
    qtbot: QtBot,
) -> None:
    _enable_cycle(ui_ctx, ollama_server)
    _chat(cli, tmp_path)
    ollama_server.hang(30)
    with qtbot.waitSignal(shell.scheduler.finished, timeout=TIMEOUT) as done:
        shell.run_action.trigger()
        qtbot.waitUntil(lambda: len(ollama_server.requests) > 0, timeout=TIMEOUT)
        assert shell.cancel_action.isVisible()
        shell.cancel_action.trigger()
    outcome = done.args[0]
    assert outcome.status is RunStatus.CANCELLED
    qtbot.waitUntil(lambda: shell.scheduler.worker is None, timeout=TIMEOUT)
    assert not shell.cancel_action.isVisible()
    # the store is consistent: the run is closed and the lease is free for the next runner
    with runtime.uow() as uow:
        run = uow.runs.get(outcome.run_id) if outcome.run_id is not None else uow.runs.latest()
        assert run is not None and run.status is RunStatus.CANCELLED and run.finished_at is not None
        assert uow.leases.acquire("sleep", "next-runner", ui_ctx.clock.now(), 60) is None


def test_run_now_after_a_recent_chat_offers_run_anyway(
    shell: Shell,
    ui_ctx: UiContext,
    runtime: Runtime,
    cli: Cli,
    ollama_server: OllamaServer,
    tmp_path: Path,
    qtbot: QtBot,
) -> None:
    """The quiet time protects the owner from a busy machine; a click on "Run now" is the owner
    saying they do not mind. Deferred, it offers "Run anyway", which skips the quiet time."""
    ollama_server.default = ScriptedModel({PEANUTS: Claim("The owner is allergic to peanuts")})
    _enable_cycle(ui_ctx, ollama_server)
    _chat(cli, tmp_path)
    note_owner_activity(runtime.uow, ui_ctx.clock.now() - timedelta(minutes=5))
    with qtbot.waitSignal(shell.scheduler.finished, timeout=TIMEOUT) as first:
        shell.run_action.trigger()
    assert first.args[0].status is RunStatus.DEFERRED
    qtbot.waitUntil(
        lambda: shell.run_anyway_box is not None and shell.run_anyway_box.isVisible(), timeout=TIMEOUT
    )
    box = shell.run_anyway_box
    assert box is not None and "5 min" in box.text() and ollama_server.chat_bodies() == []
    anyway = next(b for b in box.buttons() if b.text() == "Run anyway")
    with qtbot.waitSignal(shell.scheduler.finished, timeout=TIMEOUT) as second:
        anyway.click()
    assert second.args[0].status is RunStatus.DONE, second.args[0]
    assert second.args[0].counters["applied"] == 1
    qtbot.waitUntil(lambda: shell.scheduler.worker is None, timeout=TIMEOUT)
    # a scheduled tick in the window still waits for the quiet time
    note_owner_activity(runtime.uow, ui_ctx.clock.now())
    shell.scheduler._now = lambda: _local(3)
    shell.scheduler._done_night = None
    with qtbot.waitSignal(shell.scheduler.finished, timeout=TIMEOUT) as third:
        assert shell.scheduler.tick()
    assert third.args[0].status is RunStatus.DEFERRED
    qtbot.waitUntil(lambda: shell.scheduler.worker is None, timeout=TIMEOUT)


def test_run_now_with_the_cycle_off_calls_no_llm(
    shell: Shell, ollama_server: OllamaServer, ui_ctx: UiContext
) -> None:
    ui_ctx.settings.set("ollama.host", ollama_server.url)
    notes: list[str] = []
    shell.notified.connect(lambda _t, m: notes.append(m))
    shell.run_action.trigger()
    assert shell.scheduler.worker is None
    assert notes and "off" in notes[0]
    assert shell.scheduler.tick() is False
    assert ollama_server.requests == []


def test_first_run_keeps_everything_off(ui_ctx: UiContext, shell: Shell, qtbot: QtBot) -> None:
    dialog = shell.open_first_run()
    assert isinstance(dialog, FirstRunDialog)
    assert not any(b.isChecked() for b in (dialog.screen_box, dialog.speech_box, dialog.sleep_box))
    dialog.accept()
    saved = Settings.load(ui_ctx.settings.path)  # type: ignore[arg-type]
    assert saved.get("app.first_run_done") is True
    for key in ("sleep.enabled", "capture.screen_enabled", "capture.speech_enabled"):
        assert saved.get(key) is False
    assert shell.state() is TrayState.OFF


@pytest.mark.parametrize("how", ["escape", "close"])
def test_closing_the_first_run_dialog_turns_nothing_on(
    ui_ctx: UiContext, shell: Shell, qtbot: QtBot, how: str
) -> None:
    """Ticked boxes are a draft: Esc or the window's close button must apply none of them."""
    dialog = shell.open_first_run()
    qtbot.waitExposed(dialog)
    for box in (dialog.screen_box, dialog.speech_box, dialog.sleep_box):
        box.setChecked(True)
    if how == "escape":
        qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    else:
        dialog.close()
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=TIMEOUT)
    assert not shell.capture.is_enabled("screen") and not shell.capture.is_enabled("speech")
    assert ui_ctx.settings.get("sleep.enabled") is False
    saved = Settings.load(ui_ctx.settings.path)  # type: ignore[arg-type]
    for key in ("sleep.enabled", "capture.screen_enabled", "capture.speech_enabled"):
        assert saved.get(key) is False, key
    assert saved.get("app.first_run_done") is True  # seen: it does not come back at every start
    assert shell.state() is TrayState.OFF


def test_first_run_can_switch_screen_capture_on(ui_ctx: UiContext, shell: Shell) -> None:
    dialog = shell.open_first_run()
    dialog.screen_box.setChecked(True)
    dialog.settings_button.click()
    saved = Settings.load(ui_ctx.settings.path)  # type: ignore[arg-type]
    assert saved.get("capture.screen_enabled") is True
    assert saved.get("sleep.enabled") is False
    assert shell.settings_dialog is not None and shell.settings_dialog.isVisible()


def test_capture_switches_and_pause(shell: Shell, ui_ctx: UiContext) -> None:
    shell.speech_action.trigger()
    assert Settings.load(ui_ctx.settings.path).get("capture.speech_enabled") is True  # type: ignore[arg-type]
    assert shell.state() is TrayState.CAPTURING and "capturing speech" in shell.describe()
    assert shell.pause60_action.isVisible()
    shell.pause60_action.trigger()
    assert shell.state() is TrayState.PAUSED and "paused until" in shell.describe()
    assert shell.resume_action.isVisible() and not shell.pause15_action.isVisible()
    shell.resume_action.trigger()
    assert shell.state() is TrayState.CAPTURING
    shell.speech_action.trigger()
    assert shell.state() is TrayState.OFF
    assert Settings.load(ui_ctx.settings.path).get("capture.speech_enabled") is False  # type: ignore[arg-type]


# without a sound server (when no earlier test started one), Qt's audio says so: that is the case here
@pytest.mark.qt_log_ignore(r"^PulseAudioService: pa_context_connect\(\) failed$")
def test_real_capture_loops_report_and_switch_off_when_they_cannot_run(
    ui_ctx: UiContext,
    runtime: Runtime,
    qtbot: QtBot,
    monkeypatch: pytest.MonkeyPatch,
    logged_warnings: list[logging.LogRecord],
) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)  # no screen to grab, no microphone offscreen
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    # Whatever sound server an earlier test left to Qt, this microphone does not exist.
    ui_ctx.settings.set("capture.microphone", "no-such-microphone")
    sh = build_shell(ui_ctx, runtime)
    notes: list[str] = []
    sh.notified.connect(lambda _t, m: notes.append(m))
    try:
        sh.screen_action.trigger()
        qtbot.waitUntil(lambda: any(m.startswith("Screen capture:") for m in notes), timeout=TIMEOUT)
        qtbot.waitUntil(lambda: not sh.screen_action.isChecked(), timeout=TIMEOUT)
        assert Settings.load(ui_ctx.settings.path).get("capture.screen_enabled") is False  # type: ignore[arg-type]
        sh.speech_action.trigger()  # no microphone, or one that fails to open: said, and switched off
        qtbot.waitUntil(lambda: any(m.startswith("Speech capture:") for m in notes), timeout=TIMEOUT)
        qtbot.waitUntil(lambda: not sh.speech_action.isChecked(), timeout=TIMEOUT)
        assert sh.state() is TrayState.OFF
    finally:
        assert sh.shutdown()
    logged = [r.getMessage() for r in logged_warnings]  # what the owner was told is in the log too
    assert logged and all(m.startswith(("screen capture:", "speech capture:")) for m in logged), logged


def test_second_launch_knocks_on_the_first(qapp: QApplication, qtbot: QtBot, tmp_path: Path) -> None:
    name = f"persona-test-{os.getpid()}-{tmp_path.name}"
    assert notify_running(name, 200) is False
    first = SingleInstance(name)
    assert first.listen()
    try:
        with qtbot.waitSignal(first.activated, timeout=5000):
            assert notify_running(name)
    finally:
        first.close()


def test_self_test_runs_a_cycle_when_the_host_answers(
    qapp: QApplication, cli: Cli, data_dir: Path, ollama_server: OllamaServer, tmp_path: Path
) -> None:
    ollama_server.default = ScriptedModel({PEANUTS: Claim("The owner is allergic to peanuts")})
    for key, value in (
        ("sleep.enabled", "true"),
        ("ollama.host", ollama_server.url),
        ("ollama.timeout_seconds", "2"),
    ):
        assert cli("config", "set", key, value).code == 0
    _chat(cli, tmp_path)
    settings_before = (data_dir / "settings.json").read_text()
    lines: list[str] = []
    assert self_test(data_dir, lines.append) == 0, lines
    text = "\n".join(lines)
    for window in (
        "tray icon",
        "main window",
        "review window",
        "memory browser",
        "settings dialog",
        "chat window",
        "first-run dialog",
    ):
        assert f"{window}: built" in text, text
    assert "sleep cycle: done: Memory: 1 fact added" in text, text
    assert lines[-1] == "self-test: OK"
    assert (data_dir / "settings.json").read_text() == settings_before


def test_app_runs_single_instance_and_quits_on_sigterm(data_dir: Path, tmp_path: Path) -> None:
    """`persona-desktop` offscreen (no tray: the small main window); a second launch only knocks."""
    import signal

    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    (data_dir).mkdir(parents=True)
    (data_dir / "settings.json").write_text('{"app.first_run_done": true}\n')
    cmd = [sys.executable, "-m", "persona_desktop", "--data-dir", str(data_dir)]
    with subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as first:
        try:
            assert first.stdout is not None
            ready = first.stdout.readline()  # printed once it listens for later launches
            assert ready.startswith("persona-desktop: running"), ready + first.stderr.read()  # type: ignore[union-attr]
            second = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60, check=False)
            assert second.returncode == 0 and "already running" in second.stdout, second
            assert first.poll() is None  # the first one is still up
            first.send_signal(signal.SIGTERM)
            _out, err = first.communicate(timeout=30)
            assert first.returncode == 0, err
        finally:
            if first.poll() is None:
                first.kill()
                first.communicate(timeout=10)


def test_self_test_flag_without_a_host(data_dir: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "persona_desktop", "--data-dir", str(data_dir), "--self-test"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen", "OLLAMA_HOST": "http://127.0.0.1:9"},
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "sleep cycle: not run, no LLM host answers at http://127.0.0.1:9" in proc.stdout
    assert "self-test: OK" in proc.stdout


@pytest.fixture(autouse=True)
def _no_stray_windows(qapp: QApplication) -> None:
    yield
    for w in qapp.topLevelWidgets():
        w.close()


def test_a_launch_while_another_is_still_starting_waits_and_knocks(data_dir: Path, qtbot: QtBot) -> None:
    """The first instance holds the data dir's lock but does not listen yet (it is starting):
    a second launch must neither run beside it nor steal its name, but knock once it listens."""
    from PySide6.QtCore import QLockFile
    from PySide6.QtNetwork import QLocalServer

    from persona_desktop.ui.single_instance import server_name

    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    data_dir.mkdir(parents=True)
    (data_dir / "settings.json").write_text('{"app.first_run_done": true}\n')
    lock = QLockFile(str(data_dir / "app.lock"))
    assert lock.tryLock(0)
    cmd = [sys.executable, "-m", "persona_desktop", "--data-dir", str(data_dir)]
    second = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    server = QLocalServer()
    knocks: list[bytes] = []
    said: list[str] = []

    def waiting() -> bool:  # the second launch is up, found the lock taken, and says it waits
        assert second.poll() is None, second.communicate()
        assert second.stdout is not None
        if select.select([second.stdout], [], [], 0)[0]:
            said.append(second.stdout.readline())
        return any("under way; waiting for it" in line for line in said)

    try:
        qtbot.waitUntil(waiting, timeout=30_000)
        server.newConnection.connect(lambda: knocks.append(b"knock"))
        assert server.listen(server_name(data_dir))
        qtbot.waitUntil(lambda: second.poll() is not None, timeout=30_000)
        out, err = second.communicate(timeout=10)
        out = "".join(said) + out
        assert second.returncode == 0 and "already running" in out, out + err
        assert "running, data dir" not in out
        assert knocks
    finally:
        server.close()
        lock.unlock()
        if second.poll() is None:
            second.kill()
            second.communicate(timeout=10)


def test_a_pause_survives_a_restart_and_can_last_until_resumed(shell: Shell, ui_ctx: UiContext) -> None:
    from persona_desktop.ui.capture_control import CaptureController

    shell.speech_action.trigger()
    assert shell.pause_hold_action.isVisible()
    shell.pause_hold_action.trigger()
    assert shell.state() is TrayState.PAUSED and "paused until you resume" in shell.describe()
    saved = Settings.load(ui_ctx.settings.path)  # type: ignore[arg-type]
    assert saved.get("capture.paused_until") == "resume"
    # the app restarts: the new controller reads the pause back and captures nothing
    restarted = CaptureController(saved, ui_ctx.clock, lambda: None)
    assert restarted.is_paused() and restarted.paused_indefinitely
    shell.resume_action.trigger()
    assert shell.state() is TrayState.CAPTURING
    assert Settings.load(ui_ctx.settings.path).get("capture.paused_until") == ""  # type: ignore[arg-type]

    shell.pause15_action.trigger()
    timed = CaptureController(Settings.load(ui_ctx.settings.path), ui_ctx.clock, lambda: None)  # type: ignore[arg-type]
    assert timed.is_paused() and timed.paused_until is not None and not timed.paused_indefinitely
    shell.resume_action.trigger()
    timed.shutdown()
    restarted.shutdown()


def test_every_window_has_the_app_icon_a_short_title_and_fits_the_screen_centred(
    shell: Shell, qapp: QApplication, qtbot: QtBot
) -> None:
    from PySide6.QtGui import QGuiApplication

    before = qapp.applicationDisplayName()
    qapp.setApplicationDisplayName("Persona Desktop")  # as app.py sets it; Qt adds it to titles
    try:
        windows = [
            shell.open_review(),
            shell.open_memory(),
            shell.open_settings(),
            shell.open_chat(),
            shell.open_first_run(),
            shell.open_help(),
        ]
        area = QGuiApplication.primaryScreen().availableGeometry()
        for w in windows:
            title = w.windowTitle()
            # Qt's rule (QPlatformWindow::formatWindowTitle): the display name is appended
            # unless the title already ends with it
            shown = title if title.endswith("Persona Desktop") else f"{title} \u2014 Persona Desktop"
            assert shown.count("Persona Desktop") == 1, shown
            assert not w.windowIcon().isNull(), title
            geo = w.geometry()
            assert area.contains(geo), (title, geo, area)
            assert abs(geo.center().x() - area.center().x()) <= 2, title
            assert abs(geo.center().y() - area.center().y()) <= 2, title
    finally:
        qapp.setApplicationDisplayName(before)


def test_help_and_about_say_how_to_get_a_model_and_where_the_data_is(shell: Shell, ui_ctx: UiContext) -> None:
    help_window = shell.open_help()
    text = help_window.browser.toPlainText()  # type: ignore[attr-defined]
    assert "ollama serve" in text and "ollama pull llama3.1:8b" in text and str(ui_ctx.data_dir) in text
    assert "http" not in text.replace(ui_ctx.settings.ollama_host(), "")  # no links out of the app
    about = shell.open_about()
    words = about.informativeText()  # type: ignore[attr-defined]
    assert ui_ctx.settings.ollama_host() in words and str(ui_ctx.data_dir) in words


def test_a_failed_run_tells_the_next_step(
    shell: Shell, ui_ctx: UiContext, cli: Cli, tmp_path: Path, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket

    monkeypatch.setenv("PATH", str(tmp_path))  # no `ollama` program here
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    for key, value in (
        ("sleep.enabled", True),
        ("ollama.host", f"http://127.0.0.1:{port}"),
        ("ollama.retries", 0),
    ):
        ui_ctx.settings.set(key, value)
    ui_ctx.settings.save()
    _chat(cli, tmp_path)
    with qtbot.waitSignal(
        shell.notified, timeout=TIMEOUT, check_params_cb=lambda t, _m: t == "Sleep cycle failed"
    ) as told:
        shell.run_action.trigger()
    assert "not installed" in told.args[1] and "ollama serve" in told.args[1]
    qtbot.waitUntil(lambda: shell.scheduler.worker is None, timeout=TIMEOUT)
