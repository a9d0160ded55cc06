"""Numbers in a JSON export that Python will not read, caught before the parser sees them.

Python converts no integer of more than MAX_INT_DIGITS digits (a guard against quadratic
conversion). ijson's C parser does not survive it: it raises ValueError, or SystemError
when fed through a coroutine, and may crash the interpreter when read on. So every run of
more digits is found in the bytes before they reach the parser (`LongNumbers.check`) and,
unless it lies inside a string (found by reading the file a second time, only then), it
stops the import with its place. A number with an exponent too large for Decimal
(`1e` and 19 digits) raises decimal.InvalidOperation cleanly: the readers catch that.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

MAX_INT_DIGITS = 4300
TOO_LONG_NUMBER = f"a number longer than {MAX_INT_DIGITS} digits"
TOO_LARGE_NUMBER = "a number too large to read"
_RUN = re.compile(rb"(?<![0-9])[0-9]{%d,}+" % (MAX_INT_DIGITS + 1))
_NOT_AN_INTEGER = (b".", b"e", b"E", b"+")  # a fraction's or an exponent's digits: Decimal reads them
_IN_STRING = re.compile(rb'(?:[^"\\]|\\.)*+', re.DOTALL)

InString = Callable[[int], bool]


class NumberTooLong(Exception):
    """An integer of more than MAX_INT_DIGITS digits at byte `offset` of the JSON text."""

    def __init__(self, offset: int) -> None:
        super().__init__(offset)
        self.offset = offset


def check(data: bytes, offset: int, before: bytes, in_string: InString) -> None:
    """Raise NumberTooLong for an integer token in `data` (at `offset` of the text, after
    the byte `before`) too long to read. A run ending at the end of `data` must be whole."""
    for match in _RUN.finditer(data):
        start, end = match.span()
        previous = data[start - 1 : start] if start else before
        if previous in _NOT_AN_INTEGER or data[end : end + 1] in _NOT_AN_INTEGER:
            continue
        if previous == b"-" and data[max(start - 2, 0) : start - 1] in (b"e", b"E"):
            continue
        if not in_string(offset + start):
            raise NumberTooLong(offset + start)


class StringTracker:
    """Whether offsets of a JSON text, asked in increasing order, lie inside a string.

    The text (an iterator of chunks from its start) is read lazily and once in all,
    however many offsets are asked: a file full of long digit runs in strings costs one
    extra reading, not one per run.
    """

    def __init__(self, chunks: Iterator[bytes]) -> None:
        self._chunks = chunks
        self._chunk = b""
        self._pos = 0  # in the current chunk
        self._done = 0  # bytes of the text scanned
        self._inside = False
        self._escaped = False

    def __call__(self, offset: int) -> bool:
        while self._done < offset:
            if self._pos >= len(self._chunk):
                self._chunk, self._pos = next(self._chunks, b""), 0
                if not self._chunk:
                    break
            limit = min(len(self._chunk), self._pos + offset - self._done)
            self._scan(limit)
        return self._inside

    def _scan(self, limit: int) -> None:
        chunk, pos = self._chunk, self._pos
        while pos < limit:
            if self._escaped:
                pos, self._escaped = pos + 1, False
            elif not self._inside:
                quote = chunk.find(b'"', pos, limit)
                if quote < 0:
                    pos = limit
                else:
                    self._inside, pos = True, quote + 1
            else:
                inside = _IN_STRING.match(chunk, pos, limit)
                assert inside is not None  # the pattern matches the empty string too
                pos = inside.end()
                if pos < limit:  # a closing quote, or a backslash whose escaped byte is past the limit
                    if chunk[pos : pos + 1] == b'"':
                        self._inside = False
                    else:
                        self._escaped = True
                    pos += 1
        self._done += pos - self._pos
        self._pos = pos
