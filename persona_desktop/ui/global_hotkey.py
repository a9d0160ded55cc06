"""A desktop-wide key for the search window on X11: a passive grab on the root window.

Off unless the owner names a key (`search.global_shortcut`): a grab takes that key away
from every other program, so it is never taken by default. The grab lives on its own X
connection, watched by the app's one worker (worker.py): each press is a value the watch
yields, which reaches the GUI thread as `pressed`.
Wayland has no such grab (its portal for global shortcuts is not used here): there, and
wherever the key cannot be parsed, `X11Hotkey.start` raises a PersonaError that says so.
"""

from __future__ import annotations

import os
import select
from collections.abc import Callable, Iterator
from ctypes import c_char_p, c_int, c_uint, c_ulong, c_void_p, create_string_buffer

from PySide6.QtCore import QObject, Signal

from persona_desktop.errors import PersonaError
from persona_desktop.ui.worker import Worker, create_worker
from persona_desktop.x11_lib import Window, load_x11

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


class X11Hotkey(QObject):
    pressed = Signal()

    def __init__(self, text: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.text = text
        self._mask, self._key = parse_key(text)
        self._watcher: Worker | None = None
        self._dpy: int | None = None
        self._keycode = 0

    def start(self) -> None:
        display = os.environ.get("DISPLAY")
        if not display:
            raise PersonaError("a desktop-wide shortcut needs an X11 session (DISPLAY is not set)")
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
        dpy = x.XOpenDisplay(display.encode())
        if not dpy:
            raise PersonaError(f"cannot open the X11 display {display} for the shortcut")
        keysym = next(
            (k for k in (x.XStringToKeysym(n.encode()) for n in (self._key, self._key.lower())) if k), 0
        )
        keycode = x.XKeysymToKeycode(dpy, keysym) if keysym else 0
        if not keycode:
            x.XCloseDisplay(dpy)
            raise PersonaError(f"{self._key!r} in {self.text!r} is not a key this keyboard has")
        root = x.XDefaultRootWindow(dpy)
        for lock in _LOCKS:
            x.XGrabKey(dpy, keycode, self._mask | lock, root, 0, GRAB_MODE_ASYNC, GRAB_MODE_ASYNC)
        x.XSync(dpy, 0)
        self._x, self._dpy, self._root, self._keycode = x, dpy, root, keycode
        self._watcher = create_worker(
            self._watch, self, "the search shortcut", on_yielded=lambda _press: self.pressed.emit()
        )

    def _watch(self, cancelled: Callable[[], bool]) -> Iterator[None]:
        """On the worker thread: one value per press of the key, until cancelled."""
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

    def stop(self) -> None:
        if self._watcher is not None:
            self._watcher.abandon()  # a press still on its way finds the shortcut gone
            self._watcher.wait(2000)
            self._watcher = None
        if self._dpy:
            for lock in _LOCKS:
                self._x.XUngrabKey(self._dpy, self._keycode, self._mask | lock, self._root)
            self._x.XSync(self._dpy, 0)
            self._x.XCloseDisplay(self._dpy)
            self._dpy = None
