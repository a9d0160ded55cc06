"""The terminal's passphrase prompt (getpass: nothing echoed, nothing in the shell history)."""

from __future__ import annotations

import getpass
import sys

from persona_desktop.ports import PassphrasePrompt, PassphraseRequest


def _ask(request: PassphraseRequest) -> str | None:
    if request.retry:
        print(request.retry, file=sys.stderr)
    try:
        if not request.new:
            return getpass.getpass(f"Passphrase of the store in {request.data_dir}: ")
        first = getpass.getpass(f"Choose a passphrase for the store in {request.data_dir}: ")
        if not first:
            return first
        if getpass.getpass("Type it again: ") != first:
            print("The two passphrases differ.", file=sys.stderr)
            return None
        return first
    except (EOFError, KeyboardInterrupt):
        return None


def terminal_prompt() -> PassphrasePrompt | None:
    """A prompt when a person is at a terminal; None for scripts, cron and pipes."""
    try:
        interactive = sys.stdin.isatty() and sys.stderr.isatty()
    except (AttributeError, ValueError):
        interactive = False
    return _ask if interactive else None
