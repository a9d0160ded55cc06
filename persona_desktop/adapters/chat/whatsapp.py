"""WhatsApp "Export chat" text (`.txt`, or the `.zip` that holds it), Android and iOS.

    Android: 31/12/2023, 21:41 - Ann: text        12/31/23, 9:41 PM - Ann: text
    iOS:     [31.12.23, 21:41:05] Ann: text      [12/31/23, 9:41:05 PM] Ann: text

A line that does not start a message continues the one before (multi-line messages).
Day and month order is found from the file itself (a field over 12, else the order in
which the dates keep increasing). `<Media omitted>`, "image omitted", attachments
without a caption, deleted messages and system lines (encryption notice, joins,
subject changes, missed calls) are counted as skipped. The export does not say who
the owner is: the reader is given the owner's name, or asks (`choose_owner`), or
refuses with the list of senders. Chats with more than two senders or with group
events are group chats: nobody's words there are trusted.

The file is read twice, streaming: once to learn senders, date order and whether it is
a group, once to import. A message's ref is the chat, its minute (or second) and its
number within that time: stable when the same chat is exported again later.
"""

from __future__ import annotations

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
from persona_desktop.domain.model import Author, Kind, NewFragment, SourceInfo, Trust
from persona_desktop.errors import ImportFormatError, PersonaError
from persona_desktop.ports import ChatRecord, ImportedMessage, SkippedMessage, SkipReason

ChooseOwner = Callable[[list[str]], str]

MAX_LINE_BYTES = 1024 * 1024
MAX_MESSAGE_CHARS = 4 * 1024 * 1024
_MARKS = "\ufeff\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
_DATE = r"(?P<d1>\d{1,4})[./-](?P<d2>\d{1,2})[./-](?P<d3>\d{1,4})"
_TIME = (
    r"(?P<h>\d{1,2})[:.](?P<mi>\d{2})(?:[:.](?P<s>\d{2}))?"
    r"(?:\s*(?P<ampm>[AaPp]\.?\s?[Mm]\.?))?"
)
ANDROID = re.compile(rf"{_DATE},?\s{_TIME}\s[-\u2013]\s(?P<rest>.*)", re.DOTALL)
IOS = re.compile(rf"\[{_DATE},?\s{_TIME}\]\s(?P<rest>.*)", re.DOTALL)

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
GROUP_EVENTS = (
    " created group ",
    " created this group",
    " added ",
    " removed ",
    " left",
    " joined using this group",
    "changed the subject",
    "changed this group's icon",
    "changed the group description",
    "changed the group name",
    "now an admin",
)


def without_edited_mark(text: str) -> tuple[str, bool]:
    """The text without a trailing `<This message was edited>`, and whether it had one.

    String operations, not a regex: `\\s*<mark>\\s*$` searched from every position is
    quadratic in a run of whitespace (20,000 spaces took 17 s).
    """
    body = text.rstrip()
    if not body.endswith(EDITED_MARK):
        return text, False
    return body[: -len(EDITED_MARK)].rstrip().removesuffix("\u200e").rstrip(), True


def header(line: str) -> re.Match[str] | None:
    line = line.lstrip(_MARKS)
    return ANDROID.match(line) or IOS.match(line)


def _chat_name(file: ChatFile) -> str:
    for name in (Path(file.member).stem if file.member else None, file.path.stem):
        if not name or name == "_chat":
            continue
        match = re.match(r"WhatsApp Chat (?:with|-|\u2013) (.+)$", name)
        return clean_text(match.group(1) if match else name) or "WhatsApp chat"
    return clean_text(file.path.stem) or "WhatsApp chat"


@dataclass(slots=True)
class _Line:
    """A message-starting line, split up."""

    fields: tuple[int, int, int]
    year_first: bool
    clock: tuple[int, int, int]
    ampm: str | None
    sender: str | None  # None: a system line
    text: str


def _split(match: re.Match[str]) -> _Line:
    d1, d2, d3 = (match.group(k) for k in ("d1", "d2", "d3"))
    ampm = match.group("ampm")
    clock = (int(match.group("h")), int(match.group("mi")), int(match.group("s") or 0))
    rest = match.group("rest")
    sender: str | None = None
    text = rest
    if ": " in rest:
        name, body = rest.split(": ", 1)
        if not any(event in f"{name} " for event in GROUP_EVENTS) and len(name) <= 100:
            sender, text = clean_text(name.lstrip(_MARKS)), body
    return _Line((int(d1), int(d2), int(d3)), len(d1) == 4, clock, ampm, sender, text)


def _is_system(line: _Line) -> bool:
    """iOS marks system lines (and media) with a left-to-right mark after the name."""
    return line.sender is None or (
        line.text.startswith("\u200e") and not _media_reason(line.text.lstrip(_MARKS).strip())
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
    shape: str = "Android"
    max_first: int = 0
    max_second: int = 0
    year_first: bool = False
    ampm_slash: bool = False
    falls_dmy: int = 0
    falls_mdy: int = 0
    last_dmy: tuple[int, ...] = ()
    last_mdy: tuple[int, ...] = ()

    def note(self, line: _Line, ios: bool, raw: str) -> None:
        self.messages += 1
        if self.messages == 1:
            self.shape = "iOS" if ios else "Android"
        a, b, c = line.fields
        self.year_first = self.year_first or line.year_first
        self.max_first, self.max_second = max(self.max_first, a), max(self.max_second, b)
        self.ampm_slash = self.ampm_slash or (line.ampm is not None and "/" in raw[:12])
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

    def order(self, file: str) -> str:
        if self.year_first:
            return "ymd"
        if self.max_first > 12 and self.max_second > 12:
            raise ImportFormatError(f"{file}: the dates are neither day/month nor month/day throughout")
        if self.max_first > 12:
            return "dmy"
        if self.max_second > 12:
            return "mdy"
        if self.falls_dmy != self.falls_mdy:
            return "dmy" if self.falls_dmy < self.falls_mdy else "mdy"
        return "mdy" if self.ampm_slash else "dmy"

    @property
    def group(self) -> bool:
        return len(self.senders) > 2 or self.group_events or bool(self.system_names - set(self.senders))


def _to_datetime(line: _Line, order: str) -> tuple[datetime, datetime]:
    """(the wall-clock time as written, the same in UTC, read as this machine's local time)."""
    a, b, c = line.fields
    year, month, day = {"ymd": (a, b, c), "dmy": (c, b, a), "mdy": (c, a, b)}[order]
    if year < 100:
        year += 2000
    hour, minute, second = line.clock
    if line.ampm:
        pm = line.ampm.lower().startswith("p")
        if not 1 <= hour <= 12:
            raise Unreadable(f"hour {hour} with {line.ampm}")
        hour = hour % 12 + (12 if pm else 0)
    try:
        local = datetime(year, month, day, hour, minute, second)
        return local, in_range(local.astimezone().astimezone(UTC), f"{local:%Y-%m-%d %H:%M}")
    except (ValueError, OverflowError) as exc:
        if isinstance(exc, Unreadable):
            raise
        raise Unreadable(f"{year:04d}-{month:02d}-{day:02d} {hour:02d}:{minute:02d} is not a date") from None


class WhatsAppReader:
    def __init__(self, file: ChatFile, owner_name: str | None, choose_owner: ChooseOwner | None) -> None:
        self.file = file
        self.survey = self._survey()
        self.order = self.survey.order(file.label)
        self.owner = self._owner(owner_name, choose_owner)
        self.chat = _chat_name(file)
        self.group = self.survey.group
        self.source = SourceInfo(
            key=make_ref("chat", "wa", self.chat),
            kind=Kind.CHAT,
            label=self.chat,
            meta={"chat_type": "group" if self.group else "personal", "format": "whatsapp"},
        )

    @property
    def format_name(self) -> str:
        return f"WhatsApp chat ({self.survey.shape}{', group' if self.survey.group else ''})"

    # --- reading lines --------------------------------------------------------------------

    def _lines(self) -> Iterator[tuple[int, str]]:
        for lineno, raw in self.file.lines(MAX_LINE_BYTES):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ImportFormatError(
                    f"{self.file.label} line {lineno}: not UTF-8 text (byte {exc.start + 1} of the line)"
                ) from None
            yield lineno, text.rstrip("\r\n")

    def _messages(self) -> Iterator[tuple[int, re.Match[str], str]]:
        """(line number, header match, full text with continuation lines)."""
        start: tuple[int, re.Match[str]] | None = None
        body: list[str] = []
        size = 0
        for lineno, text in self._lines():
            match = header(text)
            if match is not None:
                if start is not None:
                    yield start[0], start[1], "\n".join(body)
                start, body, size = (lineno, match), [], 0
                continue
            if start is None:
                if text.strip(_MARKS + " \t"):
                    raise ImportFormatError(
                        f"{self.file.label} line {lineno}: not a WhatsApp message line "
                        "('31/12/2023, 21:41 - Name: text' or '[31.12.23, 21:41:05] Name: text')"
                    )
                continue
            size += len(text) + 1  # an empty line costs its newline: 300 M of them are not free
            if size > MAX_MESSAGE_CHARS:
                raise ImportFormatError(
                    f"{self.file.label} line {start[0]}: one message longer than {MAX_MESSAGE_CHARS // 2**20} M characters"
                )
            body.append(text)
        if start is not None:
            yield start[0], start[1], "\n".join(body)

    # --- pass 1 ---------------------------------------------------------------------------

    def _survey(self) -> _Survey:
        survey = _Survey()
        for _lineno, match, _more in self._messages():
            survey.note(_split(match), match.re is IOS, match.group(0))
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
        recent: dict[str, int] = {}
        for lineno, match, more in self._messages():
            line = _split(match)
            if more:
                line.text = f"{line.text}\n{more}"
            yield self._record(line, lineno, recent)

    def _record(self, line: _Line, lineno: int, recent: dict[str, int]) -> ChatRecord:
        where = f"line {lineno}"
        if _is_system(line):
            deleted = line.text.lstrip(_MARKS).strip().lower() in DELETED_TEXTS
            return SkippedMessage(SkipReason.DELETED if deleted else SkipReason.SERVICE, where)
        try:
            written, captured = _to_datetime(line, self.order)
        except Unreadable as exc:
            return SkippedMessage(SkipReason.UNREADABLE, where, str(exc))
        text = line.text
        text, edited = without_edited_mark(text)
        attached = ATTACHED.match(text.lstrip(_MARKS))
        bare = clean_text(text.lstrip(_MARKS))
        reason: SkipReason | None = _media_reason(bare)
        if reason is None and bare.lower() in DELETED_TEXTS:
            reason = SkipReason.DELETED
        if reason is None and bare.lower() in CALL_TEXTS:
            reason = SkipReason.SERVICE
        if reason is None and attached is not None:  # an attachment line, then its caption
            bare = clean_text(text.lstrip(_MARKS)[attached.end() :])
            reason = None if bare else SkipReason.MEDIA
        if reason is None and not bare:
            reason = SkipReason.EMPTY
        if reason is not None:
            return SkippedMessage(reason, where)
        # The ref uses the time as written, so it does not move with this machine's time zone.
        stamp = f"{written:%Y%m%dT%H%M%S}"
        if len(recent) > 4096:  # keep memory flat: only the last while of stamps can repeat
            for old in [k for k in recent if k < stamp[:8]]:
                del recent[old]
        n = recent.get(stamp, 0)
        recent[stamp] = n + 1
        fragment = self._fragment(line, bare, captured, (stamp, n), edited, lineno)
        return ImportedMessage(self.source, fragment, where)

    def _fragment(
        self, line: _Line, text: str, captured: datetime, stamp: tuple[str, int], edited: bool, lineno: int
    ) -> NewFragment:
        owner = line.sender == self.owner
        locator: dict[str, Any] = {
            "chat_id": self.chat,
            "chat": self.chat,
            "chat_type": "group" if self.group else "personal",
            "message_id": f"{stamp[0]}:{stamp[1]}",
            "from": line.sender,
        }
        if edited:
            locator["edited"] = True
        return NewFragment(
            ref=make_ref("wa", self.chat, *stamp),
            kind=Kind.CHAT,
            author=Author.OWNER if owner else Author.OTHER,
            trust=Trust.TRUSTED if owner and not self.group else Trust.UNTRUSTED,
            text=text,
            captured_at=captured,
            locator=locator,
            session=make_ref("chat", "wa", self.chat),
            seq=lineno,
        )
