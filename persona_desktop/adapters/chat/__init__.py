"""Chat history importers: Telegram Desktop `result.json` and the plain chat JSONL."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from persona_desktop.domain.model import NewFragment, SourceInfo
from persona_desktop.errors import ImportFormatError

ParsedChats = list[tuple[SourceInfo, Sequence[NewFragment]]]


def read_chat_file(path: Path, owner_id: str | None = None) -> ParsedChats:
    """Pick the importer by content: a JSON object is a Telegram export, lines are JSONL."""
    from persona_desktop.adapters.chat.jsonl import parse_jsonl
    from persona_desktop.adapters.chat.telegram import parse_telegram

    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ImportFormatError(f"{path}: cannot read: {exc.strerror}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ImportFormatError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    if not text.strip():
        raise ImportFormatError(f"{path}: the file is empty")
    if path.suffix.lower() in (".jsonl", ".ndjson") or _is_jsonl(text):
        return parse_jsonl(text, str(path))
    return parse_telegram(text, str(path), owner_id)


def _is_jsonl(text: str) -> bool:
    """Several JSON values, one a line (a Telegram export is one object over many lines)."""
    first = text.lstrip().split("\n", 1)[0].strip()
    if not (first.startswith("{") and first.endswith("}")):
        return False
    try:
        value = json.loads(first)
    except json.JSONDecodeError:
        return False
    return isinstance(value, dict) and "role" in value
