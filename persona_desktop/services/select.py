"""Deciding one candidate: score it, ground it, and let the one policy decide.

Used by phase 3 of the sleep cycle and by the turn review right after a proposal
lands. Each candidate is decided in the caller's transaction, so a run killed
half-way leaves every candidate either decided (and journaled) or untouched.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime

from persona_desktop.domain.grounding import Grounding, Said, ground
from persona_desktop.domain.message_versions import message_ref
from persona_desktop.domain.model import (
    Author,
    Candidate,
    CandidateStatus,
    Fact,
    FactStatus,
    Fragment,
    Kind,
    Subject,
    Trust,
)
from persona_desktop.domain.policy import Limits, PolicyInput, Tally, Verdict, decide
from persona_desktop.domain.proposals import FactUpdate
from persona_desktop.domain.scoring import EvidenceStats, score, signals_for
from persona_desktop.domain.text import contradicts, statement_key, words
from persona_desktop.ports import UnitOfWork

MAX_SPEAKER = 40


@dataclass(frozen=True, slots=True)
class SelectConfig:
    period_days: int
    weights: dict[str, float]
    limits: Limits


class ApplyCounter:
    """What the policy applied so far: per document (or conversation) and in all, for the caps."""

    def __init__(self) -> None:
        self.by_batch: Counter[str] = Counter()
        self.total = 0

    def tally(self, batch: str | None) -> Tally:
        return Tally(self.by_batch[batch] if batch else 0, self.total)

    def count(self, batch: str | None) -> None:
        if batch:
            self.by_batch[batch] += 1
        self.total += 1

    @classmethod
    def of_run(cls, uow: UnitOfWork, run_id: int) -> ApplyCounter:
        """The counts of a run already under way (a resumed one), from its journal."""
        counter = cls()
        for entry in uow.journal.all(actions=("fact.applied",)):
            if entry.run_id == run_id and entry.actor == "policy":
                batch = entry.data.get("batch")
                counter.count(batch if isinstance(batch, str) else None)
        return counter


def independent_evidence(fragments: Sequence[Fragment]) -> list[Fragment]:
    """Distinct fragments, the same words by the same author once; never the assistant's, nor
    what another assistant sent over MCP (it counts for no score and grounds nothing)."""
    seen: set[tuple[Author, str]] = set()
    out: list[Fragment] = []
    for f in fragments:
        if f.author is Author.ASSISTANT or f.from_outside:
            continue
        key = (f.author, statement_key(f.text))
        if key in seen:
            continue
        seen.add(key)
        out.append(f)
    return out


def evidence_stats(candidate: Candidate, evidence: Sequence[Fragment], documents: int) -> EvidenceStats:
    independent = independent_evidence(evidence)
    return EvidenceStats(
        independent=len(independent),
        sessions=len({(f.source_id, f.session) for f in independent}),
        newest=max((f.captured_at for f in independent), default=None),
        documents=documents,
        confidence=candidate.proposal.via.confidence,
        statement_words=len(words(candidate.statement)),
    )


def speaker(f: Fragment) -> str:
    """Who wrote a fragment, as the owner reads it in a reason."""
    if f.author is Author.OWNER:
        if f.trust is Trust.TRUSTED:
            return "your message"
        return "your message in a group chat" if f.kind is Kind.CHAT else "your words on an untrusted channel"
    if f.author is Author.ASSISTANT:
        return "the assistant's message"
    if f.author is Author.OTHER:
        for field in ("forwarded_from", "saved_from"):
            name = _name(f.locator.get(field))
            if name:
                return f"the message forwarded from {name}"
        name = _name(f.locator.get("from"))
        return f"{name}'s message" if name else "another person's message"
    return {Kind.SCREEN: "screen text", Kind.SPEECH: "speech"}.get(f.kind, "a message of unknown author")


def _name(raw: object) -> str:
    if not isinstance(raw, str):
        return ""
    flat = " ".join(raw.split())
    return flat if len(flat) <= MAX_SPEAKER else flat[: MAX_SPEAKER - 1] + "…"


REPLACED = "your earlier wording of a message you edited since"


def replaced_wording(uow: UnitOfWork, evidence: Sequence[Fragment]) -> set[str]:
    """The refs of the owner's chat messages among `evidence` whose text an edit imported
    since has replaced (`domain.message_versions`): those words no longer ground a claim."""
    owner = [f for f in evidence if f.is_owner_trusted and f.kind is Kind.CHAT]
    if not owner:
        return set()
    newest = uow.fragments.newest_versions({message_ref(f.ref) for f in owner})
    return {f.ref for f in owner if newest.get(message_ref(f.ref), f.id) > f.id}


def ground_candidate(
    candidate: Candidate, evidence: Sequence[Fragment], replaced: Collection[str] = ()
) -> Grounding:
    said = [
        Said(f.ref, f.text, False, REPLACED)
        if f.ref in replaced
        else Said(f.ref, f.text, f.is_owner_trusted, speaker(f))
        for f in evidence
    ]
    return ground(candidate.statement, said, about_owner=candidate.subject is Subject.OWNER)


def find_contradiction(candidate: Candidate, applied: Sequence[Fact]) -> int | None:
    proposal = candidate.proposal
    if isinstance(proposal, FactUpdate):
        for fact in applied:
            if fact.id == proposal.fact_id and fact.key != candidate.key:
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
    config: SelectConfig,
    applied: list[Fact],
    counter: ApplyCounter,
    run_id: int | None,
) -> Verdict:
    evidence = uow.candidates.evidence(candidate.id)
    stats = evidence_stats(candidate, evidence, uow.candidates.evidence_documents(candidate.id))
    signals = signals_for(stats, now, config.period_days)
    value = score(signals, config.weights)
    known = next((f for f in applied if f.key == candidate.key and f.subject is candidate.subject), None)
    independent = independent_evidence(evidence)
    contradiction = find_contradiction(candidate, applied)
    grounding = ground_candidate(candidate, independent, replaced_wording(uow, independent))
    batch = candidate.proposal.via.batch
    decision = decide(
        PolicyInput(
            kind=candidate.proposal.kind,
            subject=candidate.subject,
            score=value,
            rejected_refs=candidate.refs_rejected,
            evidence=len(independent),
            owner_trusted_evidence=sum(1 for f in independent if f.is_owner_trusted),
            grounding=grounding,
            cited_owner=candidate.proposal.via.cited_owner,
            contradicts_fact_id=contradiction,
            already_known_fact_id=known.id if known else None,
            refused_before=uow.candidates.was_refused(candidate.key),
            from_outside=candidate.from_outside or any(f.from_outside for f in evidence),
        ),
        config.limits,
        counter.tally(batch),
    )
    verdict, reason = decision.verdict, decision.reason
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
        "kind": candidate.proposal.kind.value,
        "score": value,
        "signals": signals,
        "reason": reason,
        "evidence_refs": [f.ref for f in evidence],
        "independent_evidence": len(independent),
        "grounding": {
            "grounded": grounding.grounded,
            "reason": grounding.reason,
            "terms": list(grounding.terms),
            "ref": grounding.ref,
        },
        "batch": batch,
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
        assert fact is not None and fact.status is FactStatus.APPLIED
        applied.append(fact)
        counter.count(batch)
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
