"""The command line: every command, its options and its handler (DESIGN.md, CLI contract)."""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Iterable
from typing import NoReturn, TypeVar, overload

from persona_desktop import __version__
from persona_desktop.cli.arguments import count
from persona_desktop.cli.capture import cmd_capture_screen, cmd_capture_support
from persona_desktop.cli.chat import cmd_chat
from persona_desktop.cli.config import cmd_config
from persona_desktop.cli.decisions import cmd_candidates, cmd_decide, cmd_facts
from persona_desktop.cli.ingest import cmd_ingest_audio, cmd_ingest_chat, cmd_ingest_screen
from persona_desktop.cli.journal import cmd_journal
from persona_desktop.cli.memory import cmd_forget, cmd_fragments, cmd_skills, cmd_sources
from persona_desktop.cli.review import cmd_review_run
from persona_desktop.cli.search import cmd_mcp, cmd_search
from persona_desktop.cli.sleep import cmd_sleep_run
from persona_desktop.cli.storage import cmd_storage

_N = TypeVar("_N")


class _Parser(argparse.ArgumentParser):
    """Usage errors as one line, like every other error of the CLI."""

    # The dest of a positional that is the owner's own text (search's query), if any: see
    # parse_known_args.
    free_text = ""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")

    @overload
    def parse_known_args(
        self, args: Iterable[str] | None = None, namespace: None = None
    ) -> tuple[argparse.Namespace, list[str]]: ...
    @overload
    def parse_known_args(self, args: Iterable[str] | None, namespace: _N) -> tuple[_N, list[str]]: ...
    @overload
    def parse_known_args(self, *, namespace: _N) -> tuple[_N, list[str]]: ...

    def parse_known_args(
        self, args: Iterable[str] | None = None, namespace: _N | None = None
    ) -> tuple[_N | argparse.Namespace, list[str]]:
        """argparse takes free text that starts with a dash (`search -foo`) for an unknown
        option: then say how to pass it, rather than "the query is required"."""
        parsed, extras = super().parse_known_args(args, namespace)
        if not self.free_text:
            return parsed, extras
        dashed = [e for e in extras if e.startswith("-")]
        if dashed:
            self.error(
                f"unrecognized arguments: {' '.join(extras)}; to search for text that starts with a "
                f"dash, put -- before it: {self.prog} -- {shlex.quote(dashed[0])}"
            )
        if getattr(parsed, self.free_text, None) is None:
            self.error(f"the following arguments are required: {self.free_text.upper()}")
        return parsed, extras


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="persona-desktop",
        description="Persona Desktop: an assistant's long-term memory, built locally, with provenance.",
    )
    p.add_argument("--data-dir", metavar="DIR", help="keep everything (store and settings) under DIR")
    p.add_argument("--version", action="version", version=f"persona-desktop {__version__}")
    p.add_argument(
        "--self-test",
        action="store_true",
        help="start the app offscreen, build every window, run one cycle if the LLM host answers, exit",
    )
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    ingest = sub.add_parser("ingest", help="import chat histories, screen images or audio files")
    isub = ingest.add_subparsers(dest="what", metavar="WHAT", required=True)
    chat = isub.add_parser(
        "chat",
        help="a chat export: Telegram Desktop result.json, ChatGPT or Claude conversations.json "
        "(or their .zip), WhatsApp .txt/.zip, or chat JSONL (format found from the content)",
    )
    chat.add_argument("file")
    chat.add_argument("--owner-id", help="your Telegram user id, for exports without personal information")
    chat.add_argument("--owner-name", help="your name as a sender in a WhatsApp chat (asked when missing)")
    chat.add_argument("--json", action="store_true")
    chat.set_defaults(handler=cmd_ingest_chat)
    audio = isub.add_parser("audio", help="transcribe audio files (wav, flac, mp3, ogg) as speech")
    audio.add_argument("files", nargs="+", metavar="FILE")
    audio.add_argument(
        "--origin",
        choices=["file", "microphone", "system"],
        default="file",
        help="microphone: speaker likely you; system: audio the computer played (others)",
    )
    audio.add_argument(
        "--recorded-at", metavar="ISO", help="when the recording started (default: mtime - length)"
    )
    audio.add_argument("--json", action="store_true")
    audio.set_defaults(handler=cmd_ingest_audio)
    screen = isub.add_parser("screen", help="OCR image files (png, jpg, ...) as screen captures")
    screen.add_argument("images", nargs="+", metavar="IMAGE")
    screen.add_argument("--json", action="store_true")
    screen.set_defaults(handler=cmd_ingest_screen)

    cap = sub.add_parser("capture", help="capture the screen now; what screen capture can do here")
    csub = cap.add_subparsers(dest="what", metavar="WHAT", required=True)
    cscreen = csub.add_parser("screen", help="take one screenshot now, read it and store its text")
    cscreen.add_argument("--json", action="store_true")
    cscreen.set_defaults(handler=cmd_capture_screen)
    csupport = csub.add_parser("support", help="what screen capture can do on this desktop")
    csupport.add_argument("--json", action="store_true")
    csupport.set_defaults(handler=cmd_capture_support)

    frags = sub.add_parser("fragments", help="what was captured")
    frags.add_argument("--kind", choices=["chat", "screen", "speech"])
    frags.add_argument("--json", action="store_true")
    frags.set_defaults(handler=cmd_fragments)

    find = sub.add_parser(
        "search",
        help="search everything captured and every fact by words",
        usage="%(prog)s [-h] [--kind KIND] [--since DATE] [--limit N] [--json] [--] QUERY",
    )
    find.add_argument(  # optional to argparse only: `_Parser.parse_known_args` requires it
        "query",
        nargs="?",
        metavar="QUERY",
        help="the words to look for; text that starts with a dash goes after --",
    )
    find.free_text = "query"
    find.add_argument("--kind", choices=["chat", "screen", "speech", "fact"])
    find.add_argument("--since", metavar="DATE", help="YYYY-MM-DD (local) or an ISO 8601 time")
    find.add_argument("--limit", type=int, default=50)
    find.add_argument("--json", action="store_true")
    find.set_defaults(handler=cmd_search)

    sub.add_parser(
        "mcp", help="serve the memory to other assistants over MCP (stdio; needs mcp.enabled)"
    ).set_defaults(handler=cmd_mcp)

    sleep = sub.add_parser("sleep", help="the sleep cycle")
    ssub = sleep.add_subparsers(dest="what", metavar="ACTION", required=True)
    srun = ssub.add_parser("run", help="run one sleep cycle now (the gate and the lease apply)")
    srun.add_argument("--json", action="store_true")
    srun.add_argument(
        "--anyway",
        action="store_true",
        help="run even though you were active recently (the quiet time is skipped; the lease still applies)",
    )
    srun.set_defaults(handler=cmd_sleep_run)

    cands = sub.add_parser("candidates", help="proposed memories and their status")
    cands.add_argument("--status", choices=["pending", "applied", "approved", "rejected", "dropped"])
    cands.add_argument("--json", action="store_true")
    cands.set_defaults(handler=cmd_candidates)

    appr = sub.add_parser("approve", help="approve a waiting candidate")
    appr.add_argument("id")
    appr.add_argument("--statement", help="approve with your own wording")
    appr.set_defaults(handler=cmd_decide)
    rej = sub.add_parser("reject", help="reject a waiting candidate")
    rej.add_argument("id")
    rej.set_defaults(handler=cmd_decide)
    sub.add_parser("undo", help="undo your last decision").set_defaults(handler=cmd_decide)

    facts = sub.add_parser("facts", help="what is remembered; `facts why ID`, `facts revert ID`")
    facts.add_argument("action", nargs="?", choices=["why", "revert"])
    facts.add_argument("id", nargs="?")
    facts.add_argument("--status", choices=["applied", "superseded", "reverted"])
    facts.add_argument("--search")
    facts.add_argument("--json", action="store_true")
    facts.set_defaults(handler=cmd_facts)

    skills_cmd = sub.add_parser("skills", help="the skills you approved; `skills show NAME`")
    skills_cmd.add_argument("show", nargs="?", choices=["show"])
    skills_cmd.add_argument("name", nargs="?")
    skills_cmd.add_argument("--json", action="store_true")
    skills_cmd.set_defaults(handler=cmd_skills)
    chat_cmd = sub.add_parser("chat", help="chat with the assistant in the terminal (stdin lines; /quit)")
    chat_cmd.set_defaults(handler=cmd_chat)
    rev = sub.add_parser("review", help="the turn review of the chat with the assistant")
    rsub = rev.add_subparsers(dest="what", metavar="ACTION", required=True)
    rrun = rsub.add_parser(
        "run", help="review the latest conversation with the assistant (the app's chat or an imported one)"
    )
    rrun.add_argument("--source", metavar="ID", help="review this source instead (see `sources`)")
    rrun.add_argument("--kind", choices=["memory", "skill", "combined"])
    rrun.add_argument("--json", action="store_true")
    rrun.set_defaults(handler=cmd_review_run)

    srcs = sub.add_parser("sources", help="where fragments came from (chats, captures, recordings)")
    srcs.add_argument("--json", action="store_true")
    srcs.set_defaults(handler=cmd_sources)

    forget = sub.add_parser(
        "forget", help="forget everything learned from a source, or from a day of captures"
    )
    forget.add_argument("what", choices=["source", "day"])
    forget.add_argument("target", metavar="ID|YYYY-MM-DD")
    forget.add_argument(
        "--kind", choices=["screen", "speech", "chat"], default="screen", help="for `forget day`"
    )
    forget.set_defaults(handler=cmd_forget)

    jour = sub.add_parser("journal", help="the append-only revision journal; `journal verify` checks it")
    jour.add_argument("action", nargs="?", choices=["verify"])
    jour.add_argument("--limit", type=count)
    jour.add_argument("--json", action="store_true")
    jour.set_defaults(handler=cmd_journal)

    storage = sub.add_parser(
        "storage",
        help="what uses the space; `storage trim`; `storage passphrase` or `storage keyring` re-key the store",
    )
    storage.add_argument("action", nargs="?", choices=["trim", "passphrase", "keyring"])
    storage.add_argument("--json", action="store_true")
    storage.set_defaults(handler=cmd_storage)

    config = sub.add_parser("config", help="read or change a setting")
    config.add_argument("action", choices=["get", "set", "list"])
    config.add_argument("key", nargs="?")
    config.add_argument("value", nargs="?")
    config.set_defaults(handler=cmd_config)
    return p
