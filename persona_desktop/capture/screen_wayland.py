"""A whole-desktop grabber for Wayland: one picture of every output per pass, in the
compositor's logical coordinates, so that window boxes from the compositor fit the pixels.

The portal and grim return the whole layout at once. On a HiDPI desktop the picture is
larger than the layout (each logical pixel is `scale` device pixels); it is then resized to
the layout, so an excluded window's box masks exactly that window. Without a window source
(no layout known) the picture is used as it comes, as one monitor at 0,0.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from PIL import Image

from persona_desktop.capture.screen_ports import Box, DesktopShooter, Frame, Monitor, Pixels

Layout = Callable[[], Box | None]

MIN_SIDE = 16  # px: a "desktop" smaller than this is no desktop


class WholeDesktopGrabber:
    """The ScreenGrabber port over a DesktopShooter (portal or grim): one monitor, the desktop."""

    def __init__(self, shooter: DesktopShooter, layout: Layout | None = None) -> None:
        self.shooter = shooter
        self._layout = layout
        self._last: Monitor | None = None

    @property
    def name(self) -> str:
        return self.shooter.name

    def monitors(self) -> list[Monitor]:
        box = self._known_layout()
        if box is not None:
            return [Monitor(1, box[0], box[1], box[2] - box[0], box[3] - box[1])]
        return [self._last or Monitor(1, 0, 0, 0, 0)]  # the size is known after the first picture

    def grab(self, monitor: Monitor) -> Frame:
        rgb = self.shooter.take()
        height, width = rgb.shape[:2]
        box = self._known_layout()
        if box is None:
            mon = Monitor(1, 0, 0, width, height)
        else:
            mon = Monitor(1, box[0], box[1], box[2] - box[0], box[3] - box[1])
            if (width, height) != (mon.width, mon.height):
                rgb = fit(rgb, mon.width, mon.height)
        self._last = mon
        return Frame(mon, rgb)

    def _known_layout(self) -> Box | None:
        box = self._layout() if self._layout is not None else None
        if box is None or box[2] - box[0] < MIN_SIDE or box[3] - box[1] < MIN_SIDE:
            return None
        return box

    def close(self) -> None:
        self.shooter.close()


def fit(rgb: Pixels, width: int, height: int) -> Pixels:
    """Resize to the layout's logical size (a HiDPI picture shrinks by its scale)."""
    img = Image.fromarray(rgb, mode="RGB").resize((width, height), Image.Resampling.BOX)
    return np.asarray(img)
