"""Read views for the windows, shaped so that a big store opens fast.

The review window shows the waiting list at once (one query) and fills in evidence
counts and sessions afterwards, in batches; the memory browser lists facts without
touching their evidence until one is asked "why". Only existing ports are used.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from persona_desktop.domain.model import Candidate, CandidateStatus, Fact, FactStatus, Revision
from persona_desktop.ports import UnitOfWorkFactory
from persona_desktop.services.queries import FactView, fact_views
from persona_desktop.services.review import DECISIONS, UNDO

OWNER_ACTIONS = (*DECISIONS, UNDO, "captured_data.deleted")


@dataclass(frozen=True, slots=True)
class EvidenceSummary:
    count: int
    sessions: tuple[str, ...]


def waiting(uow_factory: UnitOfWorkFactory) -> list[Candidate]:
    with uow_factory.read() as uow:
        return uow.candidates.all(CandidateStatus.PENDING)


def evidence_summaries(
    uow_factory: UnitOfWorkFactory, candidate_ids: Sequence[int]
) -> dict[int, EvidenceSummary]:
    with uow_factory.read() as uow:
        index = uow.candidates.evidence_index(candidate_ids)
    return {cid: EvidenceSummary(len(ev), tuple(sorted({s for _, s in ev}))) for cid, ev in index.items()}


def undone_candidate(uow_factory: UnitOfWorkFactory) -> Candidate | None:
    """After `review.undo`: the candidate that is waiting again, if the undo put one back."""
    with uow_factory.read() as uow:
        last = uow.journal.all(limit=1)
        if not last or last[0].action != "decision.undone" or last[0].entity != "candidate":
            return None
        entity_id = last[0].entity_id
        candidate = uow.candidates.get(entity_id) if entity_id is not None else None
    if candidate is None or candidate.status is not CandidateStatus.PENDING:
        return None
    return candidate


def pending_count(uow_factory: UnitOfWorkFactory) -> int:
    with uow_factory.read() as uow:
        return uow.candidates.count_status(CandidateStatus.PENDING)


def recent_facts(uow_factory: UnitOfWorkFactory, now: datetime, days: int = 7) -> list[FactView]:
    """Applied facts created in the last `days`, newest first; evidence read only for those."""
    since = now - timedelta(days=days)
    with uow_factory.read() as uow:
        recent = [f for f in uow.facts.all(FactStatus.APPLIED) if f.created_at >= since]
        return fact_views(uow, list(reversed(recent)))


def all_facts(uow_factory: UnitOfWorkFactory, search: str = "") -> list[Fact]:
    """Every fact (applied first, then superseded and reverted), filtered by a search text."""
    needle = search.casefold().strip()
    with uow_factory.read() as uow:
        facts = uow.facts.all()
    if needle:
        facts = [f for f in facts if needle in f.statement.casefold()]
    order = {FactStatus.APPLIED: 0, FactStatus.SUPERSEDED: 1, FactStatus.REVERTED: 2}
    return sorted(facts, key=lambda f: (order[f.status], -f.id))


def journal_newest_first(uow_factory: UnitOfWorkFactory, limit: int, owner_only: bool) -> list[Revision]:
    """The journal for the History tab: the owner's own decisions, or everything.

    The owner's decisions are read by action, so a busy capture log cannot push them
    out of the `limit` newest entries."""
    with uow_factory.read() as uow:
        rows = uow.journal.all(limit=limit, actions=OWNER_ACTIONS if owner_only else None)
    return [r for r in reversed(rows) if not owner_only or r.actor == "owner"]
