"""The headless entry point: every action of the app, scriptable (DESIGN.md, CLI contract)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from persona_desktop import __version__
from persona_desktop.errors import PersonaError

Handler = Callable[[argparse.Namespace], int]


def _emit_json(value: Any) -> None:
    json.dump(value, sys.stdout, ensure_ascii=False, indent=2, default=str)
    sys.stdout.write("\n")


def _data_dir(args: argparse.Namespace) -> Path | None:
    if args.data_dir:
        return Path(args.data_dir).expanduser()
    env = os.environ.get("PERSONA_DATA_DIR")
    return Path(env).expanduser() if env else None


def _runtime(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    from persona_desktop.bootstrap import open_runtime

    return open_runtime(_data_dir(args))


# --- ingest -----------------------------------------------------------------------------


def cmd_ingest_chat(args: argparse.Namespace) -> int:
    from persona_desktop.adapters.chat import read_chat_file
    from persona_desktop.services.ingest import ingest

    path = Path(args.file)
    parsed = read_chat_file(path, owner_id=args.owner_id)
    rt = _runtime(args)
    try:
        results = ingest(rt.uow, parsed, rt.clock.now())
    finally:
        rt.close()
    added = sum(r.added for r in results)
    skipped = sum(r.skipped for r in results)
    if args.json:
        _emit_json({"file": str(path), "chats": len(results), "added": added, "skipped": skipped})
    else:
        print(f"{path}: {len(results)} chat(s), {added} new message(s), {skipped} already known")
    return 0


# --- what was captured ------------------------------------------------------------------


def fragment_json(f: Any) -> dict[str, Any]:
    return {
        "id": f.id,
        "ref": f.ref,
        "kind": f.kind.value,
        "author": f.author.value,
        "trust": f.trust.value,
        "captured_at": f.captured_at.isoformat(),
        "text": f.text,
        "locator": f.locator,
        "session": f.session,
    }


def cmd_fragments(args: argparse.Namespace) -> int:
    from persona_desktop.domain.model import Kind

    rt = _runtime(args)
    try:
        with rt.uow.read() as uow:
            items = uow.fragments.all(Kind(args.kind) if args.kind else None)
    finally:
        rt.close()
    if args.json:
        _emit_json([fragment_json(f) for f in items])
    else:
        for f in items:
            print(
                f"{f.captured_at:%Y-%m-%d %H:%M} {f.kind.value:6} {f.author.value:9} {f.trust.value:9} [{f.ref}] {f.text}"
            )
        print(f"{len(items)} fragment(s)")
    return 0


# --- settings ---------------------------------------------------------------------------


def cmd_config(args: argparse.Namespace) -> int:
    from persona_desktop.bootstrap import load_settings
    from persona_desktop.config import SETTINGS

    settings = load_settings(_data_dir(args))
    if args.action == "list":
        for key in sorted(SETTINGS):
            print(f"{key} = {settings.format(key)}")
        return 0
    if not args.key:
        raise PersonaError(f"config {args.action} needs a KEY")
    if args.action == "get":
        print(settings.format(args.key))
        return 0
    if args.value is None:
        raise PersonaError(f"config set {args.key} needs a VALUE")
    settings.set(args.key, args.value)
    settings.save()
    print(f"{args.key} = {settings.format(args.key)}")
    return 0


# --- parser -----------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="persona-desktop",
        description="Persona Desktop: an assistant's long-term memory, built locally, with provenance.",
    )
    p.add_argument("--data-dir", metavar="DIR", help="keep everything (store and settings) under DIR")
    p.add_argument("--version", action="version", version=f"persona-desktop {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    ingest = sub.add_parser("ingest", help="import chat histories, screen images or audio files")
    isub = ingest.add_subparsers(dest="what", metavar="WHAT", required=True)
    chat = isub.add_parser("chat", help="a Telegram Desktop result.json or a chat JSONL file")
    chat.add_argument("file")
    chat.add_argument("--owner-id", help="your Telegram user id, for exports without personal information")
    chat.add_argument("--json", action="store_true")
    chat.set_defaults(handler=cmd_ingest_chat)

    frags = sub.add_parser("fragments", help="what was captured")
    frags.add_argument("--kind", choices=["chat", "screen", "speech"])
    frags.add_argument("--json", action="store_true")
    frags.set_defaults(handler=cmd_fragments)

    config = sub.add_parser("config", help="read or change a setting")
    config.add_argument("action", choices=["get", "set", "list"])
    config.add_argument("key", nargs="?")
    config.add_argument("value", nargs="?")
    config.set_defaults(handler=cmd_config)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Handler | None = getattr(args, "handler", None)
    try:
        if handler is None:
            return start_app(args)
        return handler(args)
    except PersonaError as exc:
        print(f"persona-desktop: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("persona-desktop: interrupted", file=sys.stderr)
        return 130


def start_app(args: argparse.Namespace) -> int:
    try:
        from persona_desktop.app import run_app
    except ImportError as exc:
        raise PersonaError(f"the desktop app cannot start: {exc}") from None
    return run_app(_data_dir(args), list(getattr(args, "qt_args", []) or []))
