"""Phase 1 of the sleep cycle: store what the model proposed for one document.

Candidates only, never memory writes. Cited refs are checked against the
document; the assistant's own lines are never evidence; the same statement
seen again adds evidence to the open candidate instead of a new one.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from persona_desktop.domain.documents import Document
from persona_desktop.domain.extraction import ExtractionResult
from persona_desktop.domain.model import Author
from persona_desktop.domain.text import statement_key
from persona_desktop.ports import UnitOfWork


@dataclass(slots=True)
class CollectCounts:
    proposed: int = 0
    merged: int = 0
    refs_rejected: int = 0
    not_evidence: int = 0


def store_extraction(
    uow: UnitOfWork, doc: Document, result: ExtractionResult, run_id: int, at: datetime
) -> CollectCounts:
    counts = CollectCounts()
    by_ref = {f.ref: f for f in doc.fragments}
    for problem in result.problems:
        uow.journal.append(
            at=at,
            actor="sleep",
            action="extraction.problem",
            entity="document",
            run_id=run_id,
            data={"document": doc.digest(), "problem": problem},
        )
    for item in result.candidates:
        cited = [by_ref[r] for r in item.refs]
        evidence = [f for f in cited if f.author is not Author.ASSISTANT]
        assistant_refs = [f.ref for f in cited if f.author is Author.ASSISTANT]
        key = statement_key(item.statement)
        existing = uow.candidates.open_by_key(key, item.subject)
        payload = {
            "confidence": item.confidence,
            "category": item.category,
            "updates_fact": item.updates_fact,
            "raw": item.raw,
        }
        if existing is None:
            candidate_id = uow.candidates.add(
                statement=item.statement,
                subject=item.subject,
                key=key,
                category=item.category,
                origin="sleep",
                run_id=run_id,
                payload=payload,
                supersedes_fact_id=None,
                created_at=at,
            )
            counts.proposed += 1
        else:
            candidate_id = existing.id
            merged = dict(existing.payload)
            if item.confidence is not None:
                merged["confidence"] = max(item.confidence, merged.get("confidence") or 0.0)
            if item.updates_fact is not None:
                merged["updates_fact"] = item.updates_fact
            uow.candidates.set_payload(candidate_id, merged)
            uow.candidates.mark_unscored(candidate_id)
            counts.merged += 1
        added = uow.candidates.add_evidence(candidate_id, [f.id for f in evidence], run_id)
        if item.rejected_refs:
            uow.candidates.note_rejected_refs(candidate_id, len(item.rejected_refs))
            counts.refs_rejected += len(item.rejected_refs)
        counts.not_evidence += len(assistant_refs)
        uow.journal.append(
            at=at,
            actor="sleep",
            action="candidate.proposed" if existing is None else "candidate.seen_again",
            entity="candidate",
            entity_id=candidate_id,
            run_id=run_id,
            data={
                "statement": item.statement,
                "subject": item.subject.value,
                "refs": list(item.refs),
                "evidence_refs": [f.ref for f in evidence],
                "new_evidence": added,
                "rejected_refs": list(item.rejected_refs),
                "assistant_refs_not_evidence": assistant_refs,
                "document": doc.digest(),
            },
        )
    return counts
