"""All-black grabs: a session that hides the screen from this app says so, never silently.

On a Wayland desktop, grabbing through X11 (XWayland) returns black pictures; so do some
remote and locked sessions. Such a frame is never read or stored. The first pass after
start being all black, or `LIMIT` passes in a row (a black full-screen video is a moment,
not a session), switches screen capture off with a message that says why and what works.
"""

from __future__ import annotations

from persona_desktop.ports.screen import Frame

BLACK_LEVEL = 8  # the brightest channel value still counted as black (dithering, noise)
LIMIT = 3

BLACK_MESSAGE = (
    "the screen grab came back all black: this session does not let Persona Desktop see "
    "the screen (on Wayland, grabs through X11/XWayland are black). Screen capture is off"
)


def is_all_black(frame: Frame) -> bool:
    px = frame.pixels
    if px.size == 0:
        return True
    colour = px[:, :, :3] if px.ndim == 3 else px  # BGRA or RGB: the first three are colour
    if int(colour[::7, ::7].max()) > BLACK_LEVEL:  # a sample first: a real screen stops here
        return False
    return int(colour.max()) <= BLACK_LEVEL


class BlackWatch:
    """Counts whole passes in which every monitor was black."""

    def __init__(self, limit: int = LIMIT) -> None:
        self.limit = limit
        self.passes = 0  # passes seen (black or not)
        self.streak = 0

    def reset(self) -> None:
        self.passes = 0
        self.streak = 0

    def saw(self, all_black: bool) -> bool:
        """Record a pass; True when capture must stop."""
        first = self.passes == 0
        self.passes += 1
        self.streak = self.streak + 1 if all_black else 0
        return all_black and (first or self.streak >= self.limit)
