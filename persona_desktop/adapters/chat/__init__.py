"""Chat history importers: Telegram Desktop, ChatGPT, Claude, WhatsApp and the plain JSONL.

`open_chat_export` finds the format by content and returns the messages as a lazy
stream of records (imported or skipped, each with its place in the file), for
`services.ingest.import_chat` to store in one transaction.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from persona_desktop.adapters.chat.files import chat_file
from persona_desktop.adapters.chat.whatsapp import ChooseOwner
from persona_desktop.ports import ChatRecord

FORMAT_NAMES = {
    "telegram": "Telegram Desktop export",
    "jsonl": "chat JSONL",
    "chatgpt": "ChatGPT conversations.json",
    "claude": "Claude conversations.json",
    "whatsapp": "WhatsApp chat",
}


@dataclass(frozen=True, slots=True)
class ChatExport:
    path: Path
    format: str  # a key of FORMAT_NAMES
    format_name: str  # what the owner is told was read, with the encoding when not UTF-8
    records: Iterator[ChatRecord]
    encoding: str = "UTF-8"  # the file's: UTF-8, UTF-16LE, UTF-16BE, UTF-32LE or UTF-32BE


def open_chat_export(
    path: Path,
    owner_id: str | None = None,
    owner_name: str | None = None,
    choose_owner: ChooseOwner | None = None,
) -> ChatExport:
    """Detect the format and get ready to read. Anything that needs asking is asked here,
    before the caller opens a transaction; reading errors come later, from `records`."""
    from persona_desktop.adapters.chat.chatgpt import ChatGptReader
    from persona_desktop.adapters.chat.claude import ClaudeReader
    from persona_desktop.adapters.chat.detect import detect
    from persona_desktop.adapters.chat.jsonl import JsonlReader
    from persona_desktop.adapters.chat.telegram import TelegramReader
    from persona_desktop.adapters.chat.whatsapp import WhatsAppReader

    file = chat_file(path)
    kind = detect(file)
    name = FORMAT_NAMES[kind]
    encoding = file.encoding().name
    records: Iterator[ChatRecord]
    if kind == "whatsapp":
        reader = WhatsAppReader(file, owner_name, choose_owner)
        name, records = reader.format_name, reader.records()
    elif kind == "telegram":
        records = TelegramReader(file, owner_id).records()
    elif kind == "chatgpt":
        records = ChatGptReader(file).records()
    elif kind == "claude":
        records = ClaudeReader(file).records()
    else:
        records = JsonlReader(file).records()
    if encoding != "UTF-8":
        name = f"{name} in {encoding}"
    return ChatExport(path, kind, name, records, encoding)
