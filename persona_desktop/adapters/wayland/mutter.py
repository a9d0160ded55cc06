"""The layout of a GNOME desktop from Mutter: `org.gnome.Mutter.DisplayConfig.GetCurrentState`.

The Window Calls extension gives window frames in the stage's coordinates: logical pixels
in Mutter's default "logical" layout mode (a 3840x2160 mode at scale 2 is 1920x1080 there),
device pixels in the "physical" mode. The portal's screenshot is in device pixels. The box
around every logical monitor lets the grabber fit the picture to the window boxes. A reply
that does not describe a layout gives None: the grabber then marks its pictures unplaced,
and exclusions are refused rather than guessed. Not run here (no GNOME Shell on this
machine); tested on replies of the shape Mutter documents
(data/dbus-interfaces/org.gnome.Mutter.DisplayConfig.xml), on a private bus.
"""

from __future__ import annotations

import logging
import math

from jeepney import DBusAddress

from persona_desktop.adapters.wayland.dbus import DBusCallError, DBusReplyError, SessionBus, vardict
from persona_desktop.adapters.wayland.sway import MAX_COORD
from persona_desktop.ports.screen import Box, bounds

log = logging.getLogger(__name__)

DISPLAY_CONFIG = DBusAddress(
    "/org/gnome/Mutter/DisplayConfig", "org.gnome.Mutter.DisplayConfig", "org.gnome.Mutter.DisplayConfig"
)
LOGICAL, PHYSICAL = 1, 2  # layout modes
MAX_MONITORS = 64

Spec = tuple[str, str, str, str]  # connector, vendor, product, serial


def current_layout(bus: SessionBus) -> Box | None:
    """The desktop's layout in the coordinates of window frames, or None when unknown."""
    try:
        return parse_state(bus.call(DISPLAY_CONFIG, "GetCurrentState"))
    except (DBusCallError, DBusReplyError) as exc:
        log.debug("Mutter's display layout is unknown: %s", exc)
        return None


def _int(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or abs(value) > MAX_COORD:
        return None
    return value


def _spec(value: object) -> Spec | None:
    if isinstance(value, tuple) and len(value) == 4 and all(isinstance(v, str) for v in value):
        return (value[0], value[1], value[2], value[3])
    return None


def _current_sizes(monitors: object) -> dict[Spec, tuple[int, int]]:
    """Each listed monitor's current mode (width, height in device pixels)."""
    sizes: dict[Spec, tuple[int, int]] = {}
    if not isinstance(monitors, list) or len(monitors) > MAX_MONITORS:
        return sizes
    for monitor in monitors:
        if not isinstance(monitor, tuple) or len(monitor) != 3 or not isinstance(monitor[1], list):
            continue
        spec = _spec(monitor[0])
        for mode in monitor[1][:1000]:
            if not isinstance(mode, tuple) or len(mode) != 7:
                continue
            try:
                current = vardict(mode[6], "mode").get("is-current") is True
            except DBusReplyError:
                continue
            w, h = _int(mode[1]), _int(mode[2])
            if spec is not None and current and w and h and w > 0 and h > 0:
                sizes[spec] = (w, h)
    return sizes


def _logical_box(item: object, sizes: dict[Spec, tuple[int, int]], mode: int) -> Box | None:
    if not isinstance(item, tuple) or len(item) != 7 or not isinstance(item[5], list) or not item[5]:
        return None
    x, y, scale, transform = _int(item[0]), _int(item[1]), item[2], _int(item[3])
    if x is None or y is None or transform is None or not 0 <= transform <= 7:
        return None
    if not isinstance(scale, float) or not math.isfinite(scale) or not 0.25 <= scale <= 10:
        return None
    spec = _spec(item[5][0])  # mirrored monitors share one size
    if spec is None or spec not in sizes:
        return None
    w, h = sizes[spec]
    if transform % 2 == 1:  # turned by 90 or 270 degrees
        w, h = h, w
    if mode == LOGICAL:
        w, h = round(w / scale), round(h / scale)
    return (x, y, x + w, y + h)


def parse_state(reply: object) -> Box | None:
    """The box around every logical monitor from GetCurrentState's reply
    (serial, monitors, logical_monitors, properties), or None."""
    if not isinstance(reply, tuple) or len(reply) != 4 or not isinstance(reply[2], list):
        return None
    try:
        mode = vardict(reply[3], "properties").get("layout-mode", LOGICAL)
    except DBusReplyError:
        return None
    if isinstance(mode, bool) or mode not in (LOGICAL, PHYSICAL):
        return None
    if not reply[2] or len(reply[2]) > MAX_MONITORS:
        return None
    sizes = _current_sizes(reply[1])
    boxes = [_logical_box(item, sizes, int(mode)) for item in reply[2]]
    if any(b is None for b in boxes):
        return None  # a layout with a monitor left out would place windows wrongly
    return bounds(b for b in boxes if b is not None)
