"""The store for a command: opened from --data-dir, closed when the command is done with it."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from persona_desktop.errors import PersonaError

if TYPE_CHECKING:
    from persona_desktop.bootstrap import Runtime


def data_dir(args: argparse.Namespace) -> Path | None:
    """--data-dir (else PERSONA_DATA_DIR) as a path; None for the platform's data dir."""
    if args.data_dir is not None and not args.data_dir.strip():
        raise PersonaError("--data-dir is empty; give a folder path")
    given = args.data_dir or os.environ.get("PERSONA_DATA_DIR")
    if not given:
        return None
    if "\0" in given:
        raise PersonaError("--data-dir contains a NUL byte; give a folder path")
    return Path(given).expanduser()


@contextmanager
def runtime(args: argparse.Namespace, encrypted: bool | None = None) -> Iterator[Runtime]:
    """The data dir's store, settings and LLM host, closed on leaving the block however it is left.

    The passphrase, when one is needed, is asked on the terminal. A damaged store opens
    read-only, with a warning. Commands print their output after the block, so that the
    store is not held open while a slow reader (a pager) takes the output."""
    from persona_desktop.adapters.keys.terminal import terminal_prompt
    from persona_desktop.bootstrap import open_runtime

    rt = open_runtime(data_dir(args), terminal_prompt(), encrypted)
    try:
        if rt.read_only:
            print(
                f"persona-desktop: warning: the store in {rt.data_dir} is damaged and was opened read-only: "
                "reading works, changes are refused",
                file=sys.stderr,
            )
        yield rt
    finally:
        rt.close()


def export_after(rt: Runtime) -> None:
    """Mirror memory into the Markdown folder when export.enabled; a failure warns, never undoes."""
    from persona_desktop.services.markdown_export import export_if_enabled

    try:
        export = rt.settings.values.export
        result = export_if_enabled(export.enabled, export.path, rt.uow, rt.clock.now())
    except PersonaError as exc:
        print(f"persona-desktop: warning: Markdown export failed: {exc}", file=sys.stderr)
        return
    if result is not None and result.needs_attention:
        print(f"persona-desktop: warning: {result.message()}", file=sys.stderr)
