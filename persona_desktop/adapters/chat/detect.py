"""Which chat export a file is, from its content (never its name).

Only the file's first megabyte is looked at: the keys of a JSON object (Telegram),
the keys of the first conversation of a JSON list (ChatGPT `mapping`, Claude
`chat_messages`), whether there are several JSON objects one a line (JSONL), or the
shape of the first text line (WhatsApp).
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from decimal import InvalidOperation

import ijson

from persona_desktop.adapters.chat import json_numbers
from persona_desktop.adapters.chat.files import ChatFile
from persona_desktop.adapters.chat.json_stream import MAX_DEPTH, SurrogateFilter
from persona_desktop.adapters.chat.whatsapp_lines import header
from persona_desktop.errors import ImportFormatError

HEAD_BYTES = 1 << 20
TELEGRAM_KEYS = {"chats", "left_chats", "personal_information"}
JSONL_KEYS = {"role", "chat"}
LOOKED_FOR = (
    "looked for a Telegram Desktop result.json (an object with 'chats' or 'messages'), "
    "a ChatGPT or Claude conversations.json (a list of conversations with 'mapping' or "
    "'chat_messages'), a WhatsApp chat .txt or .zip ('31/12/2023, 21:41 - Name: text' or "
    '\'[31.12.23, 21:41:05] Name: text\' lines) or chat JSONL (one {"id", "chat", "role", ...} '
    "object a line)"
)


@dataclass(slots=True)
class _JsonHead:
    kind: str | None = None  # "object" | "array"
    keys: set[str] = field(default_factory=set)  # of the first object, or of the list's first item
    values: int = 0  # complete top-level values seen
    number_error: str = ""  # the parser stopped at a number it cannot read
    items: int = 0  # values started directly inside the first top-level list

    @property
    def empty_list(self) -> bool:
        return self.kind == "array" and self.values >= 1 and self.items == 0


def _json_head(head: bytes) -> _JsonHead:
    seen = _JsonHead()
    depth = 0
    try:
        clean = SurrogateFilter(json_numbers.StringTracker(iter([head]))).feed(head, final=True)
        for event, value in ijson.basic_parse(io.BytesIO(clean), multiple_values=True):
            if depth == 1 and seen.values == 0 and event not in ("map_key", "end_map", "end_array"):
                seen.items += 1
            if event in ("start_map", "start_array"):
                if depth == 0 and seen.values == 0:
                    seen.kind = "object" if event == "start_map" else "array"
                depth += 1
                if depth > MAX_DEPTH:
                    break
            elif event in ("end_map", "end_array"):
                depth -= 1
                if depth == 0:
                    seen.values += 1
                    if seen.values > 1:
                        break
            elif event == "map_key" and seen.values == 0:
                wanted_depth = 1 if seen.kind == "object" else 2
                if depth == wanted_depth:
                    seen.keys.add(value)
            elif depth == 0:
                seen.values += 1
    except (ijson.JSONError, UnicodeDecodeError):
        pass  # the head ends mid-value, or the file is not JSON at all
    except json_numbers.NumberTooLong as exc:
        seen.number_error = f"{_place(head, exc.offset)}{json_numbers.TOO_LONG_NUMBER}"
    except InvalidOperation:  # what came before it may still tell the format
        seen.number_error = json_numbers.TOO_LARGE_NUMBER
    return seen


def _whatsapp_head(head: bytes) -> bool:
    """The first non-empty line starts a WhatsApp message."""
    for line in head[:65536].decode("utf-8", "replace").splitlines()[:20]:
        if line.strip("\ufeff\u200e\u200f \t"):
            return header(line) is not None
    return False


def _place(head: bytes, offset: int) -> str:
    before = head[:offset]
    line_start = before.rfind(b"\n") + 1
    column = len(before[line_start:].decode("utf-8", "replace")) + 1
    lines = before.count(b"\n") + 1
    return f"line {lines} column {column}: "


def _not_utf8(head: bytes) -> int | None:
    """Where the head stops being UTF-8 (not counting a character cut at its end), if it does."""
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None if exc.reason == "unexpected end of data" else exc.start
    return None


def detect(file: ChatFile) -> str:
    """'telegram', 'jsonl', 'chatgpt', 'claude' or 'whatsapp'; else a clear error.

    The head is the file's UTF-8 view: UTF-16 and UTF-32 are decoded, a byte order mark
    is dropped (`text_encoding`)."""
    head = file.head(HEAD_BYTES)
    if not head.strip(b" \t\r\n"):
        raise ImportFormatError(f"{file.label}: the file is empty")
    if _whatsapp_head(head):  # first: an iOS line starts with "[" like JSON
        return "whatsapp"
    start = head.lstrip(b" \t\r\n")[:1]
    if start in (b"{", b"["):
        json_head = _json_head(head)
        if json_head.kind == "object":
            if json_head.keys >= JSONL_KEYS:
                return "jsonl"
            if TELEGRAM_KEYS & json_head.keys or "messages" in json_head.keys:
                return "telegram"
            if json_head.values > 1:
                return "jsonl"
        if json_head.kind == "array":
            if "mapping" in json_head.keys or "current_node" in json_head.keys:
                return "chatgpt"
            if "chat_messages" in json_head.keys:
                return "claude"
            if json_head.empty_list:
                raise ImportFormatError(f"{file.label}: an empty list: no conversations to import")
        if json_head.number_error:
            raise ImportFormatError(f"{file.label}: {json_head.number_error}")
        bad = _not_utf8(head)  # the parser stopped there, before it saw what the file is
        if bad is not None:
            raise ImportFormatError(f"{file.label}: {_place(head, bad)}not UTF-8 text")
        raise ImportFormatError(f"{file.label}: JSON, but not a chat export this app knows; {LOOKED_FOR}")
    raise ImportFormatError(f"{file.label}: not a chat export this app knows; {LOOKED_FOR}")
