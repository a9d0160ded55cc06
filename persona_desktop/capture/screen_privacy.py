"""Which windows are never captured, and whether capture is paused.

Never captured: windows the owner excluded (by application or title), and the app's
own windows, menus and tooltips, recognized by process and app id, not by title: a window
whose `_NET_WM_PID` is this process, a window whose app id (X11 WM_CLASS, Wayland app_id)
is the app's own, which names the tray app's windows to `capture screen` run from another
process (a keyboard shortcut), and every rectangle the ui reports as the app's
(`OwnWindows`). While a notification of the app's may be on screen (drawn by the
desktop's notification server, where the app cannot tell), no frame is read at all.
So nothing the app shows (a proposed statement, an applied fact) comes back as
captured text. On Wayland, where the app cannot place its own windows, the
compositor's window list names them by process; what it cannot place, the frame
is not read while it shows.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from persona_desktop.ports.screen import Box, OwnWindows, WindowDesc, WindowInfo

SELF = "self"  # the exclusion rule that names the app's own windows
OWN_APP = "persona-desktop"  # the app id of every window of the app's (app.py sets it)
_EVERYWHERE: Box = (-(2**30), -(2**30), 2**30, 2**30)

PAUSE_CHOICES: dict[str, timedelta | None] = {
    "15m": timedelta(minutes=15),
    "1h": timedelta(hours=1),
    "until_resumed": None,
}


def is_own(window: WindowDesc, pid: int | None) -> bool:
    """A window of the app's: of process `pid`, or with the app's own app id."""
    return (window.pid is not None and window.pid == pid) or window.app.lower() == OWN_APP


@dataclass(frozen=True, slots=True)
class ExclusionRules:
    """Apps match the window class (exactly or as a word), titles by substring; both case-insensitive."""

    apps: tuple[str, ...]
    titles: tuple[str, ...]
    own_pid: int | None = field(default_factory=os.getpid)

    @classmethod
    def of(cls, apps: Iterable[str], titles: Iterable[str], own_pid: int | None = None) -> ExclusionRules:
        """`own_pid`: the process whose windows are never read (default: this one)."""
        return cls(
            tuple(a.strip().lower() for a in apps if a.strip()),
            tuple(t.strip().lower() for t in titles if t.strip()),
            os.getpid() if own_pid is None else own_pid,
        )

    def excludes(self, window: WindowDesc) -> str | None:
        """The rule that excludes this window, or None."""
        if is_own(window, self.own_pid):
            return SELF
        app = window.app.lower()
        app_words = set(app.replace(".", " ").replace("-", " ").split()) | {app}
        for rule in self.apps:
            if rule in app_words or (rule and app.startswith(rule)):
                return f"app:{rule}"
        title = window.title.lower()
        for rule in self.titles:
            if rule in title:
                return f"title:{rule}"
        return None

    def excluded(self, windows: Sequence[WindowDesc]) -> list[WindowDesc]:
        return [w for w in windows if self.excludes(w) is not None]

    def placement(self, windows: Sequence[WindowDesc]) -> frozenset[tuple[int, str, Box]]:
        """Which windows are excluded (the app's own among them), and where: two window lists
        with another placement mean an excluded window appeared, vanished or moved between them."""
        return frozenset((w.wid, w.app, w.box) for w in windows if self.excludes(w) is not None)


class WithOwnWindows:
    """A window source that also lists the app's own windows, as the ui reports them.

    They come last (on top), owned by this process, so the exclusion rules black
    them out like any excluded window. The app's window (`is_own`) that has the focus is
    masked, not reported active: the owner working in the review window does not
    stop the capture of the other windows. When something of the app's is on screen
    at a place nobody can tell (a notification, drawn by the desktop; on Wayland a menu
    or tooltip, or a window the compositor's list does not name by process), one window
    covering every monitor is reported active: the whole frame is dropped unread.
    """

    def __init__(self, inner: WindowInfo, own: OwnWindows, pid: int | None = None) -> None:
        self._inner = inner
        self._own = own
        self._pid = os.getpid() if pid is None else pid

    def windows(self) -> list[WindowDesc]:
        listed = [replace(w, active=False) if is_own(w, self._pid) else w for w in self._inner.windows()]
        mine = self._own.screen()
        named = any(w.pid == self._pid for w in listed)  # the window source knows ours by process
        unplaced = not mine.placed and (mine.popups or (mine.windows and not named))
        if mine.notification or unplaced:
            cover = WindowDesc("persona-desktop", OWN_APP, _EVERYWHERE, active=True, pid=self._pid)
            return [replace(w, active=False) for w in listed] + [cover]
        if not mine.placed:
            return listed
        return listed + [WindowDesc("", OWN_APP, box, pid=self._pid) for box in mine.boxes]

    def close(self) -> None:
        self._inner.close()


def covered(windows: Sequence[WindowDesc]) -> bool:
    """The app's own cover is up (see `WithOwnWindows`): the loop grabs nothing at all."""
    return any(w.active and w.app == OWN_APP and w.box == _EVERYWHERE for w in windows)


class PauseState:
    """Thread-safe pause: for a while, or until resumed. `None` deadline means indefinitely."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._paused = False
        self._until: datetime | None = None

    def pause(self, now: datetime, duration: timedelta | None) -> datetime | None:
        with self._lock:
            self._paused = True
            self._until = None if duration is None else now + duration
            return self._until

    def resume(self) -> None:
        with self._lock:
            self._paused = False
            self._until = None

    def restore(self, paused: bool, until: datetime | None) -> None:
        with self._lock:
            self._paused, self._until = paused, until

    def is_paused(self, now: datetime) -> bool:
        with self._lock:
            if not self._paused:
                return False
            if self._until is not None and now >= self._until:
                self._paused, self._until = False, None
                return False
            return True

    @property
    def until(self) -> datetime | None:
        with self._lock:
            return self._until if self._paused else None
