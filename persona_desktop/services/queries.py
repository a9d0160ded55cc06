"""Read-only views for the CLI and the windows."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from persona_desktop.domain.model import (
    Candidate,
    CandidateStatus,
    Fact,
    FactStatus,
    Fragment,
    Kind,
    Observation,
    Revision,
    SourceInfo,
)
from persona_desktop.ports import UnitOfWork, UnitOfWorkFactory
from persona_desktop.services.review import EvidenceItem, evidence_items


@dataclass(frozen=True, slots=True)
class CandidateView:
    candidate: Candidate
    refs: list[str]
    evidence_count: int
    sources: list[str]

    def to_json(self) -> dict[str, Any]:
        """The candidate in the CLI's JSON (DESIGN.md, CLI contract: `candidates --json`)."""
        c = self.candidate
        return {
            "id": c.id,
            "statement": c.statement,
            "subject": c.subject.value,
            "kind": c.proposal.kind.value,
            "status": c.status.value,
            "score": c.score,
            "signals": c.signals,
            "refs": self.refs,
            "evidence_count": self.evidence_count,
            "category": c.category,
            "origin": c.origin,
            "run_id": c.run_id,
            "reason": c.reason,
            "supersedes_fact_id": c.supersedes_fact_id,
            "created_at": c.created_at.isoformat(),
        }


@dataclass(frozen=True, slots=True)
class FactView:
    fact: Fact
    refs: list[str]
    origin: str  # "policy" (applied overnight) or "owner" (approved)

    def to_json(self) -> dict[str, Any]:
        """The fact in the CLI's JSON (DESIGN.md, CLI contract: `facts --json`)."""
        f = self.fact
        return {
            "id": f.id,
            "statement": f.statement,
            "subject": f.subject.value,
            "status": f.status.value,
            "refs": self.refs,
            "category": f.category,
            "candidate_id": f.candidate_id,
            "origin": self.origin,
            "valid_from": f.valid_from.isoformat(),
            "valid_to": f.valid_to.isoformat() if f.valid_to else None,
            "superseded_by": f.superseded_by,
        }


@dataclass(frozen=True, slots=True)
class SourceView:
    """A source with its row id and how many fragments it holds."""

    id: int
    source: SourceInfo
    fragments: int

    def to_json(self) -> dict[str, Any]:
        """The source in the CLI's JSON (`sources --json`)."""
        s = self.source
        return {
            "id": self.id,
            "key": s.key,
            "kind": s.kind.value,
            "label": s.label,
            "fragments": self.fragments,
        }


def candidates(uow_factory: UnitOfWorkFactory, status: CandidateStatus | None = None) -> list[CandidateView]:
    with uow_factory.read() as uow:
        items = uow.candidates.all(status)
        index = uow.candidates.evidence_index([c.id for c in items])
    return [
        CandidateView(c, [r for r, _ in index[c.id]], len(index[c.id]), sorted({s for _, s in index[c.id]}))
        for c in items
    ]


def candidate(uow_factory: UnitOfWorkFactory, candidate_id: int) -> Candidate | None:
    with uow_factory.read() as uow:
        return uow.candidates.get(candidate_id)


def facts(
    uow_factory: UnitOfWorkFactory, status: FactStatus | None = None, search: str = ""
) -> list[FactView]:
    needle = search.casefold().strip()
    with uow_factory.read() as uow:
        found = [f for f in uow.facts.all(status) if not needle or needle in f.statement.casefold()]
        return fact_views(uow, found)


def fact_views(uow: UnitOfWork, found: Sequence[Fact]) -> list[FactView]:
    """Facts with their evidence refs and who applied them, in two queries."""
    cids = [f.candidate_id for f in found if f.candidate_id is not None]
    index = uow.candidates.evidence_index(cids)
    statuses = uow.candidates.statuses(cids)
    out = []
    for f in found:
        cid = f.candidate_id
        refs = [r for r, _ in index.get(cid, [])] if cid is not None else []
        origin = "policy" if cid is not None and statuses.get(cid) is CandidateStatus.APPLIED else "owner"
        out.append(FactView(f, refs, origin))
    return out


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


def sources(uow_factory: UnitOfWorkFactory) -> list[SourceView]:
    with uow_factory.read() as uow:
        return [SourceView(i, s, n) for i, s, n in uow.sources.all()]
