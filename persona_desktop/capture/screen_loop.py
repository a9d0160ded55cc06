"""The screen capture loop: a plain thread the tray app starts, pauses, resumes and stops.

Qt-free. Every `interval` it grabs each monitor (the time is taken at grab time), runs
the pipeline and stores what is new in one transaction. `stop()` wakes the thread at
once; a running Tesseract call (well under a second) is the longest it can take, and
what that call read is then dropped, not stored. Events are reported through
`on_event`, called on the capture thread: a Qt receiver must hop to the GUI thread
(a queued signal does that).

Where exclusions cannot hold (no window list on this desktop) or periodic screenshots
would disturb the owner (GNOME flashes on each one), `periodic_reason` says so and the
loop only captures when asked (`capture_now`). An all-black grab is never stored and
stops the loop with a message (see `screen_black`); so does a window list that fails
for a pass: that pass is skipped, never captured without its exclusions. The window list
is read before and after each grab: when the focus or an excluded window changed in
between (appeared, vanished, moved), the grab is dropped ("unsettled"); otherwise the
excluded windows of both lists are blacked out.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from persona_desktop.capture.screen_black import BLACK_MESSAGE, BlackWatch, is_all_black
from persona_desktop.capture.screen_pipeline import CaptureResult, ScreenPipeline
from persona_desktop.capture.screen_privacy import SELF, ExclusionRules, PauseState, covered
from persona_desktop.domain.model import NewFragment, SourceInfo
from persona_desktop.errors import CapturePermissionError, CaptureUnavailableError, PersonaError
from persona_desktop.ports import Clock, UnitOfWorkFactory
from persona_desktop.ports.screen import ScreenGrabber, WindowDesc, WindowInfo
from persona_desktop.services.ingest import ingest

log = logging.getLogger(__name__)

MAINTENANCE_EVERY = timedelta(hours=1)
SELF_RETRY_S = 1.0  # a capture asked for while the app's own notification shows: tried again


@dataclass(frozen=True, slots=True)
class ScreenEvent:
    kind: str  # started | mode | captured | paused | resumed | error | stopped
    at: datetime
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class LoopStatus:
    state: str  # stopped | running | paused | error
    paused_until: datetime | None = None
    last_grab_at: datetime | None = None
    last_error: str | None = None
    frames: int = 0
    unchanged: int = 0
    excluded: int = 0
    ocr_runs: int = 0
    fragments: int = 0
    periodic: bool = True
    periodic_reason: str | None = None  # why only capture on demand works
    passes: int = 0  # passes the loop began (a paused one too)
    idle: int = 0  # times the loop went to wait for its next pass or a request


Sources = list[tuple[SourceInfo, list[NewFragment]]]


def _window_list(windows: WindowInfo) -> list[WindowDesc] | None:
    """The windows, or None when the list could not be read (the pass is then skipped)."""
    try:
        return windows.windows()
    except Exception:
        log.debug("window list failed", exc_info=True)
        return None


def _active(windows: list[WindowDesc]) -> tuple[str, str, int] | None:
    w = next((w for w in windows if w.active), None)
    return None if w is None else (w.app, w.title, w.wid)


def own_cover(results: list[CaptureResult]) -> bool:
    """Nothing of a pass was read because something of the app's own was in front (its
    notification, its focused window): a capture the owner asked for is tried again."""
    return bool(results) and all(r.reason == SELF for r in results)


def _unsettled(before: list[WindowDesc], after: list[WindowDesc], rules: ExclusionRules) -> str | None:
    """Why a grab between these two window lists cannot be trusted to fit either, or None.

    An unfocused excluded window (the app's own ones too) that appeared, vanished or moved
    between them may sit in the pixels where neither list would mask it."""
    if _active(after) != _active(before):
        return "the focus moved during the grab"
    if rules.placement(after) != rules.placement(before):
        return "an excluded window appeared, vanished or moved during the grab"
    return None


class ScreenCaptureLoop:
    def __init__(
        self,
        *,
        grabber_factory: Callable[[], ScreenGrabber],
        window_info_factory: Callable[[], WindowInfo],
        pipeline: ScreenPipeline,
        uow_factory: UnitOfWorkFactory,
        clock: Clock,
        interval_s: float = 10.0,
        maintenance: Callable[[datetime], None] | None = None,
        on_event: Callable[[ScreenEvent], None] | None = None,
        periodic_reason: Callable[[ScreenGrabber, WindowInfo], str | None] | None = None,
        advice: str = "",
    ) -> None:
        """`periodic_reason(grabber, windows)` is asked once they are open: a reason means
        capture on demand only. `advice` (what works on this desktop) ends fatal messages."""
        self._grabber_factory = grabber_factory
        self._window_info_factory = window_info_factory
        self.pipeline = pipeline
        self._uow = uow_factory
        self._clock = clock
        self.interval_s = interval_s
        self._maintenance = maintenance
        self._on_event = on_event
        self._periodic_reason = periodic_reason
        self._advice = advice
        self._black = BlackWatch()
        self._windows_failing = False
        self._skipping = False
        self._pause = PauseState()
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._force = threading.Event()
        self._lock = threading.RLock()
        self._thread: threading.Thread | None = None
        self._status = LoopStatus("stopped")
        self._last_maintenance: datetime | None = None

    # --- control (any thread) -----------------------------------------------------------

    def start(self) -> None:
        with self._lock:
            if self._thread is not None and self._thread.is_alive():
                return
            self._stop.clear()
            self._wake.clear()
            self._thread = threading.Thread(target=self._run, name="screen-capture", daemon=True)
            self._set(
                state="paused" if self._pause.is_paused(self._clock.now()) else "running", last_error=None
            )
            self._thread.start()

    def stop(self, timeout: float = 2.0) -> bool:
        """Stop at once; True when the thread has ended within `timeout` (0: do not wait)."""
        self._stop.set()
        self._wake.set()
        thread = self._thread
        if thread is not None and thread.is_alive() and thread is not threading.current_thread():
            if timeout > 0:
                thread.join(timeout)
            return not thread.is_alive()
        return True

    def pause(self, duration: timedelta | None = None) -> datetime | None:
        """Grab nothing for `duration` (None: until `resume()`); returns the deadline."""
        now = self._clock.now()
        until = self._pause.pause(now, duration)
        self._set(state="paused", paused_until=until)
        self._emit("paused", {"until": until.isoformat() if until else None})
        self._wake.set()
        return until

    def resume(self) -> None:
        self._pause.resume()
        self._set(state="running" if self.is_running else "stopped", paused_until=None)
        self._emit("resumed", {})
        self._wake.set()

    def capture_now(self) -> None:
        """Grab and OCR every monitor now, changed or not (unless paused)."""
        self._force.set()
        self._wake.set()

    @property
    def is_running(self) -> bool:
        return self._thread is not None and self._thread.is_alive() and not self._stop.is_set()

    def status(self) -> LoopStatus:
        with self._lock:
            status = self._status
        paused = self._pause.is_paused(self._clock.now())
        if status.state == "paused" and not paused:
            status = replace(status, state="running" if self.is_running else "stopped", paused_until=None)
        elif paused and status.state == "running":
            status = replace(status, state="paused", paused_until=self._pause.until)
        return status

    # --- the thread ---------------------------------------------------------------------

    def _run(self) -> None:
        grabber: ScreenGrabber | None = None
        windows: WindowInfo | None = None
        self._emit("started", {})
        try:
            grabber = self._grabber_factory()
            windows = self._window_info_factory()
            periodic = self._decide_mode(grabber, windows)
            next_at = time.monotonic() if periodic else float("inf")
            while not self._stop.is_set():
                wait = next_at - time.monotonic()
                if wait > 0 and not self._force.is_set():
                    self._set(idle=self._status.idle + 1)
                    self._wake.wait(wait if periodic else None)
                self._wake.clear()
                if self._stop.is_set():
                    break
                if time.monotonic() < next_at and not self._force.is_set():
                    continue  # woken by pause/resume: just re-check the state
                if periodic:
                    next_at = time.monotonic() + self.interval_s
                force = self._force.is_set()
                self._force.clear()
                self._set(passes=self._status.passes + 1)
                try:
                    results = self.tick(grabber, windows, force=force)
                    if force and own_cover(results):
                        # the owner asked, while something of the app's own was on screen
                        # (a notification): read the screen once it is gone
                        self._force.set()
                        self._stop.wait(SELF_RETRY_S)
                except CaptureUnavailableError:
                    raise
                except Exception as exc:  # a store or OCR hiccup: report it, try again next time
                    log.exception("screen capture pass failed")
                    self._set(last_error=str(exc))
                    self._emit("error", {"message": f"screen capture pass failed: {exc}"})
        except CapturePermissionError as exc:
            self._fail(str(exc), refused=True)
        except CaptureUnavailableError as exc:
            self._fail(str(exc))
        except Exception as exc:  # a bug: report it, do not kill the app
            log.exception("screen capture loop crashed")
            self._fail(f"screen capture stopped: {exc!r}")
        finally:
            for closable in (windows, grabber):
                if closable is not None:
                    try:
                        closable.close()
                    except Exception:
                        log.debug("close failed", exc_info=True)
            with self._lock:
                if self._status.state != "error":
                    self._status = replace(self._status, state="stopped")
            self._emit("stopped", {})

    def _decide_mode(self, grabber: ScreenGrabber, windows: WindowInfo) -> bool:
        reason = self._periodic_reason(grabber, windows) if self._periodic_reason is not None else None
        self._set(periodic=reason is None, periodic_reason=reason)
        if reason is not None:
            self._emit("mode", {"periodic": False, "reason": reason})
        return reason is None

    def tick(self, grabber: ScreenGrabber, windows: WindowInfo, force: bool = False) -> list[CaptureResult]:
        """One pass over every monitor (public so tests and benchmarks can drive it)."""
        now = self._clock.now()
        if self._pause.is_paused(now):
            self._set(state="paused", paused_until=self._pause.until)
            return []
        if self._status.state == "paused":
            self._set(state="running", paused_until=None)
        self._maybe_maintain(now)
        results: list[CaptureResult] = []
        sources: Sources = []
        window_list = self._windows_or_skip(windows)
        if window_list is None:
            return []
        if covered(window_list):  # something of the app's own shows where nobody can place it
            results = [CaptureResult(0, "excluded", reason=SELF)]  # nothing grabbed at all
            self._count(results, 0, now)
            self._emit("captured", {"monitors": ["excluded"], "fragments": 0})
            return results
        black = 0
        for monitor in grabber.monitors():
            if self._interrupted():
                return []
            at = self._clock.now()  # grab time, per monitor
            frame = grabber.grab(monitor)
            if is_all_black(frame):
                black += 1
                results.append(CaptureResult(monitor.index, "black"))
                continue
            after = self._windows_or_skip(windows)
            if after is None:
                return []
            if covered(after):  # the app's own cover went up during the grab: grab no more
                results.append(CaptureResult(monitor.index, "excluded", reason=SELF))
                break
            unsettled = _unsettled(window_list, after, self.pipeline.rules)
            if unsettled is not None:  # the exclusions checked may not fit the pixels
                results.append(CaptureResult(monitor.index, "unsettled", reason=unsettled))
                window_list = after
                continue
            try:
                result = self.pipeline.process(
                    frame, window_list, at, force=force, remember=False, mask_also=after
                )
            except CaptureUnavailableError:
                raise
            except PersonaError as exc:
                self._set(last_error=str(exc))
                self._emit("error", {"message": str(exc), "monitor": monitor.index})
                continue
            results.append(result)
            if result.source is not None:
                sources.append((result.source, result.fragments))
        if self._interrupted():
            return []
        self._say_skipped(results)
        if self._black.saw(bool(results) and black == len(results)):
            raise CaptureUnavailableError(BLACK_MESSAGE)
        added = 0
        if sources:
            try:
                added = sum(r.added for r in ingest(self._uow, sources, now))
            except Exception:
                self.pipeline.forget_frames()  # read again next time
                raise
        for result in results:
            self.pipeline.remember(result, now)
        self._count(results, added, now)
        self._emit(
            "captured",
            {"monitors": [r.status for r in results], "fragments": added},
        )
        return results

    # --- helpers ------------------------------------------------------------------------

    def _windows_or_skip(self, windows: WindowInfo) -> list[WindowDesc] | None:
        """The window list; None (skip the pass) when it cannot be read: exclusions first."""
        window_list = _window_list(windows)
        if window_list is None:
            if not self._windows_failing:
                self._windows_failing = True
                message = "the window list could not be read; screen capture skips passes until it can"
                self._set(last_error=message)
                self._emit("error", {"message": message})
            return None
        self._windows_failing = False
        return window_list

    def _say_skipped(self, results: list[CaptureResult]) -> None:
        """Passes the pipeline would not read (exclusions could not be placed): said once a streak."""
        reason = next((r.reason for r in results if r.status == "skipped"), None)
        if reason is None:
            self._skipping = False
            return
        if not self._skipping:
            self._skipping = True
            message = f"screen capture skips passes: {reason}"
            self._set(last_error=message)
            self._emit("error", {"message": message})

    def _interrupted(self) -> bool:
        """Stopped or paused mid-pass: what was read is dropped, and forgotten."""
        if self._stop.is_set() or self._pause.is_paused(self._clock.now()):
            self.pipeline.forget_frames()
            return True
        return False

    def _count(self, results: list[CaptureResult], added: int, now: datetime) -> None:
        with self._lock:
            s = self._status
            self._status = replace(
                s,
                last_grab_at=now,
                frames=s.frames + len(results),
                unchanged=s.unchanged + sum(r.status == "unchanged" for r in results),
                excluded=s.excluded + sum(r.status == "excluded" for r in results),
                ocr_runs=s.ocr_runs + sum(r.status == "ocr" for r in results),
                fragments=s.fragments + added,
            )

    def _maybe_maintain(self, now: datetime) -> None:
        if self._maintenance is None:
            return
        if self._last_maintenance is not None and now - self._last_maintenance < MAINTENANCE_EVERY:
            return
        self._last_maintenance = now
        try:
            self._maintenance(now)
        except PersonaError as exc:
            self._emit("error", {"message": f"retention: {exc}"})

    def _set(self, **changes: Any) -> None:
        with self._lock:
            self._status = replace(self._status, **changes)

    def _fail(self, message: str, refused: bool = False) -> None:
        if self._advice:
            message = f"{message}. {self._advice}"
        self._set(state="error", last_error=message)
        self._emit("error", {"message": message, "fatal": True, "refused": refused})

    def _emit(self, kind: str, data: dict[str, Any]) -> None:
        if self._on_event is None:
            return
        try:
            self._on_event(ScreenEvent(kind, self._clock.now(), data))
        except Exception:
            log.exception("screen event handler failed")
