"""What was captured and learned: `fragments`, `sources`, `forget source|day`, `skills`."""

from __future__ import annotations

import argparse
import sys

from persona_desktop.cli.arguments import int_id
from persona_desktop.cli.output import CAPTURE_HINT, listed
from persona_desktop.cli.runtime import runtime
from persona_desktop.errors import PersonaError


def cmd_fragments(args: argparse.Namespace) -> int:
    from persona_desktop.domain.model import Kind
    from persona_desktop.services import queries

    with runtime(args) as rt:
        items = queries.fragments(rt.uow, Kind(args.kind) if args.kind else None)
    empty = ("Nothing captured yet" + (f" from {args.kind}" if args.kind else "") + ".", CAPTURE_HINT)
    if listed(args, items, empty):
        return 0
    for f in items:
        print(
            f"{f.captured_at:%Y-%m-%d %H:%M} {f.kind.value:6} {f.author.value:9} {f.trust.value:9} [{f.ref}] {f.text}"
        )
    print(f"{len(items)} fragment(s)")
    return 0


def cmd_sources(args: argparse.Namespace) -> int:
    from persona_desktop.services import queries
    from persona_desktop.services.storage_budget import measure

    with runtime(args) as rt:
        items = queries.sources(rt.uow)
        usage = (
            [] if args.json else measure(rt.uow, rt.data_dir, rt.settings.values.storage.max_mb, True).lines()
        )
    if listed(args, items, ("No sources yet.", CAPTURE_HINT)):
        return 0
    for s in items:
        source = s.source
        print(
            f"#{s.id:<5} {source.kind.value:6} {s.fragments:>6} fragment(s)  {source.key}  ({source.label})"
        )
    for line in usage:
        print(line)
    return 0


def cmd_forget(args: argparse.Namespace) -> int:
    from datetime import date

    from persona_desktop.domain.model import Kind
    from persona_desktop.services import review

    with runtime(args) as rt:
        now = rt.clock.now()
        if args.what == "source":
            counts = review.forget_source(rt.uow, int_id(args.target, "source"), now, rt.data_dir)
            what = f"source {args.target}"
        else:
            try:
                day = date.fromisoformat(args.target)
            except ValueError:
                raise PersonaError(f"expected a day as YYYY-MM-DD, got {args.target!r}") from None
            counts = review.forget_day(rt.uow, Kind(args.kind), day, now, rt.data_dir)
            what = f"{counts['sources']} {args.kind} source(s) of {day.isoformat()}"
    print(
        f"forgot {what}: {counts['fragments']} fragment(s) deleted, "
        f"{counts['facts_reverted']} fact(s) reverted, {counts['candidates_dropped']} candidate(s) dropped, "
        f"{counts.get('media_files', 0)} kept crop/clip file(s) deleted"
    )
    return 0


def cmd_skills(args: argparse.Namespace) -> int:
    """The skills the owner approved: `skills` lists them, `skills show NAME` prints one."""
    from persona_desktop.services.skills import active_skills, skill_name, summary_line

    with runtime(args) as rt:
        items = active_skills(rt.uow)
    if args.show and args.name is None:
        raise PersonaError("skills show needs a NAME")
    if args.name is not None:
        wanted = skill_name(args.name)
        found = next((s for s in items if s.name == wanted), None)
        if found is None:
            raise PersonaError(f"there is no active skill named {wanted}")
        sys.stdout.write(found.content)
        return 0
    empty = (
        "No skills yet.",
        "A chat review may propose one when it is on (`persona-desktop config set review.enabled true`);"
        " you approve it like any proposal.",
    )
    if listed(args, items, empty):
        return 0
    for s in items:
        print(f"{s.name:30} {summary_line(s)}")
    print(f"{len(items)} skill(s)")
    return 0
