"""A child process for the self-capture test: the real app's windows on an X display while screen
capture runs in the same process; prints what was stored as screen text (JSON) and exits.

    python -m tests.self_capture_app MODE DATA_DIR STATEMENT

MODE: `app` (the app's own wiring: build_shell, the tray's capture switch), `rects` (only the
windows the ui reports are masked: a window source that knows no process and no app id),
`unprotected` (no self-exclusion at all: the control that shows the test can fail).
The review window shows a waiting candidate with STATEMENT; a menu and a tooltip show it too.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import QPoint, QTimer
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QApplication, QMenu, QToolTip

from persona_desktop.adapters.screen_mss import MssGrabber
from persona_desktop.adapters.window_x11 import X11WindowInfo
from persona_desktop.app import build_context, build_shell
from persona_desktop.bootstrap import Runtime, open_runtime
from persona_desktop.bootstrap.screen import build_pipeline
from persona_desktop.capture.screen_loop import ScreenCaptureLoop
from persona_desktop.capture.screen_privacy import ExclusionRules, WithOwnWindows
from persona_desktop.domain.model import Kind
from persona_desktop.domain.text import statement_key
from persona_desktop.ports.screen import WindowDesc, WindowInfo
from persona_desktop.ui.own_windows import OwnWindowTracker
from tests.ui_support import seed_memory

PASSES_AFTER_SHOWN = 4  # capture passes to wait once every window (ours and the control) is up


def seed(rt: Runtime, statement: str) -> None:
    """One waiting candidate, with its evidence, that says `statement`."""
    [cid] = seed_memory(rt, pending=1, applied=0, observations=0).pending
    with rt.uow() as uow:
        uow.candidates.set_statement(cid, statement, statement_key(statement))
        uow.commit()


class NoPids:
    """A window source that cannot tell which process or app owns a window (a compositor
    that lists neither): only the rectangles the ui reports can mask the app's windows."""

    def __init__(self) -> None:
        self._inner = X11WindowInfo()

    def windows(self) -> list[WindowDesc]:
        return [dataclasses.replace(w, pid=None, app="") for w in self._inner.windows()]

    def close(self) -> None:
        self._inner.close()


def main() -> int:
    mode, data_dir, statement = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
    app = QApplication(["persona-desktop"])
    font = QFont("DejaVu Sans")
    font.setPixelSize(22)  # big enough for Tesseract: the test must not pass because OCR failed
    app.setFont(font)
    rt = open_runtime(data_dir)
    rt.settings.set("capture.interval_seconds", 1)
    seed(rt, statement)
    ctx = build_context(rt)
    shell = build_shell(ctx, rt if mode == "app" else None)
    review = shell.open_review()
    review.setGeometry(20, 20, 900, 500)
    menu = QMenu()
    menu.addAction(f"Approve: {statement}")
    loop: Any
    if mode == "app":
        shell.capture.set_enabled("screen", True)
        loop = shell.capture._loops["screen"]
    else:
        own = OwnWindowTracker(app)
        own.watch()
        rules = ExclusionRules.of([], [], own_pid=-1 if mode == "unprotected" else None)

        def windows() -> WindowInfo:
            return NoPids() if mode == "unprotected" else WithOwnWindows(NoPids(), own)

        pipeline = build_pipeline(rt.settings, rt.data_dir)
        pipeline.rules = rules
        loop = ScreenCaptureLoop(
            grabber_factory=MssGrabber,
            window_info_factory=windows,
            pipeline=pipeline,
            uow_factory=rt.uow,
            clock=rt.clock,
            interval_s=1.0,
        )
        loop.start()

    def running() -> Any:
        """The real loop behind the app's switch (a gate, then a lazy loop), or the one built here."""
        inner = getattr(loop, "inner", loop)
        return getattr(inner, "loop", inner)

    def status() -> Any:
        inner = running()
        return inner.status() if inner is not None else None

    started = time.monotonic()
    shown_at_pass: list[int] = []

    def tick() -> None:
        s = status()
        if s is None or s.state == "error":
            print(json.dumps({"error": getattr(s, "last_error", "no loop")}), flush=True)
            app.exit(2)
            return
        if not shown_at_pass and time.monotonic() - started > 1.0:
            menu.popup(QPoint(950, 60))
            QToolTip.showText(QPoint(950, 400), f"Tooltip: {statement}")
            review.move(40, 40)  # a move the tracker must follow
            shown_at_pass.append(s.frames)
        elif shown_at_pass and s.frames >= shown_at_pass[0] + PASSES_AFTER_SHOWN and s.ocr_runs:
            app.exit(0)
        elif time.monotonic() - started > 60:
            app.exit(3)

    timer = QTimer()
    timer.timeout.connect(tick)
    timer.start(100)
    code = app.exec()
    inner = running()
    if inner is not None:
        inner.stop(5)
    with rt.uow.read() as uow:
        texts = [f.text for f in uow.fragments.all(Kind.SCREEN)]
    print(json.dumps({"code": code, "screen_texts": texts, "status": str(status())}), flush=True)
    menu.close()
    shell.shutdown(2000)
    rt.close()
    return code


if __name__ == "__main__":
    sys.exit(main())
