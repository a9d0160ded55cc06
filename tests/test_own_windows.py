"""The app's own windows and notifications, as the capture loop sees them (Qt offscreen).

The tracker follows the app's top-level widgets (menus included) as they show, move and
hide; a notification makes the loop read no frame at all for its time on screen."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest
from PySide6.QtCore import QPoint
from PySide6.QtWidgets import QApplication, QMenu, QWidget
from pytestqt.qtbot import QtBot

from persona_desktop.app import build_shell
from persona_desktop.bootstrap import Runtime
from persona_desktop.capture.screen_pipeline import ScreenPipeline
from persona_desktop.capture.screen_ports import (
    Frame,
    Monitor,
    NoWindowInfo,
    OcrLine,
    OwnScreen,
    Pixels,
    WindowDesc,
)
from persona_desktop.capture.screen_privacy import ExclusionRules, WithOwnWindows
from persona_desktop.ui.context import UiContext
from persona_desktop.ui.own_windows import OwnWindowTracker
from tests.ui_support import ui_ctx

__all__ = ["ui_ctx"]  # a fixture


class CountingOcr:
    """Tesseract is not the point here: what matters is whether any pixel reaches OCR."""

    def __init__(self) -> None:
        self.images: list[Pixels] = []

    def read(self, image: Pixels) -> list[OcrLine]:
        self.images.append(image)
        return []


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
        ocr = CountingOcr()
        pipeline = ScreenPipeline(ocr, ExclusionRules.of([], []))
        windows = WithOwnWindows(NoWindowInfo(), tracker)
        frame = Frame(Monitor(1, 0, 0, 64, 32), np.full((32, 64, 3), 200, dtype=np.uint8))
        assert pipeline.process(frame, windows.windows(), datetime.now(UTC)).status == "ocr"
        shell.notify("Persona Desktop", "Memory: 2 facts added, 1 waiting for your review")
        assert tracker.screen().notification
        listed = windows.windows()
        assert [w.active for w in listed] == [True]
        result = pipeline.process(frame, listed, datetime.now(UTC), force=True)
        assert (result.status, result.reason) == ("excluded", "self")
        assert len(ocr.images) == 1  # nothing more was read
    finally:
        assert shell.shutdown()


def test_the_app_s_focused_window_is_masked_not_a_reason_to_drop_the_frame() -> None:
    me = WindowDesc("Persona Desktop — Review", "persona-desktop", (0, 0, 32, 32), active=True, pid=4242)
    other = WindowDesc("Notes", "gedit", (32, 0, 64, 32), pid=77)

    class Listed(NoWindowInfo):
        def windows(self) -> list[WindowDesc]:
            return [other, me]

    class Nothing:
        def screen(self) -> OwnScreen:
            return OwnScreen()

    ocr = CountingOcr()
    pipeline = ScreenPipeline(ocr, ExclusionRules.of([], [], own_pid=4242))
    pixels = np.full((32, 64, 3), 255, dtype=np.uint8)
    frame = Frame(Monitor(1, 0, 0, 64, 32), pixels)
    # without the wrapper, the app's focused window drops the frame (like an excluded app's)
    assert pipeline.process(frame, Listed().windows(), datetime.now(UTC)).status == "excluded"
    listed = WithOwnWindows(Listed(), Nothing(), pid=4242).windows()
    assert pipeline.process(frame, listed, datetime.now(UTC), force=True).status == "ocr"
    [read] = ocr.images
    assert int(read[:, :32].max()) == 0 and int(read[:, 32:].min()) > 0  # ours black, the other's kept


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
    ours = WindowDesc("Review", "persona-desktop", (0, 0, 32, 32), active=True, pid=4242 if named else None)
    other = WindowDesc("Notes", "gedit", (32, 0, 64, 32), pid=77)

    class Compositor(NoWindowInfo):
        def windows(self) -> list[WindowDesc]:
            return [other, ours]

    class Snapshot:
        def screen(self) -> OwnScreen:
            return mine

    ocr = CountingOcr()
    pipeline = ScreenPipeline(ocr, ExclusionRules.of([], [], own_pid=4242))
    frame = Frame(Monitor(1, 0, 0, 64, 32), np.full((32, 64, 3), 255, dtype=np.uint8))
    listed = WithOwnWindows(Compositor(), Snapshot(), pid=4242).windows()
    result = pipeline.process(frame, listed, datetime.now(UTC), force=True)
    assert (result.status == "excluded") is dropped
    if not dropped and named:
        assert int(ocr.images[0][:, :32].max()) == 0  # ours blacked out by process
