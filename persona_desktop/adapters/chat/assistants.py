"""What the ChatGPT and Claude importers share: a conversation with an assistant as a source.

The owner's messages (role user / human) are the owner's words on a trusted channel;
the assistant's are authored `assistant`, which is never evidence. Each conversation
is its own source with chat type `assistant`, like the app's own chat, so the turn
review can read it.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

from persona_desktop.adapters.chat.fields import make_ref
from persona_desktop.adapters.chat.files import ChatFile
from persona_desktop.adapters.chat.json_stream import JsonStream
from persona_desktop.domain.model import Author, Kind, NewFragment, SourceInfo, Trust
from persona_desktop.errors import ImportFormatError
from persona_desktop.ports import ChatRecord

MAX_CONVERSATION_CHARS = 64 * 1024 * 1024


def conversations(file: ChatFile) -> Iterator[tuple[dict[str, Any], str]]:
    """Each conversation of a `conversations.json` list, with its place, one at a time."""
    stream = JsonStream(file.open, file.label)
    for _i in stream.array_items():
        place = stream.place
        conv = stream.value(MAX_CONVERSATION_CHARS)
        if not isinstance(conv, dict):
            raise ImportFormatError(f"{file.label}: {place}: expected a conversation object")
        yield conv, place
    stream.end()


class ConversationsReader:
    """A `conversations.json` reader: each conversation is read by `conversation()`."""

    def __init__(self, file: ChatFile) -> None:
        self.file = file

    def records(self) -> Iterator[ChatRecord]:
        for conv, place in conversations(self.file):
            yield from self.conversation(conv, place)

    def conversation(self, conv: dict[str, Any], place: str) -> Iterator[ChatRecord]:
        raise NotImplementedError


def conversation_source(prefix: str, conversation_id: str, title: str, fmt: str) -> SourceInfo:
    return SourceInfo(
        key=make_ref("chat", prefix, conversation_id),
        kind=Kind.CHAT,
        label=title,
        meta={"chat_type": "assistant", "format": fmt, "conversation": conversation_id},
    )


def assistant_chat_fragment(
    *,
    prefix: str,
    conversation_id: str,
    title: str,
    message_id: str,
    owner: bool,
    text: str,
    captured: datetime,
    seq: int,
    extra: dict[str, Any] | None = None,
) -> NewFragment:
    return NewFragment(
        ref=make_ref(prefix, conversation_id, message_id),
        kind=Kind.CHAT,
        author=Author.OWNER if owner else Author.ASSISTANT,
        trust=Trust.TRUSTED,
        text=text,
        captured_at=captured,
        locator={
            "chat_id": conversation_id,
            "chat": title,
            "chat_type": "assistant",
            "message_id": message_id,
            "from": "owner" if owner else "assistant",
            **(extra or {}),
        },
        session=make_ref("chat", prefix, conversation_id),
        seq=seq,
    )
