"""`candidates`, `approve ID`, `reject ID`, `undo` and `facts [why|revert ID]`: proposals and memory."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from persona_desktop.cli.arguments import int_id
from persona_desktop.cli.output import emit_json, listed
from persona_desktop.cli.provenance import print_provenance
from persona_desktop.cli.runtime import export_after, runtime
from persona_desktop.errors import PersonaError

if TYPE_CHECKING:
    from persona_desktop.ports import UnitOfWorkFactory

NO_PROPOSALS = (
    "No proposals yet.",
    "They come from a sleep cycle (`persona-desktop sleep run`) or a review of your chat"
    " with the assistant (`persona-desktop review run`).",
)
NO_FACTS = (
    "Nothing is remembered yet.",
    "Approve a waiting proposal (`persona-desktop candidates`, then `persona-desktop approve ID`),"
    " or let the sleep cycle add what you said yourself.",
)


def cmd_candidates(args: argparse.Namespace) -> int:
    from persona_desktop.domain.model import CandidateStatus
    from persona_desktop.services import queries

    with runtime(args) as rt:
        views = queries.candidates(rt.uow, CandidateStatus(args.status) if args.status else None)
    some = (f"No {args.status} candidates.", "`persona-desktop candidates` lists them all.")
    if listed(args, views, some if args.status else NO_PROPOSALS):
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


def cmd_decide(args: argparse.Namespace) -> int:
    """`approve ID [--statement TEXT]`, `reject ID` and `undo` (the owner's last decision)."""
    from persona_desktop.services import review

    with runtime(args) as rt:
        now = rt.clock.now()
        if args.command == "approve":
            cid = int_id(args.id, "candidate")
            fact_id = review.approve(rt.uow, cid, now, args.statement)
            print(f"candidate {cid} approved{_approved_as(rt.uow, cid, fact_id)}")
        elif args.command == "reject":
            cid = int_id(args.id, "candidate")
            review.reject(rt.uow, cid, now)
            print(f"candidate {cid} rejected")
        else:
            print(review.undo(rt.uow, now))
        export_after(rt)
    return 0


def _approved_as(uow: UnitOfWorkFactory, cid: int, result_id: int) -> str:
    """What the approval did, by the proposal's kind: a fact, a skill, a fact forgotten."""
    from persona_desktop.domain.proposals import Forget, NewSkill, SkillPatch
    from persona_desktop.services import queries

    cand = queries.candidate(uow, cid)
    proposal = cand.proposal if cand is not None else None
    if isinstance(proposal, NewSkill | SkillPatch):
        return f": skill {proposal.name} written"
    if isinstance(proposal, Forget):
        return f": fact {result_id} forgotten"
    return f" as fact {result_id}"


def cmd_facts(args: argparse.Namespace) -> int:
    from persona_desktop.domain.model import FactStatus
    from persona_desktop.services import queries, review

    with runtime(args) as rt:
        if args.action == "why":
            prov = review.why(rt.uow, int_id(args.id, "fact"))
            if args.json:
                emit_json(prov.to_json())
            else:
                print_provenance(prov)
            return 0
        if args.action == "revert":
            fact_id = int_id(args.id, "fact")
            review.revert_fact(rt.uow, fact_id, rt.clock.now())
            print(f"fact {fact_id} reverted")
            export_after(rt)
            return 0
        if args.id is not None:
            raise PersonaError(f"unknown facts action {args.id!r}; use `facts why ID` or `facts revert ID`")
        views = queries.facts(rt.uow, FactStatus(args.status) if args.status else None, args.search or "")
    some = ("No fact matches.", "`persona-desktop facts` lists every fact.")
    if listed(args, views, some if args.status or args.search else NO_FACTS):
        return 0
    for v in views:
        f = v.fact
        print(f"#{f.id:<4} {f.status.value:10} {f.subject.value:7} {f.statement}  [{', '.join(v.refs)}]")
    print(f"{len(views)} fact(s)")
    return 0
