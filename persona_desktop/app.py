"""The Qt composition root: builds the runtime, the ui objects, and wires them together.

`run_app` is what `persona-desktop` without a command starts; `self_test` is
`persona-desktop --self-test` (the installer's smoke test).
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any, cast

from PySide6.QtCore import (
    QEventLoop,
    QLockFile,
    QMessageLogContext,
    QObject,
    Qt,
    QTimer,
    QtMsgType,
    Signal,
    SignalInstance,
    qInstallMessageHandler,
)
from PySide6.QtGui import QIcon, QPixmap
from PySide6.QtWidgets import QApplication, QMessageBox, QSystemTrayIcon

from persona_desktop.bootstrap import Runtime, default_data_dir, llm_from, make_llm, open_runtime
from persona_desktop.bootstrap.desktop import (
    autostart_switch,
    diagnoser,
    forget_screen_refusal,
    install_capture_shortcut,
    key_grabber,
)
from persona_desktop.bootstrap.screen_support import screen_support
from persona_desktop.capture.screen_privacy import OWN_APP
from persona_desktop.config import Settings
from persona_desktop.crash_hook import CrashHook
from persona_desktop.error_boundary import open_log
from persona_desktop.errors import PersonaError
from persona_desktop.ports import LLM, LocalModel, UnitOfWorkFactory
from persona_desktop.private_files import ensure_private_dir
from persona_desktop.services.media import MediaReader
from persona_desktop.ui.capture_control import CaptureController
from persona_desktop.ui.context import UiContext
from persona_desktop.ui.main_window import MainWindow
from persona_desktop.ui.own_windows import NOTIFICATION_SECONDS, OwnWindowTracker
from persona_desktop.ui.passphrase_dialog import ask_passphrase
from persona_desktop.ui.scheduler import SleepScheduler
from persona_desktop.ui.screen_access import GatedScreenLoop, ScreenAccess, ScreenHooks, Summary
from persona_desktop.ui.shell import Shell
from persona_desktop.ui.single_instance import SingleInstance, notify_running, server_name
from persona_desktop.ui.storage_watch import StorageWatch
from persona_desktop.ui.tray import Tray

MEDIA_DIRS = ("clips", "screens")  # kept speech clips and screen crops, under the data dir


def _llm_for(settings: Settings) -> Callable[[str, str], LLM]:
    def make(host: str, model: str) -> LLM:
        return make_llm(host, model, min(15.0, settings.values.ollama.timeout_seconds))

    return make


def build_context(rt: Runtime, settings: Settings | None = None) -> UiContext:
    s = settings or rt.settings

    def llm() -> LocalModel:
        return llm_from(s)

    return UiContext(
        data_dir=rt.data_dir,
        settings=s,
        uow=cast(UnitOfWorkFactory, rt.uow),
        clock=rt.clock,
        llm=llm,
        llm_for=_llm_for(s),
        autostart=autostart_switch(rt.data_dir),
        diagnoser=diagnoser,
        key_grabber=key_grabber,
        media_dirs=[rt.data_dir / d for d in MEDIA_DIRS],
        embedder=rt.embedder,
        media_reader=MediaReader(rt.data_dir, rt.media),
    )


class CaptureMessages(QObject):
    """Capture threads report here; the signal carries their words to the GUI thread."""

    message = Signal(str)
    stopped = Signal(str)  # a kind that stopped for good (no display, no Tesseract...)
    screen_mode = Signal(bool, str)  # periodic?, why not (the loop runs on demand only then)
    screen_refused = Signal(str)  # the desktop refused screenshots

    def on_screen_event(self, event: Any) -> None:  # called on the capture thread
        if event.kind == "mode":
            self.screen_mode.emit(bool(event.data.get("periodic")), str(event.data.get("reason") or ""))
        if event.kind == "error":
            message = str(event.data.get("message", "failed"))
            if event.data.get("refused"):
                self.screen_refused.emit(message)
            else:
                self.message.emit(f"Screen capture: {message}")
            if event.data.get("fatal"):
                self.stopped.emit("screen")


class LazyLoop:
    """A capture loop built on start, so its heavy parts (mss, Tesseract, Whisper) load only
    once the owner switched it on; dropped on stop, so the next start reads current settings."""

    def __init__(self, build: Callable[[], Any], close: Callable[[Any], None]) -> None:
        self._build = build
        self._close = close
        self.loop: Any = None

    def start(self) -> None:
        if self.loop is None:
            self.loop = self._build()
        self.loop.start()

    def stop(self) -> None:
        loop, self.loop = self.loop, None
        if loop is not None:
            self._close(loop)

    def pause(self) -> None:
        if self.loop is not None:
            self.loop.pause()

    def resume(self) -> None:
        if self.loop is not None:
            self.loop.resume()

    def capture_now(self) -> bool:
        """Ask the running loop for a capture now; False when none runs."""
        if self.loop is None or not getattr(self.loop, "is_running", False):
            return False
        self.loop.capture_now()
        return True


def _screen_loop(rt: Runtime, messages: CaptureMessages, own: OwnWindowTracker | None) -> LazyLoop:
    def build() -> Any:
        from persona_desktop.bootstrap.screen import build_screen_loop

        loop = build_screen_loop(rt, on_event=messages.on_screen_event, own_windows=own)
        if own is not None:
            own.watch()  # before the loop starts grabbing
        return loop

    def close(loop: Any) -> None:
        loop.stop(timeout=5.0)
        if own is not None:
            own.unwatch()

    return LazyLoop(build, close)


def _speech_loop(rt: Runtime, messages: CaptureMessages) -> LazyLoop:
    transcribers: list[Any] = []

    def build() -> Any:
        from persona_desktop.bootstrap.speech import speech_sessions, transcriber_from_settings
        from persona_desktop.ui.audio_source import SpeechRecorder

        s = rt.settings
        transcriber = transcriber_from_settings(s)
        transcribers.append(transcriber)
        session = speech_sessions(rt, transcriber)
        recorder = SpeechRecorder(session, s.values.capture.microphone)
        recorder.failed.connect(lambda msg: messages.message.emit(f"Speech capture: {msg}"))
        recorder.failed.connect(lambda _msg: messages.stopped.emit("speech"))  # the recorder is off now
        return recorder

    def close(recorder: Any) -> None:
        recorder.shutdown(timeout_ms=30_000)  # waits for the last chunk to be stored
        while transcribers:
            transcribers.pop().close()

    return LazyLoop(build, close)


def _screen_hooks(rt: Runtime, screen: LazyLoop, own: OwnWindowTracker | None) -> ScreenHooks:
    """The screen wiring is imported at first capture, as the loop is: it loads numpy, Pillow,
    mss and Tesseract's binding, which an idle tray with capture off never needs. `load`
    imports it on the GUI thread; `probe` and `capture_once` then only call it on a worker.
    What the desktop supports is asked of the light `screen_support`."""

    def load() -> None:
        import persona_desktop.bootstrap.screen  # noqa: F401  (the import is the point)

    def probe() -> str:
        from persona_desktop.bootstrap.screen import probe_screen

        return probe_screen(rt.settings)

    def capture_once() -> Summary:
        from persona_desktop.bootstrap.screen import capture_once as once

        return once(rt, own_windows=own)

    def capture_now() -> bool:
        if screen.capture_now():
            return True
        if own is not None:  # on the GUI thread: the capture on demand that follows reads its snapshot
            own.watch()
        return False

    return ScreenHooks(
        support=lambda: screen_support(rt.settings),
        probe=probe,
        capture_once=capture_once,
        capture_now=capture_now,
        forget_refusal=forget_screen_refusal,
        install_shortcut=lambda: install_capture_shortcut(rt.data_dir),
        load=load,
    )


def wire_capture(
    capture: CaptureController, rt: Runtime, ctx: UiContext, own: OwnWindowTracker | None = None
) -> tuple[CaptureMessages, ScreenAccess]:
    """Attach the screen and speech loops; they start when (and if) the owner switches them on.
    On Wayland the screen loop waits for the desktop's yes, asked from a focused window.
    `own`: the app's own windows, which the screen loop never reads."""
    messages = CaptureMessages(capture)
    screen = _screen_loop(rt, messages, own)
    access = ScreenAccess(ctx, capture, _screen_hooks(rt, screen, own), parent=capture)
    messages.screen_mode.connect(access.on_mode)
    messages.screen_refused.connect(access.on_refused)
    capture.attach("screen", GatedScreenLoop(screen, access))
    capture.attach("speech", _speech_loop(rt, messages))
    return messages, access


def build_shell(ctx: UiContext, rt: Runtime | None = None) -> Shell:
    """The shell; with a runtime, the real capture loops are attached too."""
    capture = CaptureController(ctx.settings, ctx.clock, ctx.save_settings)
    shell = Shell(ctx, capture, SleepScheduler(ctx))
    if rt is not None:
        app = QApplication.instance()
        own = OwnWindowTracker(app, parent=shell) if isinstance(app, QApplication) else None
        if own is not None:  # what the app tells in a notification never comes back as screen text
            shell.notified.connect(lambda _title, _message: own.notification_shown(NOTIFICATION_SECONDS))
        messages, access = wire_capture(capture, rt, ctx, own)
        shell.attach_screen_access(access)
        messages.message.connect(lambda msg: shell.notify("Persona Desktop", msg))
        # the switch goes off with the loop, so the menu never shows a capture that is not running
        messages.stopped.connect(lambda kind: capture.set_enabled(kind, False))
    return shell


class CrashDialog(QObject):
    """The Qt end of the crash hook: the owner's one line in a dialog, one dialog at a time.

    `report` may be emitted from any thread; Qt queues it to the GUI thread.
    """

    report = Signal(str)

    def __init__(self) -> None:
        super().__init__()
        self.shown: list[str] = []
        self.box: QMessageBox | None = None
        self.report.connect(self._on_report)

    def _on_report(self, text: str) -> None:
        self.shown.append(text)
        if self.box is not None and self.box.isVisible():
            self.box.setInformativeText(f"{len(self.shown) - 1} more error(s) since; all are in the log.")
            return
        box = QMessageBox(QMessageBox.Icon.Critical, "Persona Desktop", f"Something went wrong: {text}")
        box.setInformativeText("Persona Desktop keeps running.")
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.finished.connect(lambda _result: setattr(self, "box", None))
        box.open()
        self.box = box


def install_crash_hook(data_dir: Path | None) -> tuple[CrashHook, CrashDialog]:
    dialog = CrashDialog()
    return CrashHook(data_dir, dialog.report.emit).install(), dialog


def storage_watch(shell: Shell, trim: bool = True) -> StorageWatch:
    """Disk space and the storage budget, told through the tray; holds capture when the disk is full.

    `trim` False (a damaged store opened read-only): measure and warn, never delete."""
    capture = shell.capture

    def hold(on: bool) -> None:
        if on:
            capture.hold("the disk is almost full")
        else:
            capture.release()

    watch = StorageWatch(shell.ctx, hold, parent=shell, trim=trim)
    watch.message.connect(lambda msg: shell.notify("Persona Desktop: storage", msg))
    return watch


def _application(argv: list[str]) -> QApplication:
    app = QApplication.instance()
    if isinstance(app, QApplication):
        return app
    app = QApplication(argv)
    app.setApplicationName(OWN_APP)  # X11: every window's WM_CLASS, which screen capture never reads
    app.setApplicationDisplayName("Persona Desktop")
    # Wayland: windows carry the .desktop file's id, so the desktop knows them as Persona Desktop's
    app.setDesktopFileName(OWN_APP)
    app.setQuitOnLastWindowClosed(False)
    app.setWindowIcon(app_icon())
    return app


def app_icon() -> QIcon:
    """The app's icon (package data); a null icon if this installation lacks it."""
    try:
        data = (
            resources.files("persona_desktop") / "resources" / "icons" / "persona-desktop.svg"
        ).read_bytes()
    except OSError:
        return QIcon()
    pixmap = QPixmap()
    pixmap.loadFromData(data, "SVG")
    return QIcon(pixmap)


def _python_signals(app: QApplication) -> QTimer:
    """Let Ctrl+C / SIGTERM quit cleanly: Python only runs handlers when it gets control."""
    signal.signal(signal.SIGINT, lambda *_: app.quit())
    signal.signal(signal.SIGTERM, lambda *_: app.quit())
    timer = QTimer()
    timer.start(500)
    timer.timeout.connect(lambda: None)
    return timer


def _instance_lock(data_dir: Path, name: str) -> QLockFile | None:
    """Take the data dir's app lock, or knock on the instance that holds it (None).

    The lock closes the race of two launches at the same moment, which would both
    find no one listening; a crashed instance's lock is stale and taken over.
    """
    lock = QLockFile(str(data_dir / "app.lock"))
    lock.setStaleLockTime(0)  # stale only when its process is gone, never by age
    deadline = time.monotonic() + 10
    told = False
    while not lock.tryLock(100):
        if notify_running(name, timeout_ms=300):
            return None
        if not told:
            told = True
            print("persona-desktop: another start of this data dir is under way; waiting for it", flush=True)
        if time.monotonic() > deadline:
            raise PersonaError(f"another Persona Desktop holds {data_dir / 'app.lock'} but does not answer")
    return lock


def run_app(data_dir: Path | None, qt_args: list[str]) -> int:
    app = _application(["persona-desktop", *qt_args])
    resolved = data_dir if data_dir is not None else default_data_dir()
    hook, _dialog = install_crash_hook(resolved)
    open_log(resolved)  # `log.exception` of workers goes there, not to stderr
    ensure_private_dir(resolved)
    name = server_name(resolved)
    # Before the store is opened: a second launch must not ask for the passphrase again.
    lock = _instance_lock(resolved, name)
    if lock is None:
        print("persona-desktop is already running; its review window was brought forward")
        hook.uninstall()
        return 0
    try:
        rt = open_runtime(data_dir, ask_passphrase)
    except PersonaError as exc:
        lock.unlock()
        QMessageBox.critical(None, "Persona Desktop", str(exc))
        raise
    instance = SingleInstance(name)
    instance.listen()
    print(f"persona-desktop: running, data dir {rt.data_dir}", flush=True)
    ctx = build_context(rt)
    shell = build_shell(ctx, rt)
    instance.activated.connect(shell.open_review)
    tray: Tray | None = None
    window: MainWindow | None = None
    if QSystemTrayIcon.isSystemTrayAvailable():
        tray = Tray(shell)
        tray.show()
    else:
        window = MainWindow(shell)
        window.show()
    if not ctx.settings.values.app.first_run_done:
        shell.open_first_run()
    shell.start()
    watch = storage_watch(shell, trim=not rt.read_only)
    watch.start()
    keepalive = _python_signals(app)
    code = app.exec()
    keepalive.stop()
    watch.stop()
    clean = shell.shutdown()
    instance.close()
    lock.unlock()
    if tray is not None:
        tray.hide()
    rt.close()
    hook.uninstall()
    if not clean:
        # A cycle still blocked in an LLM call: every step commits on its own, so the store
        # is consistent; exit now rather than let Qt abort on a running QThread.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


# --- self-test --------------------------------------------------------------------------


def _wait(*signals: SignalInstance, timeout_ms: int) -> bool:
    """Run the event loop until one of `signals` fires (True) or `timeout_ms` passed (False);
    nothing of the wait is left behind: no pending timer, no connection."""
    loop = QEventLoop()
    fired: list[Any] = []

    def on_signal(*args: Any) -> None:
        fired.append(args)
        loop.quit()

    timer = QTimer()
    timer.setSingleShot(True)
    timer.timeout.connect(loop.quit)
    for signal_ in signals:
        signal_.connect(on_signal)
    timer.start(timeout_ms)
    try:
        loop.exec()
    finally:
        timer.stop()
        for signal_ in signals:
            signal_.disconnect(on_signal)
    return bool(fired)


def _quiet_offscreen(mode: QtMsgType, _context: QMessageLogContext, message: str) -> None:
    # The offscreen platform says it cannot raise or resize windows; nothing is wrong.
    if "This plugin does not support" in message:
        return
    sys.stderr.write(message + "\n")


def self_test(data_dir: Path | None, out: Callable[[str], None] = print) -> int:
    """Start offscreen, build every window, run one cycle if the LLM host answers; 0 if all went well."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    qInstallMessageHandler(_quiet_offscreen)
    app = _application(["persona-desktop", "--self-test"])
    rt = open_runtime(data_dir)
    # A copy that is never saved: the self-test must not change the owner's choices.
    ctx = build_context(rt, Settings(None, rt.settings.as_dict()))
    out(f"self-test: platform {app.platformName()}, data dir {rt.data_dir}")
    shell = build_shell(ctx)
    ok = True
    try:
        tray = Tray(shell)
        out(
            f"tray icon: built (system tray available: {QSystemTrayIcon.isSystemTrayAvailable()}); tooltip: {shell.describe()}"
        )
        window = MainWindow(shell)
        window.show()
        out(f"main window: built, {window.width()}x{window.height()}")
        review = shell.open_review()
        loaded = _wait(review.loaded, timeout_ms=30_000)
        ok &= loaded
        out(
            f"review window: {'built' if loaded else 'NOT loaded'}, {len(review.pending.rows)} waiting, {len(review.recent.rows)} recently applied, {len(review.journal.rows)} journal entries"
        )
        memory = shell.open_memory()
        loaded = _wait(memory.loaded, timeout_ms=30_000)
        ok &= loaded
        out(f"memory browser: {'built' if loaded else 'NOT loaded'}, {len(memory.facts.rows)} facts")
        settings = shell.open_settings()
        out(f"settings dialog: built, {len(settings.fields)} settings in {settings.tabs.count()} tabs")
        chat = shell.open_chat()
        out(f"chat window: built ({chat.windowTitle()})")
        first = shell.open_first_run()
        out(f"first-run dialog: built ({first.windowTitle()})")
        first.hide()
        ok &= _self_test_cycle(shell, ctx, out)
        tray.hide()
        window.hide()
    finally:
        clean = shell.shutdown(wait_ms=60_000)
        rt.close()
    ok &= clean
    out("self-test: OK" if ok else "self-test: FAILED")
    return 0 if ok else 1


def _self_test_cycle(shell: Shell, ctx: UiContext, out: Callable[[str], None]) -> bool:
    host = ctx.settings.ollama_host()
    try:
        models = ctx.llm().list_models()
    except Exception as exc:  # any failure means "no host answers": the cycle is skipped, not failed
        out(f"sleep cycle: not run, no LLM host answers at {host} ({exc})")
        return True
    out(f"LLM host {host}: {len(models)} model(s): {', '.join(models) or 'none'}")
    finished: list[Any] = []
    failed: list[str] = []
    shell.scheduler.finished.connect(finished.append)
    shell.scheduler.failed.connect(failed.append)
    shell.scheduler.run_now()
    timeout_ms = int(
        1000 * ctx.settings.values.ollama.timeout_seconds * (ctx.settings.values.sleep.max_documents + 2)
    )
    _wait(shell.scheduler.finished, shell.scheduler.failed, timeout_ms=timeout_ms)
    worker = shell.scheduler.worker
    if worker is not None:
        worker.wait(60_000)
    if failed:
        out(f"sleep cycle: crashed: {failed[0]}")
        return False
    if not finished:
        out("sleep cycle: did not finish in time")
        return False
    outcome = finished[0]
    out(f"sleep cycle: {outcome.status.value}: {outcome.message}")
    return True
