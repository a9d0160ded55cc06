"""Which Unicode encoding a chat file is in, and a UTF-8 view of it for the importers.

WhatsApp on some phones and Windows tools write `_chat.txt` or JSON as UTF-16 (little or
big endian, usually with a byte order mark), others UTF-8 with a byte order mark. The
importers, the format detection and every line and column in an error read UTF-8, so a
file is read through a view that drops the byte order mark and, for UTF-16 and UTF-32,
decodes it chunk by chunk and hands out UTF-8: memory stays flat, and lines and columns
(counted in characters) are those of the file. UTF-8 passes through untouched.

A file without a byte order mark is UTF-16 when its first two characters are ASCII with a
zero byte beside each (every chat export starts with `{`, `[`, a digit or a space, and
JSON or text in UTF-8 never holds a zero byte there); the same for UTF-32. Bytes that are
not valid in the file's encoding stop the import with the file, the line and the encoding
named: nothing is guessed, nothing half-read.
"""

from __future__ import annotations

import codecs
import io
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from persona_desktop.errors import ImportFormatError
from persona_desktop.input_files import CHUNK

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer


class Reads(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


@dataclass(frozen=True, slots=True)
class TextEncoding:
    name: str  # what the owner is told: "UTF-8", "UTF-16LE", ...
    codec: str | None  # Python's codec; None: UTF-8, passed through as it is
    bom: int  # bytes of byte order mark to drop
    found_by: str  # why this encoding, for an error message


UTF8 = TextEncoding("UTF-8", None, 0, "")
_BY_BOM = (  # UTF-32LE before UTF-16LE: its mark starts with UTF-16LE's
    (b"\xff\xfe\x00\x00", "UTF-32LE", "utf-32-le"),
    (b"\x00\x00\xfe\xff", "UTF-32BE", "utf-32-be"),
    (b"\xef\xbb\xbf", "UTF-8", None),
    (b"\xff\xfe", "UTF-16LE", "utf-16-le"),
    (b"\xfe\xff", "UTF-16BE", "utf-16-be"),
)
_BY_ZEROS = (  # two ASCII characters: (name, codec, bytes looked at, which of them are zero)
    ("UTF-32LE", "utf-32-le", 8, (1, 2, 3, 5, 6, 7)),
    ("UTF-32BE", "utf-32-be", 8, (0, 1, 2, 4, 5, 6)),
    ("UTF-16LE", "utf-16-le", 4, (1, 3)),
    ("UTF-16BE", "utf-16-be", 4, (0, 2)),
)
SNIFF_BYTES = 8


def sniff(first: bytes) -> TextEncoding:
    """The encoding that the file's first SNIFF_BYTES bytes show; UTF-8 when they show none."""
    for mark, name, codec in _BY_BOM:
        if first.startswith(mark):
            return TextEncoding(name, codec, len(mark), f"the file starts with a {name} byte order mark")
    for name, codec, size, zeros in _BY_ZEROS:
        if len(first) < size:
            continue
        head = first[:size]
        others = [head[i] for i in range(size) if i not in zeros]
        if all(head[i] == 0 for i in zeros) and all(0 < b < 0x80 for b in others):
            return TextEncoding(name, codec, 0, f"its first bytes look like {name}")
    return UTF8


def _read_exactly(inner: Reads, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = inner.read(size - len(data))
        if not chunk:
            break
        data += chunk
    return data


class Utf8View(io.RawIOBase):
    """The text of `inner` as UTF-8 bytes, without its byte order mark (see the module doc)."""

    def __init__(self, inner: Reads, label: str) -> None:
        self._inner = inner
        self._label = label
        first = _read_exactly(inner, SNIFF_BYTES)
        self.encoding = sniff(first)
        self._waiting = first[self.encoding.bom :]  # read from the file, not yet decoded
        codec = self.encoding.codec
        self._decoder = codecs.getincrementaldecoder(codec)("strict") if codec else None
        self._out = b""  # UTF-8 not yet handed out
        self._pos = 0
        self._decoded = self.encoding.bom  # bytes of the file decoded so far
        self._lines = 1  # the line the decoder is in
        self._eof = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer) -> int:
        view = memoryview(buffer)
        while self._pos >= len(self._out) and not self._eof:
            self._out, self._pos = self._next_chunk(), 0
        n = min(len(view), len(self._out) - self._pos)
        view[:n] = self._out[self._pos : self._pos + n]
        self._pos += n
        return n

    def _next_chunk(self) -> bytes:
        raw, self._waiting = self._waiting or self._inner.read(CHUNK), b""
        if self._decoder is None:
            self._eof = not raw
            return raw
        held, _flag = self._decoder.getstate()
        final = not raw
        try:
            text = self._decoder.decode(raw, final)
        except UnicodeDecodeError as exc:
            raise self._error(held + raw, self._decoded - len(held), exc) from None
        self._eof = final
        self._decoded += len(raw)
        self._lines += text.count("\n")
        return text.encode("utf-8")

    def _error(self, data: bytes, offset: int, exc: UnicodeDecodeError) -> ImportFormatError:
        """Name the line (of the characters decoded before the bad bytes) and the byte.

        `data` is what the decoder works on (the bytes it held from the chunk before, then
        the new chunk), `offset` where it starts in the file; `exc.start` counts in it.
        """
        codec = self.encoding.codec or "utf-8"
        line = self._lines + data[: exc.start].decode(codec, "replace").count("\n")
        return ImportFormatError(
            f"{self._label} line {line}: not {self.encoding.name} text "
            f"(byte {offset + exc.start + 1}: {_reason(exc)}); {self.encoding.found_by}"
        )


def _reason(exc: UnicodeDecodeError) -> str:
    if exc.reason in ("truncated data", "unexpected end of data"):
        return "the file ends inside a character"
    return exc.reason
