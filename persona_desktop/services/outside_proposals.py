"""A fact proposed from outside (another assistant over MCP): only ever a proposal for the owner.

The caller's words are stored as what they are: a fragment of the caller's own source
(`mcp:<client>`), authored `other`, on an untrusted channel, and set aside from what the
sleep cycle reads (the model never sees it). The candidate (origin `mcp`) cites that
fragment; the shared proposal service lands it beside, never into, what the owner's own
material yields, and the one policy decides at once (`select.select_candidate`): it waits
for the owner, or is dropped when it is already known or the owner refused it before, with
that reason, journaled like any decision. Caps keep a flood out of the review and the
store; what they hold back is journaled (once a day for each cap).

The caller learns none of this: whatever became of its proposal, `mcp_memory` tells it the
same, so proposing cannot probe what memory holds or what the owner rejected.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass
from datetime import datetime

from persona_desktop.domain.dates import as_utc
from persona_desktop.domain.model import (
    OUTSIDE,
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
from persona_desktop.ports import UnitOfWork, UnitOfWorkFactory
from persona_desktop.services.ingest import store_fragments
from persona_desktop.services.proposals import Proposed, land
from persona_desktop.services.reading_plan import NEVER_READ
from persona_desktop.services.select import ApplyCounter, SelectConfig, select_candidate

MAX_STATEMENT = 500
MAX_SOURCE_TEXT = 4000
MAX_PENDING = 50  # waiting proposals from outside, all clients together: no flooding the review
MAX_TEXTS = 10  # texts from outside cited by one waiting candidate: no flooding the store
MAX_PER_DAY = 200  # proposals stored per UTC day, whatever became of them (dropped ones too)
_CLIENT = re.compile(r"[^A-Za-z0-9_-]+")


DEFAULT_SELECTION = SelectConfig(7, DEFAULT_WEIGHTS, Limits(0.6, 0.3, 3, 10))


@dataclass(frozen=True, slots=True)
class ProposalOutcome:
    """What became of a proposal: for the journal, the owner and tests; never for the caller."""

    status: str  # pending | dropped | held (a cap kept it out: nothing stored)
    reason: str
    candidate_id: int | None = None


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
) -> ProposalOutcome:
    """Add the caller's text as an untrusted source and a candidate citing it, for the owner."""
    statement = " ".join(clean_text(statement, MAX_STATEMENT).split())
    if not statement:
        raise StateError("a proposed fact needs a statement")
    text = clean_text(source_text, MAX_SOURCE_TEXT) or statement
    client = client_name(client)
    source = SourceInfo(
        key=f"{OUTSIDE}:{client}",
        kind=Kind.CHAT,
        label=f"Proposals from {client} over MCP",
        meta={"channel": OUTSIDE, "client": client},
    )
    ref = f"{OUTSIDE}:{client}:{uuid.uuid4().hex[:12]}"
    fragment = NewFragment(
        ref=ref,
        kind=Kind.CHAT,
        author=Author.OTHER,
        trust=Trust.UNTRUSTED,
        text=text,
        captured_at=at,
        locator={"channel": OUTSIDE, "client": client, "tool": "propose_fact"},
        session=source.key,
    )
    with uow_factory() as uow:
        day = _Day.load(uow, at)
        held = _held_back(uow, day, statement_key(statement), subject)
        if held is not None:
            day.hold(uow, held, at, client, statement)
            uow.commit()
            return ProposalOutcome("held", held[1])
        store_fragments(uow, source, [fragment], at)
        [stored] = uow.fragments.by_refs([ref]).values()
        uow.fragments.mark_read([stored.id], NEVER_READ)  # never in a document the model reads
        landed = land(
            uow,
            Proposed(
                statement=statement,
                subject=subject,
                category=None,
                proposal=NewFact(Via(tool="propose_fact", cited_refs=(ref,))),
                origin=OUTSIDE,
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
        if verdict is Verdict.APPLY:  # the policy never applies what came from outside: a bug
            raise AssertionError(f"a proposal from {client} over MCP was applied without the owner")
        decided = uow.candidates.get(landed.candidate_id)
        day.stored += 1
        day.save(uow)
        uow.commit()
    status = "dropped" if verdict is Verdict.DROP else "pending"
    reason = decided.reason if decided is not None and decided.reason else ""
    return ProposalOutcome(status, reason, landed.candidate_id)


def _held_back(uow: UnitOfWork, day: _Day, key: str, subject: Subject) -> tuple[str, str] | None:
    """(the cap, the reason in words) when a cap keeps this proposal out; None otherwise."""
    if day.stored >= MAX_PER_DAY:
        return "day", f"{MAX_PER_DAY} proposals from other assistants came in today already"
    existing = uow.candidates.open_by_key(key, subject, outside=True)
    if existing is None:
        waiting = sum(1 for c in uow.candidates.all(CandidateStatus.PENDING) if c.from_outside)
        if waiting >= MAX_PENDING:
            return "pending", f"{waiting} proposals from other assistants already wait for your review"
        return None
    texts = len(uow.candidates.evidence(existing.id))
    if texts >= MAX_TEXTS:
        return "texts", f"candidate {existing.id} already cites {texts} texts from other assistants"
    return None


@dataclass
class _Day:
    """Today's proposals from outside (UTC day): how many were stored, and which caps held some back."""

    key: str
    stored: int
    held: dict[str, int]

    @classmethod
    def load(cls, uow: UnitOfWork, at: datetime) -> _Day:
        key = f"{OUTSIDE}.proposals.{as_utc(at).date().isoformat()}"
        try:
            data = json.loads(uow.kv.get(key) or "{}")
            return cls(key, int(data["stored"]), {str(k): int(v) for k, v in dict(data["held"]).items()})
        except (ValueError, KeyError, TypeError):
            return cls(key, 0, {})

    def save(self, uow: UnitOfWork) -> None:
        uow.kv.set(self.key, json.dumps({"stored": self.stored, "held": self.held}))

    def hold(self, uow: UnitOfWork, held: tuple[str, str], at: datetime, client: str, statement: str) -> None:
        """Count what a cap held back; journal it the first time today, not once a call."""
        cap, reason = held
        self.held[cap] = self.held.get(cap, 0) + 1
        if self.held[cap] == 1:
            uow.journal.append(
                at=at,
                actor=OUTSIDE,
                action="proposal.not_stored",
                entity="proposal",
                data={
                    "client": client,
                    "statement": statement,
                    "reason": reason,
                    "note": "further proposals held back by this limit today are counted, not journaled",
                },
            )
        self.save(uow)
