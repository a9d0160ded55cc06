"""A fact proposed from outside (another assistant over MCP): only ever a pending candidate.

The caller's words are stored as what they are: a fragment of the caller's own source
(`mcp:<client>`), authored `other`, on an untrusted channel. The candidate cites that
fragment; the shared proposal service lands it and the one policy decides at once
(`select.select_candidate`), so no later pass picks it up. Its only evidence is the
caller's untrusted text, so the policy never applies it: it waits for the owner (or,
under the owner's review floor, is dropped). Nothing proposed here ever applies by itself.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from datetime import datetime

from persona_desktop.domain.model import (
    Author,
    CandidateStatus,
    FactStatus,
    Kind,
    NewFragment,
    SourceInfo,
    Subject,
    Trust,
)
from persona_desktop.domain.policy import Limits, Verdict
from persona_desktop.domain.proposals import NewFact, Via
from persona_desktop.domain.scoring import DEFAULT_WEIGHTS
from persona_desktop.domain.text import statement_key
from persona_desktop.errors import StateError
from persona_desktop.ports import UnitOfWorkFactory
from persona_desktop.services.ingest import store_fragments
from persona_desktop.services.proposals import Proposed, land
from persona_desktop.services.select import ApplyCounter, SelectConfig, select_candidate

MAX_STATEMENT = 500
MAX_SOURCE_TEXT = 4000
MAX_PENDING = 50  # waiting proposals from outside, all clients together: no flooding the review
MAX_TEXTS = 10  # texts from outside cited by one waiting candidate: no flooding the store
ORIGIN = "mcp"
_CLIENT = re.compile(r"[^A-Za-z0-9_-]+")


DEFAULT_SELECTION = SelectConfig(7, DEFAULT_WEIGHTS, Limits(0.6, 0.3, 3, 10))


@dataclass(frozen=True, slots=True)
class ProposalResult:
    candidate_id: int
    ref: str
    new: bool  # False: the same statement was already waiting; this is more evidence for it
    message: str
    status: str = "pending"  # what the policy made of it: pending, or dropped (never applied)


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
    config: SelectConfig = DEFAULT_SELECTION,
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
        landed = land(
            uow,
            Proposed(
                statement=statement,
                subject=subject,
                category=None,
                proposal=NewFact(Via(tool="propose_fact", cited_refs=(ref,))),
                origin=ORIGIN,
                run_id=None,
                cited=[stored],
                journal={"client": client},
            ),
            at,
        )
        candidate = uow.candidates.get(landed.candidate_id)
        assert candidate is not None
        verdict = select_candidate(
            uow,
            candidate,
            now=at,
            config=config,
            applied=uow.facts.all(FactStatus.APPLIED),
            counter=ApplyCounter(),
            run_id=None,
        )
        if verdict is Verdict.APPLY:  # the policy cannot, on untrusted evidence only: a bug
            raise AssertionError(f"a proposal from {client} over MCP was applied without the owner")
        decided = uow.candidates.get(landed.candidate_id)
        uow.commit()
    candidate_id = landed.candidate_id
    if verdict is Verdict.DROP:
        reason = decided.reason if decided is not None else ""
        return ProposalResult(
            candidate_id, ref, landed.new, f"Candidate {candidate_id} was dropped ({reason}).", "dropped"
        )
    said = "waits for the owner's review" if existing is None else "was already waiting; your text was added"
    return ProposalResult(candidate_id, ref, existing is None, f"Candidate {candidate_id} {said}.")
