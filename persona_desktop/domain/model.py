"""The records memory is made of, as plain immutable values."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from persona_desktop.domain.proposals import Proposal

OUTSIDE = "mcp"
"""Another assistant over MCP: the origin of its candidates and the prefix of its texts' refs
(`mcp:<client>:<id>`). What comes from outside only ever waits for the owner: it is never
evidence for anything else, never scored, never read by the model (`policy.decide`)."""


class Kind(StrEnum):
    CHAT = "chat"
    SCREEN = "screen"
    SPEECH = "speech"


class Author(StrEnum):
    OWNER = "owner"
    ASSISTANT = "assistant"
    OTHER = "other"
    UNKNOWN = "unknown"


class Trust(StrEnum):
    TRUSTED = "trusted"
    UNTRUSTED = "untrusted"


class Subject(StrEnum):
    OWNER = "owner"
    OTHER = "other"
    UNKNOWN = "unknown"


class CandidateStatus(StrEnum):
    PENDING = "pending"
    APPLIED = "applied"
    APPROVED = "approved"
    REJECTED = "rejected"
    DROPPED = "dropped"


class FactStatus(StrEnum):
    APPLIED = "applied"
    SUPERSEDED = "superseded"
    REVERTED = "reverted"


class RunStatus(StrEnum):
    RUNNING = "running"
    DONE = "done"
    DEFERRED = "deferred"
    SKIPPED = "skipped"
    FAILED = "failed"
    DISABLED = "disabled"
    CANCELLED = "cancelled"


@dataclass(frozen=True, slots=True)
class SourceInfo:
    """Where fragments come from: one chat, one screen capture, one recording.

    `key` is stable across re-imports (e.g. ``chat:tg:123``) so that the same
    source ingested twice maps to the same row.
    """

    key: str
    kind: Kind
    label: str
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class NewFragment:
    """A fragment as captured, before it has a row id."""

    ref: str
    kind: Kind
    author: Author
    trust: Trust
    text: str
    captured_at: datetime
    locator: dict[str, Any]
    session: str
    seq: int = 0


@dataclass(frozen=True, slots=True)
class FragmentHead:
    """What document planning needs of a fragment, without its text and locator."""

    id: int
    ref: str
    source_id: int
    session: str
    captured_at: datetime
    seq: int
    text_len: int


@dataclass(frozen=True, slots=True)
class Fragment:
    id: int
    ref: str
    kind: Kind
    author: Author
    trust: Trust
    text: str
    captured_at: datetime
    locator: dict[str, Any]
    session: str
    source_id: int
    seq: int = 0

    @property
    def is_owner_trusted(self) -> bool:
        return self.author is Author.OWNER and self.trust is Trust.TRUSTED

    @property
    def from_outside(self) -> bool:
        """Text another assistant sent over MCP (no importer or capture makes such a ref)."""
        return self.ref.startswith(f"{OUTSIDE}:")

    def to_json(self) -> dict[str, Any]:
        """The fragment in the CLI's JSON (DESIGN.md, CLI contract: `fragments --json`)."""
        return {
            "id": self.id,
            "ref": self.ref,
            "kind": self.kind.value,
            "author": self.author.value,
            "trust": self.trust.value,
            "captured_at": self.captured_at.isoformat(),
            "text": self.text,
            "locator": self.locator,
            "session": self.session,
        }


@dataclass(frozen=True, slots=True)
class Candidate:
    """A proposed durable fact, with its score once phase 3 has seen it."""

    id: int
    statement: str
    subject: Subject
    key: str
    status: CandidateStatus
    category: str | None
    score: float | None
    signals: dict[str, float]
    origin: str
    run_id: int | None
    supersedes_fact_id: int | None
    reason: str | None
    proposal: Proposal
    created_at: datetime
    scored: bool
    refs_rejected: int = 0

    @property
    def from_outside(self) -> bool:
        """Proposed by another assistant over MCP."""
        return self.origin == OUTSIDE


@dataclass(frozen=True, slots=True)
class Fact:
    id: int
    statement: str
    subject: Subject
    key: str
    status: FactStatus
    category: str | None
    candidate_id: int | None
    valid_from: datetime
    valid_to: datetime | None
    superseded_by: int | None
    created_at: datetime


@dataclass(frozen=True, slots=True)
class Observation:
    """A phase-2 hypothesis about a period. Never a fact, never in the prompt as one."""

    id: int
    run_id: int | None
    text: str
    themes: list[str]
    created_at: datetime


@dataclass(frozen=True, slots=True)
class Revision:
    """One append-only journal entry."""

    id: int
    at: datetime
    actor: str
    action: str
    entity: str
    entity_id: int | None
    run_id: int | None
    data: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        """The entry in the CLI's JSON (`journal --json`)."""
        return {
            "id": self.id,
            "at": self.at.isoformat(),
            "actor": self.actor,
            "action": self.action,
            "entity": self.entity,
            "entity_id": self.entity_id,
            "run_id": self.run_id,
            "data": self.data,
        }


@dataclass(frozen=True, slots=True)
class SleepRun:
    id: int
    idempotency_key: str
    status: RunStatus
    holder: str
    started_at: datetime
    finished_at: datetime | None
    counters: dict[str, Any]
    error: str | None
