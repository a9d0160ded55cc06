"""`persona-desktop` with no command starts the tray app: the CLI's one (lazy) import of `app`.

The import stays inside `start_app`, so that a command never loads Qt; import-linter's
layer contracts name this module's `persona_desktop.cli.desktop_app -> persona_desktop.app`
arrow as the one allowed exception.
"""

from __future__ import annotations

import argparse
import os
import sys

from persona_desktop.cli.runtime import data_dir
from persona_desktop.errors import PersonaError


def start_app(args: argparse.Namespace) -> int:
    try:
        from persona_desktop.app import run_app, self_test
    except ImportError as exc:
        raise PersonaError(f"the desktop app cannot start: {exc}") from None
    if getattr(args, "self_test", False):
        return self_test(data_dir(args))
    _check_graphical_session()
    return run_app(data_dir(args), list(getattr(args, "qt_args", []) or []))


def _check_graphical_session() -> None:
    """Qt aborts without a display, advising to reinstall; say what is really wrong instead."""
    if not sys.platform.startswith("linux") or os.environ.get("QT_QPA_PLATFORM"):
        return
    if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        raise PersonaError(
            "no graphical session (DISPLAY and WAYLAND_DISPLAY are unset): the tray app needs one; "
            "run a command instead (see --help), or --self-test"
        )
