"""Window information on GNOME through the "Window Calls" GNOME Shell extension.

GNOME Shell offers apps no window list; this extension (extensions.gnome.org, "Window
Calls") exports one on D-Bus: `List()` returns JSON with each window's class, workspace
flag, focus and (in older versions) title and frame geometry; newer versions moved title
and geometry to `GetTitle(id)` and `Details(id)`, which are asked when missing. Frames are
in the stage's coordinates; the stage's layout (and so the screenshot's scale) comes from
Mutter (`mutter.py`). Not run here (no GNOME Shell on this machine); the parsing is tested
on replies of that shape.
"""

from __future__ import annotations

import json

from jeepney import DBusAddress

from persona_desktop.adapters.wayland.dbus import DBusCallError, DBusReplyError, SessionBus, expect_str
from persona_desktop.adapters.wayland.mutter import current_layout
from persona_desktop.adapters.wayland.sway import MAX_COORD, MAX_TITLE, UNPLACED, WindowListError
from persona_desktop.errors import CaptureUnavailableError
from persona_desktop.ports.screen import Box, WindowDesc, as_pid

WINDOWS = DBusAddress(
    "/org/gnome/Shell/Extensions/Windows", "org.gnome.Shell", "org.gnome.Shell.Extensions.Windows"
)
DESKTOP_TYPE = 1  # Meta.WindowType.DESKTOP: the wallpaper, not a window
MAX_WINDOWS = 2000


class GnomeWindowCalls:
    def __init__(self, bus: SessionBus | None = None) -> None:
        self._bus = bus or SessionBus()
        try:
            self.windows()
        except (DBusCallError, DBusReplyError, WindowListError) as exc:
            self._bus.close()
            raise CaptureUnavailableError(str(exc)) from None

    def windows(self) -> list[WindowDesc]:
        return parse_list(self._json("List"), self._details)

    def layout(self) -> Box | None:
        """The stage in the coordinates of window frames (logical pixels on a scaled screen),
        from Mutter; None when Mutter does not say (exclusions are then refused)."""
        return current_layout(self._bus)

    def close(self) -> None:
        self._bus.close()

    def _json(self, method: str, *args: int) -> object:
        (text,) = self._bus.call(WINDOWS, method, "u" if args else None, tuple(args))
        try:
            return json.loads(expect_str(text, f"Window Calls {method}", 8_000_000))
        except (ValueError, RecursionError) as exc:
            raise WindowListError(f"Window Calls {method}: not JSON: {exc}") from None

    def _details(self, wid: int) -> dict[str, object]:
        """Title and geometry of one window, from the newer calls."""
        out: dict[str, object] = {}
        details = self._json("Details", wid)
        if isinstance(details, dict):
            out.update(details)
        if "title" not in out:
            (title,) = self._bus.call(WINDOWS, "GetTitle", "u", (wid,))
            out["title"] = expect_str(title, "Window Calls GetTitle", MAX_TITLE * 4)
        return out


def _num(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or abs(value) > MAX_COORD:
        return None
    return round(value)


def parse_list(items: object, details: object = None) -> list[WindowDesc]:
    """`details(id)` fills in title and geometry when `List()` lacks them (newer versions)."""
    if not isinstance(items, list) or len(items) > MAX_WINDOWS:
        raise WindowListError("Window Calls List: not a list of windows")
    out: list[WindowDesc] = []
    for item in items:
        if not isinstance(item, dict) or item.get("in_current_workspace") is False:
            continue
        if item.get("window_type") == DESKTOP_TYPE:
            continue
        w = dict(item)
        wid = _num(w.get("id"))
        if ("x" not in w or "title" not in w) and callable(details) and wid is not None:
            extra = details(wid)
            if isinstance(extra, dict):
                w = {**extra, **{k: v for k, v in w.items() if v is not None}}
        if w.get("minimized") is True:
            continue
        x, y, width, height = (_num(w.get(k)) for k in ("x", "y", "width", "height"))
        if x is None or y is None or not width or not height or width <= 0 or height <= 0:
            raise WindowListError(UNPLACED)
        app = w.get("wm_class") or w.get("wm_class_instance") or ""
        out.append(WindowDesc(str(w.get("title") or "")[:MAX_TITLE], str(app)[:MAX_TITLE],
                              (x, y, x + width, y + height), w.get("focus") is True,
                              wid if wid is not None else 0, as_pid(w.get("pid"))))  # fmt: skip
    return out
