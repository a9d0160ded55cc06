"""Exclusions against what changes while a pass runs: the loop with the real Tesseract and the
real store, and stand-ins only for the grabber and the compositor (scripted window lists).

The window list is read before and after each grab. An excluded window that appears,
vanishes or moves between the two may be in the pixels where neither list masks it, so
such a pass is dropped; a settled pass masks the excluded windows of both lists.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from jeepney import HeaderFields, message_bus, new_method_return
from jeepney.io.blocking import open_dbus_connection
from PIL import Image, ImageDraw, ImageFont

from persona_desktop.adapters.ocr_tesseract import TesseractOcr
from persona_desktop.adapters.wayland import mutter
from persona_desktop.adapters.wayland.dbus import SessionBus
from persona_desktop.adapters.wayland.gnome import GnomeWindowCalls
from persona_desktop.bootstrap import Runtime
from persona_desktop.capture.screen_loop import LoopStatus, ScreenCaptureLoop, ScreenEvent
from persona_desktop.capture.screen_once import OnceOutcome
from persona_desktop.capture.screen_pipeline import CaptureResult, ScreenPipeline
from persona_desktop.capture.screen_privacy import SELF, ExclusionRules, WithOwnWindows
from persona_desktop.capture.screen_wayland import WholeDesktopGrabber
from persona_desktop.domain.model import Kind
from persona_desktop.ports.screen import Box, Frame, Monitor, OwnScreen, Pixels, WindowDesc
from tests.screen_support import FONT, StepClock, render_lines
from tests.wayland_session import bare_bus

NOTES = "Meeting notes for the quarterly report"
SECRET = "KeePassXC master entry bank password hunter2xyz"
MON = Monitor(1, 0, 0, 1200, 200)
EDITOR = WindowDesc("notes.txt - editor", "gedit", (0, 0, 1200, 60), active=True, wid=1)
VAULT = WindowDesc("Passwords.kdbx - KeePassXC", "org.keepassxc.KeePassXC", (0, 60, 1200, 200), wid=2)
VAULT_ASIDE = replace(VAULT, box=(0, 150, 1200, 200))  # below the secret line: does not cover it
RULES = ExclusionRules.of(["keepassxc"], ["password"])


def picture() -> Pixels:
    """The editor's line on top, the vault's line under it (y 69-91), as the grab sees them."""
    return np.asarray(render_lines([NOTES, SECRET], size=(MON.width, MON.height)).image)


class StillGrabber:
    name = "stand-in"

    def __init__(self, pixels: Pixels) -> None:
        self.pixels = pixels

    def monitors(self) -> list[Monitor]:
        return [MON]

    def grab(self, monitor: Monitor) -> Frame:
        return Frame(MON, self.pixels)

    def close(self) -> None:
        return None


class ScriptedWindows:
    """The compositor: each read returns the next list; the last one repeats."""

    def __init__(self, *lists: Sequence[WindowDesc]) -> None:
        self.lists = [list(ws) for ws in lists]
        self.reads = 0

    def windows(self) -> list[WindowDesc]:
        self.reads += 1
        return list(self.lists[min(self.reads, len(self.lists)) - 1])

    def close(self) -> None:
        return None


def _loop(runtime: Runtime) -> ScreenCaptureLoop:
    return ScreenCaptureLoop(
        grabber_factory=lambda: StillGrabber(picture()),
        window_info_factory=ScriptedWindows,
        pipeline=ScreenPipeline(TesseractOcr("eng", 50), RULES),
        uow_factory=runtime.uow,
        clock=StepClock(),
    )


def stored(runtime: Runtime) -> list[str]:
    with runtime.uow.read() as uow:
        return [f.text for f in uow.fragments.all(Kind.SCREEN)]


def test_an_unfocused_excluded_window_that_appears_during_the_grab_drops_the_pass(runtime: Runtime) -> None:
    loop = _loop(runtime)
    grabber = StillGrabber(picture())
    [result] = loop.tick(grabber, ScriptedWindows([EDITOR], [EDITOR, VAULT]))
    assert result.status == "unsettled" and "excluded window" in (result.reason or "")
    assert stored(runtime) == []
    # settled (the vault in both lists): the notes are stored, the vault's line masked
    [result] = loop.tick(grabber, ScriptedWindows([EDITOR, VAULT]), force=True)
    assert result.status == "ocr"
    assert stored(runtime) == [NOTES]


def test_an_excluded_window_that_vanishes_or_moves_during_the_grab_drops_the_pass(runtime: Runtime) -> None:
    loop = _loop(runtime)
    grabber = StillGrabber(picture())
    for before, after in (
        ([EDITOR, VAULT], [EDITOR]),  # gone: it may still be in the pixels
        ([EDITOR, VAULT_ASIDE], [EDITOR, VAULT]),  # moved onto the secret line
        ([EDITOR, VAULT], [EDITOR, VAULT_ASIDE]),  # moved away from it
    ):
        [result] = loop.tick(grabber, ScriptedWindows(before, after), force=True)
        assert result.status == "unsettled", (before, after)
    assert stored(runtime) == []


def test_a_title_change_that_makes_a_window_excluded_drops_the_pass(runtime: Runtime) -> None:
    loop = _loop(runtime)
    browser = WindowDesc("Mozilla Firefox", "firefox", VAULT.box, wid=3)
    private = replace(browser, title="Password reset - Mozilla Firefox")
    [result] = loop.tick(StillGrabber(picture()), ScriptedWindows([EDITOR, browser], [EDITOR, private]))
    assert result.status == "unsettled"
    assert stored(runtime) == []


# the app's own review window where the vault is: of this process, or of the tray app when the
# command line (`capture screen`, bound to a keyboard shortcut) grabs; known there by its app id
MINE = WindowDesc("Persona Desktop - Review", "persona-desktop", VAULT.box, wid=5, pid=os.getpid())
TRAY_S = replace(MINE, pid=os.getpid() + 1)


def test_a_window_of_the_app_s_own_that_appears_or_moves_during_the_grab_drops_the_pass(
    runtime: Runtime,
) -> None:
    """The app's own windows go through the same exclusion rules as the owner's: one check."""
    loop = _loop(runtime)
    grabber = StillGrabber(picture())
    for ours in (MINE, TRAY_S):
        aside = replace(ours, box=VAULT_ASIDE.box)
        for before, after in (([EDITOR], [EDITOR, ours]), ([EDITOR, aside], [EDITOR, ours])):
            [result] = loop.tick(grabber, ScriptedWindows(before, after), force=True)
            assert result.status == "unsettled", (ours, before, after)
        [result] = loop.tick(grabber, ScriptedWindows([EDITOR, ours]), force=True)  # settled: masked
        assert result.status in ("ocr", "known")
    assert stored(runtime) == [NOTES]


class TwoMonitors(StillGrabber):
    """Two monitors side by side; counts the grabs."""

    def __init__(self, pixels: Pixels) -> None:
        super().__init__(pixels)
        self.grabbed: list[int] = []

    def monitors(self) -> list[Monitor]:
        return [MON, Monitor(2, MON.width, 0, MON.width, MON.height)]

    def grab(self, monitor: Monitor) -> Frame:
        self.grabbed.append(monitor.index)
        return Frame(monitor, self.pixels)


class NotifiesAfter:
    """The ui's snapshot of the app's own screen: a notification goes up after `reads` reads."""

    def __init__(self, reads: int) -> None:
        self.reads, self.left = reads, reads

    def screen(self) -> OwnScreen:
        self.left -= 1
        return OwnScreen(notification=self.left < 0)


def test_a_notification_of_the_app_s_that_goes_up_during_a_pass_ends_it(runtime: Runtime) -> None:
    """Nothing more is grabbed once the app's own cover is up (a notification, drawn where the
    app cannot tell), and an asked-for capture is retried like one asked for under the cover."""
    loop = _loop(runtime)
    grabber = TwoMonitors(picture())
    results = loop.tick(grabber, WithOwnWindows(ScriptedWindows([EDITOR]), NotifiesAfter(1)), force=True)
    assert grabber.grabbed == [1]
    assert [(r.status, r.reason) for r in results] == [("excluded", SELF)]
    assert stored(runtime) == []


def test_a_settled_pass_masks_the_excluded_windows_of_both_lists(runtime: Runtime) -> None:
    """The pipeline blacks out the excluded windows of the list taken after the grab too."""
    pipe = ScreenPipeline(TesseractOcr("eng", 50), RULES)
    result = pipe.process(Frame(MON, picture()), [EDITOR], StepClock().now(), mask_also=[EDITOR, VAULT])
    assert [f.text for f in result.fragments] == [NOTES]


# --- a screenshot whose scale is unknown (GNOME's portal picture on a 2x screen) ------------

LOGICAL = (0, 0, 800, 300)  # the desktop in logical pixels; the 2x screenshot is 1600x600
L_EDITOR = WindowDesc("report - Editor", "gedit", (0, 0, 800, 150), active=True, wid=1)
L_VAULT = WindowDesc("Passwords - KeePassXC", "org.keepassxc.KeePassXC", (0, 150, 800, 300), wid=2)


def hidpi_picture(size: tuple[int, int] = (1600, 600)) -> Pixels:
    """Device pixels: the editor's line in the top half, the vault's in the bottom half."""
    img = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(img)
    font = ImageFont.truetype(str(FONT), 40)
    draw.text((40, size[1] // 10), "Editor quarterly report draft", fill="black", font=font)
    draw.text((40, size[1] * 2 // 3), "Vault entry bank password hunter2xyz", fill="black", font=font)
    return np.asarray(img)


class PortalStandIn:
    """Hands back one picture, as the portal does (whole desktop, device pixels)."""

    name = "portal"

    def __init__(self, pixels: Pixels) -> None:
        self.pixels = pixels

    def take(self) -> Pixels:
        return self.pixels

    def close(self) -> None:
        return None


def _desktop_pass(
    runtime: Runtime, pixels: Pixels, layout: Box | None, windows: Sequence[WindowDesc], passes: int = 1
) -> tuple[list[CaptureResult], list[ScreenEvent]]:
    """`passes` passes of one loop on the desktop grabber over the portal stand-in."""
    events: list[ScreenEvent] = []
    grabber = WholeDesktopGrabber(PortalStandIn(pixels), lambda: layout)
    loop = ScreenCaptureLoop(
        grabber_factory=lambda: grabber,
        window_info_factory=ScriptedWindows,
        pipeline=ScreenPipeline(TesseractOcr("eng", 50), RULES),
        uow_factory=runtime.uow,
        clock=StepClock(),
        on_event=events.append,
    )
    results = [r for _ in range(passes) for r in loop.tick(grabber, ScriptedWindows(windows), force=True)]
    return results, events


def test_without_a_known_scale_a_desktop_with_an_excluded_window_is_not_read(runtime: Runtime) -> None:
    results, events = _desktop_pass(runtime, hidpi_picture(), None, [L_EDITOR, L_VAULT], passes=2)
    assert [r.status for r in results] == ["skipped", "skipped"]
    assert "scale" in (results[0].reason or "")
    assert stored(runtime) == []
    said = [e.data["message"] for e in events if e.kind == "error"]
    assert len(said) == 1 and "skips passes" in said[0]  # once, not every pass
    summary = OnceOutcome("portal", results[:1], LoopStatus("stopped"), True).summary()
    assert "nothing read: the desktop's layout and scale are unknown" in summary  # `capture screen`


def test_with_the_logical_layout_a_2x_picture_is_fitted_and_the_vault_masked(runtime: Runtime) -> None:
    [result], _ = _desktop_pass(runtime, hidpi_picture(), LOGICAL, [L_EDITOR, L_VAULT])
    assert result.status == "ocr"
    assert stored(runtime) == ["Editor quarterly report draft"]


def test_a_picture_that_is_no_uniform_scale_of_the_layout_is_not_read(runtime: Runtime) -> None:
    """1600x300 against 800x300: not one scale (mixed monitor scales, a stale layout): masks
    computed from logical boxes would land elsewhere."""
    [result], _ = _desktop_pass(runtime, hidpi_picture((1600, 300)), LOGICAL, [L_EDITOR, L_VAULT])
    assert result.status == "skipped"
    assert stored(runtime) == []


def test_without_a_known_scale_but_nothing_excluded_the_screen_is_read(runtime: Runtime) -> None:
    [result], _ = _desktop_pass(runtime, hidpi_picture(), None, [L_EDITOR])
    assert result.status == "ocr" and len(stored(runtime)) == 2


# --- GNOME: the logical layout from Mutter's DisplayConfig -----------------------------------
# No GNOME Shell here: Mutter and the Window Calls extension are stand-ins on a private bus,
# answering with replies of the shapes they document.


def _mode(w: int, h: int, current: bool = True) -> tuple[object, ...]:
    return (f"{w}x{h}@60", w, h, 60.0, 1.0, [1.0, 2.0], {"is-current": ("b", True)} if current else {})


def _monitor(connector: str, *modes: tuple[object, ...]) -> tuple[object, ...]:
    return ((connector, "ACME", "Panel", "0001"), list(modes), {})


def _logical(x: int, y: int, scale: float, connector: str, transform: int = 0) -> tuple[object, ...]:
    return (x, y, scale, transform, x == 0, [(connector, "ACME", "Panel", "0001")], {})


def _state(monitors: list[object], logical: list[object], mode: int | None = None) -> tuple[object, ...]:
    return (7, monitors, logical, {} if mode is None else {"layout-mode": ("u", mode)})


def test_mutter_current_state_gives_the_logical_layout() -> None:
    hidpi = [_monitor("eDP-1", _mode(1920, 1080, current=False), _mode(3840, 2160))]
    assert mutter.parse_state(_state(hidpi, [_logical(0, 0, 2.0, "eDP-1")])) == (0, 0, 1920, 1080)
    # physical layout mode: window frames are device pixels too, nothing to fit
    assert mutter.parse_state(_state(hidpi, [_logical(0, 0, 2.0, "eDP-1")], mode=2)) == (0, 0, 3840, 2160)
    # a 2x laptop panel and a 1x monitor turned by 90 degrees to its right
    two = [_monitor("eDP-1", _mode(2560, 1600)), _monitor("HDMI-1", _mode(1920, 1080))]
    logical = [_logical(0, 0, 2.0, "eDP-1"), _logical(1280, 0, 1.0, "HDMI-1", transform=1)]
    assert mutter.parse_state(_state(two, logical)) == (0, 0, 2360, 1920)


def test_mutter_replies_that_do_not_describe_a_layout_give_none() -> None:
    one = [_monitor("eDP-1", _mode(3840, 2160))]
    for bad in (
        (),
        "everything is fine",
        _state(one, []),  # no logical monitor
        _state([_monitor("eDP-1", _mode(3840, 2160, current=False))], [_logical(0, 0, 2.0, "eDP-1")]),
        _state(one, [_logical(0, 0, 2.0, "DP-9")]),  # shows a monitor that is not listed
        _state(one, [_logical(0, 0, float("nan"), "eDP-1")]),
        _state(one, [_logical(0, 0, 0.0, "eDP-1")]),
        _state(one, [_logical(0, 0, 2.0, "eDP-1", transform=9)]),
        _state(one, [_logical(10**9, 0, 2.0, "eDP-1")]),
        _state(one, [_logical(0, 0, 2.0, "eDP-1")], mode=3),
        _state(
            [_monitor("eDP-1", ("m", "wide", 2160, 60.0, 1.0, [], {"is-current": ("b", True)}))],
            [_logical(0, 0, 2.0, "eDP-1")],
        ),
    ):
        assert mutter.parse_state(bad) is None, bad


class StandInGnome:
    """Mutter's DisplayConfig and the Window Calls extension on a private session bus."""

    STATE_SIG = "ua((ssss)a(siiddada{sv})a{sv})a(iiduba(ssss)a{sv})a{sv}"

    def __init__(self, address: str, state: tuple[object, ...], windows: list[dict[str, object]]) -> None:
        self.conn = open_dbus_connection(address)
        for name in ("org.gnome.Mutter.DisplayConfig", "org.gnome.Shell"):
            self.conn.send_and_get_reply(message_bus.RequestName(name), timeout=5)
        self.state, self.windows = state, windows
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                msg = self.conn.receive(timeout=0.1)
            except TimeoutError:
                continue
            member = msg.header.fields.get(HeaderFields.member)
            if member == "GetCurrentState":
                self.conn.send(new_method_return(msg, self.STATE_SIG, self.state))
            elif member == "List":
                self.conn.send(new_method_return(msg, "s", (json.dumps(self.windows),)))

    def close(self) -> None:
        self.stop.set()
        self.thread.join(5)
        self.conn.close()


def _gnome_window(wid: int, cls: str, title: str, box: Box, focus: bool, pid: int = 0) -> dict[str, object]:
    x, y, right, bottom = box
    return {"id": wid, "wm_class": cls, "title": title, "in_current_workspace": True, "focus": focus,
            "x": x, "y": y, "width": right - x, "height": bottom - y, "window_type": 0, "pid": pid}  # fmt: skip


@pytest.mark.parametrize(
    "below",
    [
        ("org.keepassxc.KeePassXC", "Passwords - KeePassXC", 4321),  # excluded by the owner
        ("org.example.Notes", "Review - Persona Desktop", os.getpid()),  # the app's own, by process
    ],
)
def test_on_a_2x_gnome_desktop_the_portal_picture_is_fitted_and_the_vault_masked(
    runtime: Runtime, tmp_path: Path, below: tuple[str, str, int]
) -> None:
    state = _state([_monitor("eDP-1", _mode(1600, 600))], [_logical(0, 0, 2.0, "eDP-1")])
    cls, title, pid = below
    windows = [_gnome_window(1, "gedit", "report - Editor", L_EDITOR.box, True, pid=4320),
               _gnome_window(2, cls, title, L_VAULT.box, False, pid=pid)]  # fmt: skip
    with bare_bus(tmp_path / "bus") as address:
        gnome_shell = StandInGnome(address, state, windows)
        source = GnomeWindowCalls(SessionBus(address))
        try:
            assert source.layout() == LOGICAL
            grabber = WholeDesktopGrabber(PortalStandIn(hidpi_picture()), source.layout)
            loop = ScreenCaptureLoop(grabber_factory=lambda: grabber, window_info_factory=lambda: source,
                                     pipeline=ScreenPipeline(TesseractOcr("eng", 50), RULES),
                                     uow_factory=runtime.uow, clock=StepClock())  # fmt: skip
            [result] = loop.tick(grabber, source)
        finally:
            source.close()
            gnome_shell.close()
    assert result.status == "ocr"
    assert stored(runtime) == ["Editor quarterly report draft"]
