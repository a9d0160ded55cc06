"""A streaming, bounded JSON reader for chat exports (ijson's C parser underneath).

Exports of hundreds of MB are read event by event and only one message (or one
conversation) at a time is built as Python values, so memory stays flat at any file
size. Every limit names its place: nesting deeper than MAX_DEPTH, one value holding
more than MAX_VALUE_CHARS of text, a single token larger than MAX_TOKEN_BYTES, and a
syntax error gives its JSON path and its line and column (found by re-reading the
file up to the failing byte, only when there is an error).
"""

from __future__ import annotations

import contextlib
import io
import math
import re
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from decimal import Decimal, InvalidOperation
from typing import Any

import ijson

from persona_desktop.adapters.chat import json_numbers
from persona_desktop.errors import ImportFormatError
from persona_desktop.input_files import CHUNK

MAX_DEPTH = 64
MAX_VALUE_CHARS = 64 * 1024 * 1024
MAX_TOKEN_BYTES = 64 * 1024 * 1024

Event = tuple[str, Any]
# An escaped backslash, a valid surrogate pair, or a lone surrogate escape (\ud800, \udc00),
# which the C parser cannot turn into text: lone ones become \ufffd before it sees them.
_ESCAPES = re.compile(
    rb"\\(?:\\|u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|(u[dD][89a-fA-F][0-9a-fA-F]{2}))"
)
_HIGH = re.compile(rb"\\u[dD][89abAB][0-9a-fA-F]{2}")
_MAYBE_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")
Opener = Callable[[], AbstractContextManager[io.BufferedReader]]
_VALUE_START = frozenset(("start_map", "start_array", "string", "number", "boolean", "null"))
_SCALAR = frozenset(("string", "number", "boolean", "null"))
_MAX_HELD_DIGITS = 1 << 20  # a longer run of digits at a chunk's end is checked without its next byte


def _fix_escape(match: re.Match[bytes]) -> bytes:
    return b"\\ufffd" if match.group(1) else match.group(0)


class SurrogateFilter:
    """Prepares a JSON byte stream for the C parser, chunk by chunk: rewrites lone surrogate
    escapes, and stops at an integer too long for Python to read (`json_numbers`).

    The end of a chunk from the first backslash of its last 12 bytes (a surrogate pair's
    length), with the backslashes just before it, waits for the next chunk, so an escape
    is never cut in two; so do digits at its end, so a number is checked whole. Lengths are
    kept: byte n passed on is byte n of the input.
    """

    def __init__(self, in_string: json_numbers.InString | None = None) -> None:
        self._carry = b""
        self._in_string = in_string or (lambda _offset: False)
        self._passed = 0
        self._last = b""

    def feed(self, chunk: bytes, final: bool = False) -> bytes:
        data = self._carry + chunk
        self._carry = b""
        if not final:
            cut = data.find(b"\\", max(len(data) - 12, 0))
            if cut >= 6 and _HIGH.fullmatch(data, cut - 6, cut):
                cut -= 6  # the second half of a pair: keep the pair together
            if cut >= 0:
                while cut > 0 and data[cut - 1 : cut] == b"\\":
                    cut -= 1
                data, self._carry = data[:cut], data[cut:]
            digits = len(data) - len(data.rstrip(b"0123456789"))
            if 0 < digits <= _MAX_HELD_DIGITS:
                data, self._carry = data[:-digits], data[-digits:] + self._carry
        if _MAYBE_SURROGATE.search(data):
            data = _ESCAPES.sub(_fix_escape, data)
        if len(data) > json_numbers.MAX_INT_DIGITS:
            json_numbers.check(data, self._passed, self._last, self._in_string)
        self._passed += len(data)
        self._last = data[-1:] or self._last
        return data


def format_path(path: list[str | int | None]) -> str:
    if len(path) > 16:  # a path into something nested too deeply: its start says enough
        return f"{format_path(path[:12])}...(depth {len(path)})"
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{max(part, 0)}]"
        elif part is not None:
            out += f".{part}" if out else part
    return out or "the top level"


def _one_line(exc: Exception) -> str:
    if isinstance(exc, UnicodeDecodeError):
        return "not UTF-8 text"
    message = exc.args[0] if exc.args else ""
    if isinstance(message, bytes):  # yajl's errors come as bytes, with the text around the error
        message = message.decode("utf-8", "replace")
    text = str(message).strip().splitlines()
    if text and "invalid bytes in UTF8 string" in text[0]:
        return "not UTF-8 text (save the export as UTF-8)"
    return text[0].rstrip(".") if text else type(exc).__name__


_CONTINUATION_BYTES = bytes(range(0x80, 0xC0))


def _chars(data: bytes) -> int:
    """Characters in UTF-8 `data` (bytes that do not continue a character), in C."""
    return len(data.translate(None, _CONTINUATION_BYTES))


def _line_column(opener: Opener, offset: int) -> tuple[int, int]:
    """1-based line and column (in characters) of byte `offset` of the file, at any line length."""
    line, column, done = 1, 0, 0
    with opener() as stream:
        while done < offset:
            chunk = stream.read(min(CHUNK, offset - done))
            if not chunk:
                break
            done += len(chunk)
            newlines = chunk.count(b"\n")
            if newlines:
                line += newlines
                column = _chars(chunk[chunk.rindex(b"\n") + 1 :])
            else:
                column += _chars(chunk)
    return line, column + 1


def _failing_offset(opener: Opener, upto: int) -> int:
    """The byte at which the parser fails: replay the file, the last chunk byte by byte.

    The surrogate filter keeps lengths (a 6-byte escape for a 6-byte escape), so bytes
    passed to the parser count bytes of the file's UTF-8 view (`text_encoding`).
    """
    sink = ijson.sendable_list()
    parser = ijson.basic_parse_coro(sink)
    surrogates = SurrogateFilter(in_string=lambda _offset: True)  # the first reading checked numbers
    passed = 0

    def feed(data: bytes, final: bool = False, bytewise: bool = False) -> None:
        nonlocal passed
        clean = surrogates.feed(data, final)
        step = 1 if bytewise else max(len(clean), 1)
        for start in range(0, len(clean), step):  # never an empty send: that ends the parse
            piece = clean[start : start + step]
            parser.send(piece)
            passed += len(piece)
            del sink[:]

    with opener() as stream:
        read = 0
        try:
            while read < upto:
                chunk = stream.read(min(CHUNK, upto - read))
                if not chunk:
                    break
                feed(chunk)
                read += len(chunk)
            while byte := stream.read(1):
                feed(byte, bytewise=True)
            feed(b"", final=True, bytewise=True)
            parser.close()
        except (ijson.JSONError, UnicodeDecodeError, InvalidOperation):
            pass
    return passed


class JsonStream:
    """Pull-style reading of one JSON document, with its current path for messages.

    `object_keys()` walks an object (the caller reads or skips each value), `array_items()` an
    array; `value()` builds the next value whole, `skip()` passes over it.
    """

    def __init__(self, opener: Opener, label: str) -> None:
        self._opener = opener
        self.label = label
        self._path: list[str | int | None] = []
        self._peeked: Event | None = None
        self._events = self._read()

    # --- low level ---------------------------------------------------------------------

    def _read(self) -> Iterator[Event]:
        sink = ijson.sendable_list()
        parser = ijson.basic_parse_coro(sink)
        consumed, quiet_since = 0, 0
        strings: json_numbers.StringTracker | None = None

        def in_string(offset: int) -> bool:  # a second reading of the file, opened on first use
            nonlocal strings
            if strings is None:
                again = extra.enter_context(self._opener())
                strings = json_numbers.StringTracker(iter(lambda: again.read(CHUNK), b""))
            return strings(offset)

        surrogates = SurrogateFilter(in_string)
        with contextlib.ExitStack() as extra, self._opener() as stream:
            while True:
                chunk = stream.read(CHUNK)
                failure: Exception | None = None
                try:
                    data = surrogates.feed(chunk, final=not chunk)
                    if data:
                        parser.send(data)
                    if not chunk:
                        parser.close()
                except (ijson.JSONError, UnicodeDecodeError) as exc:
                    failure = exc
                except json_numbers.NumberTooLong as exc:
                    # Found before the parser read the chunk: the path would lag, the line and column do not.
                    line, column = _line_column(self._opener, exc.offset)
                    raise ImportFormatError(
                        f"{self.label}: line {line} column {column}: {json_numbers.TOO_LONG_NUMBER}"
                    ) from None
                except InvalidOperation:  # an exponent Decimal cannot hold: the sink is not read again
                    raise self._syntax_error(ValueError(json_numbers.TOO_LARGE_NUMBER), consumed) from None
                if failure is not None:  # the events before the error first, so the path is right
                    yield from sink
                    raise self._syntax_error(failure, consumed)
                consumed += len(chunk)
                if sink:
                    yield from sink
                    del sink[:]
                    quiet_since = consumed
                elif consumed - quiet_since > MAX_TOKEN_BYTES:
                    raise self.error(f"one value is larger than {MAX_TOKEN_BYTES // 2**20} MB")
                if not chunk:
                    return

    def _syntax_error(self, exc: Exception, consumed: int) -> ImportFormatError:
        offset = _failing_offset(self._opener, consumed)
        line, column = _line_column(self._opener, offset)
        where = format_path(self._path)
        return ImportFormatError(f"{self.label}: line {line} column {column} (at {where}): {_one_line(exc)}")

    def _next(self) -> Event:
        if self._peeked is not None:
            event, self._peeked = self._peeked, None
            return event
        try:
            event = next(self._events)
        except StopIteration:
            raise self.error("the file ends too early") from None
        kind = event[0]
        path = self._path
        if kind in _VALUE_START and path and type(path[-1]) is int:
            path[-1] += 1
        if kind == "map_key":
            path[-1] = event[1]
        elif kind == "start_map":
            path.append(None)
        elif kind == "start_array":
            path.append(-1)
        elif kind in ("end_map", "end_array"):
            path.pop()
        if len(path) > MAX_DEPTH:
            raise self.error(f"nested deeper than {MAX_DEPTH} levels")
        return event

    def _peek(self) -> Event:
        if self._peeked is None:
            self._peeked = self._next()
        return self._peeked

    # --- what importers use --------------------------------------------------------------

    @property
    def place(self) -> str:
        return format_path(self._path)

    def error(self, message: str, place: str | None = None) -> ImportFormatError:
        return ImportFormatError(f"{self.label}: {place or self.place}: {message}")

    def next_kind(self) -> str:
        """'object', 'array', 'string', 'number', 'boolean' or 'null': what comes next."""
        kind = self._peek()[0]
        return {"start_map": "object", "start_array": "array"}.get(kind, kind)

    def object_keys(self) -> Iterator[str]:
        """The keys of the object that comes next; read or skip each value before the next key."""
        event = self._next()
        if event[0] != "start_map":
            raise self.error(f"expected an object, found {self._describe(event)}")
        while True:
            event = self._next()
            if event[0] == "end_map":
                return
            yield str(event[1])

    def array_items(self) -> Iterator[int]:
        """Indexes of the array that comes next; read or skip each item before the next."""
        event = self._next()
        if event[0] != "start_array":
            raise self.error(f"expected a list, found {self._describe(event)}")
        index = 0
        while True:
            if self._peek()[0] == "end_array":
                self._next()
                return
            yield index
            index += 1

    def skip(self) -> None:
        depth = 0
        while True:
            kind = self._next()[0]
            if kind in ("start_map", "start_array"):
                depth += 1
            elif kind in ("end_map", "end_array"):
                depth -= 1
            if depth == 0 and kind != "map_key":
                return

    def value(self, max_chars: int = MAX_VALUE_CHARS) -> Any:
        """Build the next value; refuse one holding more than `max_chars` of text.

        The events inside the value are taken straight from the parser (the hot loop of
        an import): the path is kept for the value itself, errors inside it name that.
        """
        event = self._next()
        kind = event[0]
        if kind in _SCALAR:
            return event[1]
        room = MAX_DEPTH - len(self._path)
        stack: list[Any] = []
        keys: list[Any] = []
        chars = 0
        current: Any = {} if kind == "start_map" else []
        key: Any = None
        for kind, val in self._events:
            if kind == "map_key":
                key = val
                chars += len(val)
                continue
            if kind == "start_map" or kind == "start_array":
                stack.append(current)
                keys.append(key)
                if len(stack) > room:
                    place = self._inner_place(stack, keys)
                    raise self.error(f"nested deeper than {MAX_DEPTH} levels", place)
                current, key = ({} if kind == "start_map" else []), None
                continue
            if kind == "end_map" or kind == "end_array":
                if not stack:
                    self._path.pop()
                    return current
                val, current, key = current, stack.pop(), keys.pop()
            elif kind == "string":
                chars += len(val)
                if chars > max_chars:
                    raise self.error(
                        f"holds more than {max_chars // 2**20} M characters of text", self._value_place()
                    )
            if type(current) is dict:
                current[key] = val
            else:
                current.append(val)
        raise self.error("the file ends too early", self._value_place())

    def _inner_place(self, stack: list[Any], keys: list[Any]) -> str:
        """Where inside the value being built: each parent's key or index of the child."""
        parts: list[str | int | None] = list(self._path[:-1])
        for parent, key in zip(stack, keys, strict=True):
            parts.append(key if type(parent) is dict else len(parent))
        return format_path(parts)

    def _value_place(self) -> str:
        return format_path(
            self._path[:-1]
        )  # the path is not moved inside value(); its last part is the container's

    def end(self) -> None:
        """After the top-level value: nothing but whitespace may follow (the parser checks)."""
        for _event in self._events:
            raise self.error("more than one JSON value in the file")

    @staticmethod
    def _describe(event: Event) -> str:
        kind, value = event
        if kind == "start_map":
            return "an object"
        if kind == "start_array":
            return "a list"
        if kind == "string":
            return "a string"
        if kind == "number":
            return "a number"
        return "null" if kind == "null" else f"{kind} {value!r}"


def as_number(value: Any) -> float | None:
    """A finite JSON number as float (ijson gives int or Decimal); None for anything else."""
    if isinstance(value, bool) or not isinstance(value, int | float | Decimal):
        return None
    try:
        number = float(value)
    except (OverflowError, ValueError):  # 10**400, a signalling NaN
        return None
    return number if math.isfinite(number) else None
