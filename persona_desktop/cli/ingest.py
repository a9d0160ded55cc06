"""`ingest chat|audio|screen`: chat exports, audio files and screen images into fragments."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from persona_desktop.cli.output import emit_json
from persona_desktop.cli.runtime import runtime
from persona_desktop.errors import PersonaError

if TYPE_CHECKING:
    from persona_desktop.adapters.chat import ChatExport
    from persona_desktop.services.ingest import ChatImportReport


def cmd_ingest_chat(args: argparse.Namespace) -> int:
    from persona_desktop.adapters.chat import open_chat_export
    from persona_desktop.services.ingest import import_chat

    path = Path(args.file)
    export = open_chat_export(
        path, owner_id=args.owner_id, owner_name=args.owner_name, choose_owner=_ask_owner
    )
    with runtime(args) as rt:
        report = import_chat(rt.uow, export.records, rt.clock.now(), str(path))
    _print_chat_import(args, export, report)
    return 0


def _ask_owner(senders: list[str]) -> str:
    """`ingest chat` on a WhatsApp export without --owner-name: ask on a terminal, else refuse."""
    listed = ", ".join(senders)
    if not sys.stdin.isatty():
        raise PersonaError(f"which sender are you? pass --owner-name with one of: {listed}")
    print("This chat does not say which sender you are:", file=sys.stderr)
    for i, name in enumerate(senders, start=1):
        print(f"  {i}. {name}", file=sys.stderr)
    while True:
        print("Which one are you (number or name)? ", end="", file=sys.stderr, flush=True)
        answer = sys.stdin.readline()
        if not answer:
            raise PersonaError(f"no answer; pass --owner-name with one of: {listed}")
        answer = answer.strip()
        if answer.isdigit() and 1 <= int(answer) <= len(senders):
            return senders[int(answer) - 1]
        if answer in senders:
            return answer
        print(f"  not one of the senders: {answer!r}", file=sys.stderr)


def _print_chat_import(args: argparse.Namespace, export: ChatExport, report: ChatImportReport) -> None:
    from persona_desktop.ports import SkipReason

    if args.json:
        emit_json(
            {
                "file": str(export.path),
                "format": export.format,
                "format_name": export.format_name,
                "encoding": export.encoding,
                **report.to_json(),
            }
        )
        return
    line = (
        f"{export.path}: read as {export.format_name}: {len(report.sources)} chat(s), "
        f"{report.added} new message(s), {report.known} already known"
    )
    if report.edited:
        line += f", {report.edited} edited since (the new text stored beside the old)"
    if report.skipped_total:
        reasons = ", ".join(f"{n} {reason.label}" for reason, n in report.skipped.most_common())
        line += f"; skipped {report.skipped_total}: {reasons}"
    print(line)
    if report.doubted:
        print(
            f"persona-desktop: note: {report.doubted} of your messages stored as untrusted: each could be "
            "a line typed inside someone else's message (the export does not mark where a message ends); "
            "'fragments --json' shows why under 'doubt'",
            file=sys.stderr,
        )
    for warning in report.warnings:  # messages dated in the future, stored at the import time
        print(f"persona-desktop: warning: {warning}", file=sys.stderr)
    for item in report.unreadable:
        print(f"persona-desktop: skipped as unreadable: {item.place}: {item.detail}", file=sys.stderr)
    if report.skipped.get(SkipReason.UNREADABLE, 0) > len(report.unreadable):
        print(
            f"persona-desktop: (and {report.skipped[SkipReason.UNREADABLE] - len(report.unreadable)} more)",
            file=sys.stderr,
        )


def cmd_ingest_audio(args: argparse.Namespace) -> int:
    """Each file is transcribed and stored on its own: a bad file does not stop the rest."""
    from persona_desktop.adapters.chat.dates import parse_iso
    from persona_desktop.bootstrap.speech import transcriber_from_settings
    from persona_desktop.capture.speech_clips import purge_expired_clips
    from persona_desktop.capture.speech_recording import Origin, transcribe_file
    from persona_desktop.services.ingest import ingest

    try:
        recorded_at = parse_iso(args.recorded_at) if args.recorded_at else None
    except (ValueError, OverflowError):
        raise PersonaError(
            f"--recorded-at {args.recorded_at!r} is not an ISO 8601 time between years 1 and 9999"
        ) from None
    report: list[dict[str, Any]] = []
    with runtime(args) as rt:
        transcriber = transcriber_from_settings(rt.settings, idle_unload_s=0)
        capture = rt.settings.values.capture
        keep = capture.keep_audio
        try:
            for name in args.files:
                path = Path(name)
                try:
                    source, fragments = transcribe_file(
                        path,
                        transcriber,
                        origin=Origin(args.origin),
                        recorded_at=recorded_at,
                        data_dir=rt.data_dir,
                        keep_audio=keep,
                        media=rt.media,
                    )
                    [result] = ingest(rt.uow, [(source, fragments)], rt.clock.now())
                except PersonaError as exc:
                    print(f"persona-desktop: error: {exc}", file=sys.stderr)
                    report.append({"file": str(path), "error": str(exc)})
                    continue
                report.append(
                    {
                        "file": str(path),
                        "recording": source.key,
                        "segments": len(fragments),
                        "added": result.added,
                        "skipped": result.skipped,
                    }
                )
                if not args.json:
                    print(
                        f"{path}: {len(fragments)} segment(s), {result.added} new, "
                        f"{result.skipped} already known"
                    )
            if keep:
                purge_expired_clips(rt.data_dir, rt.clock.now(), capture.audio_retention_days)
        finally:
            transcriber.close()
    if args.json:
        emit_json(report)
    return 1 if any("error" in r for r in report) else 0


def cmd_ingest_screen(args: argparse.Namespace) -> int:
    """Each image is OCR'd as one screen capture; a bad file does not stop the rest."""
    from persona_desktop.bootstrap.screen import ingest_screen_files

    with runtime(args) as rt:
        outcomes = ingest_screen_files(rt, [Path(f) for f in args.images])
    report: list[dict[str, Any]] = []
    for o in outcomes:
        if o.error is not None or o.result is None:
            print(f"persona-desktop: error: {o.error}", file=sys.stderr)
            report.append({"file": o.path, "error": o.error})
            continue
        r = o.result
        report.append(
            {
                "file": o.path,
                "capture": r.source_key,
                "lines": o.lines,
                "added": r.added,
                "skipped": r.skipped,
            }
        )
        if not args.json:
            print(f"{o.path}: {o.lines} line(s), {r.added} new, {r.skipped} already known")
    if args.json:
        emit_json(report)
    return 1 if any("error" in r for r in report) else 0
