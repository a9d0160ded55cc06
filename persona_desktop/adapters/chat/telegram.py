"""Telegram Desktop JSON export (`result.json`: "Export chat history" or the full export).

Streamed one message at a time. Every message is imported or counted as skipped:
text comes from `text` or, when that is empty, `text_entities` (files written by other
tools); photo and file captions are the message's text; edited messages keep their
last text and say so; `reply_to_message_id` stays in the locator. A message forwarded
or saved from someone else (`forwarded_from`, `saved_from`) or sent through an inline
bot (`via_bot`) is that author's words (`other`, untrusted), whoever sent it on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from persona_desktop.adapters.chat.dates import Unreadable, iso_date, unix_date
from persona_desktop.adapters.chat.fields import clean_text, int_id, make_ref, plain
from persona_desktop.adapters.chat.files import ChatFile
from persona_desktop.adapters.chat.json_stream import JsonStream
from persona_desktop.domain.model import Author, Kind, NewFragment, SourceInfo, Trust
from persona_desktop.errors import ImportFormatError
from persona_desktop.ports import ChatRecord, ImportedMessage, SkippedMessage, SkipReason

PRIVATE_TYPES = {"personal_chat", "saved_messages", "bot_chat"}
GROUP_TYPES = {"private_group", "private_supergroup", "public_supergroup"}
CHANNEL_TYPES = {"private_channel", "public_channel"}
MAX_MESSAGE_CHARS = 4 * 1024 * 1024
_HEAD_KEYS = ("id", "type", "name")
_MEDIA_KEYS = (
    "photo",
    "file",
    "media_type",
    "location_information",
    "contact_information",
    "game_title",
    "invoice_information",
    "dice",
    "live_location_period_seconds",
    "place_name",
)
FORWARD_KEYS = ("forwarded_from", "saved_from", "via_bot")


class _NeedHeads(Exception):
    """A chat's messages came before its id or type (keys in another order): read heads first."""

    def __init__(self, chats_done: int) -> None:
        super().__init__(chats_done)
        self.chats_done = chats_done


@dataclass(slots=True)
class _Heads:
    owner_id: str | None = None
    chats: dict[int, dict[str, Any]] = field(default_factory=dict)  # by chat ordinal


def flatten_text(value: Any) -> str:
    """`text` is a string, or a list of strings and entity objects with a `text`."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts: list[str] = []
        for i, part in enumerate(value):
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text", ""), str):
                parts.append(part.get("text", ""))
            else:
                raise Unreadable(f"text[{i}] is neither a string nor an entity with 'text'")
        return "".join(parts)
    raise Unreadable(f"text is {type(value).__name__}, not a string or a list")


def _message_text(msg: dict[str, Any]) -> str:
    body = clean_text(flatten_text(msg.get("text")))
    if not body:
        body = clean_text(flatten_text(msg.get("text_entities")))
    poll = msg.get("poll")
    if not body and isinstance(poll, dict) and isinstance(poll.get("question"), str):
        answers = [a.get("text") for a in poll.get("answers") or [] if isinstance(a, dict)]
        options = " / ".join(a for a in answers if isinstance(a, str))
        body = clean_text(f"Poll: {poll['question']}" + (f" ({options})" if options else ""))
    return body


def _date(msg: dict[str, Any]) -> datetime:
    if msg.get("date_unixtime") is not None:
        try:
            return unix_date(msg["date_unixtime"])
        except Unreadable:
            raise
        except ValueError:
            raise Unreadable(f"date_unixtime {msg['date_unixtime']!r} is not a Unix time") from None
    date = msg.get("date")
    if not isinstance(date, str):
        raise Unreadable("no 'date'")
    try:
        return iso_date(date)
    except Unreadable:
        raise
    except ValueError:
        raise Unreadable(f"date {date!r} is not ISO 8601") from None


def _owner_id(info: dict[str, Any], error: Callable[[str, str], ImportFormatError]) -> str | None:
    """personal_information.user_id: the owner's Telegram id, if the export has it."""
    value = info.get("user_id")
    if value is None:
        return None
    try:
        return str(int_id(value))
    except ValueError:
        raise error(f"{value!r} is not a user id", "personal_information.user_id") from None


class _Chat:
    """One chat being read: who is the owner in it, and how its messages become fragments."""

    def __init__(self, head: dict[str, Any], owner_id: str | None, file: str, place: str) -> None:
        self.type = str(head.get("type"))
        try:
            self.id = int_id(head.get("id"))
        except ValueError as exc:
            raise ImportFormatError(
                f"{file}: {place}.id: {head.get('id')!r} is not a chat id ({exc})"
            ) from None
        self.private = self.type in PRIVATE_TYPES
        self.name = clean_text(str(head.get("name") or "")) or (
            "Saved Messages" if self.type == "saved_messages" else f"chat {self.id}"
        )
        self.owner_ids = {f"user{owner_id}", owner_id} if owner_id else None
        self.peer = f"user{self.id}"
        self.inferred_owner: str | None = None
        self.file, self.place = file, place
        self.source = SourceInfo(
            key=f"chat:{make_ref('tg', self.id)}",
            kind=Kind.CHAT,
            label=self.name,
            meta={"chat_type": self.type, "format": "telegram"},
        )

    def is_owner(self, from_id: str, where: str) -> bool:
        if self.owner_ids is not None:  # Saved Messages too: a message there from anyone else is theirs
            return from_id in self.owner_ids
        if self.type == "saved_messages":
            return True  # the owner is not known: only the owner writes there (others' arrive forwarded)
        if self.type in ("personal_chat", "bot_chat"):
            # A one-to-one chat: the owner is whoever is not the peer (whose user id is the chat's).
            if not from_id or from_id == self.peer:
                return False
            if self.inferred_owner is None:
                self.inferred_owner = from_id
            elif from_id != self.inferred_owner:
                raise ImportFormatError(
                    f"{self.file}: {where}: a third sender in a one-to-one chat; pass --owner-id "
                    "(your Telegram user id) to say which is you"
                )
            return True
        raise ImportFormatError(
            f"{self.file}: {self.place}: a group chat in an export without personal_information, so your "
            "own messages cannot be told apart; export with 'Personal information' ticked or pass --owner-id"
        )

    def record(self, msg: Any, index: int, where: str) -> ChatRecord:
        if not isinstance(msg, dict):
            raise ImportFormatError(f"{self.file}: {where}: expected a message object")
        kind = msg.get("type", "message")
        if kind == "service":
            return SkippedMessage(SkipReason.SERVICE, where)
        if self.type in CHANNEL_TYPES:
            return SkippedMessage(SkipReason.CHANNEL, where)
        if "id" not in msg:
            raise ImportFormatError(f"{self.file}: {where}: message has no 'id'")
        try:
            mid = int_id(msg["id"])
            body = _message_text(msg)
            if not body:
                return SkippedMessage(self._empty_reason(msg), where)
            captured = _date(msg)
        except Unreadable as exc:
            return SkippedMessage(SkipReason.UNREADABLE, where, str(exc))
        except ValueError as exc:
            return SkippedMessage(SkipReason.UNREADABLE, where, f"id {msg['id']!r}: {exc}")
        return ImportedMessage(self.source, self._fragment(msg, mid, body, captured, index, where), where)

    @staticmethod
    def _empty_reason(msg: dict[str, Any]) -> SkipReason:
        if msg.get("media_type") == "sticker" or "sticker_emoji" in msg:
            return SkipReason.STICKER
        if any(k in msg for k in _MEDIA_KEYS):
            return SkipReason.MEDIA
        return SkipReason.EMPTY

    def _fragment(
        self, msg: dict[str, Any], mid: int, body: str, captured: datetime, index: int, where: str
    ) -> NewFragment:
        from_id = str(msg.get("from_id") or "")
        passed_on = {k: msg[k] for k in FORWARD_KEYS if k in msg}
        owner = not passed_on and self.is_owner(from_id, where)
        locator: dict[str, Any] = {
            "chat_id": str(self.id),
            "chat": self.name,
            "chat_type": self.type,
            "message_id": mid,
            "from": plain(msg.get("from")),
            "reply_to": plain(msg.get("reply_to_message_id")),
        }
        for key, value in passed_on.items():
            locator[key] = value if value is None or isinstance(value, str) else str(value)
        if msg.get("edited") or msg.get("edited_unixtime"):
            locator["edited"] = str(msg.get("edited") or msg.get("edited_unixtime"))
        return NewFragment(
            ref=make_ref("tg", self.id, mid),
            kind=Kind.CHAT,
            author=Author.OWNER if owner else Author.OTHER,
            trust=Trust.TRUSTED if self.private and owner else Trust.UNTRUSTED,
            text=body,
            captured_at=captured,
            locator=locator,
            session=f"tg:{self.id}",
            seq=index,
        )


class TelegramReader:
    def __init__(self, file: ChatFile, owner_id: str | None) -> None:
        self.file = file
        self.owner_id = owner_id

    def records(self) -> Iterator[ChatRecord]:
        try:
            yield from self._read(None, 0)
        except _NeedHeads as need:
            yield from self._read(self._heads(), need.chats_done)

    # --- the main pass -----------------------------------------------------------------

    def _read(self, heads: _Heads | None, skip_chats: int) -> Iterator[ChatRecord]:
        stream = JsonStream(self.file.open, self.file.label)
        if stream.next_kind() != "object":
            raise stream.error("expected a JSON object (a Telegram Desktop export)")
        owner = self.owner_id or (heads.owner_id if heads else None)
        top: dict[str, Any] = {}
        ordinal = 0
        for key in stream.object_keys():
            if key == "personal_information" and stream.next_kind() == "object":
                info = stream.value(1 << 20)
                owner = owner or _owner_id(info, stream.error)
            elif key in ("chats", "left_chats"):
                if owner is None and heads is None:
                    raise _NeedHeads(ordinal)  # personal_information may come later
                for ckey in stream.object_keys():
                    if ckey != "list":
                        stream.skip()
                        continue
                    for _i in stream.array_items():
                        if ordinal < skip_chats:
                            stream.skip()
                        else:
                            yield from self._chat(stream, owner, heads, ordinal)
                        ordinal += 1
            elif key in _HEAD_KEYS:
                top[key] = stream.value(1 << 16)
            elif key == "messages":  # a single-chat export: the top level is the chat
                if ordinal < skip_chats:
                    stream.skip()
                else:
                    head = {**heads.chats.get(ordinal, {}), **top} if heads else top
                    if not all(k in head for k in ("id", "type")):
                        if heads is None:
                            raise _NeedHeads(ordinal)
                        raise stream.error("the chat has no 'id' or 'type'", "the top level")
                    yield from self._messages(stream, _Chat(head, owner, self.file.label, "messages"))
                ordinal += 1
            else:
                stream.skip()
        stream.end()
        if ordinal == 0:
            raise ImportFormatError(
                f"{self.file.label}: not a Telegram Desktop export (no 'chats' and no 'messages')"
            )

    def _chat(
        self, stream: JsonStream, owner: str | None, heads: _Heads | None, ordinal: int
    ) -> Iterator[ChatRecord]:
        place = stream.place
        if stream.next_kind() != "object":
            raise stream.error("expected a chat object")
        head: dict[str, Any] = dict(heads.chats.get(ordinal, {})) if heads else {}
        for key in stream.object_keys():
            if key in _HEAD_KEYS:
                head[key] = stream.value(1 << 16)
            elif key == "messages":
                if "type" not in head or "id" not in head:
                    if heads is None:
                        raise _NeedHeads(ordinal)
                    raise stream.error("chat has no 'id' or 'type'", place)
                yield from self._messages(stream, _Chat(head, owner, self.file.label, place))
            else:
                stream.skip()

    def _messages(self, stream: JsonStream, chat: _Chat) -> Iterator[ChatRecord]:
        prefix = stream.place  # "chats.list[2].messages", before the list's first event moves it
        if stream.next_kind() != "array":
            raise stream.error("expected a list of messages")
        if chat.type not in PRIVATE_TYPES | GROUP_TYPES | CHANNEL_TYPES:
            chat.private = False  # an unknown kind of chat: read, but never as the owner's private channel
        for index in stream.array_items():
            where = f"{prefix}[{index}]"
            msg = stream.value(MAX_MESSAGE_CHARS)
            yield chat.record(msg, index, where)

    # --- the heads pass (only for files whose keys come in another order) ------------------

    def _heads(self) -> _Heads:
        stream = JsonStream(self.file.open, self.file.label)
        heads = _Heads()
        ordinal = 0
        for key in stream.object_keys():
            if key == "personal_information" and stream.next_kind() == "object":
                info = stream.value(1 << 20)
                heads.owner_id = _owner_id(info, stream.error)
            elif key in ("chats", "left_chats"):
                for ckey in stream.object_keys():
                    if ckey != "list":
                        stream.skip()
                        continue
                    for _i in stream.array_items():
                        heads.chats[ordinal] = self._head_of(stream)
                        ordinal += 1
            elif key in _HEAD_KEYS:
                heads.chats.setdefault(ordinal, {})[key] = stream.value(1 << 16)
            else:
                stream.skip()
        return heads

    @staticmethod
    def _head_of(stream: JsonStream) -> dict[str, Any]:
        head: dict[str, Any] = {}
        if stream.next_kind() != "object":
            stream.skip()
            return head
        for key in stream.object_keys():
            if key in _HEAD_KEYS:
                head[key] = stream.value(1 << 16)
            else:
                stream.skip()
        return head
