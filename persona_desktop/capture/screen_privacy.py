"""Which windows are never captured, and whether capture is paused."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from persona_desktop.capture.screen_ports import WindowDesc

PAUSE_CHOICES: dict[str, timedelta | None] = {
    "15m": timedelta(minutes=15),
    "1h": timedelta(hours=1),
    "until_resumed": None,
}


@dataclass(frozen=True, slots=True)
class ExclusionRules:
    """Apps match the window class (exactly or as a word), titles by substring; both case-insensitive."""

    apps: tuple[str, ...]
    titles: tuple[str, ...]

    @classmethod
    def of(cls, apps: Iterable[str], titles: Iterable[str]) -> ExclusionRules:
        return cls(
            tuple(a.strip().lower() for a in apps if a.strip()),
            tuple(t.strip().lower() for t in titles if t.strip()),
        )

    def excludes(self, window: WindowDesc) -> str | None:
        """The rule that excludes this window, or None."""
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
