"""WhatsApp "Export chat" text (`.txt`, or the `.zip` that holds it), Android and iOS.

    Android: 31/12/2023, 21:41 - Ann: text        12/31/23, 9:41 PM - Ann: text
    iOS:     [31.12.23, 21:41:05] Ann: text      [12/31/23, 9:41:05 PM] Ann: text

A line that does not start a message continues the one before (multi-line messages);
the first message fixes the line shape, and a header that could be a line typed inside
the message above it is never the owner's trusted words (`whatsapp_lines` says what that
rules out and what it only reduces). Day and month order is found from the file itself
(the first date with a field over 12, else the order in which the dates keep increasing). `<Media omitted>`, "image omitted", attachments
without a caption, deleted messages and system lines (encryption notice, joins,
subject changes, missed calls) are counted as skipped. The export does not say who
the owner is: the reader is given the owner's name, or asks (`choose_owner`), or
refuses with the list of senders. Chats with more than two senders or with group
events are group chats: nobody's words there are trusted.

The file is read twice, streaming: once to learn senders, date order and whether it is
a group, once to import. A message's ref is content-addressed: the chat (found by its
content, see `chat_identity`), the time as written, a digest of sender and text, and the
repeat number of that within the time: stable when the same chat is exported again
later, under any file name, whatever was deleted or written since.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from persona_desktop.adapters.chat.dates import Unreadable, in_range
from persona_desktop.adapters.chat.fields import clean_text, make_ref
from persona_desktop.adapters.chat.files import ChatFile
from persona_desktop.adapters.chat.whatsapp_lines import (
    GROUP_EVENTS,
    MARKS,
    Doubt,
    Line,
    MessageLines,
    wall_time,
)
from persona_desktop.domain.model import Author, Kind, NewFragment, SourceInfo, Trust
from persona_desktop.errors import ImportFormatError, PersonaError
from persona_desktop.ports import ChatRecord, ImportedMessage, SkippedMessage, SkipReason

ChooseOwner = Callable[[list[str]], str]

MAX_LINE_BYTES = 1024 * 1024
MAX_MESSAGE_CHARS = 4 * 1024 * 1024

MEDIA_TEXTS = {
    "<media omitted>",
    "image omitted",
    "video omitted",
    "audio omitted",
    "gif omitted",
    "document omitted",
    "contact card omitted",
    "null",
}
STICKER_TEXTS = {"sticker omitted"}
DELETED_TEXTS = {
    "this message was deleted",
    "this message was deleted.",
    "you deleted this message",
    "you deleted this message.",
}
CALL_TEXTS = {"missed voice call", "missed video call"}
EDITED_MARK = "<This message was edited>"
ATTACHED = re.compile(r"^(?:\u200e?<attached: [^>\n]*>|\S[^\n]* \(file attached\))\s*(?:\n|$)")


def without_edited_mark(text: str) -> tuple[str, bool]:
    """The text without a trailing `<This message was edited>`, and whether it had one.

    String operations, not a regex: `\\s*<mark>\\s*$` searched from every position is
    quadratic in a run of whitespace (20,000 spaces took 17 s).
    """
    body = text.rstrip()
    if not body.endswith(EDITED_MARK):
        return text, False
    return body[: -len(EDITED_MARK)].rstrip().removesuffix("\u200e").rstrip(), True


def _chat_name(file: ChatFile) -> str | None:
    """The chat's name as the file says it (`WhatsApp Chat with Ann (1).txt`: Ann), if it does."""
    for name in (Path(file.member).stem if file.member else None, file.path.stem):
        if not name or name == "_chat":
            continue
        name = re.sub(r" \(\d+\)$", "", name)  # a second download of the same file
        match = re.match(r"WhatsApp Chat (?:with|-|\u2013) (.+)$", name)
        return clean_text(match.group(1) if match else name) or None
    return None


def _digest(*parts: str, size: int = 10) -> str:
    joined = "\x1f".join(parts).encode("utf-8", "surrogatepass")
    return hashlib.sha256(joined).hexdigest()[:size]


def _is_system(line: Line) -> bool:
    """iOS marks system lines (and media) with a left-to-right mark after the name."""
    return line.sender is None or (
        line.text.startswith("\u200e") and not _media_reason(line.text.lstrip(MARKS).strip())
    )


def _media_reason(text: str) -> SkipReason | None:
    low = text.lower()
    if low in STICKER_TEXTS:
        return SkipReason.STICKER
    if low in MEDIA_TEXTS or ATTACHED.fullmatch(text):
        return SkipReason.MEDIA
    return None


@dataclass(slots=True)
class _Survey:
    """What the first pass learns about the file."""

    senders: Counter[str] = field(default_factory=Counter)
    system_names: set[str] = field(default_factory=set)
    group_events: bool = False
    messages: int = 0
    first: str = ""  # the first message as written (time, sender, text): a group chat's identity
    falls_dmy: int = 0
    falls_mdy: int = 0
    last_dmy: tuple[int, ...] = ()
    last_mdy: tuple[int, ...] = ()

    def note(self, line: Line) -> None:
        self.messages += 1
        if self.messages == 1:
            self.first = repr((line.fields, line.clock, line.ampm, line.sender, line.text))
        a, b, c = line.fields
        dmy, mdy = (c, b, a, *line.clock), (c, a, b, *line.clock)
        self.falls_dmy += dmy < self.last_dmy
        self.falls_mdy += mdy < self.last_mdy
        self.last_dmy, self.last_mdy = dmy, mdy
        if _is_system(line):
            if line.sender:
                self.system_names.add(line.sender)
            if any(event in f" {line.text} " for event in GROUP_EVENTS):
                self.group_events = True
        elif line.sender:
            self.senders[line.sender] += 1

    def order(self, lines: MessageLines) -> str:
        """Fixed by the shape or the first date over 12; else the order in which dates keep rising."""
        if lines.order.fixed is not None:
            return lines.order.fixed
        if self.falls_dmy != self.falls_mdy:
            return "dmy" if self.falls_dmy < self.falls_mdy else "mdy"
        shape = lines.shape
        return "mdy" if shape is not None and shape.ampm is not None and "/" in shape.separators else "dmy"

    @property
    def group(self) -> bool:
        return len(self.senders) > 2 or self.group_events or bool(self.system_names - set(self.senders))

    def chat_identity(self) -> str:
        """Which chat this is, from its content, never the file name (`_chat.txt` for every iOS
        chat; `... (1).txt` for a second download of the same one).

        A one-to-one chat is its two people: stable when exported again later, even when the
        export starts later (long chats are cut to the newest messages) or messages were
        deleted. Any other chat (a group, or one only one person wrote in yet) is its first
        message as written, which a later export of the same chat starts with too.
        """
        if not self.group and len(self.senders) == 2:
            return _digest("personal", *sorted(self.senders))
        return _digest("first", self.first)


@dataclass(slots=True)
class _Timed:
    """A message with its time read: (as written, in UTC), or why it cannot be."""

    line: Line
    written: datetime | None = None
    captured: datetime | None = None
    unreadable: str = ""

    @property
    def minute(self) -> datetime | None:
        return None if self.written is None else self.written.replace(second=0)


def _timed(line: Line, order: str) -> _Timed:
    """The wall-clock time as written, and the same in UTC read as this machine's local time."""
    try:
        local = wall_time(line, order)
    except Unreadable as exc:
        return _Timed(line, unreadable=str(exc))
    try:
        return _Timed(line, local, in_range(local.astimezone().astimezone(UTC), f"{local:%Y-%m-%d %H:%M}"))
    except Unreadable as exc:
        return _Timed(line, local, unreadable=str(exc))
    except (ValueError, OverflowError):
        return _Timed(
            line, local, unreadable=f"{local:%Y-%m-%d %H:%M} is outside the dates this machine can convert"
        )


class WhatsAppReader:
    def __init__(self, file: ChatFile, owner_name: str | None, choose_owner: ChooseOwner | None) -> None:
        self.file = file
        self.lines = MessageLines(file.label, MAX_MESSAGE_CHARS)
        self.survey = self._survey()
        self.order = self.survey.order(self.lines)
        self.owner = self._owner(owner_name, choose_owner)
        self.group = self.survey.group
        self.chat_id = self.survey.chat_identity()
        peers = [s for s in self.survey.senders if s != self.owner]
        self.chat = _chat_name(file) or (peers[0] if len(peers) == 1 else "WhatsApp chat")
        self.source = SourceInfo(
            key=make_ref("chat", "wa", self.chat_id),
            kind=Kind.CHAT,
            label=self.chat,
            meta={"chat_type": "group" if self.group else "personal", "format": "whatsapp"},
        )

    @property
    def format_name(self) -> str:
        shape = "iOS" if self.lines.shape is not None and self.lines.shape.ios else "Android"
        return f"WhatsApp chat ({shape}{', group' if self.survey.group else ''})"

    # --- reading lines --------------------------------------------------------------------

    def _text_lines(self) -> Iterator[tuple[int, str]]:
        for lineno, raw in self.file.lines(MAX_LINE_BYTES):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ImportFormatError(
                    f"{self.file.label} line {lineno}: not UTF-8 text (byte {exc.start + 1} of the line)"
                ) from None
            yield lineno, text.rstrip("\r\n")

    def _messages(self) -> Iterator[Line]:
        """Each message, its continuation lines joined; the same split on every pass."""
        self.lines = MessageLines(self.file.label, MAX_MESSAGE_CHARS)
        return self.lines.read(self._text_lines())

    # --- pass 1 ---------------------------------------------------------------------------

    def _survey(self) -> _Survey:
        survey = _Survey()
        for line in self._messages():
            survey.note(line)
        if survey.messages == 0:
            raise ImportFormatError(f"{self.file.label}: no WhatsApp messages found")
        return survey

    def _owner(self, owner_name: str | None, choose_owner: ChooseOwner | None) -> str:
        senders = [name for name, _n in self.survey.senders.most_common()]
        if not senders:
            raise ImportFormatError(f"{self.file.label}: nobody wrote anything in this chat")
        if owner_name is not None:
            wanted = owner_name.strip()
            exact = [s for s in senders if s == wanted] or [
                s for s in senders if s.casefold() == wanted.casefold()
            ]
            if len(exact) == 1:
                return exact[0]
            raise ImportFormatError(
                f"{self.file.label}: nobody named {owner_name!r} wrote in this chat; "
                f"the senders are: {', '.join(senders)}"
            )
        if choose_owner is None:
            raise ImportFormatError(
                f"{self.file.label}: which sender are you? pass --owner-name with one of: {', '.join(senders)}"
            )
        try:
            chosen = choose_owner(senders)
        except PersonaError as exc:
            raise ImportFormatError(f"{self.file.label}: {exc}") from None
        if chosen not in senders:
            raise ImportFormatError(f"{self.file.label}: {chosen!r} is not one of the senders")
        return chosen

    # --- pass 2 ---------------------------------------------------------------------------

    def records(self) -> Iterator[ChatRecord]:
        """Each message once the next one is read: whether it could be forged depends on both."""
        recent: dict[tuple[str, str], int] = {}
        doubt = Doubt()
        held: _Timed | None = None
        for line in self._messages():
            timed = _timed(line, self.order)
            if held is not None:
                yield self._record(held, timed.minute, doubt, recent)
            held = timed
        if held is not None:
            yield self._record(held, None, doubt, recent)

    def _record(
        self, timed: _Timed, next_minute: datetime | None, doubt: Doubt, recent: dict[tuple[str, str], int]
    ) -> ChatRecord:
        line = timed.line
        where = f"line {line.lineno}"
        system = _is_system(line)
        doubted = doubt.check(None if system else line.sender, timed.minute, next_minute)
        if system:
            deleted = line.text.lstrip(MARKS).strip().lower() in DELETED_TEXTS
            return SkippedMessage(SkipReason.DELETED if deleted else SkipReason.SERVICE, where)
        if timed.written is None or timed.captured is None:
            return SkippedMessage(SkipReason.UNREADABLE, where, timed.unreadable)
        text, edited = without_edited_mark(line.text)
        attached = ATTACHED.match(text.lstrip(MARKS))
        bare = clean_text(text.lstrip(MARKS))
        reason: SkipReason | None = _media_reason(bare)
        if reason is None and bare.lower() in DELETED_TEXTS:
            reason = SkipReason.DELETED
        if reason is None and bare.lower() in CALL_TEXTS:
            reason = SkipReason.SERVICE
        if reason is None and attached is not None:  # an attachment line, then its caption
            bare = clean_text(text.lstrip(MARKS)[attached.end() :])
            reason = None if bare else SkipReason.MEDIA
        if reason is None and not bare:
            reason = SkipReason.EMPTY
        if reason is not None:
            return SkippedMessage(reason, where)
        # Content-addressed: the time as written (it does not move with this machine's time
        # zone), a digest of sender and text, and which repeat of that it is within the time.
        # A message deleted, or written, since an earlier export shifts no other message's ref.
        stamp = f"{timed.written:%Y%m%dT%H%M%S}"
        key = (stamp, _digest(line.sender or "", bare))
        if len(recent) > 4096:  # keep memory flat: only the last while of stamps can repeat
            for old in [k for k in recent if k[0] < stamp[:8]]:
                del recent[old]
        n = recent.get(key, 0)
        recent[key] = n + 1
        fragment = self._fragment(line, bare, timed.captured, (*key, n), edited, doubted)
        return ImportedMessage(self.source, fragment, where)

    def _fragment(
        self,
        line: Line,
        text: str,
        captured: datetime,
        stamp: tuple[str, str, int],
        edited: bool,
        doubted: str | None,
    ) -> NewFragment:
        owner = line.sender == self.owner
        locator: dict[str, Any] = {
            "chat_id": self.chat_id,
            "chat": self.chat,
            "chat_type": "group" if self.group else "personal",
            "message_id": ":".join(str(part) for part in stamp),
            "from": line.sender,
        }
        if edited:
            locator["edited"] = True
        if doubted is not None:
            locator["doubt"] = doubted
        return NewFragment(
            ref=make_ref("wa", self.chat_id, *(stamp if stamp[2] else stamp[:2])),  # ':0' left out
            kind=Kind.CHAT,
            author=Author.OWNER if owner else Author.OTHER,
            trust=Trust.TRUSTED if owner and not self.group and doubted is None else Trust.UNTRUSTED,
            text=text,
            captured_at=captured,
            locator=locator,
            session=self.source.key,
            seq=line.lineno,
        )
