"""The plain chat JSONL of DESIGN.md: one message object a line."""

from __future__ import annotations

import json
from collections.abc import Sequence

from persona_desktop.adapters.chat.dates import parse_iso
from persona_desktop.domain.model import Author, Kind, NewFragment, SourceInfo, Trust
from persona_desktop.errors import ImportFormatError

CHAT_TYPES = {"personal", "saved", "group"}
ROLES = {"owner": Author.OWNER, "assistant": Author.ASSISTANT, "other": Author.OTHER}
REQUIRED = ("id", "chat", "chat_type", "role", "date", "text")


def parse_jsonl(text: str, file: str) -> list[tuple[SourceInfo, Sequence[NewFragment]]]:
    chats: dict[str, tuple[SourceInfo, list[NewFragment]]] = {}
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{file} line {lineno}"
        try:
            msg = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ImportFormatError(f"{where} column {exc.colno}: {exc.msg}") from None
        if not isinstance(msg, dict):
            raise ImportFormatError(f"{where}: expected a JSON object")
        missing = [k for k in REQUIRED if k not in msg]
        if missing:
            raise ImportFormatError(f"{where}: missing {', '.join(missing)}")
        chat_type, role = msg["chat_type"], msg["role"]
        if chat_type not in CHAT_TYPES:
            raise ImportFormatError(f"{where}: chat_type {chat_type!r} is not one of personal, saved, group")
        if role not in ROLES:
            raise ImportFormatError(f"{where}: role {role!r} is not one of owner, assistant, other")
        if not isinstance(msg["text"], str):
            raise ImportFormatError(f"{where}: text must be a string")
        if not isinstance(msg["date"], str):
            raise ImportFormatError(f"{where}: date must be an ISO 8601 string")
        try:
            captured = parse_iso(msg["date"])
        except ValueError:
            raise ImportFormatError(f"{where}: date {msg['date']!r} is not ISO 8601") from None
        if not msg["text"].strip():
            continue
        chat = str(msg["chat"])
        author = ROLES[role]
        private = chat_type in ("personal", "saved")
        trusted = private and author in (Author.OWNER, Author.ASSISTANT)
        source = SourceInfo(f"chat:{chat}", Kind.CHAT, chat, {"chat_type": chat_type, "format": "jsonl"})
        entry = chats.setdefault(chat, (source, []))
        entry[1].append(
            NewFragment(
                ref=f"chat:{chat}:{msg['id']}",
                kind=Kind.CHAT,
                author=author,
                trust=Trust.TRUSTED if trusted else Trust.UNTRUSTED,
                text=msg["text"].strip(),
                captured_at=captured,
                locator={
                    "chat_id": chat,
                    "chat": chat,
                    "chat_type": chat_type,
                    "message_id": msg["id"],
                    "from": msg.get("from"),
                },
                session=f"chat:{chat}",
                seq=lineno,
            )
        )
    if not chats:
        raise ImportFormatError(f"{file}: no messages found")
    return list(chats.values())
