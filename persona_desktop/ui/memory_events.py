"""One "memory changed" signal, after Anki's `operation_did_execute`.

Every write the app makes (a decision, a revert, an undo, a forgotten source, deleted
captures, a sleep run or a chat review that proposed or applied something, a chat
turn) is announced once, here, after it committed. The windows, the tray count and the
Markdown export follow it; no window wires another by hand. The one who made the change
is named (`origin`), so a window that already shows its own change skips it, as Anki's
handlers skip their own `handler`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from PySide6.QtCore import QObject, Signal


@dataclass(frozen=True)
class MemoryChange:
    """What a write may have changed; a listener reloads only what it shows."""

    facts: bool = False  # applied, reverted or restored facts (memory browser, export)
    candidates: bool = False  # what waits for review (review window, tray count)
    captured: bool = False  # stored or deleted captures (search, the history backlog)
    origin: object | None = None  # who made it: a window skips its own change

    def by(self, origin: object | None) -> MemoryChange:
        return replace(self, origin=origin)


DECIDED = MemoryChange(facts=True, candidates=True)
"""A decision on a proposal: approve, reject, edit, undo."""
REVERTED = MemoryChange(facts=True)
"""A fact taken out of memory (or back in, by undo)."""
FORGOTTEN = MemoryChange(facts=True, candidates=True, captured=True)
"""A source or a day forgotten: its facts reverted, its captures deleted."""
CAPTURED_DELETED = MemoryChange(candidates=True, captured=True)
"""Captured data deleted (Settings); what is remembered stays."""
CAPTURED = MemoryChange(captured=True)
"""Something new was captured on the owner's word (a chat turn, "Capture this screen now")."""


class MemoryEvents(QObject):
    """The app's one change signal; emitted on the GUI thread, after the write committed."""

    changed = Signal(object)  # MemoryChange

    def announce(self, change: MemoryChange) -> None:
        self.changed.emit(change)
