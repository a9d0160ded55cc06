"""The headless entry point: every action of the app, scriptable (DESIGN.md, CLI contract)."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shlex
import sys
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from persona_desktop import __version__
from persona_desktop.errors import PersonaError

if TYPE_CHECKING:
    from persona_desktop.adapters.chat import ChatExport
    from persona_desktop.bootstrap import Runtime
    from persona_desktop.services.ingest import ChatImportReport

Handler = Callable[[argparse.Namespace], int]


def _emit_json(value: Any) -> None:
    """Strict JSON only: a NaN or an infinity (from an old store, say) is written as null."""
    from persona_desktop.domain.finite import json_safe

    json.dump(json_safe(value), sys.stdout, ensure_ascii=False, indent=2, default=str, allow_nan=False)
    sys.stdout.write("\n")


def _data_dir(args: argparse.Namespace) -> Path | None:
    if args.data_dir is not None and not args.data_dir.strip():
        raise PersonaError("--data-dir is empty; give a folder path")
    given = args.data_dir or os.environ.get("PERSONA_DATA_DIR")
    if not given:
        return None
    if "\0" in given:
        raise PersonaError("--data-dir contains a NUL byte; give a folder path")
    return Path(given).expanduser()


def _runtime(args: argparse.Namespace, encrypted: bool | None = None) -> Runtime:
    from persona_desktop.adapters.keys.terminal import terminal_prompt
    from persona_desktop.bootstrap import open_runtime

    rt = open_runtime(_data_dir(args), terminal_prompt(), encrypted)
    if rt.read_only:
        print(
            f"persona-desktop: warning: the store in {rt.data_dir} is damaged and was opened read-only: "
            "reading works, changes are refused",
            file=sys.stderr,
        )
    return rt


CAPTURE_HINT = (
    "Import a chat with `persona-desktop ingest chat FILE`, or switch on screen or speech"
    " capture in the tray app."
)


def _nothing(what: str, next_step: str) -> None:
    """An empty list, said as what it means and what to do next (JSON output stays `[]`)."""
    print(what)
    print(next_step)


# --- ingest -----------------------------------------------------------------------------


def cmd_ingest_chat(args: argparse.Namespace) -> int:
    from persona_desktop.adapters.chat import open_chat_export
    from persona_desktop.services.ingest import import_chat

    path = Path(args.file)
    export = open_chat_export(
        path, owner_id=args.owner_id, owner_name=args.owner_name, choose_owner=_ask_owner
    )
    rt = _runtime(args)
    try:
        report = import_chat(rt.uow, export.records, rt.clock.now(), str(path))
    finally:
        rt.close()
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

    unreadable = [{"place": s.place, "why": s.detail} for s in report.unreadable]
    if args.json:
        _emit_json(
            {
                "file": str(export.path),
                "format": export.format,
                "format_name": export.format_name,
                "encoding": export.encoding,
                "chats": len(report.sources),
                "added": report.added,
                "already_known": report.known,
                "edited": report.edited,
                "doubted": report.doubted,
                "skipped": {reason.value: report.skipped.get(reason, 0) for reason in SkipReason},
                "skipped_total": report.skipped_total,
                "unreadable": unreadable,
                "warnings": report.warnings,
                "sources": [
                    {
                        "id": s.source_id,
                        "key": s.source.key,
                        "label": s.source.label,
                        "added": s.added,
                        "already_known": s.known,
                        "edited": s.edited,
                    }
                    for s in report.sources
                ],
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
    for item in unreadable:
        print(f"persona-desktop: skipped as unreadable: {item['place']}: {item['why']}", file=sys.stderr)
    if report.skipped.get(SkipReason.UNREADABLE, 0) > len(unreadable):
        print(
            f"persona-desktop: (and {report.skipped[SkipReason.UNREADABLE] - len(unreadable)} more)",
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
    rt = _runtime(args)
    transcriber = transcriber_from_settings(rt.settings, idle_unload_s=0)
    capture = rt.settings.values.capture
    keep = capture.keep_audio
    report: list[dict[str, Any]] = []
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
                    f"{path}: {len(fragments)} segment(s), {result.added} new, {result.skipped} already known"
                )
        if keep:
            purge_expired_clips(rt.data_dir, rt.clock.now(), capture.audio_retention_days)
    finally:
        transcriber.close()
        rt.close()
    if args.json:
        _emit_json(report)
    return 1 if any("error" in r for r in report) else 0


def cmd_ingest_screen(args: argparse.Namespace) -> int:
    """Each image is OCR'd as one screen capture; a bad file does not stop the rest."""
    from persona_desktop.bootstrap.screen import ingest_screen_files

    rt = _runtime(args)
    try:
        outcomes = ingest_screen_files(rt, [Path(f) for f in args.images])
    finally:
        rt.close()
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
        _emit_json(report)
    return 1 if any("error" in r for r in report) else 0


# --- capture on demand -----------------------------------------------------------------


def cmd_capture_screen(args: argparse.Namespace) -> int:
    """One screenshot now, read and stored like a periodic one (a keyboard shortcut can run it)."""
    from persona_desktop.bootstrap.screen import capture_once

    rt = _runtime(args)
    try:
        outcome = capture_once(rt)
    finally:
        rt.close()
    if args.json:
        _emit_json(
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
    from persona_desktop.bootstrap.screen import screen_support

    support = screen_support(load_settings(_data_dir(args)))
    if args.json:
        _emit_json(
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
    elif not items:
        _nothing("Nothing captured yet" + (f" from {args.kind}" if args.kind else "") + ".", CAPTURE_HINT)
    else:
        for f in items:
            print(
                f"{f.captured_at:%Y-%m-%d %H:%M} {f.kind.value:6} {f.author.value:9} {f.trust.value:9} [{f.ref}] {f.text}"
            )
        print(f"{len(items)} fragment(s)")
    return 0


def cmd_search(args: argparse.Namespace) -> int:
    """Full-text search of every fragment and applied fact; the query is words, never syntax."""
    from persona_desktop.services.search import parse_since, search

    since = parse_since(args.since)
    rt = _runtime(args)
    try:
        results = search(rt.uow, args.query, args.kind, since, args.limit)
    finally:
        rt.close()
    if args.json:
        _emit_json([r.as_json() for r in results])
        return 0
    for r in results:
        h = r.hit
        where = f"fact #{h.fact_id}" if h.fact_id is not None else f"[{h.ref}]"
        print(f"{h.captured_at.astimezone():%Y-%m-%d %H:%M} {h.kind:6} {where} {r.line}")
    print(f"{len(results)} hit(s)")
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    """Serve the memory over MCP on stdin/stdout (off until `mcp.enabled`)."""
    from persona_desktop.bootstrap import load_settings

    if not load_settings(_data_dir(args)).values.mcp.enabled:  # before importing the SDK: a quick no
        raise PersonaError(
            "the MCP server is off; turn it on with `persona-desktop config set mcp.enabled true`"
        )
    from persona_desktop.mcp_server import serve

    return serve(_data_dir(args))


# --- the sleep cycle --------------------------------------------------------------------


def cmd_sleep_run(args: argparse.Namespace) -> int:
    from persona_desktop.service_configs import sleep_config
    from persona_desktop.services.sleep_cycle import SleepCycle, drain

    rt = _runtime(args)
    diagnosis = None
    try:
        cycle = SleepCycle(rt.uow, rt.llm, sleep_config(rt.settings.values), rt.clock)

        def show(p: Any) -> None:
            if not args.json:
                print(f"  {p.phase}: {p.message}", file=sys.stderr)

        outcome = drain(cycle.run(skip_quiet=args.anyway), show)
        if outcome.counters.get("applied"):
            _export_after(rt)
        if outcome.status.value == "failed":
            diagnosis = _diagnose_llm(rt.settings)
    finally:
        rt.close()
    if args.json:
        _emit_json(outcome.as_json() | ({"diagnosis": diagnosis.as_json()} if diagnosis else {}))
    else:
        print(outcome.message)
        if outcome.run_id is not None:
            c = outcome.counters
            print(
                f"run {outcome.run_id}: {c.get('documents_done', 0)}/{c.get('documents', 0)} documents read, "
                f"{c.get('candidates', 0)} new candidates, {c.get('applied', 0)} applied, "
                f"{c.get('pending', 0)} pending, {c.get('dropped', 0)} dropped"
            )
        _sleep_next_step(outcome.status.value, diagnosis, _me(args))
    return 0 if outcome.status.value != "failed" else 2


def _diagnose_llm(settings: Any) -> Any:
    """After a failed run: what is wrong with the model host, if anything (None when it is ready)."""
    from persona_desktop.adapters.ollama_probe import check_ollama

    found = check_ollama(settings.ollama_host(), settings.values.ollama.model)
    return None if found.ready else found


def _me(args: argparse.Namespace) -> str:
    """This program as the owner would type it again, with the same data dir."""
    return "persona-desktop" + (f" --data-dir {shlex.quote(args.data_dir)}" if args.data_dir else "")


def _sleep_next_step(status: str, diagnosis: Any, me: str) -> None:
    """What the owner can do about a run that did not happen, as a command to type."""
    if status == "disabled":
        print(f"Turn it on with: {me} config set sleep.enabled true")
    elif status == "deferred":
        print(f"It waits until you have been away that long. To run it now: {me} sleep run --anyway")
    elif diagnosis is not None:
        print(f"{diagnosis.summary}\nNext step: {diagnosis.next_step}", file=sys.stderr)


# --- candidates, facts, decisions -------------------------------------------------------


def candidate_json(view: Any) -> dict[str, Any]:
    c = view.candidate
    return {
        "id": c.id,
        "statement": c.statement,
        "subject": c.subject.value,
        "kind": c.proposal.kind.value,
        "status": c.status.value,
        "score": c.score,
        "signals": c.signals,
        "refs": view.refs,
        "evidence_count": view.evidence_count,
        "category": c.category,
        "origin": c.origin,
        "run_id": c.run_id,
        "reason": c.reason,
        "supersedes_fact_id": c.supersedes_fact_id,
        "created_at": c.created_at.isoformat(),
    }


def cmd_candidates(args: argparse.Namespace) -> int:
    from persona_desktop.domain.model import CandidateStatus
    from persona_desktop.services import queries

    rt = _runtime(args)
    try:
        views = queries.candidates(rt.uow, CandidateStatus(args.status) if args.status else None)
    finally:
        rt.close()
    if args.json:
        _emit_json([candidate_json(v) for v in views])
        return 0
    if not views:
        if args.status:
            _nothing(f"No {args.status} candidates.", "`persona-desktop candidates` lists them all.")
        else:
            _nothing(
                "No proposals yet.",
                "They come from a sleep cycle (`persona-desktop sleep run`) or a review of your chat"
                " with the assistant (`persona-desktop review run`).",
            )
        return 0
    for v in views:
        c = v.candidate
        score = f"{c.score:.2f}" if c.score is not None else "  - "
        print(
            f"#{c.id:<4} {c.status.value:8} {score} {c.subject.value:7} {c.statement}  [{', '.join(v.refs)}]"
        )
        if c.reason and c.status.value in ("pending", "dropped"):
            print(f"      why {c.status.value}: {c.reason}")
    print(f"{len(views)} candidate(s)")
    return 0


def fact_json(view: Any) -> dict[str, Any]:
    f = view.fact
    return {
        "id": f.id,
        "statement": f.statement,
        "subject": f.subject.value,
        "status": f.status.value,
        "refs": view.refs,
        "category": f.category,
        "candidate_id": f.candidate_id,
        "origin": view.origin,
        "valid_from": f.valid_from.isoformat(),
        "valid_to": f.valid_to.isoformat() if f.valid_to else None,
        "superseded_by": f.superseded_by,
    }


def cmd_facts(args: argparse.Namespace) -> int:
    from persona_desktop.domain.model import FactStatus
    from persona_desktop.services import queries, review

    rt = _runtime(args)
    try:
        if args.action == "why":
            prov = review.why(rt.uow, _int_id(args.id, "fact"))
            if args.json:
                _emit_json(provenance_json(prov))
            else:
                print_provenance(prov)
            return 0
        if args.action == "revert":
            fact_id = _int_id(args.id, "fact")
            review.revert_fact(rt.uow, fact_id, rt.clock.now())
            print(f"fact {fact_id} reverted")
            _export_after(rt)
            return 0
        if args.id is not None:
            raise PersonaError(f"unknown facts action {args.id!r}; use `facts why ID` or `facts revert ID`")
        views = queries.facts(rt.uow, FactStatus(args.status) if args.status else None, args.search or "")
    finally:
        rt.close()
    if args.json:
        _emit_json([fact_json(v) for v in views])
        return 0
    if not views:
        if args.status or args.search:
            _nothing("No fact matches.", "`persona-desktop facts` lists every fact.")
        else:
            _nothing(
                "Nothing is remembered yet.",
                "Approve a waiting proposal (`persona-desktop candidates`, then `persona-desktop approve ID`),"
                " or let the sleep cycle add what you said yourself.",
            )
        return 0
    for v in views:
        f = v.fact
        print(f"#{f.id:<4} {f.status.value:10} {f.subject.value:7} {f.statement}  [{', '.join(v.refs)}]")
    print(f"{len(views)} fact(s)")
    return 0


def provenance_json(prov: Any) -> dict[str, Any]:
    cand = prov.candidate
    return {
        "fact": {"id": prov.fact.id, "statement": prov.fact.statement, "status": prov.fact.status.value},
        "candidate": None
        if cand is None
        else {"id": cand.id, "statement": cand.statement, "score": cand.score, "signals": cand.signals},
        "evidence": [
            {
                **fragment_json(item.fragment),
                "source": item.source_key,
                "source_label": item.source_label,
                "context": [{"ref": c.ref, "author": c.author.value, "text": c.text} for c in item.context],
            }
            for item in prov.evidence
        ],
        "decisions": prov.decisions,
    }


def print_provenance(prov: Any) -> None:
    """`facts why` for a person: how the fact got into memory, its evidence, the decisions."""
    from persona_desktop.services import explain

    f, c = prov.fact, prov.candidate
    print(f"Fact {f.id}: {f.statement}")
    status = {"applied": "In memory since", "superseded": "Replaced on", "reverted": "Taken back on"}
    since = f.valid_from if f.status.value == "applied" else f.valid_to
    print(f"  {status.get(f.status.value, f.status.value)} {explain.local_time(since)}.")
    if c is None:
        print("  Written directly, without a proposal to review.")
    else:
        owner = any(d["actor"] == "owner" and d["action"] == "candidate.approved" for d in prov.decisions)
        how = "Approved by you" if owner else "Added automatically"
        score = "not scored" if c.score is None else f"score {c.score:.2f}"
        print(f"  {how}; proposal {c.id} ({score}).")
        if c.reason:
            print(f"  {explain.reason_words(c.reason)}")
        if c.signals:
            parts = [
                f"{explain.SIGNAL_WORDS.get(name, name).lower()} {value:.2f}"
                for name, value in c.signals.items()
            ]
            print(f"  Score signals: {', '.join(parts)}.")
    print(
        f"Evidence ({len(prov.evidence)}):"
        if prov.evidence
        else "Evidence: none left (its sources were forgotten)."
    )
    for n, item in enumerate(prov.evidence, 1):
        fr = item.fragment
        where = explain.screen_place(fr.locator) or explain.speech_span(fr.locator)
        said = "said " + explain.byline(fr) if explain.byline(fr).startswith("by") else explain.byline(fr)
        print(
            f"  {n}. {fr.kind.value.capitalize()} \u201c{item.source_label}\u201d,"
            f" {explain.local_time(fr.captured_at)}, {said}"
            f" ({explain.TRUST_WORDS.get(fr.trust.value, fr.trust.value)}):"
        )
        print(f"     \u201c{fr.text}\u201d")
        print(f"     {where + ' ' if where else ''}Source: {fr.ref}")
    if prov.decisions:
        print("History:")
    for d in prov.decisions:
        at = explain.local_time(datetime.fromisoformat(d["at"]))
        print(f"  {at}  {explain.decision_words(d)}")


MAX_ID = 2**63 - 1  # SQLite's largest integer


def _int_id(value: str | None, what: str) -> int:
    """A row id as the owner typed it: ASCII digits only ("²" and "٣" are digits to str.isdigit)."""
    text = (value or "").strip()
    if not (text.isascii() and text.isdigit()) or len(text) > 19 or int(text) > MAX_ID:
        raise PersonaError(f"expected a {what} id (a whole number like 12), got {value!r}")
    return int(text)


def _count(text: str) -> int:
    """argparse type for --limit: a whole number from 0 to a billion."""
    value = text.strip()
    if not (value.isascii() and value.isdigit()) or len(value) > 10 or int(value) > 1_000_000_000:
        raise argparse.ArgumentTypeError(f"expected a whole number from 0 to 1000000000, got {text!r}")
    return int(value)


def cmd_decide(args: argparse.Namespace) -> int:
    from persona_desktop.services import review

    rt = _runtime(args)
    try:
        now = rt.clock.now()
        if args.command == "approve":
            cid = _int_id(args.id, "candidate")
            fact_id = review.approve(rt.uow, cid, now, args.statement)
            print(f"candidate {cid} approved{_approved_as(rt, cid, fact_id)}")
        elif args.command == "reject":
            cid = _int_id(args.id, "candidate")
            review.reject(rt.uow, cid, now)
            print(f"candidate {cid} rejected")
        else:
            print(review.undo(rt.uow, now))
        _export_after(rt)
    finally:
        rt.close()
    return 0


def _approved_as(rt: Any, cid: int, result_id: int) -> str:
    from persona_desktop.domain.proposals import Forget, NewSkill, SkillPatch

    with rt.uow.read() as uow:
        cand = uow.candidates.get(cid)
    proposal = cand.proposal if cand is not None else None
    if isinstance(proposal, NewSkill | SkillPatch):
        return f": skill {proposal.name} written"
    if isinstance(proposal, Forget):
        return f": fact {result_id} forgotten"
    return f" as fact {result_id}"


def _export_after(rt: Any) -> None:
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


# --- chat and the turn review -----------------------------------------------------------


def _review_runner(rt: Any) -> Any:
    from persona_desktop.service_configs import review_config, sleep_config
    from persona_desktop.services.turn_review import TurnReview

    values = rt.settings.values
    return TurnReview(rt.uow, rt.llm(), rt.clock, review_config(values), sleep_config(values))


def _print_review(outcome: Any) -> None:
    for warning in outcome.warnings:
        print(f"persona-desktop: warning: {warning}", file=sys.stderr)
    if outcome.error:
        print(f"persona-desktop: review failed: {outcome.error}", file=sys.stderr)
    elif outcome.status != "done":
        print(
            f"persona-desktop: review {outcome.status} after {outcome.iterations} round(s)", file=sys.stderr
        )


def cmd_chat(args: argparse.Namespace) -> int:
    """A terminal chat: one owner message per stdin line, until EOF or /quit; reviews run alongside."""
    import threading
    from concurrent.futures import Future, ThreadPoolExecutor, wait

    from persona_desktop.service_configs import recall_config, review_config
    from persona_desktop.services.chat import ChatSession, drain_turn
    from persona_desktop.services.turn_review import TurnCounter, make_snapshot

    rt = _runtime(args)
    values = rt.settings.values
    cfg = review_config(values)
    session = ChatSession(
        rt.uow,
        rt.llm,
        rt.clock,
        include_observations=values.chat.include_observations,
        recall=recall_config(values),
        embedder=rt.embedder,
    )
    counter = TurnCounter(cfg)
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="turn-review")
    stop = threading.Event()
    running: Future[Any] | None = None
    failure_reported = False

    def report(fut: Future[Any]) -> None:
        nonlocal failure_reported
        try:
            outcome = fut.result()
        except PersonaError as exc:
            outcome = None
            error = str(exc)
        else:
            error = outcome.error
        if error and failure_reported:
            return  # a failing review is reported once
        failure_reported = failure_reported or bool(error)
        if outcome is None:
            print(f"persona-desktop: review failed: {error}", file=sys.stderr)
            return
        _print_review(outcome)
        if outcome.summary():
            print(outcome.summary(), file=sys.stderr)

    def review(kind: Any, snapshot: Any) -> Any:
        outcome = _review_runner(rt).run(snapshot, kind, stop.is_set)
        if outcome.applied:
            _export_after(rt)
        return outcome

    def show(piece: str) -> None:
        sys.stdout.write(piece)
        sys.stdout.flush()

    try:
        for line in iter(sys.stdin.readline, ""):
            text = line.strip()
            if text in ("/quit", "/exit"):
                break
            if not text:
                continue
            outcome = drain_turn(session.ask(text), show)
            sys.stdout.write("\n")
            sys.stdout.flush()
            if outcome.error:
                print(f"persona-desktop: the assistant could not answer: {outcome.error}", file=sys.stderr)
            _print_memories(outcome)
            if running is not None and running.done():
                report(running)
                running = None
            kind = counter.owner_turn(text) if cfg.enabled else None
            if kind is not None:
                if running is not None:
                    print("persona-desktop: a review is still running; this one is skipped", file=sys.stderr)
                else:
                    snap = make_snapshot(session.id, session.system_prompt(), session.conversation.messages)
                    running = pool.submit(review, kind, snap)
        if running is not None:
            wait([running], timeout=cfg.timeout_s)
            stop.set()
            report(running)
    finally:
        stop.set()
        pool.shutdown(wait=True)
        rt.close()
    return 0


def _print_memories(outcome: Any) -> None:
    """Which remembered facts the turn's prompt carried as relevant (stderr: stdout is the reply)."""
    used = outcome.memories
    if used:
        ids = ", ".join(f"#{r.fact.id}" for r in used)
        noun = "memory" if len(used) == 1 else "memories"
        print(f"(used {len(used)} {noun}: {ids}; `persona-desktop facts why ID` tells why)", file=sys.stderr)


def cmd_skills(args: argparse.Namespace) -> int:
    """The skills the owner approved: `skills` lists them, `skills show NAME` prints one."""
    from persona_desktop.services.skills import active_skills, skill_name, summary_line

    rt = _runtime(args)
    try:
        items = active_skills(rt.uow)
    finally:
        rt.close()
    if args.show and args.name is None:
        raise PersonaError("skills show needs a NAME")
    if args.name is not None:
        wanted = skill_name(args.name)
        found = next((s for s in items if s.name == wanted), None)
        if found is None:
            raise PersonaError(f"there is no active skill named {wanted}")
        sys.stdout.write(found.content)
        return 0
    if args.json:
        _emit_json(
            [
                {"id": s.id, "name": s.name, "content": s.content, "updated_at": s.updated_at.isoformat()}
                for s in items
            ]
        )
        return 0
    if not items:
        _nothing(
            "No skills yet.",
            "A chat review may propose one when it is on (`persona-desktop config set review.enabled true`);"
            " you approve it like any proposal.",
        )
        return 0
    for s in items:
        print(f"{s.name:30} {summary_line(s)}")
    print(f"{len(items)} skill(s)")
    return 0


def cmd_review_run(args: argparse.Namespace) -> int:
    from persona_desktop.service_configs import review_config
    from persona_desktop.services.chat import assistant_conversation, load_messages, system_prompt
    from persona_desktop.services.turn_review import ReviewKind, default_kind, make_snapshot

    source = _int_id(args.source, "source") if args.source is not None else None
    rt = _runtime(args)
    try:
        cfg = review_config(rt.settings.values)
        conv_id, source_id = assistant_conversation(rt.uow, source)
        messages = load_messages(rt.uow, source_id)
        prompt = system_prompt(rt.uow, rt.settings.values.chat.include_observations)
        kind = ReviewKind(args.kind) if args.kind else default_kind(cfg)
        outcome = _review_runner(rt).run(make_snapshot(conv_id, prompt, messages), kind)
        if outcome.applied:
            _export_after(rt)
    finally:
        rt.close()
    if args.json:
        _emit_json({"conversation": conv_id, "source_id": source_id, **outcome.as_json()})
    else:
        _print_review(outcome)
        print(outcome.summary() or f"{kind.value.capitalize()} review: nothing proposed")
    return 2 if outcome.status == "failed" else 0


def cmd_sources(args: argparse.Namespace) -> int:
    from persona_desktop.services.storage_budget import measure

    rt = _runtime(args)
    try:
        with rt.uow.read() as uow:
            items = uow.sources.all()
        usage = (
            [] if args.json else measure(rt.uow, rt.data_dir, rt.settings.values.storage.max_mb, True).lines()
        )
    finally:
        rt.close()
    if args.json:
        _emit_json(
            [
                {"id": i, "key": s.key, "kind": s.kind.value, "label": s.label, "fragments": n}
                for i, s, n in items
            ]
        )
        return 0
    if not items:
        _nothing("No sources yet.", CAPTURE_HINT)
        return 0
    for i, s, n in items:
        print(f"#{i:<5} {s.kind.value:6} {n:>6} fragment(s)  {s.key}  ({s.label})")
    for line in usage:
        print(line)
    return 0


def cmd_forget(args: argparse.Namespace) -> int:
    from datetime import date

    from persona_desktop.domain.model import Kind
    from persona_desktop.services import review

    rt = _runtime(args)
    try:
        now = rt.clock.now()
        if args.what == "source":
            counts = review.forget_source(rt.uow, _int_id(args.target, "source"), now, rt.data_dir)
            what = f"source {args.target}"
        else:
            try:
                day = date.fromisoformat(args.target)
            except ValueError:
                raise PersonaError(f"expected a day as YYYY-MM-DD, got {args.target!r}") from None
            counts = review.forget_day(rt.uow, Kind(args.kind), day, now, rt.data_dir)
            what = f"{counts['sources']} {args.kind} source(s) of {day.isoformat()}"
    finally:
        rt.close()
    print(
        f"forgot {what}: {counts['fragments']} fragment(s) deleted, "
        f"{counts['facts_reverted']} fact(s) reverted, {counts['candidates_dropped']} candidate(s) dropped, "
        f"{counts.get('media_files', 0)} kept crop/clip file(s) deleted"
    )
    return 0


def cmd_journal_verify(args: argparse.Namespace) -> int:
    """Exit 0 when the journal is intact; 1 naming the first entry rewritten, lost or slipped in."""
    from persona_desktop.services.journal_integrity import verify_journal

    rt = _runtime(args)
    try:
        check = verify_journal(rt.uow)
    finally:
        rt.close()
    if args.json:
        _emit_json(
            {"ok": check.ok, "entries": check.entries, "first_bad": check.first_bad, "message": check.message}
        )
    elif check.ok:
        print(check.message)
    else:
        print(f"persona-desktop: error: {check.message}", file=sys.stderr)
    return 0 if check.ok else 1


def cmd_journal(args: argparse.Namespace) -> int:
    from persona_desktop.services import queries

    if args.action == "verify":
        return cmd_journal_verify(args)
    rt = _runtime(args)
    try:
        entries = queries.journal(rt.uow, args.limit)
    finally:
        rt.close()
    if args.json:
        _emit_json(
            [
                {
                    "id": r.id,
                    "at": r.at.isoformat(),
                    "actor": r.actor,
                    "action": r.action,
                    "entity": r.entity,
                    "entity_id": r.entity_id,
                    "run_id": r.run_id,
                    "data": r.data,
                }
                for r in entries
            ]
        )
        return 0
    if not entries:
        _nothing(
            "Nothing has happened yet.",
            "The journal records every import, sleep cycle and decision, and is never rewritten.",
        )
        return 0
    for r in entries:
        target = f"{r.entity} {r.entity_id}" if r.entity_id is not None else r.entity
        print(f"{r.id:>5} {r.at:%Y-%m-%d %H:%M:%S} {r.actor:8} {r.action:22} {target}")
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
    if args.key == "app.start_at_login":  # the XDG autostart entry follows the setting
        from persona_desktop.autostart import sync_autostart

        data_dir = _data_dir(args)
        sync_autostart(
            settings.values.app.start_at_login, ["--data-dir", str(data_dir.resolve())] if data_dir else []
        )
    if args.key == "storage.encrypted":
        _apply_encryption_setting(args, settings.values.storage.encrypted)
    settings.save()
    print(f"{args.key} = {settings.format(args.key)}")
    return 0


def _apply_encryption_setting(args: argparse.Namespace, encrypted: bool) -> None:
    """Encrypt or decrypt the store now (opening it does); the setting is saved only if that worked."""
    if not encrypted:
        print(
            "persona-desktop: warning: the store, kept crops and clips are being decrypted: anyone who can "
            "read the data dir (a backup, a stolen disk, another admin) can then read everything captured",
            file=sys.stderr,
        )
    rt = _runtime(args, encrypted)
    try:
        state = "encrypted" if rt.store.encrypted else "not encrypted"
    finally:
        rt.close()
    print(f"the store in {rt.data_dir} is {state}")


# --- storage ----------------------------------------------------------------------------


def cmd_storage(args: argparse.Namespace) -> int:
    """`storage`: what uses the space; `storage trim`; `storage passphrase` / `storage keyring` re-key."""
    from persona_desktop.services.storage_budget import enforce_budget, measure

    rt = _runtime(args)
    try:
        budget = rt.settings.values.storage.max_mb
        if args.action in ("passphrase", "keyring"):
            return _change_key(rt, to_keyring=args.action == "keyring")
        if args.action == "trim":
            result = enforce_budget(rt.uow, rt.data_dir, budget, rt.clock.now())
            if result.before.fraction <= 1.0:
                print(f"under the budget ({result.before.fraction:.0%} of {budget} MB): nothing to trim")
                return 0
            print(
                f"trimmed {result.captures} capture(s), {result.fragments} fragment(s), "
                f"{result.media_files} crop/clip file(s); now {result.after.fraction:.0%} of the budget"
                + ("; still over it: only cited captures and chat are left" if result.still_over else "")
            )
            return 0
        report = measure(rt.uow, rt.data_dir, budget, detailed=True)
        key = rt.store.key_source
    finally:
        rt.close()
    if args.json:
        _emit_json({"encrypted": key is not None, "key": key, **report.as_json()})
        return 0
    protection = {"keyring": "key in the OS keyring", "passphrase": "key under your passphrase"}
    print(f"encrypted: {'yes, ' + protection[key] if key else 'no (storage.encrypted false)'}")
    for line in report.lines():
        print(line)
    return 0


def _change_key(rt: Any, *, to_keyring: bool) -> int:
    protection = rt.store.change_key(to_keyring=to_keyring)
    with rt.uow() as uow:
        uow.journal.append(
            at=rt.clock.now(), actor="owner", action="store.rekeyed", entity="store", data={"key": protection}
        )
        uow.commit()
    where = "in the OS keyring" if protection == "keyring" else "under the new passphrase"
    print(f"the store was re-keyed: a new key, kept {where}; the old key no longer opens it")
    return 0


# --- parser -----------------------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    """Usage errors as one line, like every other error of the CLI."""

    # The dest of a positional that is the owner's own text (search's query), if any: see
    # parse_known_args.
    free_text = ""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
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
    jour.add_argument("--limit", type=_count)
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
        data_dir = _data_dir_or_none(args)
        db = data_dir / "persona.sqlite3" if data_dir is not None else None
        print(f"persona-desktop: error: {one_line(exc, data_dir, db)}", file=sys.stderr)
        return 1


def _data_dir_or_none(args: argparse.Namespace) -> Path | None:
    try:
        from persona_desktop.bootstrap import default_data_dir

        return _data_dir(args) or default_data_dir()
    except Exception:  # the boundary must not fail on a bad --data-dir or environment
        return None


def _tolerant_output() -> None:
    """Text that cannot be encoded (a lone surrogate in an old store) is escaped, never a crash."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(ValueError, OSError):
            if isinstance(stream, io.TextIOWrapper):  # a replaced stream may not be one
                stream.reconfigure(errors="backslashreplace")


def start_app(args: argparse.Namespace) -> int:
    try:
        from persona_desktop.app import run_app, self_test
    except ImportError as exc:
        raise PersonaError(f"the desktop app cannot start: {exc}") from None
    if getattr(args, "self_test", False):
        return self_test(_data_dir(args))
    _check_graphical_session()
    return run_app(_data_dir(args), list(getattr(args, "qt_args", []) or []))


def _check_graphical_session() -> None:
    """Qt aborts without a display, advising to reinstall; say what is really wrong instead."""
    if not sys.platform.startswith("linux") or os.environ.get("QT_QPA_PLATFORM"):
        return
    if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        raise PersonaError(
            "no graphical session (DISPLAY and WAYLAND_DISPLAY are unset): the tray app needs one; "
            "run a command instead (see --help), or --self-test"
        )
