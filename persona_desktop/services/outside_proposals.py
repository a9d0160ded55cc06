"""A fact proposed from outside (another assistant over MCP): only ever a pending candidate.

The caller's words are stored as what they are: a fragment of the caller's own source
(`mcp:<client>`), authored `other`, on an untrusted channel. The candidate cites that
fragment and waits for the owner; it is scored and marked decided-pending at once, so no
later policy pass picks it up and applies it because of these words. Nothing proposed
here ever applies by itself.

`propose_untrusted_fact` is the one function to switch to the shared proposal service
once the trust work (issue 10) lands it on main.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from datetime import datetime

from persona_desktop.domain.model import (
    Author,
    CandidateStatus,
    Kind,
    NewFragment,
    SourceInfo,
    Subject,
    Trust,
)
from persona_desktop.domain.text import statement_key
from persona_desktop.errors import StateError
from persona_desktop.ports import UnitOfWorkFactory
from persona_desktop.services.ingest import store_fragments

MAX_STATEMENT = 500
MAX_SOURCE_TEXT = 4000
MAX_PENDING = 50  # waiting proposals from outside, all clients together: no flooding the review
MAX_TEXTS = 10  # texts from outside cited by one waiting candidate: no flooding the store
ORIGIN = "mcp"
_CLIENT = re.compile(r"[^A-Za-z0-9_-]+")


@dataclass(frozen=True, slots=True)
class ProposalResult:
    candidate_id: int
    ref: str
    new: bool  # False: the same statement was already waiting; this is more evidence for it
    message: str


def clean_text(raw: object, limit: int) -> str:
    """Printable text only: no lone surrogates, no control characters but newlines and tabs."""
    text = str(raw or "").encode("utf-8", "replace").decode("utf-8")
    text = "".join(ch for ch in text if ch.isprintable() or ch in "\n\t")
    return text.strip()[:limit]


def client_name(raw: object) -> str:
    name = _CLIENT.sub("-", str(raw or "")).strip("-")[:40]
    return name or "unknown"


def propose_untrusted_fact(
    uow_factory: UnitOfWorkFactory,
    *,
    statement: str,
    source_text: str,
    client: str,
    at: datetime,
    subject: Subject = Subject.OWNER,
) -> ProposalResult:
    """Add a pending candidate citing the caller's text as an untrusted source."""
    statement = " ".join(clean_text(statement, MAX_STATEMENT).split())
    if not statement:
        raise StateError("a proposed fact needs a statement")
    text = clean_text(source_text, MAX_SOURCE_TEXT) or statement
    client = client_name(client)
    key = statement_key(statement)
    source = SourceInfo(
        key=f"{ORIGIN}:{client}",
        kind=Kind.CHAT,
        label=f"Proposals from {client} over MCP",
        meta={"channel": ORIGIN, "client": client},
    )
    ref = f"{ORIGIN}:{client}:{uuid.uuid4().hex[:12]}"
    fragment = NewFragment(
        ref=ref,
        kind=Kind.CHAT,
        author=Author.OTHER,
        trust=Trust.UNTRUSTED,
        text=text,
        captured_at=at,
        locator={"channel": ORIGIN, "client": client, "tool": "propose_fact"},
        session=source.key,
    )
    with uow_factory() as uow:
        known = uow.facts.applied_by_key(key)
        if known is not None:
            raise StateError(f"already known as fact {known.id}; nothing proposed")
        if uow.candidates.was_refused(key):
            raise StateError("the owner rejected or reverted this before; not proposed again")
        existing = uow.candidates.open_by_key(key, subject)
        waiting = [c for c in uow.candidates.all(CandidateStatus.PENDING) if c.origin == ORIGIN]
        if existing is None and len(waiting) >= MAX_PENDING:
            raise StateError(
                f"{MAX_PENDING} proposals from other assistants already wait for the owner; try again later"
            )
        if existing is not None:
            cited = [f for f in uow.candidates.evidence(existing.id) if f.ref.startswith(f"{ORIGIN}:")]
            if len(cited) >= MAX_TEXTS:
                raise StateError(
                    f"candidate {existing.id} already waits with {len(cited)} texts from other assistants"
                )
        store_fragments(uow, source, [fragment], at)
        [stored] = uow.fragments.by_refs([ref]).values()
        reason = f"proposed by another assistant ({client}) over MCP: only you can approve it"
        if existing is None:
            candidate_id = uow.candidates.add(
                statement=statement,
                subject=subject,
                key=key,
                category=None,
                origin=ORIGIN,
                run_id=None,
                payload={"tool": "propose_fact", "client": client, "action": "add", "evidence": ORIGIN},
                supersedes_fact_id=None,
                created_at=at,
            )
            uow.candidates.set_scored(
                candidate_id,
                status=CandidateStatus.PENDING,
                score=0.0,
                signals={},
                reason=reason,
                supersedes_fact_id=None,
            )
        else:
            candidate_id = existing.id
        uow.candidates.add_evidence(candidate_id, [stored.id], None)
        uow.journal.append(
            at=at,
            actor=ORIGIN,
            action="candidate.proposed" if existing is None else "candidate.seen_again",
            entity="candidate",
            entity_id=candidate_id,
            data={"statement": statement, "client": client, "evidence_refs": [ref], "reason": reason},
        )
        uow.commit()
    said = "waits for the owner's review" if existing is None else "was already waiting; your text was added"
    return ProposalResult(candidate_id, ref, existing is None, f"Candidate {candidate_id} {said}.")
