"""Render every window of the app to PNG under Xvfb, at each screen size, to look at them.

    .venv/bin/python -m tests.screenshots OUT_DIR [--sizes 1366x768,1920x1080]
    (or ./scripts/screenshots OUT_DIR)

For each size an Xvfb with a tray host (`trayer`) is started, and this module runs
again inside it (`--render`) on a fresh data dir seeded with a realistic morning:
proposals waiting (one with a screen picture and a microphone recording as evidence),
facts added, decisions, observations. Windows are placed as the app places them
(sized to the screen, centred), then each is grabbed; `desktop-*.png` grabs the whole
screen to show the placement. Nothing here talks to a network: the Ollama address is a
closed loopback port, so Settings shows its "not installed" advice.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SIZES = ("1366x768", "1920x1080")

CHAT = [
    ("owner", "I'm allergic to peanuts, so please never suggest anything with peanuts."),
    ("assistant", "Noted: no peanuts in any suggestion."),
    ("owner", "I go running on Tuesday and Friday mornings before work."),
    ("assistant", "Good rhythm. Want a reminder the evening before?"),
    ("owner", "No thanks. My sister Maria lives in Lisbon, I visit her every spring."),
    ("other", "Maria said she might move to Porto next year."),
    ("owner", "I prefer window seats on short flights and aisle seats on long ones."),
    ("assistant", "I'll keep that in mind when we look at flights."),
]
WAITING = [
    ("Goes running on Tuesday and Friday mornings", "owner", 0.58, "score 0.58 below threshold 0.60", 2),
    (
        "Maria might move to Porto next year",
        "other",
        0.52,
        "about other, not the owner; score 0.52 below threshold 0.60",
        5,
    ),
    (
        "Prefers aisle seats on long flights",
        "owner",
        0.64,
        "no evidence written by the owner on a trusted channel",
        6,
    ),
    ("Visits their sister in Lisbon every spring", "owner", 0.55, "score 0.55 below threshold 0.60", 4),
    (
        "Works from home on Mondays",
        "unknown",
        0.41,
        "about unknown, not the owner; score 0.41 below threshold 0.60",
        0,
    ),
]
ADDED = [("Is allergic to peanuts", 0), ("Has a sister called Maria who lives in Lisbon", 4)]


# --- the parent: one Xvfb per size ---------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("out", type=Path)
    parser.add_argument("--sizes", default=",".join(SIZES))
    parser.add_argument("--render", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.render:
        return render(args.out)
    from tests.ui_support import start_xvfb, stop_xvfb

    for size in args.sizes.split(","):
        out = args.out / size
        out.mkdir(parents=True, exist_ok=True)
        server = start_xvfb(size=size)
        try:
            env = {
                **server.env(),
                "PULSE_SERVER": "unix:/nonexistent/persona-no-sound",
                "OMP_THREAD_LIMIT": "1",
                # the demo store is encrypted, as every store is by default; no keyring here
                "PERSONA_DESKTOP_PASSPHRASE": "screenshots passphrase",
                "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
            }
            proc = subprocess.run(
                [sys.executable, "-m", "tests.screenshots", "--render", str(out)],
                cwd=REPO,
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
            )
        finally:
            stop_xvfb(server)
        if proc.returncode != 0:
            sys.stderr.write(proc.stdout + proc.stderr)
            return proc.returncode
        shots = sorted(p.name for p in out.glob("*.png"))
        print(f"{size}: {len(shots)} screenshots in {out}")
    return 0


# --- the child: seed, open every window, grab ------------------------------------------------


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def seed_demo(rt: Any) -> dict[str, Any]:
    """A realistic morning in the store: returns the ids the renderer selects."""
    from persona_desktop.domain.model import Author, CandidateStatus, Subject
    from persona_desktop.services import review
    from tests.ui_support import add_scored_candidate, apply_as_fact, chat_source, seed_media_evidence

    roles = {"owner": Author.OWNER, "assistant": Author.ASSISTANT, "other": Author.OTHER}
    source_id, refs = chat_source(
        rt,
        len(CHAT),
        "chat:saved",
        "Chat with Persona",
        lines=[(roles[role], text) for role, text in CHAT],
        start=datetime.now(UTC) - timedelta(hours=20),
    )
    ids: dict[str, Any] = {"source": source_id, "waiting": [], "facts": []}
    night = datetime.now(UTC).replace(hour=2, minute=40) - timedelta(
        days=0 if datetime.now().hour >= 3 else 1
    )
    with rt.uow() as uow:
        by_ref = uow.fragments.by_refs(refs)
        for statement, subject, score, reason, ref in WAITING:
            frag = by_ref[refs[ref]].id
            ids["waiting"].append(
                add_scored_candidate(
                    uow,
                    statement,
                    Subject(subject),
                    CandidateStatus.PENDING,
                    score,
                    reason,
                    [frag],
                    night,
                    "habit",
                )
            )
        for statement, ref in ADDED:
            frag = by_ref[refs[ref]].id
            cid = add_scored_candidate(
                uow,
                statement,
                Subject.OWNER,
                CandidateStatus.APPLIED,
                0.81,
                "proven owner fact over threshold",
                [frag],
                night,
                "health",
            )
            ids["facts"].append((apply_as_fact(uow, cid, statement, night, "health"), cid))
        uow.observations.add(
            None,
            "You seem to plan your week around morning runs and family visits.",
            ["running", "family"],
            night,
        )
        uow.commit()
    seed_media_evidence(rt, ids["waiting"][2])
    seed_media_evidence(rt, ids["facts"][1][1])
    review.reject(rt.uow, ids["waiting"][4], datetime.now(UTC) - timedelta(minutes=3))
    ids["waiting"].pop()
    return ids


def render(out: Path) -> int:
    from PySide6.QtCore import QRect, Qt, QTimer
    from PySide6.QtGui import QColor, QGuiApplication, QImage, QPainter
    from PySide6.QtWidgets import QApplication, QMessageBox

    from persona_desktop.app import build_context, build_shell
    from persona_desktop.bootstrap import open_runtime
    from persona_desktop.domain.model import RunStatus
    from persona_desktop.services.sleep_cycle import RunOutcome
    from persona_desktop.ui.icons import TrayState, app_icon, state_pixmap
    from persona_desktop.ui.main_window import MainWindow
    from persona_desktop.ui.memory_browser import MemoryBrowser
    from persona_desktop.ui.review_window import EditDialog, ReviewWindow
    from persona_desktop.ui.tray import Tray
    from tests.ui_support import _spin

    app = QApplication(["persona-desktop"])
    app.setApplicationName("persona-desktop")
    app.setApplicationDisplayName("Persona Desktop")
    app.setWindowIcon(app_icon())
    app.setQuitOnLastWindowClosed(False)
    tmp = Path(tempfile.mkdtemp(prefix="persona-shots-"))
    os.environ["OLLAMA_HOST"] = f"http://127.0.0.1:{_closed_port()}"
    rt = open_runtime(tmp / "data")
    rt.settings.set("sleep.enabled", True)
    ids = seed_demo(rt)
    ctx = build_context(rt)
    shell = build_shell(ctx)
    tray = Tray(shell)
    tray.show()
    shell.start()
    _spin(app, 10, lambda: shell.pending == len(ids["waiting"]))
    screen = QGuiApplication.primaryScreen()
    report: dict[str, Any] = {"screen": screen.availableGeometry().getRect(), "windows": {}}

    def shot(widget: Any, name: str, whole_screen: bool = False) -> None:
        widget.show()
        widget.raise_()
        _spin(app, 0.6)
        widget.grab().save(str(out / f"{name}.png"))
        geo = widget.frameGeometry()
        report["windows"][name] = {"title": widget.windowTitle(), "geometry": geo.getRect()}
        if whole_screen:
            screen.grabWindow(0).save(str(out / f"desktop-{name}.png"))

    first = shell.open_first_run()
    shot(first, "first-run", whole_screen=True)
    first.hide()

    settings = shell.open_settings()
    _spin(app, 8, lambda: settings.test_button.isEnabled())
    shot(settings, "settings-general", whole_screen=True)
    settings.tabs.setCurrentIndex(1)
    shot(settings, "settings-advanced")
    bar = settings.tabs.currentWidget().verticalScrollBar()
    bar.setValue(bar.maximum() // 2)
    shot(settings, "settings-advanced-middle")
    bar.setValue(bar.maximum())
    shot(settings, "settings-advanced-end")
    settings.reject()

    review: ReviewWindow = shell.open_review()
    _spin(app, 10, lambda: len(review.pending.rows) == len(ids["waiting"]))
    review.pending_table.selectRow(2)
    _spin(app, 10, lambda: len(review.evidence_cards) >= 2)
    _spin(app, 1.0, lambda: all(r.summary is not None for r in review.pending.rows))
    shot(review, "review-waiting", whole_screen=True)
    review.detail.linkActivated.emit("weights")
    shot(review, "review-waiting-weights")
    review.detail_scroll.verticalScrollBar().setValue(review.detail_scroll.verticalScrollBar().maximum())
    shot(review, "review-waiting-evidence")
    review.pending_table.selectAll()
    shot(review, "review-several-selected")
    review.pending_table.selectRow(0)
    dialog = EditDialog(review.pending.rows[0].candidate.statement, review)
    shot(dialog, "review-edit-then-approve")
    dialog.close()
    for index, name in ((1, "review-recently-added"), (2, "review-history"), (3, "review-observations")):
        review.tabs.setCurrentIndex(index)
        _spin(app, 3, lambda: not review.work.busy())
        shot(review, name)
    review.tabs.setCurrentIndex(2)
    review.full_journal.setChecked(True)
    _spin(app, 3, lambda: not review.work.busy())
    shot(review, "review-history-full")
    review.tabs.setCurrentIndex(0)
    review.hide()

    memory: MemoryBrowser = shell.open_memory()
    _spin(app, 10, lambda: len(memory.facts.rows) == len(ids["facts"]))
    memory.select_fact(ids["facts"][1][0])
    _spin(app, 10, lambda: memory.provenance is not None)
    shot(memory, "memory", whole_screen=True)
    cards = [c for c in memory.findChildren(type(review.evidence_cards[0])) if c.image_label is not None]
    if cards:
        cards[0].image_label.clicked.emit()
        _spin(app, 0.5)
        viewer = cards[0].viewer
        shot(viewer, "image-full-size")
        viewer.close()
    memory.hide()

    chat = shell.open_chat()
    _spin(app, 10, lambda: chat.is_loaded)
    shot(chat, "chat")
    chat.hide()
    search = shell.open_search()
    search.query.setText("Lisbon")
    search.run_search()
    _spin(app, 5, lambda: not search.work.busy())
    shot(search, "search", whole_screen=True)
    search.hide()
    shot(shell.open_help(), "help")
    shell.help_window.hide()  # type: ignore[union-attr]
    about = shell.open_about()
    shot(about, "about")
    about.hide()
    shell._offer_run_anyway(
        RunOutcome(RunStatus.DEFERRED, None, {"owner_active_minutes_ago": 5}, None, "Deferred")
    )
    box = shell.run_anyway_box
    assert isinstance(box, QMessageBox)
    shot(box, "run-anyway")
    box.close()
    main = MainWindow(shell)
    shot(main, "main-window-without-tray", whole_screen=True)
    main.hide()

    # empty states: a second, empty store
    empty_rt = open_runtime(tmp / "empty")
    empty_ctx = build_context(empty_rt)
    empty_review = ReviewWindow(empty_ctx)
    _spin(app, 5, lambda: not empty_review.work.busy())
    shot(empty_review, "review-empty")
    empty_review.shutdown()
    empty_review.hide()
    empty_memory = MemoryBrowser(empty_ctx)
    _spin(app, 5, lambda: not empty_memory.work.busy())
    shot(empty_memory, "memory-empty")
    empty_memory.shutdown()
    empty_memory.hide()

    tray.menu.popup(tray.icon.geometry().bottomLeft())
    _spin(app, 0.6)
    tray.menu.grab().save(str(out / "tray-menu.png"))
    screen.grabWindow(0).save(str(out / "desktop-tray-menu.png"))
    tray.menu.hide()

    # the icons at the sizes a panel gives them, and magnified 4x to judge them
    sizes = (22, 24, 64)
    sheet = QImage(20 + len(TrayState) * 110, 20 + 2 * 110 + 130, QImage.Format.Format_ARGB32)
    sheet.fill(QColor("#2b2b2b"))
    p = QPainter(sheet)
    p.setPen(QColor("white"))
    for col, state in enumerate(TrayState):
        badge = 6 if state in (TrayState.WAITING, TrayState.RUNNING) else 0
        x = 10 + col * 110
        p.drawText(QRect(x, 0, 100, 16), int(Qt.AlignmentFlag.AlignCenter), state.value)
        for row, size in enumerate(sizes):
            pm = state_pixmap(state, size, badge)
            p.drawPixmap(x + (100 - size) // 2, 20 + row * 30 if size < 64 else 90, pm)
        big = state_pixmap(state, 22, badge).scaled(
            88, 88, Qt.AspectRatioMode.KeepAspectRatio, Qt.TransformationMode.FastTransformation
        )
        p.drawPixmap(x + 6, 170, big)
        p.drawPixmap(
            x + 6,
            265,
            state_pixmap(state, 24, badge).scaled(
                96, 96, Qt.AspectRatioMode.KeepAspectRatio, Qt.TransformationMode.FastTransformation
            ),
        )
    p.end()
    sheet.save(str(out / "tray-icons.png"))
    screen.grabWindow(0, 0, 0, screen.geometry().width(), 40).save(str(out / "panel-with-tray-icon.png"))

    (out / "windows.json").write_text(json.dumps(report, indent=1))
    QTimer.singleShot(0, app.quit)
    app.exec()
    shell.shutdown(wait_ms=5000)
    tray.hide()
    rt.close()
    empty_rt.close()
    return 0


if __name__ == "__main__":
    started = time.monotonic()
    code = main()
    print(f"done in {time.monotonic() - started:.0f} s")
    raise SystemExit(code)
