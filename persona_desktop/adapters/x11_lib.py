"""The libX11 binding (ctypes), shared by the X11 window reader (`adapters.window_x11`) and
the desktop-wide search key (`adapters.x11_key_grab`).

Loaded once per process, with an error handler that ignores X errors (a window closing
between two calls) instead of letting libX11 exit the process.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import threading
from ctypes import POINTER, c_char_p, c_int, c_long, c_uint, c_ulong, c_void_p

from persona_desktop.errors import CaptureUnavailableError

Window = c_ulong
Atom = c_ulong
IS_VIEWABLE = 2
ANY_PROPERTY_TYPE = 0


class XWindowAttributes(ctypes.Structure):
    _fields_ = [
        ("x", c_int),
        ("y", c_int),
        ("width", c_int),
        ("height", c_int),
        ("border_width", c_int),
        ("depth", c_int),
        ("visual", c_void_p),
        ("root", Window),
        ("c_class", c_int),
        ("bit_gravity", c_int),
        ("win_gravity", c_int),
        ("backing_store", c_int),
        ("backing_planes", c_ulong),
        ("backing_pixel", c_ulong),
        ("save_under", c_int),
        ("colormap", c_ulong),
        ("map_installed", c_int),
        ("map_state", c_int),
        ("all_event_masks", c_long),
        ("your_event_mask", c_long),
        ("do_not_propagate_mask", c_long),
        ("override_redirect", c_int),
        ("screen", c_void_p),
    ]


_ERROR_HANDLER = ctypes.CFUNCTYPE(c_int, c_void_p, c_void_p)
_lib_lock = threading.Lock()
_lib: ctypes.CDLL | None = None
_handler_ref: object = None


def _ignore_x_error(display: int | None, event: int | None) -> int:
    return 0


def load_x11() -> ctypes.CDLL:
    global _lib, _handler_ref
    with _lib_lock:
        if _lib is not None:
            return _lib
        name = ctypes.util.find_library("X11") or "libX11.so.6"
        try:
            lib = ctypes.CDLL(name)
        except OSError as exc:
            raise CaptureUnavailableError(f"libX11 cannot be loaded (package libx11-6): {exc}") from None
        lib.XOpenDisplay.restype = c_void_p
        lib.XOpenDisplay.argtypes = [c_char_p]
        lib.XCloseDisplay.argtypes = [c_void_p]
        lib.XDefaultRootWindow.restype = Window
        lib.XDefaultRootWindow.argtypes = [c_void_p]
        lib.XInternAtom.restype = Atom
        lib.XInternAtom.argtypes = [c_void_p, c_char_p, c_int]
        lib.XGetWindowProperty.argtypes = [
            c_void_p, Window, Atom, c_long, c_long, c_int, Atom,
            POINTER(Atom), POINTER(c_int), POINTER(c_ulong), POINTER(c_ulong), POINTER(c_void_p),
        ]  # fmt: skip
        lib.XFree.argtypes = [c_void_p]
        lib.XQueryTree.argtypes = [
            c_void_p, Window, POINTER(Window), POINTER(Window), POINTER(c_void_p), POINTER(c_uint),
        ]  # fmt: skip
        lib.XGetWindowAttributes.argtypes = [c_void_p, Window, POINTER(XWindowAttributes)]
        lib.XTranslateCoordinates.argtypes = [
            c_void_p, Window, Window, c_int, c_int, POINTER(c_int), POINTER(c_int), POINTER(Window),
        ]  # fmt: skip
        lib.XGetInputFocus.argtypes = [c_void_p, POINTER(Window), POINTER(c_int)]
        lib.XSetErrorHandler.restype = c_void_p
        lib.XSetErrorHandler.argtypes = [_ERROR_HANDLER]
        _handler_ref = _ERROR_HANDLER(_ignore_x_error)
        lib.XSetErrorHandler(_handler_ref)
        _lib = lib
        return lib
