"""The app's own windows and notifications, as the capture loop sees them (Qt offscreen).

The tracker follows the app's top-level widgets (menus included) as they show, move and
hide; a notification makes the loop read no frame at all for its time on screen."""

from __future__ import annotations

import dataclasses
import os
import threading
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from PIL import Image
from PySide6.QtCore import QPoint
from PySide6.QtWidgets import QApplication, QMenu, QWidget
from pytestqt.qtbot import QtBot

from persona_desktop.app import build_shell
from persona_desktop.bootstrap import Runtime
from persona_desktop.capture.screen_pipeline import ScreenPipeline
from persona_desktop.capture.screen_privacy import ExclusionRules, WithOwnWindows
from persona_desktop.domain.model import Kind
from persona_desktop.ports.screen import (
    Frame,
    Monitor,
    NoWindowInfo,
    OwnScreen,
    WindowDesc,
)
from persona_desktop.ui.context import UiContext
from persona_desktop.ui.own_windows import NOTIFICATION_MARGIN_S, OwnWindowTracker
from persona_desktop.ui.screen_access import Summary
from tests.screen_support import CountingOcr, render_lines, show_window, xvfb
from tests.ui_support import ui_ctx

__all__ = ["ui_ctx"]  # a fixture


MINE, OTHERS = "Approve the owner keeps a zebra", "Buy milk on the way home"
HALF = 640


def two_windows() -> Frame:
    """A monitor: the app's window on the left half, another program's on the right."""
    image = Image.new("RGB", (2 * HALF, 120), "white")
    image.paste(render_lines([MINE], size=(HALF, 120)).image, (0, 0))
    image.paste(render_lines([OTHERS], size=(HALF, 120)).image, (HALF, 0))
    return Frame(Monitor(1, 0, 0, 2 * HALF, 120), np.asarray(image))


OURS_BOX = (0, 0, HALF, 120)
OTHER = WindowDesc("Notes", "gedit", (HALF, 0, 2 * HALF, 120), pid=77)


def _read(listed: list[WindowDesc], ocr: CountingOcr, own_pid: int = 4242) -> tuple[str, list[str]]:
    pipeline = ScreenPipeline(ocr, ExclusionRules.of([], [], own_pid=own_pid))
    result = pipeline.process(two_windows(), listed, datetime.now(UTC), force=True)
    return result.status, [f.text for f in result.fragments]


def test_the_tracker_follows_windows_and_menus(qapp: QApplication, qtbot: QtBot) -> None:
    ticks = [100.0]
    tracker = OwnWindowTracker(qapp, monotonic=lambda: ticks[0])
    tracker.watch()
    try:
        window = QWidget()
        qtbot.addWidget(window)
        window.setGeometry(100, 120, 300, 200)
        window.show()
        seen = tracker.screen()
        assert seen.placed and seen.windows and not seen.popups
        assert any(b[0] <= 100 and b[1] <= 120 and b[2] >= 400 and b[3] >= 320 for b in seen.boxes)
        menu = QMenu()
        menu.addAction("Approve: The owner keeps a zebra")
        menu.popup(QPoint(700, 500))
        qtbot.waitUntil(menu.isVisible)
        assert tracker.screen().popups
        assert any(b[0] <= 700 <= b[2] and b[1] <= 500 <= b[3] for b in tracker.screen().boxes)
        menu.close()
        window.hide()
        just_hidden = tracker.screen()
        assert just_hidden.boxes and just_hidden.windows, "a window just hidden may still fade out"
        ticks[0] += 2
        assert tracker.screen() == OwnScreen()
        tracker.notification_shown(10)
        assert tracker.screen().notification
        ticks[0] += 12
        assert tracker.screen().notification  # the margin: servers animate and linger
        ticks[0] += 2
        assert not tracker.screen().notification
    finally:
        tracker.close()


def test_a_notification_of_the_app_s_drops_the_whole_frame(
    ui_ctx: UiContext, runtime: Runtime, qtbot: QtBot
) -> None:
    shell = build_shell(ui_ctx, runtime)
    try:
        [tracker] = shell.findChildren(OwnWindowTracker)
        windows = WithOwnWindows(NoWindowInfo(), tracker)
        ocr = CountingOcr()
        status, texts = _read(windows.windows(), ocr, own_pid=-1)
        assert status == "ocr" and OTHERS in texts
        shell.notify("Persona Desktop", "Memory: 2 facts added, 1 waiting for your review")
        assert tracker.screen().notification
        listed = windows.windows()
        assert [w.active for w in listed] == [True]
        read_before = len(ocr.shapes)
        assert _read(listed, ocr, own_pid=os.getpid()) == ("excluded", [])
        assert len(ocr.shapes) == read_before  # not a pixel was read
    finally:
        assert shell.shutdown()


def test_the_app_s_focused_window_is_masked_not_a_reason_to_drop_the_frame() -> None:
    me = WindowDesc("Persona Desktop — Review", "persona-desktop", OURS_BOX, active=True, pid=4242)

    class Listed(NoWindowInfo):
        def windows(self) -> list[WindowDesc]:
            return [OTHER, me]

    class Nothing:
        def screen(self) -> OwnScreen:
            return OwnScreen()

    # without the wrapper, the app's focused window drops the frame (like an excluded app's)
    assert _read(Listed().windows(), CountingOcr()) == ("excluded", [])
    status, texts = _read(WithOwnWindows(Listed(), Nothing(), pid=4242).windows(), CountingOcr())
    assert status == "ocr" and texts == [OTHERS]  # ours blacked out, the other's read


@pytest.mark.parametrize(
    ("mine", "named", "dropped"),
    [
        (OwnScreen(placed=False, windows=True), True, False),  # the compositor names ours: masked
        (OwnScreen(placed=False, windows=True), False, True),  # nobody can place it: not read
        (OwnScreen(placed=False, windows=True, popups=True), True, True),  # menus are in no list
        (OwnScreen(placed=False), False, False),  # nothing of ours shows
        (OwnScreen(notification=True), False, True),
    ],
)
def test_on_wayland_what_nobody_can_place_is_not_read(mine: OwnScreen, named: bool, dropped: bool) -> None:
    """A Wayland client cannot know where its windows are (what cannot run here: the snapshot)."""
    ours = WindowDesc("Review", "persona-desktop", OURS_BOX, active=True, pid=4242 if named else None)

    class Compositor(NoWindowInfo):
        def windows(self) -> list[WindowDesc]:
            return [OTHER, ours]

    class Snapshot:
        def screen(self) -> OwnScreen:
            return mine

    status, texts = _read(WithOwnWindows(Compositor(), Snapshot(), pid=4242).windows(), CountingOcr())
    assert (status == "excluded") is dropped
    if not dropped and named:
        assert texts == [OTHERS]  # ours blacked out by process


@pytest.mark.xvfb
def test_capture_now_with_capture_off_waits_for_the_app_s_notification_to_go(
    ui_ctx: UiContext, runtime: Runtime, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tray's "Capture this screen now" while screen capture is off (a capture on demand,
    not the loop) honours the app's own windows too: nothing is read while its notification
    may be on screen, and the screen is read once it has gone (real Xvfb, mss, Tesseract)."""
    with xvfb(900, 200) as display:
        monkeypatch.setenv("DISPLAY", display)
        monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
        other = show_window(display, "Notes", OTHERS, (20, 20, 880, 180), font_px=22)
        shell = build_shell(ui_ctx, runtime)
        try:
            [tracker] = shell.findChildren(OwnWindowTracker)
            access = shell.screen_access
            assert access is not None
            tries: list[int] = []
            calls: list[tuple[str, bool]] = []  # (hook, on the GUI thread)
            real, real_load = access.hooks.capture_once, access.hooks.load
            assert real_load is not None

            def counted() -> Summary:  # the real capture, counted (on the worker thread)
                tries.append(1)
                calls.append(("capture_once", threading.current_thread() is threading.main_thread()))
                return real()

            def load() -> None:
                calls.append(("load", threading.current_thread() is threading.main_thread()))
                real_load()

            access.hooks = dataclasses.replace(access.hooks, capture_once=counted, load=load)
            shown_at = datetime.now(UTC)
            tracker.notification_shown(0.5)  # up for 0.5 s, and the margin servers need
            access.capture_now_action.trigger()
            qtbot.waitUntil(lambda: OTHERS in _screen_texts(runtime), timeout=30_000)
            assert len(tries) >= 2  # the first found the notification up, and was tried again
            # the wiring is imported on the GUI thread before each capture goes to a worker
            assert calls[:2] == [("load", True), ("capture_once", False)]
            with runtime.uow.read() as uow:
                first_read = min(f.captured_at for f in uow.fragments.all(Kind.SCREEN))
            assert first_read >= shown_at + timedelta(seconds=0.5 + NOTIFICATION_MARGIN_S)
        finally:
            assert shell.shutdown()
            other.close()


def _screen_texts(runtime: Runtime) -> list[str]:
    with runtime.uow.read() as uow:
        return [f.text for f in uow.fragments.all(Kind.SCREEN)]
