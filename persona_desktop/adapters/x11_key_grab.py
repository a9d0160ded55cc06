"""A desktop-wide key on X11: a passive grab on the root window (the `KeyGrab` port).

The grab lives on its own X connection; `presses` watches that connection's socket, so the
app's worker thread can drain it and stop when cancelled. Wayland has no such grab (its
portal for global shortcuts is not used here): there, and wherever the key cannot be
parsed, making the grab raises a PersonaError that says so.
"""

from __future__ import annotations

import os
import select
from collections.abc import Callable, Iterator
from ctypes import CDLL, c_char_p, c_int, c_uint, c_ulong, c_void_p, create_string_buffer

from persona_desktop.adapters.x11_lib import Window, load_x11
from persona_desktop.errors import PersonaError

KEY_PRESS = 2
GRAB_MODE_ASYNC = 1
_MODIFIERS = {"shift": 1, "ctrl": 4, "control": 4, "alt": 8, "mod1": 8, "meta": 64, "super": 64, "win": 64}
_LOCKS = (0, 2, 16, 2 | 16)  # Caps Lock and Num Lock on or off: the key works either way
_XEVENT_BYTES = 192


def parse_key(text: str) -> tuple[int, str]:
    """'Ctrl+Alt+Space' -> (X modifier mask, key name); a clear error for anything else."""
    parts = [p.strip() for p in text.split("+") if p.strip()]
    if len(parts) < 2:
        raise PersonaError(f"{text!r} is not a shortcut: use modifiers and a key, e.g. Ctrl+Alt+Space")
    mask = 0
    for name in parts[:-1]:
        bit = _MODIFIERS.get(name.lower())
        if bit is None:
            raise PersonaError(f"{name!r} in {text!r} is not a modifier (Ctrl, Shift, Alt, Super)")
        mask |= bit
    return mask, parts[-1]


def _bound_x11() -> CDLL:
    x = load_x11()
    x.XStringToKeysym.restype = c_ulong
    x.XStringToKeysym.argtypes = [c_char_p]
    x.XKeysymToKeycode.restype = c_int
    x.XKeysymToKeycode.argtypes = [c_void_p, c_ulong]
    x.XGrabKey.argtypes = [c_void_p, c_int, c_uint, Window, c_int, c_int, c_int]
    x.XUngrabKey.argtypes = [c_void_p, c_int, c_uint, Window]
    x.XSync.argtypes = [c_void_p, c_int]
    x.XPending.argtypes = [c_void_p]
    x.XNextEvent.argtypes = [c_void_p, c_void_p]
    x.XConnectionNumber.argtypes = [c_void_p]
    return x


class X11KeyGrab:
    def __init__(self, text: str) -> None:
        self.text = text
        self._mask, key = parse_key(text)
        display = os.environ.get("DISPLAY")
        if not display:
            raise PersonaError("a desktop-wide shortcut needs an X11 session (DISPLAY is not set)")
        x = _bound_x11()
        dpy = x.XOpenDisplay(display.encode())
        if not dpy:
            raise PersonaError(f"cannot open the X11 display {display} for the shortcut")
        keysym = next((k for k in (x.XStringToKeysym(n.encode()) for n in (key, key.lower())) if k), 0)
        keycode = x.XKeysymToKeycode(dpy, keysym) if keysym else 0
        if not keycode:
            x.XCloseDisplay(dpy)
            raise PersonaError(f"{key!r} in {text!r} is not a key this keyboard has")
        root = x.XDefaultRootWindow(dpy)
        for lock in _LOCKS:
            x.XGrabKey(dpy, keycode, self._mask | lock, root, 0, GRAB_MODE_ASYNC, GRAB_MODE_ASYNC)
        x.XSync(dpy, 0)
        self._x, self._dpy, self._root, self._keycode = x, dpy, root, keycode

    def presses(self, cancelled: Callable[[], bool]) -> Iterator[None]:
        x, dpy = self._x, self._dpy
        fd = x.XConnectionNumber(dpy)
        event = create_string_buffer(_XEVENT_BYTES)
        while not cancelled():
            ready, _, _ = select.select([fd], [], [], 0.2)
            if not ready:
                continue
            while x.XPending(dpy):
                x.XNextEvent(dpy, event)
                if int.from_bytes(event.raw[:4], "little", signed=True) == KEY_PRESS:
                    yield None

    def release(self) -> None:
        """Ungrab and close; call once the `presses` watch has ended."""
        if not self._dpy:
            return
        for lock in _LOCKS:
            self._x.XUngrabKey(self._dpy, self._keycode, self._mask | lock, self._root)
        self._x.XSync(self._dpy, 0)
        self._x.XCloseDisplay(self._dpy)
        self._dpy = None
