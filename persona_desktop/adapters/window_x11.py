"""Window titles, classes and owning processes on X11 through libX11 (ctypes), for exclusions
and provenance.

The active window is `_NET_ACTIVE_WINDOW` when a window manager sets it; without one
(bare Xvfb), the focused window, else the topmost viewable one. Windows come from
`_NET_CLIENT_LIST_STACKING` when present, else from the root's children (bottom to top).
X errors (a window closing between two calls) are ignored instead of exiting the process.
"""

from __future__ import annotations

import ctypes
import os
from ctypes import byref, c_int, c_uint, c_ulong, c_void_p

from persona_desktop.adapters.x11_lib import (
    ANY_PROPERTY_TYPE,
    IS_VIEWABLE,
    Atom,
    Window,
    XWindowAttributes,
    load_x11,
)
from persona_desktop.errors import CaptureUnavailableError
from persona_desktop.ports.screen import WindowDesc


class X11WindowInfo:
    """Use from one thread (the capture thread); it owns one X connection."""

    def __init__(self, display: str | None = None) -> None:
        name = display or os.environ.get("DISPLAY")
        if not name:
            raise CaptureUnavailableError("window titles need an X11 display, and DISPLAY is not set")
        self._x = load_x11()
        self._dpy = self._x.XOpenDisplay(name.encode())
        if not self._dpy:
            raise CaptureUnavailableError(f"cannot open the X11 display {name}")
        self._root = self._x.XDefaultRootWindow(self._dpy)
        self._atoms: dict[str, int] = {}

    def close(self) -> None:
        if self._dpy:
            self._x.XCloseDisplay(self._dpy)
            self._dpy = None

    def _atom(self, name: str) -> int:
        if name not in self._atoms:
            self._atoms[name] = int(self._x.XInternAtom(self._dpy, name.encode(), 0))
        return self._atoms[name]

    def _prop(self, win: int, name: str) -> tuple[int, bytes, int] | None:
        """(format, raw bytes, item count) of a window property, or None."""
        actual_type, actual_format = Atom(), c_int()
        nitems, after, data = c_ulong(), c_ulong(), c_void_p()
        status = self._x.XGetWindowProperty(
            self._dpy, win, self._atom(name), 0, 1 << 16, 0, ANY_PROPERTY_TYPE,
            byref(actual_type), byref(actual_format), byref(nitems), byref(after), byref(data),
        )  # fmt: skip
        if status != 0 or not data.value:
            return None
        try:
            fmt, n = actual_format.value, nitems.value
            # 32-bit items come back as C longs
            size = n * (ctypes.sizeof(c_ulong) if fmt == 32 else fmt // 8)
            return fmt, ctypes.string_at(data.value, size), n
        finally:
            self._x.XFree(data)

    def _windows_prop(self, win: int, name: str) -> list[int]:
        got = self._prop(win, name)
        if got is None or got[0] != 32:
            return []
        _, raw, n = got
        return list((c_ulong * n).from_buffer_copy(raw))

    def _text(self, win: int, name: str) -> str:
        got = self._prop(win, name)
        if got is None or got[0] != 8:
            return ""
        return got[1].decode("utf-8", "replace").strip("\0")

    def _title(self, win: int) -> str:
        return self._text(win, "_NET_WM_NAME") or self._text(win, "WM_NAME")

    def _app(self, win: int) -> str:
        got = self._prop(win, "WM_CLASS")
        if got is None or got[0] != 8:
            return ""
        parts = [p.decode("utf-8", "replace") for p in got[1].split(b"\0") if p]
        return parts[-1] if parts else ""  # the class ("Firefox"), not the instance

    def _children(self, win: int) -> list[int]:
        root, parent, children, n = Window(), Window(), c_void_p(), c_uint()
        if not self._x.XQueryTree(self._dpy, win, byref(root), byref(parent), byref(children), byref(n)):
            return []
        try:
            if not children.value:
                return []
            return list((Window * n.value).from_address(children.value))
        finally:
            if children.value:
                self._x.XFree(children)

    def _client(self, win: int, depth: int = 0) -> int | None:
        """The window carrying WM_CLASS: itself or, under a reparenting WM, a descendant."""
        if self._prop(win, "WM_CLASS") is not None:
            return win
        if depth >= 2:
            return None
        for child in self._children(win):
            found = self._client(child, depth + 1)
            if found is not None:
                return found
        return None

    def _geometry(self, win: int) -> tuple[int, int, int, int, bool] | None:
        attrs = XWindowAttributes()
        if not self._x.XGetWindowAttributes(self._dpy, win, byref(attrs)):
            return None
        x, y, child = c_int(), c_int(), Window()
        self._x.XTranslateCoordinates(self._dpy, win, self._root, 0, 0, byref(x), byref(y), byref(child))
        viewable = attrs.map_state == IS_VIEWABLE
        return x.value, y.value, x.value + attrs.width, y.value + attrs.height, viewable

    def windows(self) -> list[WindowDesc]:
        if not self._dpy:
            return []
        stacking = self._windows_prop(self._root, "_NET_CLIENT_LIST_STACKING")
        tops = stacking or self._children(self._root)
        active_prop = self._windows_prop(self._root, "_NET_ACTIVE_WINDOW")
        active = active_prop[0] if active_prop else 0
        if not active:
            focus, revert = Window(), c_int()
            self._x.XGetInputFocus(self._dpy, byref(focus), byref(revert))
            active = focus.value if focus.value > 1 else 0  # 0 = None, 1 = PointerRoot
        found: list[tuple[int, str, str, tuple[int, int, int, int], int | None]] = []
        for top in tops:
            geo = self._geometry(top)
            if geo is None or not geo[4] or geo[2] <= geo[0] or geo[3] <= geo[1]:
                continue
            client = top if stacking else self._client(top)
            if client is None:
                continue
            found.append((client, self._title(client), self._app(client), geo[:4], self._pid(client)))
        ids = {c for c, *_ in found}
        if active not in ids:
            active = found[-1][0] if found else 0
        return [WindowDesc(title, app, box, c == active, c, pid) for c, title, app, box, pid in found]

    def _pid(self, win: int) -> int | None:
        """`_NET_WM_PID`: the process that owns the window (Qt, GTK and most toolkits set it)."""
        got = self._windows_prop(win, "_NET_WM_PID")
        return int(got[0]) if got else None
