"""The capture loop on a real X server (Xvfb, started here) with real windows, mss and Tesseract."""

from __future__ import annotations

import os
import queue
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from datetime import timedelta

import mss
import numpy as np
import pytest

from persona_desktop.adapters.ocr_tesseract import TesseractOcr
from persona_desktop.adapters.screen_mss import MssGrabber
from persona_desktop.adapters.window_x11 import X11WindowInfo
from persona_desktop.bootstrap import Runtime
from persona_desktop.bootstrap.screen import capture_once
from persona_desktop.capture.screen_loop import ScreenCaptureLoop, ScreenEvent
from persona_desktop.capture.screen_pipeline import ScreenPipeline
from persona_desktop.capture.screen_privacy import ExclusionRules
from persona_desktop.config import SETTINGS
from persona_desktop.domain.model import Fragment, Kind
from persona_desktop.errors import CaptureUnavailableError
from persona_desktop.ports.screen import Frame, Monitor
from tests.screen_support import XWindow, show_window, xvfb

pytestmark = [pytest.mark.xvfb, pytest.mark.timeout(120)]

W, H = 1024, 600  # per monitor; two monitors side by side on one 2048x600 Xvfb screen


class TwoMonitorGrabber(MssGrabber):
    """The real mss grabber, told the screen is two monitors side by side.

    Xvfb cannot lay out two RandR monitors (with +xinerama both sit at 0,0), so the
    layout is staged; grabbing each monitor's region is mss's real work.
    """

    def monitors(self) -> list[Monitor]:
        return [Monitor(1, 0, 0, W, H), Monitor(2, W, 0, W, H)]


@pytest.fixture
def display(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    with xvfb(2 * W, H) as name:
        monkeypatch.setenv("DISPLAY", name)
        monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
        yield name


@pytest.fixture
def windows() -> Iterator[list[XWindow]]:
    opened: list[XWindow] = []
    yield opened
    for w in opened:
        w.close()


class Harness:
    def __init__(self, runtime: Runtime) -> None:
        self.events: queue.Queue[ScreenEvent] = queue.Queue()
        rules = ExclusionRules.of(
            SETTINGS["capture.exclude_apps"].default, SETTINGS["capture.exclude_titles"].default
        )
        self.loop = ScreenCaptureLoop(
            grabber_factory=TwoMonitorGrabber,
            window_info_factory=X11WindowInfo,
            pipeline=ScreenPipeline(TesseractOcr("eng", 50), rules),
            uow_factory=runtime.uow,
            clock=runtime.clock,
            interval_s=0.3,
            on_event=self.events.put,
        )
        self.runtime = runtime

    def until(self, check: Callable[[], bool], timeout: float = 30) -> None:
        """Wait until the loop's status meets `check` (the loop thread moves it on)."""
        deadline = time.monotonic() + timeout
        while not check():
            assert time.monotonic() < deadline, "the loop did not get there in time"
            time.sleep(0.01)

    def wait_for(self, pred: Callable[[ScreenEvent], bool], timeout: float = 30) -> ScreenEvent:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                ev = self.events.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                break
            if pred(ev):
                return ev
        raise AssertionError(f"no matching event within {timeout} s; status {self.loop.status()}")

    def captures(self, n: int) -> list[ScreenEvent]:
        return [self.wait_for(lambda e: e.kind == "captured") for _ in range(n)]

    def stored(self) -> list[Fragment]:
        with self.runtime.uow.read() as uow:
            return uow.fragments.all(Kind.SCREEN)


@pytest.fixture
def harness(runtime: Runtime) -> Iterator[Harness]:
    h = Harness(runtime)
    yield h
    assert h.loop.stop(5), "capture thread did not stop"


def test_loop_reads_windows_skips_the_vault_redacts_and_stores_only_changes(
    display: str, windows: list[XWindow], harness: Harness
) -> None:
    windows.append(
        show_window(display, "KeePassXC - Passwords", "SECRETWORD vault entry", (560, 300, 1000, 420))
    )
    windows.append(
        show_window(display, "Notes - editor", "Meeting with Alice at noon\nCard 4111 1111 1111 1111 saved",
                    (40, 40, 540, 200))
    )  # fmt: skip
    loop = harness.loop
    loop.start()
    first = harness.wait_for(lambda e: e.kind == "captured" and e.data["fragments"] > 0)
    # two monitors, each its own capture; the second shows only Xvfb's black root: never read
    assert first.data["monitors"] == ["ocr", "black"]
    stored = harness.stored()
    texts = {f.text for f in stored}
    assert texts == {"Meeting with Alice at noon", "Card [REDACTED:card] saved"}
    for f in stored:
        assert f.locator["window"] == {"title": "Notes - editor", "app": "screentest"}
        assert f.locator["monitor"] == 1 and f.ref.startswith(f"scr:{f.locator['capture_id']}:m1:l")
        x, _, w, _ = f.locator["bbox"]  # left, top, width, height
        assert x >= 40 and x + w <= 540
    assert not any("SECRET" in str(f) or "4111" in str(f) for f in stored)

    # unchanged screen: no OCR, nothing new
    for ev in harness.captures(3):
        assert ev.data == {"monitors": ["unchanged", "black"], "fragments": 0}
    assert len(harness.stored()) == 2

    # a new window on the second monitor: only its line is new, as monitor 2
    windows.append(show_window(display, "Todo", "Call the plumber tomorrow", (W + 60, 80, W + 560, 180)))
    harness.wait_for(lambda e: e.kind == "captured" and e.data["fragments"] > 0)
    new = [f for f in harness.stored() if f.text not in texts]
    assert [f.text for f in new] == ["Call the plumber tomorrow"]
    assert new[0].locator["monitor"] == 2 and ":m2:l" in new[0].ref
    assert 60 <= new[0].locator["bbox"][0] < 560  # in the monitor's own pixels

    # pause: nothing is grabbed at all; resume: grabbing goes on
    loop.pause(timedelta(hours=1))
    assert loop.status().state == "paused"
    began = loop.status().passes
    # a pass already under way when pausing drops what it read; the next ones, paused, grab nothing
    harness.until(lambda: loop.status().passes >= began + 2)
    frames = loop.status().frames
    harness.until(lambda: loop.status().passes >= began + 4)
    assert loop.status().frames == frames
    loop.resume()
    harness.wait_for(lambda e: e.kind == "captured")
    assert loop.status().state == "running"

    started = time.monotonic()
    assert loop.stop(5)
    assert time.monotonic() - started < 3.0  # at most one Tesseract call finishes first
    assert loop.status().state == "stopped"
    assert not any(t.name == "screen-capture" for t in threading.enumerate())


def test_active_password_manager_frame_is_dropped(
    display: str, windows: list[XWindow], harness: Harness
) -> None:
    windows.append(show_window(display, "Bitwarden", "Master vault login SECRETWORD", (40, 40, 600, 160)))
    harness.loop.start()
    for ev in harness.captures(2):
        assert ev.data["monitors"][0] == "excluded"
    assert harness.stored() == []
    assert harness.loop.status().excluded >= 2


def test_wayland_without_x11_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, harness: Harness) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-0")
    with pytest.raises(CaptureUnavailableError, match="Wayland session without X11"):
        MssGrabber()
    harness.loop.start()
    ev = harness.wait_for(lambda e: e.kind == "error")
    assert ev.data["fatal"] and "Wayland" in ev.data["message"]
    harness.wait_for(lambda e: e.kind == "stopped")
    status = harness.loop.status()
    assert status.state == "error" and "Wayland" in (status.last_error or "")


# --- a password manager's window that changes between the window list and the grab ---------


class HookedGrabber(MssGrabber):
    """The real mss grabber of monitor 1; `hook` runs once, between the loop's window list
    and the grab (what the desktop may do in that moment)."""

    def __init__(self, hook: Callable[[], None]) -> None:
        super().__init__()
        self.hook: Callable[[], None] | None = hook

    def monitors(self) -> list[Monitor]:
        return [Monitor(1, 0, 0, W, H)]

    def grab(self, monitor: Monitor) -> Frame:
        hook, self.hook = self.hook, None
        if hook is not None:
            hook()
        return super().grab(monitor)


def _xdotool(display: str, *args: str) -> None:
    subprocess.run(["xdotool", *args], env={**os.environ, "DISPLAY": display}, check=True, timeout=20)


def _wid(display: str, title: str) -> int:
    info = X11WindowInfo(display)
    try:
        return next(w.wid for w in info.windows() if w.title == title)
    finally:
        info.close()


def _painted(display: str, box: tuple[int, int, int, int]) -> Callable[[], None]:
    """Wait until the test window (white) is drawn at `box`: the grab then sees its text."""

    def wait() -> None:
        deadline = time.monotonic() + 10
        with mss.MSS(display=display) as sct:
            while time.monotonic() < deadline:
                shot = np.asarray(sct.grab({"left": box[0], "top": box[1],
                                            "width": box[2] - box[0], "height": box[3] - box[1]}))  # fmt: skip
                if (shot[:, :, :3] == 255).mean() > 0.5:
                    return
                time.sleep(0.05)
        raise AssertionError(f"the window at {box} was not drawn within 10 s")

    return wait


VAULT_TITLE = "KeePassXC - Passwords"


@pytest.mark.parametrize("change", ["appears", "moves"])
def test_an_unfocused_vault_that_appears_or_moves_during_the_pass_is_never_stored(
    display: str, windows: list[XWindow], runtime: Runtime, change: str
) -> None:
    here, elsewhere = (40, 300, 600, 420), (620, 300, 1000, 420)
    # the vault first, then the editor on top of the stacking order: the editor is active
    windows.append(show_window(display, VAULT_TITLE, "SECRETWORD vault entry",
                               here if change == "appears" else elsewhere))  # fmt: skip
    windows.append(show_window(display, "Notes - editor", "Meeting with Alice at noon", (40, 40, 540, 200)))
    vault = _wid(display, VAULT_TITLE)
    if change == "appears":
        _xdotool(display, "windowunmap", "--sync", str(vault))

    def change_the_desktop() -> None:  # between the list and the grab
        if change == "appears":
            _xdotool(display, "windowmap", "--sync", str(vault))  # mapped, not raised: still unfocused
        else:
            _xdotool(display, "windowmove", "--sync", str(vault), str(here[0]), str(here[1]))
        _painted(display, here)()

    rules = ExclusionRules.of(
        SETTINGS["capture.exclude_apps"].default, SETTINGS["capture.exclude_titles"].default
    )
    loop = ScreenCaptureLoop(grabber_factory=MssGrabber, window_info_factory=X11WindowInfo,
                             pipeline=ScreenPipeline(TesseractOcr("eng", 50), rules), uow_factory=runtime.uow,
                             clock=runtime.clock)  # fmt: skip
    info = X11WindowInfo(display)
    try:
        [result] = loop.tick(HookedGrabber(change_the_desktop), info, force=True)
        assert result.status == "unsettled"
        with runtime.uow.read() as uow:
            assert uow.fragments.all(Kind.SCREEN) == []
        [result] = loop.tick(HookedGrabber(lambda: None), info, force=True)  # settled: masked
        assert result.status == "ocr"
    finally:
        info.close()
    with runtime.uow.read() as uow:
        texts = [f.text for f in uow.fragments.all(Kind.SCREEN)]
    assert texts == ["Meeting with Alice at noon"]


def test_capture_screen_never_reads_the_tray_app_s_windows(
    display: str, windows: list[XWindow], runtime: Runtime
) -> None:
    """`capture screen` (the command line, bound to a keyboard shortcut) runs in a process of its
    own: the tray app's review window, of another process, is known by its app id and masked."""
    windows.append(show_window(display, "Review - Persona Desktop", "Approve: the owner keeps a zebra",
                               (40, 300, 1000, 420), app="persona-desktop"))  # fmt: skip
    windows.append(show_window(display, "Notes - editor", "Meeting with Alice at noon", (40, 40, 540, 200)))
    outcome = capture_once(runtime)
    with runtime.uow.read() as uow:
        texts = [f.text for f in uow.fragments.all(Kind.SCREEN)]
    assert "Meeting with Alice at noon" in texts, (outcome.summary(), texts)
    assert not any("zebra" in t.lower() or "approve" in t.lower() for t in texts), texts
