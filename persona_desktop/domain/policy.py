"""The deterministic policy: what may change memory without the owner's approval.

One pure function decides for every path that proposes (the sleep cycle, the turn
review, imported conversations, other assistants over MCP): only a new fact about the
owner that is grounded in the owner's own trusted words, over the threshold, cited
correctly, contradicting nothing, never refused before, and within the auto-apply caps
applies by itself. Changes to what is known (a fact update, a forget) and skills always
wait for the owner, as does anything another assistant proposed or supported over MCP,
whatever its score. Everything else over the review floor waits, with the reason in
words; the rest is dropped. The policy never calls out and never guesses.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

from persona_desktop.domain.grounding import Grounding
from persona_desktop.domain.model import Subject
from persona_desktop.domain.proposals import OWNER_ONLY_KINDS, ProposalKind

TOO_MANY = "too many at once"


class Verdict(StrEnum):
    APPLY = "apply"
    PENDING = "pending"
    DROP = "drop"


@dataclass(frozen=True, slots=True)
class PolicyInput:
    kind: ProposalKind
    subject: Subject
    score: float
    rejected_refs: int  # cited refs that were not in the document or conversation
    evidence: int  # independent fragments, the assistant's excluded
    owner_trusted_evidence: int
    grounding: Grounding
    cited_owner: bool  # False: the turn review cited none of the owner's messages
    contradicts_fact_id: int | None
    already_known_fact_id: int | None
    refused_before: bool
    from_outside: bool  # proposed by, or citing text of, another assistant over MCP


@dataclass(frozen=True, slots=True)
class Limits:
    threshold: float
    review_floor: float
    per_document: int  # auto-applied facts per document (turn review: per conversation)
    per_run: int  # auto-applied facts per run (turn review: per review run)


@dataclass(frozen=True, slots=True)
class Tally:
    """Facts the policy already applied in this run, and in this candidate's document."""

    in_document: int = 0
    in_run: int = 0


@dataclass(frozen=True, slots=True)
class Decision:
    verdict: Verdict
    reason: str


_OWNER_ONLY_REASON = {
    ProposalKind.FACT_UPDATE: "a change to a known fact always waits for your approval",
    ProposalKind.FORGET: "a forget always waits for your approval",
    ProposalKind.SKILL: "a skill always waits for your approval",
    ProposalKind.SKILL_PATCH: "a skill always waits for your approval",
}
UNCITED = "the review cited none of your messages; waits for your approval"
OUTSIDE = "proposed by another assistant over MCP: only you decide"
OUTSIDE_REFUSED = "proposed by another assistant over MCP: you rejected or reverted this before"


def decide(item: PolicyInput, limits: Limits, tally: Tally = Tally()) -> Decision:
    if item.already_known_fact_id is not None:
        return Decision(Verdict.DROP, f"already known as fact {item.already_known_fact_id}")
    if item.from_outside:  # never scored, never grounded, never applied: the owner's call alone
        if item.refused_before:
            return Decision(Verdict.DROP, OUTSIDE_REFUSED)
        if item.contradicts_fact_id is not None:
            return Decision(Verdict.PENDING, f"{OUTSIDE}; contradicts fact {item.contradicts_fact_id}")
        return Decision(Verdict.PENDING, OUTSIDE)
    if item.evidence == 0:
        return Decision(Verdict.DROP, "no evidence: every cited fragment was invalid or the assistant's")
    if item.kind in OWNER_ONLY_KINDS:
        return Decision(Verdict.PENDING, _OWNER_ONLY_REASON[item.kind])
    if not item.cited_owner:  # the whole conversation stands in as evidence: it proves nothing
        return Decision(Verdict.PENDING, UNCITED)
    if not math.isfinite(item.score):
        return Decision(Verdict.PENDING, "its score is not a number")
    if item.score < limits.review_floor:
        return Decision(
            Verdict.DROP, f"score {item.score:.2f} below the review floor {limits.review_floor:.2f}"
        )
    blockers: list[str] = []
    if item.subject is not Subject.OWNER:
        blockers.append(f"about {item.subject.value}, not the owner")
    if item.score < limits.threshold:
        blockers.append(f"score {item.score:.2f} below threshold {limits.threshold:.2f}")
    if item.rejected_refs:
        blockers.append(f"{item.rejected_refs} cited ref(s) were not in the document")
    if item.owner_trusted_evidence == 0:
        blockers.append("no evidence written by the owner on a trusted channel")
    elif item.subject is Subject.OWNER and not item.grounding.grounded:
        blockers.append(f"not in your own words: {item.grounding.reason}")
    if item.contradicts_fact_id is not None:
        blockers.append(f"contradicts fact {item.contradicts_fact_id}")
    if item.refused_before:
        blockers.append("you rejected or reverted this before")
    if blockers:
        return Decision(Verdict.PENDING, "; ".join(blockers))
    if tally.in_document >= limits.per_document:
        return Decision(
            Verdict.PENDING,
            f"{TOO_MANY}: {tally.in_document} fact(s) already applied from the same document",
        )
    if tally.in_run >= limits.per_run:
        return Decision(Verdict.PENDING, f"{TOO_MANY}: {tally.in_run} fact(s) already applied in this run")
    return Decision(Verdict.APPLY, f"proven owner fact over threshold, {item.grounding.reason}")
