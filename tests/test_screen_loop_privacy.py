"""Exclusions against what changes while a pass runs: the loop with the real Tesseract and the
real store, and stand-ins only for the grabber and the compositor (scripted window lists).

The window list is read before and after each grab. An excluded window that appears,
vanishes or moves between the two may be in the pixels where neither list masks it, so
such a pass is dropped; a settled pass masks the excluded windows of both lists.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from persona_desktop.adapters.ocr_tesseract import TesseractOcr
from persona_desktop.bootstrap import Runtime
from persona_desktop.capture.screen_loop import ScreenCaptureLoop
from persona_desktop.capture.screen_pipeline import ScreenPipeline
from persona_desktop.capture.screen_ports import Frame, Monitor, Pixels, WindowDesc
from persona_desktop.capture.screen_privacy import ExclusionRules
from persona_desktop.domain.model import Kind
from tests.screen_support import StepClock, render_lines

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


def test_a_settled_pass_masks_the_excluded_windows_of_both_lists(runtime: Runtime) -> None:
    """The pipeline blacks out the excluded windows of the list taken after the grab too."""
    pipe = ScreenPipeline(TesseractOcr("eng", 50), RULES)
    result = pipe.process(Frame(MON, picture()), [EDITOR], StepClock().now(), mask_also=[EDITOR, VAULT])
    assert [f.text for f in result.fragments] == [NOTES]
