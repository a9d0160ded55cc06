"""Telegram Desktop JSON export (`result.json`, "Export chat history" / full export)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from persona_desktop.adapters.chat.dates import parse_iso
from persona_desktop.domain.model import Author, Kind, NewFragment, SourceInfo, Trust
from persona_desktop.errors import ImportFormatError

PRIVATE_TYPES = {"personal_chat", "saved_messages"}
GROUP_TYPES = {"private_group", "private_supergroup", "public_supergroup"}


def flatten_text(value: Any, where: str) -> str:
    """`text` is a string, or a list of strings and entity objects with a `text`."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts: list[str] = []
        for i, part in enumerate(value):
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
            else:
                raise ImportFormatError(f"{where}.text[{i}]: expected a string or an entity with 'text'")
        return "".join(parts)
    raise ImportFormatError(f"{where}.text: expected a string or a list, got {type(value).__name__}")


def _date(msg: dict[str, Any], where: str) -> datetime:
    unix = msg.get("date_unixtime")
    try:
        if unix is not None:
            return datetime.fromtimestamp(int(unix), UTC)
        date = msg.get("date")
        if not isinstance(date, str):
            raise ValueError("missing")
        return parse_iso(date)
    except (TypeError, ValueError, OverflowError):
        raise ImportFormatError(f"{where}: 'date' missing or not a date") from None


def _chats(data: dict[str, Any], file: str) -> list[tuple[str, dict[str, Any]]]:
    if "messages" in data and "chats" not in data:  # a single-chat export
        return [("", data)]
    found: list[tuple[str, dict[str, Any]]] = []
    for section in ("chats", "left_chats"):
        block = data.get(section)
        if block is None:
            continue
        items = block.get("list") if isinstance(block, dict) else None
        if not isinstance(items, list):
            raise ImportFormatError(f"{file}: {section}.list: expected a list of chats")
        found.extend((f"{section}.list[{i}]", c) for i, c in enumerate(items))
    if not found and "chats" not in data:
        raise ImportFormatError(f"{file}: not a Telegram Desktop export (no 'chats' and no 'messages')")
    return found


def parse_telegram(
    text: str, file: str, owner_id: str | None = None
) -> list[tuple[SourceInfo, Sequence[NewFragment]]]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ImportFormatError(f"{file}: line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    if not isinstance(data, dict):
        raise ImportFormatError(f"{file}: expected a JSON object at the top")
    info = data.get("personal_information")
    if owner_id is None and isinstance(info, dict) and info.get("user_id") is not None:
        owner_id = str(info["user_id"])
    if owner_id is None:
        raise ImportFormatError(
            f"{file}: no personal_information.user_id, so your own messages cannot be told apart; "
            "export with 'Personal information' ticked or pass --owner-id"
        )
    owner_from = {f"user{owner_id}", owner_id}
    out: list[tuple[SourceInfo, Sequence[NewFragment]]] = []
    for where, chat in _chats(data, file):
        where = f"{file}: {where}" if where else file
        if not isinstance(chat, dict):
            raise ImportFormatError(f"{where}: expected a chat object")
        chat_type = chat.get("type")
        if chat_type not in PRIVATE_TYPES | GROUP_TYPES:
            continue  # channels and bots: not conversations of the owner's
        chat_id = chat.get("id")
        if chat_id is None:
            raise ImportFormatError(f"{where}: chat has no 'id'")
        messages = chat.get("messages")
        if not isinstance(messages, list):
            raise ImportFormatError(f"{where}.messages: expected a list")
        private = chat_type in PRIVATE_TYPES
        name = chat.get("name") or ("Saved Messages" if chat_type == "saved_messages" else f"chat {chat_id}")
        frags: list[NewFragment] = []
        for i, msg in enumerate(messages):
            mwhere = f"{where}.messages[{i}]"
            if not isinstance(msg, dict):
                raise ImportFormatError(f"{mwhere}: expected a message object")
            if msg.get("type", "message") != "message":
                continue  # service messages: joins, pins, calls
            if "id" not in msg:
                raise ImportFormatError(f"{mwhere}: message has no 'id'")
            body = flatten_text(msg.get("text", ""), mwhere).strip()
            if not body:
                continue  # media without a caption
            captured = _date(msg, mwhere)
            from_id = str(msg.get("from_id", ""))
            is_owner = from_id in owner_from or (chat_type == "saved_messages" and not from_id)
            author = Author.OWNER if is_owner else Author.OTHER
            frags.append(
                NewFragment(
                    ref=f"tg:{chat_id}:{msg['id']}",
                    kind=Kind.CHAT,
                    author=author,
                    trust=Trust.TRUSTED if private and is_owner else Trust.UNTRUSTED,
                    text=body,
                    captured_at=captured,
                    locator={
                        "chat_id": str(chat_id),
                        "chat": name,
                        "chat_type": chat_type,
                        "message_id": msg["id"],
                        "from": msg.get("from"),
                        "reply_to": msg.get("reply_to_message_id"),
                    },
                    session=f"tg:{chat_id}",
                    seq=i,
                )
            )
        source = SourceInfo(
            key=f"chat:tg:{chat_id}",
            kind=Kind.CHAT,
            label=str(name),
            meta={"chat_type": chat_type, "format": "telegram"},
        )
        out.append((source, frags))
    return out
