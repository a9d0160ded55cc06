"""Where a WhatsApp message starts, and which message lines could be forged.

The export has no escaping: a message is a header line (`31/12/2023, 21:41 - Ann: text`)
and every line after it that is not a header. Anyone in a chat can type a line in header
shape inside their own message, and on reading it would start a new message under any
name they choose: the owner's, to plant words in the owner's trusted memory.

Ruled out: a header of any other shape than the file's first message (the other
platform's, another date separator or year length, the other clock, seconds where the
file has none or the reverse, another dash), and one whose date or time cannot exist in
the file's day/month order (fixed by the shape when the year comes first, else by the
first date with a field over 12). Such a line is text of the message it is in.

Only reduced: a line in exactly the file's shape cannot be told from a real message. So a
header that could be a line typed inside the message above it is stored, but never as
the owner's trusted words: untrusted, with the reason in its locator (`doubt`). It could
be when it follows a message by someone else (or a doubted one), and it is dated in the
same minute as that message or earlier, or later than the message after it. Not caught:
a forger who dates the line in a later minute than their own message and before the next
real message, and writes the owner's name and the date as the owner's phone does. Nothing
in the file tells that line from a real one. The price of the rule: a real reply within
the same minute is stored untrusted too (kept and shown; only the trust is withheld).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple

from persona_desktop.adapters.chat.dates import Unreadable
from persona_desktop.adapters.chat.fields import clean_text
from persona_desktop.errors import ImportFormatError

MARKS = "\ufeff\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
_DATE = r"(?P<d1>\d{1,4})(?P<s1>[./-])(?P<d2>\d{1,2})(?P<s2>[./-])(?P<d3>\d{1,4})"
_TIME = (
    r"(?P<h>\d{1,2})(?P<ts>[:.])(?P<mi>\d{2})(?:[:.](?P<s>\d{2}))?"
    r"(?:\s*(?P<ampm>[AaPp]\.?\s?[Mm]\.?))?"
)
ANDROID = re.compile(rf"{_DATE}(?P<comma>,?)\s{_TIME}\s(?P<dash>[-\u2013])\s(?P<rest>.*)", re.DOTALL)
IOS = re.compile(rf"\[{_DATE}(?P<comma>,?)\s{_TIME}\]\s(?P<rest>.*)", re.DOTALL)
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
LOOKED_FOR = "'31/12/2023, 21:41 - Name: text' or '[31.12.23, 21:41:05] Name: text'"
_AMPM = str.maketrans("AaPp", "XxXx")
_ORDERS = {"ymd": (0, 1, 2), "dmy": (2, 1, 0), "mdy": (2, 0, 1)}  # where year, month, day are


def header(line: str) -> re.Match[str] | None:
    """A message header in either platform's shape (the file's first one decides which)."""
    line = line.lstrip(MARKS)
    return ANDROID.match(line) or IOS.match(line)


class Shape(NamedTuple):
    """Everything about a header's form that a phone writes the same way on every line."""

    ios: bool
    separators: str
    year_first: bool
    year_digits: int
    comma: str
    time_separator: str
    seconds: bool
    ampm: str | None  # 'XM', 'x.m.', ...: the form, not whether it is AM or PM
    dash: str | None

    @classmethod
    def of(cls, match: re.Match[str]) -> Shape:
        d1, ampm = match.group("d1"), match.group("ampm")
        year_first = len(d1) > 2
        return cls(
            ios=match.re is IOS,
            separators=match.group("s1") + match.group("s2"),
            year_first=year_first,
            year_digits=len(d1) if year_first else len(match.group("d3")),
            comma=match.group("comma"),
            time_separator=match.group("ts"),
            seconds=match.group("s") is not None,
            ampm=None if ampm is None else re.sub(r"\s", "", ampm.translate(_AMPM)),
            dash=None if match.re is IOS else match.group("dash"),
        )


@dataclass(slots=True)
class Line:
    """A message: its header split up, and its text (with continuation lines once joined)."""

    lineno: int
    fields: tuple[int, int, int]
    clock: tuple[int, int, int]
    ampm: str | None
    sender: str | None  # None: a system line
    text: str


def split(match: re.Match[str], lineno: int) -> Line:
    ampm = match.group("ampm")
    clock = (int(match.group("h")), int(match.group("mi")), int(match.group("s") or 0))
    rest = match.group("rest")
    sender: str | None = None
    text = rest
    if ": " in rest:
        name, body = rest.split(": ", 1)
        if len(name) <= 100 and not any(event in f"{name} " for event in GROUP_EVENTS):
            sender, text = clean_text(name.lstrip(MARKS)), body
    fields = (int(match.group("d1")), int(match.group("d2")), int(match.group("d3")))
    return Line(lineno, fields, clock, ampm, sender, text)


def wall_time(line: Line, order: str) -> datetime:
    """The time as written, read in `order`; Unreadable when no such date or time exists."""
    year, month, day = (line.fields[i] for i in _ORDERS[order])
    if year < 100:
        year += 2000
    hour, minute, second = line.clock
    if line.ampm:
        if not 1 <= hour <= 12:
            raise Unreadable(f"hour {hour} with {line.ampm}")
        hour = hour % 12 + (12 if line.ampm.lower().startswith("p") else 0)
    try:
        return datetime(year, month, day, hour, minute, second)
    except ValueError:
        raise Unreadable(f"{year:04d}-{month:02d}-{day:02d} {hour:02d}:{minute:02d} is not a date") from None


def _exists(line: Line, order: str) -> bool:
    try:
        wall_time(line, order)
    except Unreadable:
        return False
    return True


class DateOrder:
    """The day/month order as far as the file has shown it."""

    def __init__(self, year_first: bool) -> None:
        self.fixed: str | None = "ymd" if year_first else None

    def admits(self, line: Line) -> bool:
        """Whether `line` can be a header; the first date that allows only one order fixes it."""
        possible = [o for o in ((self.fixed,) if self.fixed else ("dmy", "mdy")) if _exists(line, o)]
        if self.fixed is None and len(possible) == 1:
            self.fixed = possible[0]
        return bool(possible)


class MessageLines:
    """Splits a file's lines into messages; learns the shape from the first header."""

    def __init__(self, label: str, max_chars: int) -> None:
        self.label = label
        self.max_chars = max_chars
        self.shape: Shape | None = None
        self.order = DateOrder(False)

    def read(self, lines: Iterable[tuple[int, str]]) -> Iterator[Line]:
        """Each message with its continuation lines joined to its text."""
        start: Line | None = None
        body: list[str] = []
        size = 0
        for lineno, text in lines:
            line = self._header(text, lineno)
            if line is not None:
                if start is not None:
                    yield _joined(start, body)
                start, body, size = line, [], 0
                continue
            if start is None:
                if text.strip(MARKS + " \t"):
                    raise ImportFormatError(
                        f"{self.label} line {lineno}: not a WhatsApp message line ({LOOKED_FOR})"
                    )
                continue
            size += len(text) + 1  # an empty line costs its newline: 300 M of them are not free
            if size > self.max_chars:
                raise ImportFormatError(
                    f"{self.label} line {start.lineno}: one message longer than {self.max_chars // 2**20} M characters"
                )
            body.append(text)
        if start is not None:
            yield _joined(start, body)

    def _header(self, text: str, lineno: int) -> Line | None:
        match = header(text)
        if match is None:
            return None
        shape = Shape.of(match)
        if self.shape is None:  # the file's first message: whatever it is, it is a header
            self.shape = shape
            self.order = DateOrder(shape.year_first)
            line = split(match, lineno)
            self.order.admits(line)
            return line
        if shape != self.shape:
            return None
        line = split(match, lineno)
        return line if self.order.admits(line) else None


def _joined(line: Line, body: list[str]) -> Line:
    if body:
        line.text = "\n".join([line.text, *body])
    return line


@dataclass(slots=True)
class _Above:
    """The message a forged header would be typed in, as far as the next header can tell."""

    sender: str  # whose words the lines below would be, if they are its continuation
    minute: datetime | None
    doubted: bool


class Doubt:
    """Which headers could be lines typed inside the message above them (module docstring)."""

    def __init__(self) -> None:
        self._above: _Above | None = None

    def check(self, sender: str | None, minute: datetime | None, next_minute: datetime | None) -> str | None:
        """The reason to doubt this message, or None; call once per message, in file order.

        A system line (sender None) is nobody's typing: it neither hosts a forged line nor
        ends a run of doubted ones, so a forged system line cannot reset the check.
        """
        if sender is None:
            return None
        above = self._above
        reason = None
        if above is not None and (above.sender != sender or above.doubted):
            reason = _reason(above, minute, next_minute)
        host = above.sender if above is not None and reason else sender
        self._above = _Above(host, minute, reason is not None)
        return reason


def _reason(above: _Above, minute: datetime | None, next_minute: datetime | None) -> str | None:
    whose = f"{above.sender}'s message above it"
    if minute is None or above.minute is None:
        return f"its time cannot be compared with {whose}: it may be a line of that message"
    if minute == above.minute:
        return f"written in the same minute as {whose}: it may be a line of that message"
    if minute < above.minute:
        return f"dated before {whose} (out of time order): it may be a line of that message"
    if next_minute is not None and next_minute < minute:
        return f"dated after the message that follows it (out of time order): it may be a line of {whose}"
    return None
