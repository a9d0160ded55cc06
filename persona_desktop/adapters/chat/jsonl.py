"""The plain chat JSONL of DESIGN.md: one message object a line, read line by line.

`forwarded_from` makes a message its original author's (`other`, untrusted), whoever
forwarded it. Each fragment keeps its line number in the locator, which is how two
lines with the same chat and id but different text are named (`import_chat` checks).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from persona_desktop.adapters.chat import json_numbers
from persona_desktop.adapters.chat.dates import Unreadable, iso_date
from persona_desktop.adapters.chat.fields import (
    clean_text,
    make_ref,
    plain,
    string,
    text_id,
    without_surrogates,
)
from persona_desktop.adapters.chat.files import ChatFile
from persona_desktop.adapters.chat.json_stream import MAX_DEPTH
from persona_desktop.domain.model import Author, Kind, NewFragment, SourceInfo, Trust
from persona_desktop.errors import ImportFormatError
from persona_desktop.ports import ChatRecord, ImportedMessage, SkippedMessage, SkipReason

CHAT_TYPES = {"personal", "saved", "group"}
ROLES = {"owner": Author.OWNER, "assistant": Author.ASSISTANT, "other": Author.OTHER}
REQUIRED = ("id", "chat", "chat_type", "role", "date", "text")
MAX_LINE_BYTES = 16 * 1024 * 1024
# A string (an unterminated one runs to the end of the line, so the scan never restarts at
# each quote inside it: that was quadratic), or a bracket.
_BRACKETS = re.compile(r'"(?:[^"\\]|\\.)*+\\?(?:"|\Z)|[\[\]{}]', re.DOTALL)


def _too_deep(line: str) -> int | None:
    """The column where nesting passes MAX_DEPTH (outside strings), or None."""
    depth = 0
    for match in _BRACKETS.finditer(line):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return match.start() + 1
        elif token in "]}":
            depth -= 1
    return None


def _load(raw: bytes, where: str) -> Any:
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ImportFormatError(f"{where}: not UTF-8 text (byte {exc.start + 1} of the line)") from None
    if raw.count(b"[") + raw.count(b"{") > MAX_DEPTH:
        column = _too_deep(line)
        if column is not None:
            raise ImportFormatError(f"{where} column {column}: nested deeper than {MAX_DEPTH} levels")
    try:
        return json.loads(line)
    except json.JSONDecodeError as exc:
        raise ImportFormatError(f"{where} column {exc.colno}: {exc.msg}") from None
    except ValueError:  # an integer Python refuses to read (more than 4300 digits)
        try:
            json_numbers.check(raw, 0, b"", json_numbers.StringTracker(iter([raw])))
        except json_numbers.NumberTooLong as too_long:
            column = len(raw[: too_long.offset].decode("utf-8")) + 1
            raise ImportFormatError(f"{where} column {column}: {json_numbers.TOO_LONG_NUMBER}") from None
        raise
    except RecursionError:  # pragma: no cover - _too_deep stops this first
        raise ImportFormatError(f"{where}: nested too deeply") from None


class JsonlReader:
    def __init__(self, file: ChatFile) -> None:
        self.file = file

    def records(self) -> Iterator[ChatRecord]:
        found = False
        for lineno, raw in self.file.lines(MAX_LINE_BYTES):
            if raw.strip():
                found = True
                yield self._record(raw, lineno)
        if not found:
            raise ImportFormatError(f"{self.file.label}: no messages found")

    def _record(self, raw: bytes, lineno: int) -> ChatRecord:
        where = f"{self.file.label} line {lineno}"
        place = f"line {lineno}"
        msg = _load(raw, where)
        if not isinstance(msg, dict):
            raise ImportFormatError(f"{where}: expected a JSON object")
        missing = [k for k in REQUIRED if k not in msg]
        if missing:
            raise ImportFormatError(f"{where}: missing {', '.join(missing)}")
        chat_type, role = string(msg["chat_type"]), string(msg["role"])
        if chat_type not in CHAT_TYPES:
            raise ImportFormatError(
                f"{where}: chat_type {msg['chat_type']!r} is not one of personal, saved, group"
            )
        if role not in ROLES:
            raise ImportFormatError(f"{where}: role {msg['role']!r} is not one of owner, assistant, other")
        if not isinstance(msg["text"], str):
            raise ImportFormatError(f"{where}: text must be a string")
        if not isinstance(msg["date"], str):
            raise ImportFormatError(f"{where}: date must be an ISO 8601 string")
        if not isinstance(msg["chat"], str | int) or isinstance(msg["chat"], bool):
            raise ImportFormatError(f"{where}: chat must be a string")
        forwarded = msg.get("forwarded_from")
        if forwarded is not None and not isinstance(forwarded, str):
            raise ImportFormatError(f"{where}: forwarded_from must be a string (the original author)")
        try:
            mid = text_id(msg["id"])
            captured = iso_date(msg["date"])
        except Unreadable as exc:
            return SkippedMessage(SkipReason.UNREADABLE, place, str(exc))
        except ValueError:
            if not isinstance(msg["id"], str | int) or isinstance(msg["id"], bool):
                raise ImportFormatError(f"{where}: id must be a string or an integer") from None
            raise ImportFormatError(f"{where}: date {msg['date']!r} is not ISO 8601") from None
        text = clean_text(msg["text"])
        chat = without_surrogates(str(msg["chat"]))
        if not text:
            return SkippedMessage(SkipReason.EMPTY, place)
        source = self._source(chat, chat_type)
        fragment = self._fragment(msg, chat, mid, text, captured, lineno)
        # Before refs were escaped (issue 16) this importer stored `chat:{chat}:{id}` as written.
        legacy_ref, legacy_source = f"chat:{chat}:{mid}", f"chat:{chat}"
        return ImportedMessage(
            source,
            fragment,
            place,
            legacy_ref=legacy_ref if legacy_ref != fragment.ref else None,
            legacy_source=legacy_source if legacy_source != source.key else None,
        )

    @staticmethod
    def _source(chat: str, chat_type: str) -> SourceInfo:
        return SourceInfo(
            make_ref("chat", chat),
            Kind.CHAT,
            chat,
            {"chat_type": chat_type, "format": "jsonl"},
        )

    @staticmethod
    def _fragment(
        msg: dict[str, Any], chat: str, mid: str | int, text: str, captured: datetime, lineno: int
    ) -> NewFragment:
        forwarded = msg.get("forwarded_from")
        author = Author.OTHER if forwarded is not None else ROLES[msg["role"]]
        private = msg["chat_type"] in ("personal", "saved")
        trusted = private and author in (Author.OWNER, Author.ASSISTANT)
        locator: dict[str, Any] = {
            "chat_id": chat,
            "chat": chat,
            "chat_type": msg["chat_type"],
            "message_id": mid,
            "from": plain(msg.get("from")),
            "line": lineno,
        }
        if forwarded is not None:
            locator["forwarded_from"] = forwarded
        return NewFragment(
            ref=make_ref("chat", chat, mid),
            kind=Kind.CHAT,
            author=author,
            trust=Trust.TRUSTED if trusted else Trust.UNTRUSTED,
            text=text,
            captured_at=captured,
            locator=locator,
            session=make_ref("chat", chat),
            seq=lineno,
        )
