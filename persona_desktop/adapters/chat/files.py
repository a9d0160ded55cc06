"""Opening a chat export safely: a regular file (or one member of a .zip), size-capped,
read as UTF-8 whatever Unicode encoding it is in (`text_encoding`).

A FIFO, a device such as `/dev/zero` or a folder is refused before anything is read,
so an import never hangs or reads without end. The cap is a sanity bound far above
real exports (the largest are hundreds of MB, and they are streamed, never loaded
whole): a file that grows while it is read stops at the cap too.
"""

from __future__ import annotations

import io
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from persona_desktop.adapters.chat.text_encoding import TextEncoding, Utf8View
from persona_desktop.errors import ImportFormatError
from persona_desktop.input_files import CHUNK, open_regular_file, size_text

if TYPE_CHECKING:
    from _typeshed import SupportsRead, WriteableBuffer

MAX_FILE_BYTES = 4 * 1024**3

# Where an export keeps its chats inside a .zip, by preference.
_ZIP_MEMBERS = ("conversations.json", "result.json", "_chat.txt")


class BoundedReader(io.RawIOBase):
    """Reads at most `limit` bytes; read errors become one-line import errors."""

    def __init__(self, inner: SupportsRead[bytes], label: str, limit: int | None = None) -> None:
        self._inner = inner
        self._label = label
        self._limit = MAX_FILE_BYTES if limit is None else limit
        self.consumed = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer) -> int:
        view = memoryview(buffer)
        data = self.read(len(view))
        view[: len(data)] = data
        return len(data)

    def read(self, size: int = -1) -> bytes:
        if size is None or size < 0:
            size = CHUNK
        try:
            data = self._inner.read(size)
        except (OSError, zlib.error, zipfile.BadZipFile, EOFError) as exc:
            raise ImportFormatError(f"{self._label}: cannot read: {exc}") from None
        self.consumed += len(data)
        if self.consumed > self._limit:
            raise ImportFormatError(
                f"{self._label}: more than {size_text(self._limit)}, the most one chat file may hold"
            )
        return data


def _open_regular(path: Path) -> BinaryIO:
    """Open without blocking (a FIFO would), then refuse anything but a regular file."""
    return open_regular_file(
        path,
        MAX_FILE_BYTES,
        hint="give the exported chat file itself",
        limit="the most one chat file may hold (a sanity bound: real exports are far smaller)",
    )


@dataclass(frozen=True, slots=True)
class ChatFile:
    """One chat export to read: a regular file, or one member of a .zip beside it."""

    path: Path
    member: str | None = None

    @property
    def label(self) -> str:
        return f"{self.path}:{self.member}" if self.member else str(self.path)

    @property
    def name(self) -> str:
        """The export's own file name (the member's inside a zip)."""
        return Path(self.member).name if self.member else self.path.name

    @contextmanager
    def open(self) -> Iterator[io.BufferedReader]:
        """A fresh buffered stream of the file's text as UTF-8 from its start (a byte order
        mark dropped), capped at MAX_FILE_BYTES of the file."""
        with self._open_text() as view:
            yield io.BufferedReader(view, CHUNK)

    def encoding(self) -> TextEncoding:
        with self._open_text() as view:
            return view.encoding

    @contextmanager
    def _open_text(self) -> Iterator[Utf8View]:
        raw = _open_regular(self.path)
        try:
            if self.member is None:
                yield Utf8View(BoundedReader(raw, self.label), self.label)
                return
            with _zip(raw, self.path) as archive:
                try:
                    member = archive.open(self.member)
                except (KeyError, RuntimeError, NotImplementedError, zipfile.BadZipFile) as exc:
                    raise ImportFormatError(f"{self.label}: cannot open inside the zip: {exc}") from None
                with member:
                    yield Utf8View(BoundedReader(member, self.label), self.label)
        finally:
            raw.close()

    def head(self, size: int = CHUNK) -> bytes:
        with self.open() as stream:
            return stream.read(size)

    def lines(self, max_bytes: int) -> Iterator[tuple[int, bytes]]:
        """(line number, raw UTF-8 line) from the start; a longer line is an error."""
        with self.open() as stream:
            lineno = 0
            while True:
                raw = stream.readline(max_bytes + 1)
                if not raw:
                    return
                lineno += 1
                if len(raw) > max_bytes and not raw.endswith(b"\n"):
                    raise ImportFormatError(f"{self.label} line {lineno}: longer than {size_text(max_bytes)}")
                yield lineno, raw


@contextmanager
def _zip(raw: BinaryIO, path: Path) -> Iterator[zipfile.ZipFile]:
    try:
        archive = zipfile.ZipFile(raw)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise ImportFormatError(f"{path}: not a readable zip file: {exc}") from None
    with archive:
        yield archive


def is_zip(head: bytes) -> bool:
    return head.startswith(b"PK\x03\x04") or head.startswith(b"PK\x05\x06")


def chat_file(path: Path) -> ChatFile:
    """The file to read: `path` itself, or the chat export inside it when it is a .zip."""
    plain = ChatFile(path)
    if not is_zip(plain.head(4)):  # a zip's first bytes show no other encoding than UTF-8
        return plain
    raw = _open_regular(path)
    try:
        with _zip(raw, path) as archive:
            infos = [i for i in archive.infolist() if not i.is_dir()]
    finally:
        raw.close()
    member = _pick_member(infos, path)
    if member.file_size > MAX_FILE_BYTES:
        raise ImportFormatError(
            f"{path}:{member.filename}: {size_text(member.file_size)} unpacked is more than "
            f"{size_text(MAX_FILE_BYTES)}, the most one chat file may hold"
        )
    return ChatFile(path, member.filename)


def _pick_member(infos: list[zipfile.ZipInfo], path: Path) -> zipfile.ZipInfo:
    by_name: dict[str, list[zipfile.ZipInfo]] = {}
    for info in infos:
        by_name.setdefault(Path(info.filename).name.lower(), []).append(info)
    for wanted in _ZIP_MEMBERS:
        found = by_name.get(wanted, [])
        if len(found) == 1:
            return found[0]
    texts = [i for i in infos if i.filename.lower().endswith(".txt")]
    if len(texts) == 1:
        return texts[0]
    looked_for = ", ".join(_ZIP_MEMBERS)
    raise ImportFormatError(
        f"{path}: this zip holds no chat export this app knows (looked for {looked_for} "
        f"or a single .txt file; found {len(infos)} file(s))"
    )
