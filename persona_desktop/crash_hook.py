"""The app's crash path: an uncaught exception anywhere is logged and shown, never printed.

After qutebrowser's `crashsignal`: `sys.excepthook` (the GUI thread, and PySide's slots,
which report through it) and `threading.excepthook` (worker threads) both go to one
handler, which writes the traceback to the private log (error_boundary.py) and hands
the owner's one line to `show`. The Qt part, a dialog, lives in app.py; `show` must be
safe to call from any thread (app.py passes a queued signal's emit).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

from persona_desktop.error_boundary import one_line

Show = Callable[[str], None]


class CrashHook:
    def __init__(self, data_dir: Path | None, show: Show) -> None:
        self.data_dir = data_dir
        self._show = show
        self._previous = (sys.excepthook, threading.excepthook)
        self.seen = 0

    def handle(self, exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        if issubclass(exc_type, KeyboardInterrupt | SystemExit):
            return
        if exc.__traceback__ is None and tb is not None:
            exc = exc.with_traceback(tb)
        self.seen += 1
        try:
            line = one_line(exc, self.data_dir)
        except Exception:  # the crash path itself must never raise
            line = f"internal error ({exc_type.__name__})"
        self._show(line)

    def _thread(self, args: threading.ExceptHookArgs) -> None:
        if args.exc_value is not None:
            self.handle(args.exc_type, args.exc_value, args.exc_traceback)

    def install(self) -> CrashHook:
        sys.excepthook = self.handle
        threading.excepthook = self._thread
        return self

    def uninstall(self) -> None:
        sys.excepthook, threading.excepthook = self._previous
