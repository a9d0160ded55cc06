"""What the log file may hold: where a failure happened, never what the owner said.

The log lives in the data dir in plain text (it must be readable without the store's
key: it explains why the store did not open), and the owner may attach it to a bug
report. An exception's message, or a value logged with `%s`, can quote anything: a
chat line, screen text, a model reply, a search query (SQLite's "fts5: syntax error
near ..."). So the log keeps a traceback's frames (file, line, function, that line of
our source) and each exception's type, and drops the rest:

- an exception's message is replaced by its length; an `OSError` keeps its errno and
  the system's reason ("No space left on device"), a SQLite error its result code
  name (SQLITE_FULL, SQLITE_CORRUPT): neither can hold the owner's text;
- a log call's format string is kept (it is our source's constant), its arguments
  only when they are numbers, booleans, None, enum members or paths;
- another library's record keeps its level and logger name, not its text.
"""

from __future__ import annotations

import enum
import errno
import logging
import traceback
from pathlib import PurePath

WITHHELD = "<withheld>"
_OURS = "persona_desktop"


def _safe_arg(value: object) -> object:
    if value is None or isinstance(value, bool | int | float | PurePath):
        return value
    if isinstance(value, enum.Enum):
        return f"{type(value).__name__}.{value.name}"
    return WITHHELD


def private_message(record: logging.LogRecord) -> str:
    """The record's text with nothing in it that came from outside our source."""
    if not (record.name == _OURS or record.name.startswith(_OURS + ".")) or not isinstance(record.msg, str):
        return f"{WITHHELD} (a message of {record.name})"
    if not record.args:
        return record.msg
    args: object
    if isinstance(record.args, dict):
        args = {k: _safe_arg(v) for k, v in record.args.items()}
    else:
        args = tuple(_safe_arg(v) for v in record.args)
    try:
        return record.msg % args
    except (TypeError, ValueError, KeyError):
        return f"{record.msg} {WITHHELD}"


def _detail(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.errno is not None:
        return f"[{errno.errorcode.get(exc.errno, exc.errno)}] {exc.strerror or ''}".rstrip()
    code = getattr(exc, "sqlite_errorname", None)
    if isinstance(code, str) and code.isidentifier():
        return f"{code} (message withheld)"
    size = len(str(exc)) if exc.args else 0
    return f"message withheld ({size} characters)" if size else ""


def _chain(exc: BaseException) -> list[BaseException]:
    """`exc` and what led to it, oldest first, as Python prints them."""
    chain: list[BaseException] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        chain.append(current)
        if current.__cause__ is not None:
            current = current.__cause__
        elif current.__suppress_context__:
            current = None
        else:
            current = current.__context__
    chain.reverse()
    return chain


def private_traceback(exc: BaseException) -> str:
    """A traceback of `exc` (and its causes): frames and types, no message text."""
    parts: list[str] = []
    for i, link in enumerate(_chain(exc)):
        if i:
            parts.append("\nwhich led to:\n\n")
        parts.append("Traceback (most recent call last):\n")
        parts.extend(traceback.StackSummary.extract(traceback.walk_tb(link.__traceback__)).format())
        kind = type(link)
        name = (
            kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"
        )
        detail = _detail(link)
        parts.append(f"{name}: {detail}\n" if detail else f"{name}\n")
    return "".join(parts)


class PrivateFormatter(logging.Formatter):
    """The log file's formatter: time, level, logger, the private message and traceback."""

    def format(self, record: logging.LogRecord) -> str:
        text = f"{self.formatTime(record)} {record.levelname} {record.name}: {private_message(record)}"
        if record.exc_info and record.exc_info[1] is not None:
            text += "\n" + private_traceback(record.exc_info[1]).rstrip("\n")
        return text
