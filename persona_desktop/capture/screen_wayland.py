"""A whole-desktop grabber for Wayland: one picture of every output per pass, in the
compositor's logical coordinates, so that window boxes from the compositor fit the pixels.

The portal and grim return the whole layout at once. On a HiDPI desktop the picture is
larger than the layout (each logical pixel is `scale` device pixels); it is then resized to
the layout, so an excluded window's box masks exactly that window. Without a known layout,
or when the picture is not the layout at one scale, the picture is used as it comes (one
monitor at 0,0) and marked `unplaced`: window boxes may not fit it, so the pipeline reads
nothing while an excluded window is listed.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from PIL import Image

from persona_desktop.ports.screen import Box, DesktopShooter, Frame, Monitor, Pixels

Layout = Callable[[], Box | None]

MIN_SIDE = 16  # px: a "desktop" smaller than this is no desktop
NO_LAYOUT = "the desktop's layout and scale are unknown, so window boxes cannot be placed on the screenshot"


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
            self._last = Monitor(1, 0, 0, width, height)
            return Frame(self._last, rgb, unplaced=NO_LAYOUT)
        mon = Monitor(1, box[0], box[1], box[2] - box[0], box[3] - box[1])
        if (width, height) == (mon.width, mon.height):
            self._last = mon
            return Frame(mon, rgb)
        if not one_scale(width, height, mon.width, mon.height):
            self._last = Monitor(1, box[0], box[1], width, height)
            why = f"the screenshot ({width}x{height}) is not the desktop's layout ({mon.width}x{mon.height}) at one scale"
            return Frame(self._last, rgb, unplaced=why)
        self._last = mon
        return Frame(mon, fit(rgb, mon.width, mon.height))

    def _known_layout(self) -> Box | None:
        box = self._layout() if self._layout is not None else None
        if box is None or box[2] - box[0] < MIN_SIDE or box[3] - box[1] < MIN_SIDE:
            return None
        return box

    def close(self) -> None:
        self.shooter.close()


def one_scale(width: int, height: int, layout_w: int, layout_h: int) -> bool:
    """Whether a width x height picture is the layout at one scale (both sides by the same
    factor, within a device pixel of rounding)."""
    k = width / layout_w
    return abs(height - layout_h * k) <= max(1.0, k)


def fit(rgb: Pixels, width: int, height: int) -> Pixels:
    """Resize to the layout's logical size (a HiDPI picture shrinks by its scale)."""
    img = Image.fromarray(rgb, mode="RGB").resize((width, height), Image.Resampling.BOX)
    return np.asarray(img)
