"""`journal`: the append-only revision journal; `journal verify`: is it intact."""

from __future__ import annotations

import argparse
import sys

from persona_desktop.cli.output import emit_json, listed
from persona_desktop.cli.runtime import runtime


def cmd_journal(args: argparse.Namespace) -> int:
    from persona_desktop.services import queries

    if args.action == "verify":
        return cmd_journal_verify(args)
    with runtime(args) as rt:
        entries = queries.journal(rt.uow, args.limit)
    empty = (
        "Nothing has happened yet.",
        "The journal records every import, sleep cycle and decision, and is never rewritten.",
    )
    if listed(args, entries, empty):
        return 0
    for r in entries:
        target = f"{r.entity} {r.entity_id}" if r.entity_id is not None else r.entity
        print(f"{r.id:>5} {r.at:%Y-%m-%d %H:%M:%S} {r.actor:8} {r.action:22} {target}")
    return 0


def cmd_journal_verify(args: argparse.Namespace) -> int:
    """Exit 0 when the journal is intact; 1 naming the first entry rewritten, lost or slipped in."""
    from persona_desktop.services.journal_integrity import verify_journal

    with runtime(args) as rt:
        check = verify_journal(rt.uow)
    if args.json:
        emit_json(check.to_json())
    elif check.ok:
        print(check.message)
    else:
        print(f"persona-desktop: error: {check.message}", file=sys.stderr)
    return 0 if check.ok else 1
