"""The conversation with the assistant: the memory-carrying system prompt, streaming, and storage.

Each owner and assistant message becomes a chat fragment of the source
`chat:assistant:<conversation id>` (refs `chat:assistant:<conversation id>:<n>`):
the owner's on a trusted channel, the assistant's authored `assistant`, which is
never evidence. The owner's messages are what the sleep cycle's quiet gate sees.
A failing model never ends the conversation: the turn reports the error and the
owner can go on.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from persona_desktop.domain.model import Author, Kind, NewFragment, SourceInfo, Trust
from persona_desktop.errors import LLMError, NotFoundError
from persona_desktop.ports import ChatModel, Clock, Embedder, UnitOfWorkFactory
from persona_desktop.services.ingest import store_fragments
from persona_desktop.services.recall import (
    DEFAULT_RECALL,
    Recall,
    RecallConfig,
    RecalledFact,
    fact_line,
    recall,
)
from persona_desktop.services.skills import ACTIVE, summary_line

SOURCE_PREFIX = "chat:assistant:"
LATEST_KEY = "chat.latest_conversation"
MAX_PROMPT_OBSERVATIONS = 10
MAX_HISTORY = 40  # messages sent back to the model each turn
MAX_PROMPT_SKILL_CHARS = 8000

SYSTEM_INTRO = """\
You are Persona, the owner's personal assistant. You run on the owner's own computer and \
talk only with the owner. Be concise, warm and practical. Never claim to have saved or \
changed a memory yourself: memories are proposed in the background and the owner approves them."""


@dataclass(frozen=True, slots=True)
class ChatMessage:
    ref: str
    role: str  # "owner" | "assistant" | "other" (someone else, in an imported conversation)
    text: str
    at: datetime


@dataclass(frozen=True, slots=True)
class TurnOutcome:
    owner: ChatMessage
    reply: ChatMessage | None
    cancelled: bool = False
    error: str | None = None
    memories: tuple[RecalledFact, ...] = ()  # the facts recalled as relevant to this turn


@dataclass(slots=True)
class Conversation:
    id: str
    messages: list[ChatMessage] = field(default_factory=list)
    next_n: int = 0  # the next message number: refs are never reused, even after a gap

    @property
    def source_key(self) -> str:
        return f"{SOURCE_PREFIX}{self.id}"

    def next_ref(self) -> str:
        return f"{self.source_key}:{self.next_n}"


def new_conversation_id(at: datetime) -> str:
    return f"{at:%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:6]}"


@dataclass(frozen=True, slots=True)
class Prompt:
    text: str
    recall: Recall


def build_prompt(
    uow_factory: UnitOfWorkFactory,
    include_observations: bool,
    query: str = "",
    config: RecallConfig = DEFAULT_RECALL,
    embedder: Callable[[], Embedder] | None = None,
) -> Prompt:
    """Facts recalled for `query` as facts; observations only when allowed, and only as hypotheses."""
    recalled = recall(uow_factory, query, config, embedder)
    with uow_factory.read() as uow:
        observations = uow.observations.all()[-MAX_PROMPT_OBSERVATIONS:] if include_observations else []
        skills = uow.skills.all(ACTIVE)
    parts = [SYSTEM_INTRO]
    if recalled.facts:
        lines = [fact_line(r.fact) for r in recalled.facts]
        parts.append("What you know about the owner (facts, numbered):\n" + "\n".join(lines))
    else:
        parts.append("You know no facts about the owner yet.")
    if observations:
        lines = [f"- {o.text}" for o in observations]
        parts.append(
            "Unverified hypotheses about the owner's recent period. These are NOT facts and may be "
            "wrong: never state them as facts; ask the owner when one matters.\n" + "\n".join(lines)
        )
    if skills:
        blocks, budget = [], MAX_PROMPT_SKILL_CHARS
        for skill in skills:  # whole skills while the budget lasts, then their first lines only
            text = skill.content.strip()
            if len(text) <= budget:
                blocks.append(f"### Skill: {skill.name}\n{text}")
                budget -= len(text)
            else:
                blocks.append(f"### Skill: {skill.name}\n{summary_line(skill)} (shortened)")
        parts.append(
            "Skills (procedures the owner approved; follow them for their task):\n\n" + "\n\n".join(blocks)
        )
    return Prompt("\n\n".join(parts), recalled)


def system_prompt(
    uow_factory: UnitOfWorkFactory,
    include_observations: bool,
    query: str = "",
    config: RecallConfig = DEFAULT_RECALL,
) -> str:
    return build_prompt(uow_factory, include_observations, query, config).text


class ChatSession:
    """One conversation. Not thread-safe: one turn at a time (the window and the CLI ensure it)."""

    def __init__(
        self,
        uow_factory: UnitOfWorkFactory,
        llm_factory: Callable[[], ChatModel],
        clock: Clock,
        include_observations: bool = False,
        conversation_id: str | None = None,
        options: dict[str, Any] | None = None,
        recall: RecallConfig = DEFAULT_RECALL,
        embedder: Callable[[], Embedder] | None = None,
    ) -> None:
        self._uow = uow_factory
        self._llm_factory = llm_factory
        self._llm: ChatModel | None = None
        self._clock = clock
        self.include_observations = include_observations
        self.conversation = Conversation(conversation_id or new_conversation_id(clock.now()))
        self._options = options
        self.recall = recall
        self._embedder = embedder
        self.source_id: int | None = None

    @property
    def id(self) -> str:
        return self.conversation.id

    def system_prompt(self) -> str:
        return self.prompt_for("").text

    def prompt_for(self, text: str) -> Prompt:
        """The system prompt for a turn about `text`: the previous owner message helps recall too."""
        previous = next((m.text for m in reversed(self.conversation.messages) if m.role == "owner"), "")
        query = f"{text}\n{previous}" if previous else text
        return build_prompt(self._uow, self.include_observations, query, self.recall, self._embedder)

    def model_messages(self, prompt: str | None = None) -> list[dict[str, str]]:
        """The system prompt and the conversation so far, as the model sees it."""
        out = [{"role": "system", "content": prompt if prompt is not None else self.system_prompt()}]
        for m in self.conversation.messages[-MAX_HISTORY:]:
            out.append({"role": "user" if m.role == "owner" else "assistant", "content": m.text})
        return out

    def _store(self, role: str, text: str, extra: dict[str, Any] | None = None) -> ChatMessage:
        at = self._clock.now()
        conv = self.conversation
        n = conv.next_n
        message = ChatMessage(conv.next_ref(), role, text, at)
        fragment = NewFragment(
            ref=message.ref,
            kind=Kind.CHAT,
            author=Author.OWNER if role == "owner" else Author.ASSISTANT,
            trust=Trust.TRUSTED,
            text=text,
            captured_at=at,
            locator={
                "chat": f"assistant:{conv.id}",
                "chat_type": "assistant",
                "message_id": n,
                **(extra or {}),
            },
            session=conv.source_key,
            seq=n,
        )
        source = SourceInfo(
            key=conv.source_key,
            kind=Kind.CHAT,
            label=f"Chat with the assistant, {conv.messages[0].at if conv.messages else at:%Y-%m-%d %H:%M}",
            meta={"chat_type": "assistant", "conversation": conv.id},
        )
        with self._uow() as uow:
            result = store_fragments(uow, source, [fragment], at)
            uow.kv.set(LATEST_KEY, json.dumps({"id": conv.id, "source_id": result.source_id}))
            uow.commit()
        self.source_id = result.source_id
        conv.messages.append(message)
        conv.next_n = n + 1
        return message

    def ask(self, text: str, cancel: Callable[[], bool] = lambda: False) -> Generator[str, None, TurnOutcome]:
        """Store the owner's message, stream the answer chunk by chunk, store the answer.

        A cancelled answer is kept as far as it came (marked so); an LLM failure ends the
        turn with `error` set and nothing else lost.
        """
        text = text.strip()
        prompt = self.prompt_for(text)
        owner = self._store("owner", text)
        messages = self.model_messages(prompt.text)
        pieces: list[str] = []
        error: str | None = None
        cancelled = False
        try:
            if self._llm is None:
                self._llm = self._llm_factory()
            stream = self._llm.chat_stream(messages, self._options)
            try:
                for piece in stream:
                    if cancel():
                        cancelled = True
                        break
                    pieces.append(piece)
                    yield piece
            finally:
                close = getattr(stream, "close", None)
                if close is not None:
                    close()
        except LLMError as exc:
            error = str(exc)
        answer = "".join(pieces).strip()
        reply = None
        if answer:
            reply = self._store("assistant", answer, {"cancelled": True} if cancelled else None)
        return TurnOutcome(owner, reply, cancelled, error, tuple(prompt.recall.relevant))


def drain_turn(gen: Generator[str, None, TurnOutcome], on_piece: Callable[[str], None]) -> TurnOutcome:
    while True:
        try:
            piece = next(gen)
        except StopIteration as stop:
            outcome: TurnOutcome = stop.value
            return outcome
        on_piece(piece)


def latest_conversation(uow_factory: UnitOfWorkFactory) -> tuple[str, int]:
    """The newest conversation with the assistant: (conversation id, source id)."""
    with uow_factory.read() as uow:
        raw = uow.kv.get(LATEST_KEY)
    if not raw:
        raise NotFoundError(
            "there is no conversation with the assistant yet: start one with `persona-desktop chat`"
        )
    value = json.loads(raw)
    return str(value["id"]), int(value["source_id"])


def load_messages(uow_factory: UnitOfWorkFactory, source_id: int) -> list[ChatMessage]:
    with uow_factory.read() as uow:
        fragments = uow.fragments.of_source(source_id)
    if not fragments:
        raise NotFoundError("that conversation has no messages left (was its source forgotten?)")
    ordered = sorted(fragments, key=lambda f: (f.seq, f.id))
    roles = {Author.OWNER: "owner", Author.ASSISTANT: "assistant"}
    return [ChatMessage(f.ref, roles.get(f.author, "other"), f.text, f.captured_at) for f in ordered]


def assistant_conversation(uow_factory: UnitOfWorkFactory, source_id: int | None = None) -> tuple[str, int]:
    """A conversation with the assistant, for the turn review: (conversation id, source id).

    The app's own chats and imported ones alike (any chat where the assistant speaks);
    without `source_id`, the one whose last message of the assistant is the newest.
    """
    with uow_factory.read() as uow:
        spoken = dict(uow.fragments.latest_by_author(Author.ASSISTANT))
        if source_id is None:
            if not spoken:
                raise NotFoundError(
                    "there is no conversation with the assistant yet: start one with "
                    "`persona-desktop chat`, or import one (`ingest chat`)"
                )
            source_id = next(iter(spoken))
        found = uow.sources.get(source_id)
    if found is None:
        raise NotFoundError(f"no source with id {source_id} (see `persona-desktop sources`)")
    info, _ = found
    if info.kind is not Kind.CHAT or source_id not in spoken:
        raise NotFoundError(
            f"source {source_id} ({info.label}) is not a conversation with the assistant: "
            "no message of the assistant in it"
        )
    return info.key.removeprefix(SOURCE_PREFIX), source_id


def resume_latest(
    uow_factory: UnitOfWorkFactory,
    llm_factory: Callable[[], ChatModel],
    clock: Clock,
    include_observations: bool = False,
    recall: RecallConfig = DEFAULT_RECALL,
    embedder: Callable[[], Embedder] | None = None,
) -> ChatSession:
    """Go on with the newest conversation (its history kept), or start one if there is none."""
    session = ChatSession(
        uow_factory, llm_factory, clock, include_observations, recall=recall, embedder=embedder
    )
    try:
        conv_id, source_id = latest_conversation(uow_factory)
        messages = load_messages(uow_factory, source_id)
    except NotFoundError:
        return session
    last = max(
        (int(m.ref.rsplit(":", 1)[1]) for m in messages if m.ref.rsplit(":", 1)[1].isdigit()), default=-1
    )
    session.conversation = Conversation(conv_id, messages, last + 1)
    session.source_id = source_id
    return session
