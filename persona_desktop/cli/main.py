"""The CLI's entry point and error boundary: every failure is one line on stderr."""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from persona_desktop.cli.desktop_app import start_app
from persona_desktop.cli.parser import build_parser
from persona_desktop.cli.runtime import data_dir
from persona_desktop.errors import PersonaError

Handler = Callable[[argparse.Namespace], int]


def main(argv: Sequence[str] | None = None) -> int:
    """The CLI's error boundary: every failure is one line on stderr, a bug's traceback goes to the log."""
    from persona_desktop.error_boundary import private_umask

    previous_umask = private_umask()
    try:
        return _main(argv)
    finally:
        os.umask(previous_umask)


def _main(argv: Sequence[str] | None) -> int:
    from persona_desktop.error_boundary import one_line, quiet_broken_pipe

    _tolerant_output()
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Handler | None = getattr(args, "handler", None)
    try:
        if handler is None:
            return start_app(args)
        return handler(args)
    except PersonaError as exc:
        print(f"persona-desktop: error: {one_line(exc, None)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("persona-desktop: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        quiet_broken_pipe()
        return 0
    except Exception as exc:  # the boundary: whatever it is, the owner reads one line
        folder = _data_dir_or_none(args)
        db = folder / "persona.sqlite3" if folder is not None else None
        print(f"persona-desktop: error: {one_line(exc, folder, db)}", file=sys.stderr)
        return 1


def _data_dir_or_none(args: argparse.Namespace) -> Path | None:
    try:
        from persona_desktop.bootstrap import default_data_dir

        return data_dir(args) or default_data_dir()
    except Exception:  # the boundary must not fail on a bad --data-dir or environment
        return None


def _tolerant_output() -> None:
    """Text that cannot be encoded (a lone surrogate in an old store) is escaped, never a crash."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(ValueError, OSError):
            if isinstance(stream, io.TextIOWrapper):  # a replaced stream may not be one
                stream.reconfigure(errors="backslashreplace")
