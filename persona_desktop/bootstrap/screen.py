"""Wiring of screen capture from the settings: the loop for the tray app, files for the CLI.

Part of the Qt-free composition root: it picks the concrete adapters (mss or the Wayland
grabbers, Tesseract, the window readers), so only composition roots (`app.py`, `cli/`)
import it; the ui gets the loop handed in. Which grabber and window source: mss and X11
on X11; on Wayland the desktop portal (grim on wlroots when the portal has no
Screenshot) and the compositor's own window list (sway, Hyprland, KWin, GNOME's Window
Calls extension). Where no window list exists, periodic capture stays off.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import cast

from persona_desktop.adapters.ocr_tesseract import TesseractOcr
from persona_desktop.adapters.screen_mss import MssGrabber
from persona_desktop.bootstrap import Runtime
from persona_desktop.bootstrap.screen_support import screen_support
from persona_desktop.capture.screen_black import BLACK_MESSAGE, is_all_black
from persona_desktop.capture.screen_desktop import (
    GNOME_NO_EXTENSION,
    NO_WINDOWS_REASON,
    ScreenSupport,
    Session,
    WindowSource,
)
from persona_desktop.capture.screen_files import FileOutcome, ingest_images
from persona_desktop.capture.screen_images import purge_expired_images, screen_image_dir
from persona_desktop.capture.screen_loop import ScreenCaptureLoop, ScreenEvent
from persona_desktop.capture.screen_once import OnceOutcome
from persona_desktop.capture.screen_pipeline import ScreenPipeline
from persona_desktop.capture.screen_privacy import ExclusionRules, WithOwnWindows
from persona_desktop.capture.screen_wayland import WholeDesktopGrabber
from persona_desktop.config import Settings
from persona_desktop.domain.model import Kind
from persona_desktop.errors import CaptureUnavailableError, PersonaError
from persona_desktop.ports import MediaFiles, UnitOfWorkFactory
from persona_desktop.ports.screen import (
    Box,
    DesktopShooter,
    NoWindowInfo,
    OcrEngine,
    OwnWindows,
    ScreenGrabber,
    WindowInfo,
)
from persona_desktop.services.screen_retention import purge_expired_fragments


def _uow(runtime: Runtime) -> UnitOfWorkFactory:
    return cast(UnitOfWorkFactory, runtime.uow)


def build_ocr(settings: Settings) -> TesseractOcr:
    capture = settings.values.capture
    return TesseractOcr(capture.ocr_languages, capture.ocr_min_confidence)


def build_pipeline(
    settings: Settings, data_dir: Path, ocr: OcrEngine | None = None, media: MediaFiles | None = None
) -> ScreenPipeline:
    capture = settings.values.capture
    keep = capture.keep_images
    return ScreenPipeline(
        ocr if ocr is not None else build_ocr(settings),
        ExclusionRules.of(capture.exclude_apps, capture.exclude_titles),
        max_gap=timedelta(seconds=capture.max_gap_seconds),
        image_dir=screen_image_dir(data_dir) if keep else None,
        media=media,
    )


log = logging.getLogger(__name__)


def window_info_factory() -> WindowInfo:
    """X11 and Windows expose window titles; elsewhere (macOS for now) frames carry none."""
    if sys.platform.startswith("linux"):
        from persona_desktop.adapters.window_x11 import X11WindowInfo

        return X11WindowInfo()
    if sys.platform == "win32":
        from persona_desktop.adapters.window_win32 import Win32WindowInfo

        return Win32WindowInfo()
    return NoWindowInfo()


def _wayland_source(source: WindowSource) -> WindowInfo:
    """The compositor's window list; CaptureUnavailableError when it does not answer."""
    if source is WindowSource.SWAY:
        from persona_desktop.adapters.wayland.sway import SwayWindows

        return SwayWindows()
    if source is WindowSource.HYPRLAND:
        from persona_desktop.adapters.wayland.hyprland import HyprlandWindows

        return HyprlandWindows()
    if source is WindowSource.KWIN:
        from persona_desktop.adapters.wayland.kwin import KWinWindows

        return KWinWindows()
    from persona_desktop.adapters.wayland.gnome import GnomeWindowCalls

    try:
        return GnomeWindowCalls()
    except CaptureUnavailableError as exc:
        raise CaptureUnavailableError(f"{GNOME_NO_EXTENSION} ({exc})") from None


ANSWER_TIMEOUT_S = 60.0  # the first screenshot may wait for the owner's answer to the desktop


def _shooter(name: str, answer_timeout: bool = False) -> DesktopShooter:
    if name == "portal":
        from persona_desktop.adapters.wayland.portal import SHOT_TIMEOUT_S, PortalShooter

        return PortalShooter(timeout_s=ANSWER_TIMEOUT_S if answer_timeout else SHOT_TIMEOUT_S)
    from persona_desktop.adapters.wayland.grim import GrimShooter

    return GrimShooter()


class DesktopCapture:
    """The grabber and window source of one capture run, chosen for this desktop.

    The loop opens both on its own thread (D-Bus and X11 connections stay on the thread
    that made them) through `grabber` and `windows`, then asks `periodic_reason`."""

    def __init__(
        self, support: ScreenSupport, answer_timeout: bool = False, own_windows: OwnWindows | None = None
    ) -> None:
        """`answer_timeout`: the portal may take as long as a person answering its question.
        `own_windows`: the app's own windows, as the ui knows them: never read."""
        self.support = support
        self.answer_timeout = answer_timeout
        self.own_windows = own_windows
        self.source: WindowInfo = NoWindowInfo()
        self.source_error: str | None = None
        self.grabber_name = ""

    def grabber(self) -> ScreenGrabber:
        if "mss" in self.support.grabbers:
            self.grabber_name = "mss"
            return MssGrabber()
        if not self.support.works:
            raise CaptureUnavailableError(self.support.what_works())
        tried: list[str] = []
        for name in self.support.grabbers:
            try:
                shooter = _shooter(name, self.answer_timeout)
            except CaptureUnavailableError as exc:
                tried.append(str(exc))
                continue
            self.grabber_name = name
            return WholeDesktopGrabber(shooter, self.layout)
        raise CaptureUnavailableError("; ".join(tried))

    def windows(self) -> WindowInfo:
        """X11/Win32 as before; on Wayland the compositor's list, or none (with the reason);
        with the app's own windows added, to be masked."""
        source = self._source()
        return source if self.own_windows is None else WithOwnWindows(source, self.own_windows)

    def _source(self) -> WindowInfo:
        if self.support.desktop.session is not Session.WAYLAND:
            self.source = window_info_factory()
            return self.source
        if self.support.windows is None:
            self.source_error = NO_WINDOWS_REASON
            return self.source
        try:
            self.source = _wayland_source(self.support.windows)
        except CaptureUnavailableError as exc:
            log.info("no window information: %s", exc)
            self.source_error = str(exc)
        return self.source

    def layout(self) -> Box | None:
        layout = getattr(self.source, "layout", None)
        if layout is None:
            return None
        try:
            box = layout()
        except PersonaError:
            log.debug("layout unknown", exc_info=True)
            return None
        return box if isinstance(box, tuple) else None

    def periodic_reason(self, _grabber: ScreenGrabber, _windows: WindowInfo) -> str | None:
        if self.support.periodic_reason is not None:
            return self.support.periodic_reason
        if self.support.desktop.session is Session.WAYLAND and isinstance(self.source, NoWindowInfo):
            return self.source_error or NO_WINDOWS_REASON
        return None


def maintenance(runtime: Runtime) -> Callable[[datetime], None]:
    """Retention of screen text and kept crops, run by the loop about once an hour."""

    def run(now: datetime) -> None:
        s = runtime.settings.values.capture
        purge_expired_fragments(_uow(runtime), Kind.SCREEN, s.text_retention_days, now)
        purge_expired_images(screen_image_dir(runtime.data_dir), now, s.image_retention_days)

    return run


def build_screen_loop(
    runtime: Runtime,
    on_event: Callable[[ScreenEvent], None] | None = None,
    desktop: DesktopCapture | None = None,
    own_windows: OwnWindows | None = None,
) -> ScreenCaptureLoop:
    """The loop the tray app drives. Raises CaptureUnavailableError if Tesseract is missing;
    a missing display is reported when the loop starts (as an `error` event and status).
    `own_windows`: the app's own windows as the ui knows them, never captured."""
    s = runtime.settings
    desktop = desktop or DesktopCapture(screen_support(s), own_windows=own_windows)
    return ScreenCaptureLoop(
        grabber_factory=desktop.grabber,
        window_info_factory=desktop.windows,
        pipeline=build_pipeline(s, runtime.data_dir, media=runtime.media),
        uow_factory=_uow(runtime),
        clock=runtime.clock,
        interval_s=s.values.capture.interval_seconds,
        maintenance=maintenance(runtime),
        on_event=on_event,
        periodic_reason=desktop.periodic_reason,
        advice=desktop.support.advice(),
    )


def capture_once(
    runtime: Runtime,
    on_event: Callable[[ScreenEvent], None] | None = None,
    own_windows: OwnWindows | None = None,
) -> OnceOutcome:
    """Grab, read and store the screen once now, with this desktop's grabber and exclusions
    (the CLI's `capture screen` and the tray's "Capture this screen now"; the tray passes its
    `own_windows`). Raises CaptureUnavailableError (CapturePermissionError when the desktop refused)."""
    desktop = DesktopCapture(screen_support(runtime.settings), own_windows=own_windows)
    loop = build_screen_loop(runtime, on_event, desktop)
    try:
        grabber = desktop.grabber()
        try:
            windows = desktop.windows()
            try:
                results = loop.tick(grabber, windows, force=True)
            finally:
                windows.close()
        finally:
            grabber.close()
    except CaptureUnavailableError as exc:
        raise type(exc)(f"{exc}. {desktop.support.advice()}") from None
    return OnceOutcome(desktop.grabber_name, results, loop.status(), not isinstance(windows, NoWindowInfo))


def probe_screen(settings: Settings) -> str:
    """One screenshot that is never stored: on Wayland it gets the desktop's permission question
    asked (from the focused "Enable screen capture" window) and shows the grab is not black.
    Returns what was seen ("1920x1080 through the desktop portal")."""
    support = screen_support(settings)
    desktop = DesktopCapture(support, answer_timeout=True)
    try:
        grabber = desktop.grabber()
        try:
            monitors = grabber.monitors()
            frame = grabber.grab(monitors[0])
        finally:
            grabber.close()
    except CaptureUnavailableError as exc:
        raise type(exc)(f"{exc}. {support.advice()}") from None
    if is_all_black(frame):
        raise CaptureUnavailableError(f"{BLACK_MESSAGE}. {support.advice()}")
    height, width = frame.pixels.shape[:2]
    via = {"portal": "the desktop portal", "grim": "grim", "mss": "X11"}.get(desktop.grabber_name, "")
    return f"{width}x{height} through {via}"


# --- `ingest screen IMAGE...` ------------------------------------------------------------


def ingest_screen_files(
    runtime: Runtime, paths: Sequence[Path], pipeline: ScreenPipeline | None = None
) -> list[FileOutcome]:
    """OCR each image as one capture and store it (`capture.screen_files.ingest_images`)."""
    pipe = pipeline or build_pipeline(runtime.settings, runtime.data_dir, media=runtime.media)
    return ingest_images(_uow(runtime), runtime.clock, pipe, paths)
