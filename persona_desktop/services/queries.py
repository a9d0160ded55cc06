"""Read-only views for the CLI and the windows."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from persona_desktop.domain.model import (
    Candidate,
    CandidateStatus,
    Fact,
    FactStatus,
    Fragment,
    Kind,
    Observation,
    Revision,
)
from persona_desktop.ports import UnitOfWorkFactory
from persona_desktop.services.review import EvidenceItem, evidence_items


@dataclass(frozen=True, slots=True)
class CandidateView:
    candidate: Candidate
    refs: list[str]
    evidence_count: int
    sources: list[str]


@dataclass(frozen=True, slots=True)
class FactView:
    fact: Fact
    refs: list[str]
    origin: str  # "policy" (applied overnight) or "owner" (approved)


def candidates(uow_factory: UnitOfWorkFactory, status: CandidateStatus | None = None) -> list[CandidateView]:
    with uow_factory.read() as uow:
        out = []
        for c in uow.candidates.all(status):
            ev = uow.candidates.evidence(c.id)
            out.append(CandidateView(c, [f.ref for f in ev], len(ev), sorted({f.session for f in ev})))
        return out


def pending_candidates(uow_factory: UnitOfWorkFactory) -> list[CandidateView]:
    return candidates(uow_factory, CandidateStatus.PENDING)


def facts(
    uow_factory: UnitOfWorkFactory, status: FactStatus | None = None, search: str = ""
) -> list[FactView]:
    needle = search.casefold().strip()
    with uow_factory.read() as uow:
        out = []
        for f in uow.facts.all(status):
            if needle and needle not in f.statement.casefold():
                continue
            refs: list[str] = []
            origin = "owner"
            if f.candidate_id is not None:
                refs = [e.ref for e in uow.candidates.evidence(f.candidate_id)]
                cand = uow.candidates.get(f.candidate_id)
                origin = "policy" if cand is not None and cand.status is CandidateStatus.APPLIED else "owner"
            out.append(FactView(f, refs, origin))
        return out


def recent_facts(uow_factory: UnitOfWorkFactory, now: datetime, days: int = 7) -> list[FactView]:
    since = now - timedelta(days=days)
    return [v for v in facts(uow_factory, FactStatus.APPLIED) if v.fact.created_at >= since]


def journal(uow_factory: UnitOfWorkFactory, limit: int | None = None) -> list[Revision]:
    with uow_factory.read() as uow:
        return uow.journal.all(limit=limit)


def observations(uow_factory: UnitOfWorkFactory) -> list[Observation]:
    with uow_factory.read() as uow:
        return uow.observations.all()


def evidence(uow_factory: UnitOfWorkFactory, candidate_id: int, context: int = 2) -> list[EvidenceItem]:
    with uow_factory.read() as uow:
        return evidence_items(uow, candidate_id, context)


def fragments(uow_factory: UnitOfWorkFactory, kind: Kind | None = None) -> list[Fragment]:
    with uow_factory.read() as uow:
        return uow.fragments.all(kind)


def counts(uow_factory: UnitOfWorkFactory) -> dict[str, int]:
    with uow_factory.read() as uow:
        pending = len(uow.candidates.all(CandidateStatus.PENDING))
        applied = len(uow.facts.all(FactStatus.APPLIED))
        return {"pending": pending, "facts": applied}
