"""What one capture on demand (`capture screen`, the tray's "Capture this screen now") gave."""

from __future__ import annotations

from dataclasses import dataclass

from persona_desktop.capture.screen_loop import LoopStatus, own_cover
from persona_desktop.capture.screen_pipeline import CaptureResult


@dataclass(frozen=True, slots=True)
class OnceOutcome:
    """One capture on demand: what each monitor gave and how many new lines were stored."""

    grabber: str
    results: list[CaptureResult]
    status: LoopStatus
    windows_known: bool

    @property
    def fragments(self) -> int:
        return self.status.fragments

    @property
    def covered(self) -> bool:
        """Nothing read because something of the app's own was in front: worth asking again."""
        return own_cover(self.results)

    def summary(self) -> str:
        excluded = sum(r.status == "excluded" for r in self.results)
        parts = [f"{self.fragments} new line(s) stored"]
        if self.covered:
            parts.append("a window or notification of Persona Desktop's own was in front: nothing read")
        elif excluded:
            parts.append("the active window is excluded: nothing read")
        parts += [f"nothing read: {r.reason}" for r in self.results if r.status in ("skipped", "unsettled")]
        if not self.windows_known:
            parts.append("no window list on this desktop: exclusions could not be checked")
        return f"screen captured ({self.grabber}): " + "; ".join(parts)
