"""Fixtures and seeding for the ui tests: real store, real services, a clean shutdown.

`seed_memory` writes candidates and facts straight through the unit of work (the
sleep cycle has its own tests); the ui then works on them through the services.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QApplication

from persona_desktop.app import CrashDialog, build_context, build_shell, install_crash_hook
from persona_desktop.bootstrap import Runtime
from persona_desktop.crash_hook import CrashHook
from persona_desktop.domain.model import (
    Author,
    CandidateStatus,
    Kind,
    NewFragment,
    SourceInfo,
    Subject,
    Trust,
)
from persona_desktop.domain.proposals import NewFact
from persona_desktop.domain.text import statement_key
from persona_desktop.services.ingest import ingest
from persona_desktop.ui.context import UiContext
from persona_desktop.ui.shell import Shell

SIGNALS = {
    "relevance": 0.9,
    "frequency": 0.5,
    "diversity": 0.33,
    "recency": 0.95,
    "consolidation": 0.5,
    "richness": 0.75,
}


@dataclass
class Seeded:
    source_id: int
    pending: list[int] = field(default_factory=list)
    applied: list[int] = field(default_factory=list)  # fact ids the policy applied
    fragment_refs: list[str] = field(default_factory=list)


def chat_source(
    rt: Runtime,
    n: int,
    key: str = "chat:test:saved",
    label: str = "Saved messages",
    lines: list[tuple[Author, str]] | None = None,
    start: datetime | None = None,
) -> tuple[int, list[str]]:
    """A chat of `n` generated messages (owner and assistant in turn), or of the given `lines`."""
    at = start or datetime.now(UTC) - timedelta(hours=3)
    said = lines or [
        (Author.OWNER if i % 2 == 0 else Author.ASSISTANT, f"message number {i}: I like topic {i}")
        for i in range(n)
    ]
    frags = [
        NewFragment(
            ref=f"{key}:{i}",
            kind=Kind.CHAT,
            author=author,
            trust=Trust.TRUSTED if author is not Author.OTHER else Trust.UNTRUSTED,
            text=text,
            captured_at=at + timedelta(seconds=i) if lines is None else at + timedelta(minutes=7 * i),
            locator={"chat": key, "message_id": str(i)},
            session=key,
            seq=i,
        )
        for i, (author, text) in enumerate(said)
    ]
    [result] = ingest(rt.uow, [(SourceInfo(key, Kind.CHAT, label), frags)], datetime.now(UTC))
    return result.source_id, [f.ref for f in frags]


def add_scored_candidate(
    uow: Any,
    statement: str,
    subject: Subject,
    status: CandidateStatus,
    score: float,
    reason: str,
    fragment_ids: list[int],
    at: datetime,
    category: str = "preference",
) -> int:
    """A candidate as phase 3 leaves it: scored, with its status, reason and evidence."""
    cid = int(
        uow.candidates.add(
            statement=statement,
            subject=subject,
            key=statement_key(statement),
            category=category,
            origin="sleep",
            run_id=None,
            proposal=NewFact(),
            supersedes_fact_id=None,
            created_at=at,
        )
    )
    uow.candidates.set_scored(
        cid, status=status, score=score, signals=SIGNALS, reason=reason, supersedes_fact_id=None
    )
    uow.candidates.add_evidence(cid, fragment_ids, None)
    return cid


def apply_as_fact(
    uow: Any, candidate_id: int, statement: str, at: datetime, category: str = "preference"
) -> int:
    """What the policy does for an applied candidate: the fact, and the journal line."""
    fid = int(
        uow.facts.add(
            statement=statement,
            subject=Subject.OWNER,
            key=statement_key(statement),
            category=category,
            candidate_id=candidate_id,
            valid_from=at,
        )
    )
    uow.journal.append(
        at=at,
        actor="policy",
        action="candidate.applied",
        entity="candidate",
        entity_id=candidate_id,
        data={"statement": statement},
    )
    return fid


def seed_memory(
    rt: Runtime,
    pending: int = 3,
    applied: int = 2,
    observations: int = 1,
    key: str = "chat:test:saved",
    label: str = "Saved messages",
) -> Seeded:
    """`pending` waiting candidates and `applied` policy-applied facts, each citing one owner message."""
    source_id, refs = chat_source(rt, max(2, 2 * (pending + applied)), key, label)
    seeded = Seeded(source_id, fragment_refs=refs)
    at = datetime.now(UTC) - timedelta(hours=1)
    with rt.uow() as uow:
        by_ref = uow.fragments.by_refs(refs)
        for i in range(pending + applied):
            statement = f"The owner likes topic {i} ({key})"
            is_pending = i < pending
            cid = add_scored_candidate(
                uow,
                statement,
                Subject.OWNER if i % 3 else Subject.OTHER,
                CandidateStatus.PENDING if is_pending else CandidateStatus.APPLIED,
                0.55 if is_pending else 0.8,
                "score 0.55 below threshold 0.60" if is_pending else "proven owner fact over threshold",
                [by_ref[refs[(2 * i) % len(refs)]].id],
                at,
            )
            if is_pending:
                seeded.pending.append(cid)
            else:
                seeded.applied.append(apply_as_fact(uow, cid, statement, at))
        for j in range(observations):
            uow.observations.add(None, f"The owner seems busy with topic {j} this week.", ["topic"], at)
        uow.commit()
    return seeded


def seed_media_evidence(rt: Runtime, candidate_id: int) -> tuple[Path, Path]:
    """A screen line with a kept crop and a speech segment with a kept clip, as evidence.

    Both are written through the runtime's media files, as capture writes them: sealed,
    since the test store is encrypted."""
    import numpy as np
    from PySide6.QtCore import QBuffer, QIODevice
    from PySide6.QtGui import QColor, QFont, QImage, QPainter

    from persona_desktop.capture.speech_clips import clip_relpath, write_clip

    at = datetime.now(UTC) - timedelta(hours=2)
    crop = rt.data_dir / "screens" / f"{at:%Y-%m-%d}" / "c1-m0.png"
    img = QImage(480, 120, QImage.Format.Format_RGB32)
    img.fill(QColor("white"))
    painter = QPainter(img)
    font = QFont()
    font.setPixelSize(22)
    painter.setFont(font)
    painter.setPen(QColor("black"))
    painter.drawText(20, 40, "Flight to Lisbon, May 3")
    painter.drawText(20, 90, "I prefer aisle seats")
    painter.end()
    png = QBuffer()
    png.open(QIODevice.OpenModeFlag.WriteOnly)
    assert img.save(png, "PNG")
    rt.media.write(crop, bytes(png.data().data()))
    clip_rel = clip_relpath("rec1", 0)
    tone = (0.2 * np.sin(np.linspace(0, 2 * np.pi * 440, 16000))).astype(np.float32)
    write_clip(rt.data_dir / clip_rel, tone, at, rt.media)
    screen = NewFragment(
        ref="screen:c1:m0:l1",
        kind=Kind.SCREEN,
        author=Author.UNKNOWN,
        trust=Trust.UNTRUSTED,
        text="I prefer aisle seats",
        captured_at=at,
        locator={
            "window": "Mail",
            "monitor": 0,
            "bbox": [20, 140, 380, 30],
            "crop_path": str(crop),
            "crop_bbox": [14, 62, 240, 36],
        },
        session="screen:c1",
    )
    speech = NewFragment(
        ref="speech:rec1:0",
        kind=Kind.SPEECH,
        author=Author.UNKNOWN,
        trust=Trust.UNTRUSTED,
        text="I always ask for an aisle seat",
        captured_at=at,
        locator={
            "recording_id": "rec1",
            "segment": 0,
            "origin": "microphone",
            "speaker": "likely-owner",
            "start_s": 0.0,
            "end_s": 1.0,
            "clip": clip_rel,
        },
        session="speech:rec1",
    )
    ingest(
        rt.uow,
        [
            (SourceInfo("screen:c1", Kind.SCREEN, "Screen, Mail"), [screen]),
            (SourceInfo("speech:rec1", Kind.SPEECH, "Microphone recording"), [speech]),
        ],
        datetime.now(UTC),
    )
    with rt.uow() as uow:
        ids = [f.id for f in uow.fragments.by_refs([screen.ref, speech.ref]).values()]
        uow.candidates.add_evidence(candidate_id, ids, None)
        uow.commit()
    return crop, rt.data_dir / clip_rel


def journal_actions(rt: Runtime) -> list[str]:
    with rt.uow.read() as uow:
        return [r.action for r in uow.journal.all()]


def candidate_status(rt: Runtime, cid: int) -> str:
    with rt.uow.read() as uow:
        c = uow.candidates.get(cid)
        assert c is not None
        return c.status.value


# --- fixtures -----------------------------------------------------------------------------


@pytest.fixture
def ui_ctx(runtime: Runtime, qapp: QApplication) -> UiContext:
    return build_context(runtime)


@pytest.fixture
def crash(data_dir: Path, qapp: QApplication) -> Iterator[tuple[CrashHook, CrashDialog]]:
    """The app's crash path, as `run_app` installs it: the log in the data dir, the dialog."""
    hook, dialog = install_crash_hook(data_dir)
    yield hook, dialog
    hook.uninstall()
    if dialog.box is not None:
        dialog.box.close()
    qapp.processEvents()


@pytest.fixture
def shell(ui_ctx: UiContext, qapp: QApplication) -> Iterator[Shell]:
    """A shell whose shutdown must leave nothing running (conftest's leak check then looks again)."""
    sh = build_shell(ui_ctx)
    yield sh
    assert sh.shutdown(wait_ms=20_000), "a sleep-cycle thread was still running"
    assert_shut_down(sh)
    qapp.processEvents()


def assert_shut_down(sh: Shell) -> None:
    """What `Shell.shutdown` promises, without waiting: no tick, no cycle, no store work left."""
    assert not sh.scheduler.timer.isActive()
    assert sh.scheduler.worker is None or sh.scheduler.worker.ran()
    for window in (sh, sh.review, sh.memory, sh.search, sh.chat):
        if window is not None:
            assert not window.work.busy(), f"{type(window).__name__} still has store work queued"
            assert window.work.active_threads() == 0


# --- clicking and answering the way the owner would -------------------------------------------


def click_link(qtbot: Any, browser: Any, href: str) -> None:
    """Click the link to `href` in a QTextBrowser with the mouse, where it is drawn."""
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QTextCursor

    doc = browser.document()
    block, at = doc.begin(), None
    while block.isValid() and at is None:
        it = block.begin()
        while not it.atEnd():
            fragment = it.fragment()
            if fragment.charFormat().anchorHref() == href:
                at = fragment.position() + fragment.length() // 2
                break
            it += 1
        block = block.next()
    assert at is not None, f"no link to {href!r}"
    cursor = QTextCursor(doc)
    cursor.setPosition(at)
    browser.setTextCursor(cursor)  # scrolled into view, as the owner would
    browser.ensureCursorVisible()
    qtbot.mouseClick(browser.viewport(), Qt.MouseButton.LeftButton, pos=browser.cursorRect(cursor).center())


@dataclass
class Answered:
    """What the modal dialog said, once `answer_modal` clicked one of its buttons."""

    title: str = ""
    text: str = ""
    buttons: list[str] = field(default_factory=list)

    @property
    def asked(self) -> bool:
        return bool(self.buttons)


def answer_modal(button: str, timeout_ms: int = 5000) -> Answered:
    """Click the button labelled `button` (mnemonic '&' ignored) of the next modal dialog.

    Call before the action that opens the dialog: a timer polls for the modal widget
    (which spins its own event loop), records its words and clicks. If no dialog
    opens, `asked` stays False."""
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QAbstractButton, QMessageBox

    seen = Answered()
    timer = QTimer()
    timer.setInterval(20)
    left = [timeout_ms // 20]

    def poll() -> None:
        left[0] -= 1
        modal = QApplication.activeModalWidget()
        if modal is None:
            if left[0] <= 0:
                timer.stop()
            return
        timer.stop()
        seen.title = modal.windowTitle()
        if isinstance(modal, QMessageBox):
            seen.text = modal.text() + "\n" + modal.informativeText()
        labels = {b.text().replace("&", ""): b for b in modal.findChildren(QAbstractButton) if b.isVisible()}
        seen.buttons = list(labels)
        if button not in labels:
            modal.close()
            raise AssertionError(f"no button {button!r} in {seen.buttons}")
        labels[button].click()

    timer.timeout.connect(poll)
    timer.start()
    seen._timer = timer  # type: ignore[attr-defined]  # kept alive as long as the answer
    return seen


# --- an X server with a tray, for the xvfb tests --------------------------------------------


@dataclass
class XServer:
    display: str
    procs: list[subprocess.Popen[bytes]]

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k != "WAYLAND_DISPLAY"}
        env.update({"DISPLAY": self.display, "QT_QPA_PLATFORM": "xcb"})
        return env


def start_xvfb(with_tray: bool = True, timeout: float = 20.0, size: str = "1280x800") -> XServer:
    """Xvfb on a free display (-displayfd), plus `trayer` as the system tray host."""
    for tool in ("Xvfb", *(("trayer",) if with_tray else ())):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} is not installed (scripts/install-system-deps installs it)")
    read_fd, write_fd = os.pipe()
    xvfb = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write_fd), "-screen", "0", f"{size}x24", "-nolisten", "tcp"],
        pass_fds=(write_fd,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write_fd)
    procs = [xvfb]
    try:
        with os.fdopen(read_fd, "rb") as pipe:
            number = pipe.readline().strip().decode()
        if not number:
            raise RuntimeError("Xvfb did not report a display number")
        server = XServer(f":{number}", procs)
        if with_tray:
            tray = subprocess.Popen(
                ["trayer", "--edge", "top", "--align", "right", "--width", "10", "--height", "24"],
                env=server.env(),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            procs.append(tray)
        return server
    except BaseException:
        stop_xvfb(XServer("", procs))
        raise


def stop_xvfb(server: XServer) -> None:
    for proc in reversed(server.procs):
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


@pytest.fixture
def xserver() -> Iterator[XServer]:
    server = start_xvfb()
    yield server
    stop_xvfb(server)


def run_probe(server: XServer, *args: str, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    import sys

    return subprocess.run(
        [sys.executable, "-m", "tests.ui_support", *args],
        cwd=Path(__file__).resolve().parents[1],
        # No sound server under this Xvfb desktop, whatever an earlier test started.
        env={**server.env(), "PULSE_SERVER": "unix:/nonexistent/persona-test-no-pulse"},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


# --- the probe: run as `python -m tests.ui_support DATA_DIR [SHOTS_DIR]` under X -----------


def _spin(app: QApplication, seconds: float, until: Any = None) -> bool:
    import time

    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        if until is not None and until():
            return True
        time.sleep(0.02)
    return until is None


def _screen_fragments(rt: Runtime) -> int:
    with rt.uow.read() as uow:
        return len(uow.fragments.all(Kind.SCREEN))


def probe(data_dir: Path, shots: Path | None) -> dict[str, Any]:
    from PySide6.QtGui import QGuiApplication
    from PySide6.QtWidgets import QSystemTrayIcon

    from persona_desktop.bootstrap import open_runtime
    from persona_desktop.config import Settings
    from persona_desktop.ui.icons import TrayState, state_pixmap
    from persona_desktop.ui.main_window import MainWindow
    from persona_desktop.ui.tray import Tray

    app = QApplication(["persona-desktop-probe"])
    app.setQuitOnLastWindowClosed(False)
    rt = open_runtime(data_dir)
    seeded = seed_memory(rt, pending=6, applied=3, observations=2)
    seed_media_evidence(rt, seeded.pending[0])
    ctx = build_context(rt)
    sh = build_shell(ctx, rt)  # with the real screen and speech loops
    messages: list[str] = []
    sh.notified.connect(lambda _t, m: messages.append(m))
    out: dict[str, Any] = {
        "platform": app.platformName(),
        "tray_available": QSystemTrayIcon.isSystemTrayAvailable(),
    }
    tray = Tray(sh)
    tray.show()
    sh.start()
    out["icon_visible"] = _spin(app, 10, lambda: tray.icon.geometry().width() > 0)
    out["icon_geometry"] = list(tray.icon.geometry().getRect())
    _spin(app, 10, lambda: sh.pending == len(seeded.pending))
    out["menu"] = [a.text() for a in tray.menu.actions() if not a.isSeparator() and a.isVisible()]
    out["tooltip_before"] = tray.icon.toolTip()
    out["state_before"] = sh.state().value
    sh.review_action.trigger()
    review = sh.review
    assert review is not None
    _spin(app, 10, lambda: len(review.pending.rows) == len(seeded.pending) and bool(review.evidence_cards))
    out["review_visible"] = review.isVisible()
    sh.memory_action.trigger()
    memory = sh.memory
    assert memory is not None
    _spin(app, 10, lambda: len(memory.facts.rows) == len(seeded.applied))
    memory.select_fact(seeded.applied[0])
    _spin(app, 10, lambda: memory.provenance is not None)
    out["memory_visible"] = memory.isVisible()
    memory.hide()
    sh.screen_action.trigger()  # the real loop grabs this Xvfb screen (the review window) with Tesseract
    out["screen_setting_saved"] = Settings.load(ctx.settings.path).get("capture.screen_enabled")  # type: ignore[arg-type]
    _spin(app, 60, lambda: _screen_fragments(rt) > 0)
    out["screen_fragments"] = _screen_fragments(rt)
    sh.speech_action.trigger()  # Xvfb has no microphone: a clear message, and speech stays off
    _spin(app, 5, lambda: any("Speech capture" in m for m in messages))
    out["speech_messages"] = [m for m in messages if "Speech capture" in m]
    out["speech_checked"] = sh.speech_action.isChecked()
    out["messages"] = messages
    sh.pause15_action.trigger()
    out["paused_tooltip"] = tray.icon.toolTip()
    sh.resume_action.trigger()
    sh.settings_action.trigger()
    out["settings_visible"] = sh.settings_dialog is not None and sh.settings_dialog.isVisible()
    if shots is not None:
        shots.mkdir(parents=True, exist_ok=True)
        _spin(app, 1)
        review.grab().save(str(shots / "review-window.png"))
        review.tabs.setCurrentIndex(1)
        _spin(app, 0.3)
        review.grab().save(str(shots / "review-recently-applied.png"))
        review.tabs.setCurrentIndex(2)
        _spin(app, 0.3)
        review.grab().save(str(shots / "review-history.png"))
        review.tabs.setCurrentIndex(3)
        _spin(app, 0.3)
        review.grab().save(str(shots / "review-observations.png"))
        memory.grab().save(str(shots / "memory-browser.png"))
        assert sh.settings_dialog is not None
        for i in range(sh.settings_dialog.tabs.count()):
            sh.settings_dialog.tabs.setCurrentIndex(i)
            _spin(app, 0.2)
            sh.settings_dialog.grab().save(str(shots / f"settings-{i}.png"))
        first = sh.open_first_run()
        _spin(app, 0.5)
        first.grab().save(str(shots / "first-run.png"))
        first.hide()
        main = MainWindow(sh)
        main.show()
        _spin(app, 0.5)
        main.grab().save(str(shots / "main-window-no-tray.png"))
        main.hide()
        tray.menu.popup(tray.icon.geometry().bottomLeft())
        _spin(app, 0.5)
        tray.menu.grab().save(str(shots / "tray-menu.png"))
        tray.menu.hide()
        for state in TrayState:
            state_pixmap(state, 64, 3 if state is TrayState.WAITING else 0).save(
                str(shots / f"state-{state.value}.png")
            )
        screen = QGuiApplication.primaryScreen()
        screen.grabWindow(0).save(str(shots / "desktop-with-tray.png"))
    quit_seen: list[bool] = []
    app.aboutToQuit.connect(lambda: quit_seen.append(True))
    from PySide6.QtCore import QTimer

    QTimer.singleShot(0, sh.quit_action.trigger)
    QTimer.singleShot(10_000, app.exit)
    app.exec()
    out["quit_works"] = bool(quit_seen)
    out["clean_shutdown"] = sh.shutdown(wait_ms=10_000)
    tray.hide()
    rt.close()
    return out


if __name__ == "__main__":
    import json
    import sys

    args = sys.argv[1:]
    result = probe(Path(args[0]), Path(args[1]) if len(args) > 1 else None)
    print(json.dumps(result))
