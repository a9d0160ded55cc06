"""The deterministic policy: what may change memory without the owner's approval.

Only proven owner facts apply by themselves; everything else over the review
floor waits for the owner, and the rest is dropped. The policy never calls out
and never guesses: it only reads the facts it is given.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from persona_desktop.domain.model import Subject


class Verdict(StrEnum):
    APPLY = "apply"
    PENDING = "pending"
    DROP = "drop"


@dataclass(frozen=True, slots=True)
class PolicyInput:
    subject: Subject
    score: float
    cited_refs: int
    rejected_refs: int
    evidence: int
    owner_trusted_evidence: int
    contradicts_fact_id: int | None
    already_known_fact_id: int | None


@dataclass(frozen=True, slots=True)
class Decision:
    verdict: Verdict
    reason: str


def decide(item: PolicyInput, threshold: float, review_floor: float) -> Decision:
    if item.already_known_fact_id is not None:
        return Decision(Verdict.DROP, f"already known as fact {item.already_known_fact_id}")
    if item.evidence == 0:
        return Decision(Verdict.DROP, "no evidence: every cited fragment was invalid or the assistant's")
    if item.score < review_floor:
        return Decision(Verdict.DROP, f"score {item.score:.2f} below the review floor {review_floor:.2f}")
    blockers: list[str] = []
    if item.subject is not Subject.OWNER:
        blockers.append(f"about {item.subject.value}, not the owner")
    if item.score < threshold:
        blockers.append(f"score {item.score:.2f} below threshold {threshold:.2f}")
    if item.rejected_refs:
        blockers.append(f"{item.rejected_refs} cited ref(s) were not in the document")
    if item.owner_trusted_evidence == 0:
        blockers.append("no evidence written by the owner on a trusted channel")
    if item.contradicts_fact_id is not None:
        blockers.append(f"contradicts fact {item.contradicts_fact_id}")
    if blockers:
        return Decision(Verdict.PENDING, "; ".join(blockers))
    return Decision(Verdict.APPLY, "proven owner fact over threshold")
