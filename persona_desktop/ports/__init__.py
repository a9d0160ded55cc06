"""The ports: what services need from the outside world, as Protocols.

Adapters implement them; only the composition roots (`app.py`, `bootstrap/`) pick
which. Services and the ui only ever see these types.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol

from persona_desktop.domain.model import (
    Author,
    Candidate,
    CandidateStatus,
    Fact,
    FactStatus,
    Fragment,
    FragmentHead,
    Kind,
    NewFragment,
    Observation,
    Revision,
    RunStatus,
    SleepRun,
    SourceInfo,
    Subject,
)
from persona_desktop.domain.proposals import Proposal
from persona_desktop.domain.search_query import SearchQuery

if TYPE_CHECKING:  # numpy is heavy and only the speech adapter needs it at run time
    import numpy as np
    from numpy.typing import NDArray


class Clock(Protocol):
    def now(self) -> datetime: ...


class LLM(Protocol):
    """A local chat model that answers in JSON shaped by a schema."""

    host: str
    model: str

    def chat_json(self, messages: Sequence[dict[str, str]], schema: dict[str, Any]) -> str:
        """Return the reply's content. Raises TransientLLMError or LLMError."""
        ...

    def list_models(self) -> list[str]: ...


class ChatModel(Protocol):
    """The chat side of the local model: streamed answers and tool-calling turns."""

    host: str
    model: str

    def chat_stream(
        self, messages: Sequence[Mapping[str, Any]], options: Mapping[str, Any] | None = None
    ) -> Iterator[str]:
        """Yield the reply's content as it arrives. Raises TransientLLMError or LLMError."""
        ...

    def chat_tools(
        self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]]
    ) -> dict[str, Any]:
        """One turn offering `tools`: {"content": str, "tool_calls": [{"name", "arguments"}]}."""
        ...


class LocalModel(LLM, ChatModel, Protocol):
    """The owner's local model with both sides: JSON answers (the sleep cycle, reviews'
    structure) and chat (the assistant, turn reviews). One client serves both."""


class SourceRepository(Protocol):
    def upsert(self, source: SourceInfo) -> int: ...
    def find(self, key: str) -> tuple[int, SourceInfo] | None:
        """The stored source with this key, without adding one."""
        ...

    def get(self, source_id: int) -> tuple[SourceInfo, datetime] | None: ...
    def all(self) -> list[tuple[int, SourceInfo, int]]:
        """Every source with its id and how many fragments it holds."""
        ...

    def captured_between(self, kind: Kind, start: datetime, end: datetime) -> list[int]:
        """Ids of the sources of `kind` with a fragment captured in [start, end)."""
        ...


class FragmentRepository(Protocol):
    def add_many(self, source_id: int, fragments: Sequence[NewFragment]) -> int:
        """Insert those whose ref is new; return how many were inserted."""
        ...

    def by_refs(self, refs: Sequence[str]) -> dict[str, Fragment]: ...
    def newest_versions(self, message_refs: Collection[str]) -> dict[str, int]:
        """The id of the newest stored text of each of these chat messages, by message ref: its
        first text or an edit stored since (`domain.message_versions`); absent when none is."""
        ...

    def by_ids(self, ids: Sequence[int]) -> list[Fragment]: ...
    def unread_page(self, before: tuple[datetime, int] | None, limit: int) -> list[FragmentHead]:
        """Fragments no sleep run has read yet, newest first, strictly before `before` (captured_at, id)."""
        ...

    def unread_in_group(
        self, source_id: int, session: str, start: datetime, end: datetime | None
    ) -> list[FragmentHead]:
        """The unread fragments of one source session captured in [start, end)."""
        ...

    def max_id(self) -> int:
        """The largest fragment id (ids only grow: AUTOINCREMENT never hands one out twice)."""
        ...

    def mark_read(self, ids: Sequence[int], run_id: int) -> int:
        """Record that run `run_id` read these fragments; return how many were unread."""
        ...

    def unread_counts(self, older_than: datetime) -> tuple[int, int]:
        """(unread captured at or after `older_than`, unread captured before it)."""
        ...

    def all(self, kind: Kind | None = None, limit: int | None = None) -> list[Fragment]: ...
    def around(self, fragment: Fragment, before: int, after: int) -> list[Fragment]: ...
    def last_owner_chat_at(self, until: datetime | None = None) -> datetime | None:
        """The newest owner chat message's time, ignoring any after `until`."""
        ...

    def latest_by_author(self, author: Author) -> list[tuple[int, datetime]]:
        """Sources holding a fragment by `author`, with their newest one's time, newest first."""
        ...

    def of_source(self, source_id: int) -> list[Fragment]: ...
    def delete_source(self, source_id: int) -> int:
        """Delete a source, its fragments and the evidence rows citing them; return fragments deleted."""
        ...

    def purge_before(self, kind: Kind, before: datetime) -> tuple[int, int]:
        """Retention: delete `kind` fragments captured before `before`, except those cited by a
        fact or a pending candidate (other candidates' evidence rows for them go first), and
        sources left empty. Return (deleted, kept)."""
        ...


class CandidateRepository(Protocol):
    def add(
        self,
        *,
        statement: str,
        subject: Subject,
        key: str,
        category: str | None,
        origin: str,
        run_id: int | None,
        proposal: Proposal,
        supersedes_fact_id: int | None,
        created_at: datetime,
    ) -> int: ...

    def get(self, candidate_id: int) -> Candidate | None: ...
    def open_by_key(self, key: str, subject: Subject, *, outside: bool) -> Candidate | None:
        """The waiting candidate with this key: among those another assistant proposed over MCP
        (`outside`), or among all the others; the two never share a candidate."""
        ...

    def all(self, status: CandidateStatus | None = None) -> list[Candidate]: ...
    def unscored(self) -> list[Candidate]: ...
    def mark_unscored(self, candidate_id: int) -> None: ...
    def note_rejected_refs(self, candidate_id: int, count: int) -> None: ...
    def set_proposal(self, candidate_id: int, proposal: Proposal) -> None: ...

    def set_scored(
        self,
        candidate_id: int,
        *,
        status: CandidateStatus,
        score: float,
        signals: dict[str, float],
        reason: str,
        supersedes_fact_id: int | None,
    ) -> None: ...

    def set_status(
        self, candidate_id: int, status: CandidateStatus, reason: str | None, at: datetime
    ) -> None: ...

    def set_statement(self, candidate_id: int, statement: str, key: str) -> None: ...
    def add_evidence(self, candidate_id: int, fragment_ids: Sequence[int], run_id: int | None) -> int: ...
    def evidence(self, candidate_id: int) -> list[Fragment]: ...
    def evidence_documents(self, candidate_id: int) -> int: ...
    def evidence_index(self, candidate_ids: Sequence[int]) -> dict[int, list[tuple[str, str]]]:
        """(ref, session) of each candidate's evidence in capture order, in one query."""
        ...

    def statuses(self, candidate_ids: Sequence[int]) -> dict[int, CandidateStatus]: ...
    def count(self) -> int: ...
    def count_status(self, status: CandidateStatus) -> int: ...
    def recent_statements(self, since: datetime, limit: int) -> list[str]:
        """Statements of candidates created since `since`, newest last; neither dropped ones nor
        what another assistant proposed over MCP (the model reads these)."""
        ...

    def was_refused(self, key: str) -> bool:
        """The owner rejected a candidate or reverted a fact with this key before."""
        ...

    def citing_source(self, source_id: int) -> list[Candidate]: ...


class FactRepository(Protocol):
    def add(
        self,
        *,
        statement: str,
        subject: Subject,
        key: str,
        category: str | None,
        candidate_id: int | None,
        valid_from: datetime,
    ) -> int: ...

    def get(self, fact_id: int) -> Fact | None: ...
    def by_candidate(self, candidate_id: int) -> Fact | None: ...
    def all(self, status: FactStatus | None = None) -> list[Fact]: ...
    def applied_by_key(self, key: str) -> Fact | None: ...
    def superseded_by(self, fact_id: int) -> list[Fact]: ...
    def delete(self, fact_id: int) -> None: ...

    def set_status(
        self,
        fact_id: int,
        status: FactStatus,
        valid_to: datetime | None,
        superseded_by: int | None = None,
    ) -> None: ...


class ObservationRepository(Protocol):
    def add(self, run_id: int | None, text: str, themes: list[str], at: datetime) -> int: ...
    def all(self) -> list[Observation]: ...


class RunRepository(Protocol):
    def create(self, key: str, holder: str, at: datetime) -> int: ...
    def get(self, run_id: int) -> SleepRun | None: ...
    def latest(self) -> SleepRun | None: ...

    def finish(
        self,
        run_id: int,
        status: RunStatus,
        at: datetime,
        counters: dict[str, Any],
        error: str | None,
    ) -> None: ...

    def set_holder(self, run_id: int, holder: str) -> None: ...
    def running(self) -> list[SleepRun]: ...
    def by_key_prefix(self, prefix: str) -> list[SleepRun]: ...
    def record_document(self, digest: str, run_id: int, ok: bool, at: datetime) -> int:
        """Record an extraction attempt; return the failed attempts so far."""
        ...

    def document_done(self, digest: str) -> bool: ...


class LeaseRepository(Protocol):
    def acquire(self, name: str, holder: str, now: datetime, ttl_s: float) -> str | None:
        """Take the lease if free, expired or held by a dead local process.

        Returns None on success, else the current holder.
        """
        ...

    def renew(self, name: str, holder: str, now: datetime, ttl_s: float) -> bool:
        """Extend the lease if `holder` still has it; False when another runner took it."""
        ...

    def holder(self, name: str) -> str | None: ...
    def release(self, name: str, holder: str) -> None: ...


class KeyValueRepository(Protocol):
    def get(self, key: str) -> str | None: ...
    def set(self, key: str, value: str) -> None: ...


class Journal(Protocol):
    def append(
        self,
        *,
        at: datetime,
        actor: str,
        action: str,
        entity: str,
        entity_id: int | None = None,
        run_id: int | None = None,
        data: dict[str, Any] | None = None,
    ) -> int: ...

    def all(self, limit: int | None = None, actions: Sequence[str] | None = None) -> list[Revision]: ...
    def get(self, revision_id: int) -> Revision | None: ...
    def verify(self) -> JournalCheck:
        """Check the hash chain and the append-only triggers, entry by entry."""
        ...


@dataclass(frozen=True, slots=True)
class JournalCheck:
    """What `journal verify` found: `first_bad` is the first entry rewritten, lost or slipped in."""

    ok: bool
    entries: int
    first_bad: int | None
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "entries": self.entries, "first_bad": self.first_bad, "message": self.message}


@dataclass(frozen=True, slots=True)
class Skill:
    """A procedural Markdown note the assistant may follow; written only on the owner's approval."""

    id: int
    name: str
    content: str
    status: str  # "active" | "retired"
    created_at: datetime
    updated_at: datetime

    def to_json(self) -> dict[str, Any]:
        """The skill in the CLI's JSON (`skills --json`)."""
        return {
            "id": self.id,
            "name": self.name,
            "content": self.content,
            "updated_at": self.updated_at.isoformat(),
        }


class SkillRepository(Protocol):
    def get(self, skill_id: int) -> Skill | None: ...
    def by_name(self, name: str) -> Skill | None: ...
    def all(self, status: str | None = None) -> list[Skill]: ...
    def add(self, name: str, content: str, at: datetime) -> int: ...
    def update(self, skill_id: int, content: str, status: str, at: datetime) -> None: ...
    def delete(self, skill_id: int) -> None: ...


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One match of a search: a captured fragment (`ref`) or a fact (`fact_id`).

    `marked` is the whole text with each matching word between MARK_START and MARK_END
    (empty when the text itself holds those characters and cannot be marked safely).
    `score` is higher for a better match.
    """

    kind: str  # chat | screen | speech | fact
    text: str
    marked: str
    captured_at: datetime
    score: float
    ref: str | None = None
    fragment_id: int | None = None
    fact_id: int | None = None
    source_id: int | None = None
    source_label: str = ""
    author: str | None = None
    trust: str | None = None


MARK_START = "\ue000"
MARK_END = "\ue001"


class SearchIndex(Protocol):
    """The full-text index the store keeps in step with fragments and facts."""

    def fragments(
        self, query: SearchQuery, kinds: Sequence[Kind] | None, since: datetime | None, limit: int
    ) -> list[SearchHit]:
        """Fragments matching every term, best first."""
        ...

    def facts(self, query: SearchQuery, since: datetime | None, limit: int) -> list[SearchHit]:
        """Applied facts whose statement matches every term, best first."""
        ...

    def rank_facts(self, query: SearchQuery, limit: int) -> list[tuple[int, float]]:
        """(fact id, score) of applied facts matching any term in their statement or evidence."""
        ...


class EmbeddingStore(Protocol):
    """Fact embeddings kept locally; a fact no longer applied has none (the store sees to it)."""

    def missing(self, model: str, limit: int) -> list[tuple[int, str]]:
        """(fact id, statement) of applied facts without a current vector for `model`."""
        ...

    def put(self, fact_id: int, model: str, statement: str, vector: Sequence[float]) -> None: ...

    def nearest(self, model: str, vector: Sequence[float], limit: int) -> list[tuple[int, float]]:
        """(fact id, cosine similarity) of applied facts, most similar first."""
        ...

    def count(self) -> int: ...


class Embedder(Protocol):
    """Text to vectors, on the owner's own model host."""

    model: str

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text. Raises TransientLLMError or LLMError."""
        ...


class KeyGrab(Protocol):
    """A desktop-wide key held for the app, from its making until `release`."""

    def presses(self, cancelled: Callable[[], bool]) -> Iterator[None]:
        """One value per press of the key, until `cancelled()` (a worker thread drains it)."""
        ...

    def release(self) -> None: ...


KeyGrabber = Callable[[str], KeyGrab]
"""Grab the key a shortcut text names ('Ctrl+Alt+Space'); a PersonaError says why it
cannot be had (no X11 session, no such key, not a shortcut)."""


@dataclass(frozen=True, slots=True)
class StoreSpace:
    """What the database uses: its live pages, and (when asked) an estimate per kind."""

    used_bytes: int  # pages in use (free pages are reused before the file grows)
    file_bytes: int  # the file on disk, with its WAL
    text_by_kind: Mapping[Kind, int]  # bytes of fragment rows per kind (text, locator); empty unless detailed


@dataclass(frozen=True, slots=True)
class CaptureToFree:
    """A screen capture or speech recording that no fact and no waiting candidate cites."""

    source_id: int
    kind: Kind
    captured_at: datetime
    fragments: int
    text_bytes: int  # its fragments' text and locators: what deleting it frees in the database


class StorageRepository(Protocol):
    def space(self, detailed: bool = False) -> StoreSpace: ...
    def uncited_captures(self, limit: int) -> list[CaptureToFree]:
        """Oldest first."""
        ...

    def reclaim(self) -> None:
        """Give freed pages back to the file system where the store allows it."""
        ...


class UnitOfWork(Protocol):
    """One transaction: committed by `commit()`, rolled back otherwise on exit.

    The repositories are read-only properties, so an adapter's own repository classes match.
    """

    @property
    def sources(self) -> SourceRepository: ...
    @property
    def fragments(self) -> FragmentRepository: ...
    @property
    def candidates(self) -> CandidateRepository: ...
    @property
    def facts(self) -> FactRepository: ...
    @property
    def observations(self) -> ObservationRepository: ...
    @property
    def runs(self) -> RunRepository: ...
    @property
    def leases(self) -> LeaseRepository: ...
    @property
    def kv(self) -> KeyValueRepository: ...
    @property
    def journal(self) -> Journal: ...
    @property
    def skills(self) -> SkillRepository: ...
    @property
    def search(self) -> SearchIndex: ...
    @property
    def embeddings(self) -> EmbeddingStore: ...
    @property
    def storage(self) -> StorageRepository: ...

    def __enter__(self) -> UnitOfWork: ...
    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None: ...
    def commit(self) -> None: ...


class UnitOfWorkFactory(Protocol):
    def __call__(self) -> AbstractContextManager[UnitOfWork]: ...
    def read(self) -> AbstractContextManager[UnitOfWork]: ...


# --- chat imports -------------------------------------------------------------------------


class SkipReason(StrEnum):
    """Why a message of a chat export was not imported: every message is imported or counted."""

    SERVICE = "service_message"
    SYSTEM = "system_or_tool"
    EDITED_AWAY = "edited_away"
    MEDIA = "media_without_caption"
    STICKER = "sticker"
    DELETED = "deleted"
    EMPTY = "empty"
    CHANNEL = "channel_post"
    UNREADABLE = "unreadable"

    @property
    def label(self) -> str:
        return _SKIP_LABELS[self]


_SKIP_LABELS = {
    SkipReason.SERVICE: "service message",
    SkipReason.SYSTEM: "system, tool or hidden message",
    SkipReason.EDITED_AWAY: "edited-away branch",
    SkipReason.MEDIA: "media without caption",
    SkipReason.STICKER: "sticker",
    SkipReason.DELETED: "deleted message",
    SkipReason.EMPTY: "empty",
    SkipReason.CHANNEL: "channel post",
    SkipReason.UNREADABLE: "unreadable",
}


@dataclass(frozen=True, slots=True)
class ImportedMessage:
    """One message read from a chat export; `place` says where in the file (for errors)."""

    source: SourceInfo
    fragment: NewFragment
    place: str
    # The ref and source key an earlier version of the importer stored this message under, where
    # they differ: looked up when the current ones are not stored, and then kept.
    legacy_ref: str | None = None
    legacy_source: str | None = None


@dataclass(frozen=True, slots=True)
class SkippedMessage:
    """One message not imported, and why; `detail` says what was wrong when unreadable."""

    reason: SkipReason
    place: str
    detail: str = ""


ChatRecord = ImportedMessage | SkippedMessage


# --- speech -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SpokenWord:
    """One word with its times in seconds from the start of the transcribed audio."""

    word: str
    start: float
    end: float
    probability: float


@dataclass(frozen=True, slots=True)
class SpeechSegment:
    """One transcribed segment; times in seconds from the start of the audio given."""

    start: float
    end: float
    text: str
    avg_logprob: float
    no_speech_prob: float
    compression_ratio: float
    words: tuple[SpokenWord, ...] = ()


class Transcriber(Protocol):
    """Speech to text: 16 kHz mono float32 samples in, kept segments out (noise filtered)."""

    model_name: str

    def transcribe(self, samples: NDArray[np.float32]) -> list[SpeechSegment]: ...

    def close(self) -> None:
        """Free the model and stop any idle timer."""
        ...


# --- kept media (screen crops, speech clips) ----------------------------------------------


class MediaFiles(Protocol):
    """Where kept crops and clips are written and read: sealed when the store is encrypted."""

    def write(self, path: Path, data: bytes, mtime: float | None = None) -> None:
        """Atomically, private (0600); `mtime` is when it was captured (retention counts from it)."""
        ...

    def read(self, path: Path) -> bytes:
        """The plain content; raises PersonaError when it cannot be opened."""
        ...


@dataclass(frozen=True, slots=True)
class PassphraseRequest:
    """What a passphrase prompt (terminal or dialog) is asked for."""

    data_dir: Path
    new: bool = False  # choosing a passphrase: ask twice
    retry: str = ""  # why the last one was refused, shown above the field


PassphrasePrompt = Callable[[PassphraseRequest], "str | None"]
"""Returns the passphrase typed, or None when the owner cancelled."""
