"""Phase 3 of the sleep cycle: score each new candidate and let the policy decide.

Each candidate is decided in its own transaction, so a run killed half-way
leaves every candidate either decided (and journaled) or untouched.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from persona_desktop.domain.model import Author, Candidate, CandidateStatus, Fact, Fragment
from persona_desktop.domain.policy import PolicyInput, Verdict, decide
from persona_desktop.domain.scoring import EvidenceStats, score, signals_for
from persona_desktop.domain.text import contradicts, statement_key, words
from persona_desktop.ports import UnitOfWork


def independent_evidence(fragments: Sequence[Fragment]) -> list[Fragment]:
    """Distinct fragments, the assistant's excluded, the same words by the same author once."""
    seen: set[tuple[Author, str]] = set()
    out: list[Fragment] = []
    for f in fragments:
        if f.author is Author.ASSISTANT:
            continue
        key = (f.author, statement_key(f.text))
        if key in seen:
            continue
        seen.add(key)
        out.append(f)
    return out


def evidence_stats(candidate: Candidate, evidence: Sequence[Fragment], documents: int) -> EvidenceStats:
    independent = independent_evidence(evidence)
    confidence = candidate.payload.get("confidence")
    return EvidenceStats(
        independent=len(independent),
        sessions=len({(f.source_id, f.session) for f in independent}),
        newest=max((f.captured_at for f in independent), default=None),
        documents=documents,
        confidence=float(confidence) if isinstance(confidence, int | float) else None,
        statement_words=len(words(candidate.statement)),
    )


def find_contradiction(candidate: Candidate, applied: Sequence[Fact]) -> int | None:
    named = candidate.payload.get("updates_fact")
    if isinstance(named, int):
        for fact in applied:
            if fact.id == named and fact.key != candidate.key:
                return fact.id
    for fact in applied:
        if contradicts(candidate.statement, fact.statement):
            return fact.id
    return None


def select_candidate(
    uow: UnitOfWork,
    candidate: Candidate,
    *,
    now: datetime,
    period_days: int,
    weights: dict[str, float],
    threshold: float,
    review_floor: float,
    applied: list[Fact],
    run_id: int | None,
) -> Verdict:
    evidence = uow.candidates.evidence(candidate.id)
    stats = evidence_stats(candidate, evidence, uow.candidates.evidence_documents(candidate.id))
    signals = signals_for(stats, now, period_days)
    value = score(signals, weights)
    known = next((f for f in applied if f.key == candidate.key and f.subject is candidate.subject), None)
    independent = independent_evidence(evidence)
    contradiction = find_contradiction(candidate, applied)
    decision = decide(
        PolicyInput(
            subject=candidate.subject,
            score=value,
            cited_refs=len(evidence),
            rejected_refs=candidate.refs_rejected,
            evidence=len(independent),
            owner_trusted_evidence=sum(1 for f in independent if f.is_owner_trusted),
            contradicts_fact_id=contradiction,
            already_known_fact_id=known.id if known else None,
        ),
        threshold,
        review_floor,
    )
    verdict, reason = decision.verdict, decision.reason
    if verdict is Verdict.APPLY and uow.candidates.was_refused(candidate.key):
        verdict, reason = Verdict.PENDING, "you rejected or reverted this before"
    status = {
        Verdict.APPLY: CandidateStatus.APPLIED,
        Verdict.PENDING: CandidateStatus.PENDING,
        Verdict.DROP: CandidateStatus.DROPPED,
    }[verdict]
    uow.candidates.set_scored(
        candidate.id,
        status=status,
        score=value,
        signals=signals,
        reason=reason,
        supersedes_fact_id=contradiction,
    )
    data: dict[str, object] = {
        "statement": candidate.statement,
        "score": value,
        "signals": signals,
        "reason": reason,
        "evidence_refs": [f.ref for f in evidence],
        "independent_evidence": len(independent),
    }
    if contradiction is not None:
        data["supersedes_fact_id"] = contradiction
    if verdict is Verdict.APPLY:
        fact_id = uow.facts.add(
            statement=candidate.statement,
            subject=candidate.subject,
            key=candidate.key,
            category=candidate.category,
            candidate_id=candidate.id,
            valid_from=stats.newest or now,
        )
        fact = uow.facts.get(fact_id)
        assert fact is not None
        applied.append(fact)
        data["fact_id"] = fact_id
        uow.journal.append(
            at=now,
            actor="policy",
            action="fact.applied",
            entity="fact",
            entity_id=fact_id,
            run_id=run_id,
            data=data,
        )
    action = {
        Verdict.APPLY: "candidate.applied",
        Verdict.PENDING: "candidate.pending",
        Verdict.DROP: "candidate.dropped",
    }
    uow.journal.append(
        at=now,
        actor="policy",
        action=action[verdict],
        entity="candidate",
        entity_id=candidate.id,
        run_id=run_id,
        data=data,
    )
    return verdict
