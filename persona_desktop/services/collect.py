"""Phase 1 of the sleep cycle: store what the model proposed for one document.

Candidates only, never memory writes (`proposals.land` does the storing). Cited refs
were checked against the document by the parser; a model's `updates_fact` that
names a current fact makes the proposal a fact update, which only the owner may
apply; one that names anything else is journaled and ignored.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from persona_desktop.domain.documents import Document
from persona_desktop.domain.extraction import ExtractedCandidate, ExtractionResult
from persona_desktop.domain.finite import json_safe
from persona_desktop.domain.model import FactStatus
from persona_desktop.domain.proposals import FactUpdate, NewFact, Proposal, Via
from persona_desktop.ports import UnitOfWork
from persona_desktop.services.proposals import Proposed, land


@dataclass(slots=True)
class CollectCounts:
    proposed: int = 0
    merged: int = 0
    refs_rejected: int = 0
    not_evidence: int = 0


def _proposal(uow: UnitOfWork, item: ExtractedCandidate, digest: str, problems: list[str]) -> Proposal:
    via = Via(
        document=digest,
        cited_refs=item.refs,
        confidence=item.confidence,
        raw=json_safe(dict(item.raw)),
    )
    if item.updates_fact is None:
        return NewFact(via)
    target = uow.facts.get(item.updates_fact)
    if target is None or target.status is not FactStatus.APPLIED:
        problems.append(
            f"{item.statement!r}: updates_fact {item.updates_fact} is not a current fact, ignored"
        )
        return NewFact(via)
    return FactUpdate(target.id, via)


def store_extraction(
    uow: UnitOfWork, doc: Document, result: ExtractionResult, run_id: int, at: datetime
) -> CollectCounts:
    counts = CollectCounts()
    by_ref = {f.ref: f for f in doc.fragments}
    digest = doc.digest()
    for problem in result.problems:
        _problem(uow, digest, run_id, at, problem)
    for item in result.candidates:
        problems: list[str] = []
        proposal = _proposal(uow, item, digest, problems)
        for problem in problems:
            _problem(uow, digest, run_id, at, problem)
        done = land(
            uow,
            Proposed(
                statement=item.statement,
                subject=item.subject,
                category=item.category,
                proposal=proposal,
                origin="sleep",
                run_id=run_id,
                cited=[by_ref[r] for r in item.refs],
                rejected_refs=item.rejected_refs,
                journal={"document": digest},
            ),
            at,
        )
        counts.proposed += done.new
        counts.merged += not done.new
        counts.refs_rejected += len(item.rejected_refs)
        counts.not_evidence += len(done.not_evidence)
    return counts


def _problem(uow: UnitOfWork, digest: str, run_id: int, at: datetime, problem: str) -> None:
    uow.journal.append(
        at=at,
        actor="sleep",
        action="extraction.problem",
        entity="document",
        run_id=run_id,
        data={"document": digest, "problem": problem},
    )
