"""Landing a proposal: any proposal becomes a candidate with its evidence and journal entries.

One path for the sleep cycle (phase 1: what the model proposed for a document), the
turn review (a tool call) and other assistants over MCP (`outside_proposals`): the same
statement proposed again adds evidence to the open candidate instead of a new one; the
assistant's own lines are never evidence; cited refs outside the document or
conversation are counted and block auto-apply. What another assistant proposes over MCP
and what the owner's own material yields never share a candidate: a client's text is
evidence only for a client's proposal, and a client's proposal holds only such texts.
Deciding is `select.select_candidate`, never this module.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from persona_desktop.domain.model import OUTSIDE, Author, Fragment, Subject
from persona_desktop.domain.proposals import FactUpdate, NewFact, Proposal, candidate_key
from persona_desktop.ports import UnitOfWork


@dataclass(frozen=True, slots=True)
class Proposed:
    statement: str
    subject: Subject
    category: str | None
    proposal: Proposal
    origin: str  # "sleep" | "review" | "mcp" (domain.model.OUTSIDE)
    run_id: int | None
    cited: Sequence[Fragment]  # cited fragments found in the document or conversation
    rejected_refs: Sequence[str] = ()  # cited refs that were not in it
    journal: Mapping[str, object] = field(default_factory=dict)  # where it came from, for the journal


@dataclass(frozen=True, slots=True)
class Landed:
    candidate_id: int
    new: bool
    evidence_added: int
    not_evidence: list[str]  # the assistant's refs among the cited ones


def merge(old: Proposal, new: Proposal) -> Proposal:
    """The same fact proposed again: the higher confidence counts, a named update is kept."""
    if not isinstance(old, NewFact | FactUpdate) or not isinstance(new, NewFact | FactUpdate):
        return old
    confidences = [c for c in (old.via.confidence, new.via.confidence) if c is not None]
    via = replace(
        old.via,
        confidence=max(confidences) if confidences else None,
        cited_owner=old.via.cited_owner or new.via.cited_owner,
    )
    if isinstance(new, FactUpdate):
        return FactUpdate(new.fact_id, via)
    if isinstance(old, FactUpdate):
        return FactUpdate(old.fact_id, via)
    return NewFact(via)


def land(uow: UnitOfWork, item: Proposed, at: datetime) -> Landed:
    outside = item.origin == OUTSIDE
    crossing = [f.ref for f in item.cited if f.from_outside != outside]  # never evidence across the line
    evidence = [f for f in item.cited if f.author is not Author.ASSISTANT and f.from_outside == outside]
    not_evidence = [f.ref for f in item.cited if f.author is Author.ASSISTANT]
    key = candidate_key(item.statement, item.proposal)
    existing = uow.candidates.open_by_key(key, item.subject, outside=outside)
    if existing is None:
        candidate_id = uow.candidates.add(
            statement=item.statement,
            subject=item.subject,
            key=key,
            category=item.category,
            origin=item.origin,
            run_id=item.run_id,
            proposal=item.proposal,
            supersedes_fact_id=item.proposal.fact_id if isinstance(item.proposal, FactUpdate) else None,
            created_at=at,
        )
    else:
        candidate_id = existing.id
        merged = merge(existing.proposal, item.proposal)
        if merged != existing.proposal:
            uow.candidates.set_proposal(candidate_id, merged)
        uow.candidates.mark_unscored(candidate_id)
    added = uow.candidates.add_evidence(candidate_id, [f.id for f in evidence], item.run_id)
    if item.rejected_refs:
        uow.candidates.note_rejected_refs(candidate_id, len(item.rejected_refs))
    uow.journal.append(
        at=at,
        actor=item.origin,
        action="candidate.proposed" if existing is None else "candidate.seen_again",
        entity="candidate",
        entity_id=candidate_id,
        run_id=item.run_id,
        data={
            "statement": item.statement,
            "subject": item.subject.value,
            "kind": item.proposal.kind.value,
            "refs": [f.ref for f in item.cited] + list(item.rejected_refs),
            "evidence_refs": [f.ref for f in evidence],
            "new_evidence": added,
            "rejected_refs": list(item.rejected_refs),
            "assistant_refs_not_evidence": not_evidence,
            **({"refs_across_the_mcp_line": crossing} if crossing else {}),
            **item.journal,
        },
    )
    return Landed(candidate_id, existing is None, added, not_evidence)
