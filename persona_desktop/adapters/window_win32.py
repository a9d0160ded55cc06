"""Window titles and applications on Windows through user32/kernel32 (ctypes).

Same port as the X11 version: visible top-level windows bottom to top, the foreground
one marked active, the application being the executable's name ("firefox", "KeePassXC").
Not exercised by CI (Linux only); kept small and defensive.
"""

from __future__ import annotations

import ctypes
import sys
from ctypes import wintypes
from pathlib import PureWindowsPath
from typing import Any

from persona_desktop.errors import CaptureUnavailableError
from persona_desktop.ports.screen import WindowDesc

PROCESS_QUERY_LIMITED_INFORMATION = 0x1000


class Win32WindowInfo:
    def __init__(self) -> None:
        if sys.platform != "win32":
            raise CaptureUnavailableError("the Windows window list works on Windows only")
        windll: Any = getattr(ctypes, "WinDLL")  # noqa: B009 - absent off Windows
        self._user32: Any = windll("user32", use_last_error=True)
        self._kernel32: Any = windll("kernel32", use_last_error=True)

    def close(self) -> None:
        return None

    def _title(self, hwnd: int) -> str:
        n = self._user32.GetWindowTextLengthW(hwnd)
        buf = ctypes.create_unicode_buffer(n + 1)
        self._user32.GetWindowTextW(hwnd, buf, n + 1)
        return buf.value

    def _app(self, hwnd: int) -> str:
        pid = wintypes.DWORD()
        self._user32.GetWindowThreadProcessId(hwnd, ctypes.byref(pid))
        handle = self._kernel32.OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, False, pid.value)
        if not handle:
            return ""
        try:
            size = wintypes.DWORD(1024)
            buf = ctypes.create_unicode_buffer(size.value)
            if not self._kernel32.QueryFullProcessImageNameW(handle, 0, buf, ctypes.byref(size)):
                return ""
            return PureWindowsPath(buf.value).stem
        finally:
            self._kernel32.CloseHandle(handle)

    def windows(self) -> list[WindowDesc]:
        foreground = self._user32.GetForegroundWindow()
        found: list[WindowDesc] = []
        proto: Any = getattr(ctypes, "WINFUNCTYPE")(wintypes.BOOL, wintypes.HWND, wintypes.LPARAM)  # noqa: B009

        def visit(hwnd: int, _: int) -> bool:
            if not self._user32.IsWindowVisible(hwnd) or self._user32.IsIconic(hwnd):
                return True
            rect = wintypes.RECT()
            if not self._user32.GetWindowRect(hwnd, ctypes.byref(rect)):
                return True
            if rect.right <= rect.left or rect.bottom <= rect.top:
                return True
            title = self._title(hwnd)
            if not title:
                return True
            box = (rect.left, rect.top, rect.right, rect.bottom)
            found.append(WindowDesc(title, self._app(hwnd), box, hwnd == foreground, int(hwnd or 0)))
            return True

        self._user32.EnumWindows(proto(visit), 0)
        found.reverse()  # EnumWindows goes top to bottom (Z order); the port lists bottom to top
        return found
