"""`capture screen` (one screenshot now) and `capture support` (what works on this desktop)."""

from __future__ import annotations

import argparse

from persona_desktop.cli.output import emit_json
from persona_desktop.cli.runtime import data_dir, runtime


def cmd_capture_screen(args: argparse.Namespace) -> int:
    """One screenshot now, read and stored like a periodic one (a keyboard shortcut can run it)."""
    from persona_desktop.bootstrap.screen import capture_once

    with runtime(args) as rt:
        outcome = capture_once(rt)
    if args.json:
        emit_json(
            {
                "grabber": outcome.grabber,
                "fragments": outcome.fragments,
                "monitors": [r.status for r in outcome.results],
                "windows_known": outcome.windows_known,
            }
        )
    else:
        print(outcome.summary())
    return 0


def cmd_capture_support(args: argparse.Namespace) -> int:
    """What screen capture can do on this desktop, from the session's variables."""
    from persona_desktop.bootstrap import load_settings
    from persona_desktop.bootstrap.screen_support import screen_support

    support = screen_support(load_settings(data_dir(args)))
    if args.json:
        emit_json(
            {
                "session": support.desktop.session.value,
                "desktop": support.desktop.desktop.value,
                "grabbers": list(support.grabbers),
                "window_source": support.windows.value if support.windows else None,
                "periodic": support.periodic_reason is None and support.works,
                "periodic_reason": support.periodic_reason,
                "flashes": support.flashes,
                "what_works": support.what_works(),
            }
        )
    else:
        print(support.what_works())
    return 0
