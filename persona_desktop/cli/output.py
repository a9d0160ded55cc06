"""How the commands write: strict JSON for scripts, and empty lists said as what to do next."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Sequence
from typing import Any, Protocol

CAPTURE_HINT = (
    "Import a chat with `persona-desktop ingest chat FILE`, or switch on screen or speech"
    " capture in the tray app."
)


def emit_json(value: Any) -> None:
    """Strict JSON only: a NaN or an infinity (from an old store, say) is written as null."""
    from persona_desktop.domain.finite import json_safe

    json.dump(json_safe(value), sys.stdout, ensure_ascii=False, indent=2, default=str, allow_nan=False)
    sys.stdout.write("\n")


def nothing(what: str, next_step: str) -> None:
    """An empty list, said as what it means and what to do next (JSON output stays `[]`)."""
    print(what)
    print(next_step)


class HasJson(Protocol):
    def to_json(self) -> dict[str, Any]: ...


def listed(args: argparse.Namespace, items: Sequence[HasJson], empty: tuple[str, str]) -> bool:
    """With --json the items as a JSON list; without, and none, `empty`: what that means and
    what to do next. True when that was all to write (else the command lists them as text)."""
    if args.json:
        emit_json([item.to_json() for item in items])
        return True
    if not items:
        nothing(*empty)
        return True
    return False


def me(args: argparse.Namespace) -> str:
    """This program as the owner would type it again, with the same data dir."""
    return "persona-desktop" + (f" --data-dir {shlex.quote(args.data_dir)}" if args.data_dir else "")
