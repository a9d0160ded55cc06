"""Opening a file the owner named: only a regular file, only up to a size.

`/dev/zero` would be read until memory runs out, a FIFO would block forever, a folder
is not a file: each is refused with one line naming the path, before a byte is read.
The file is opened non-blocking (a FIFO cannot stall the open) and checked on the
opened descriptor, so a swap between the check and the read changes nothing. Chat
exports (adapters/chat/files.py), screen images and audio files all open through here.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

from persona_desktop.errors import ImportFormatError

MB = 1024 * 1024
CHUNK = 1 << 16

KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def size_text(n: int) -> str:
    return f"{n / 1024**3:.1f} GB" if n >= 1024**3 else f"{n / MB:.1f} MB"


def open_regular_file(path: Path, max_bytes: int, *, hint: str, limit: str) -> BinaryIO:
    """An unbuffered binary stream of `path`; ImportFormatError for anything but a regular file
    of at most `max_bytes` (`hint` says what to give instead, `limit` what the cap is)."""
    flags = (
        os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    )
    try:
        fd = os.open(path, flags)
    except ValueError:  # an embedded NUL byte
        raise ImportFormatError(f"{str(path)!r}: not a usable file name") from None
    except OSError as exc:
        raise ImportFormatError(f"{path}: cannot read: {exc.strerror}") from None
    try:
        info = os.fstat(fd)
        for test, kind in KINDS:
            if test(info.st_mode):
                raise ImportFormatError(f"{path}: is {kind}, not a file; {hint}")
        if not stat.S_ISREG(info.st_mode):
            raise ImportFormatError(f"{path}: not a regular file")
        if info.st_size > max_bytes:
            raise ImportFormatError(
                f"{path}: {size_text(info.st_size)} is more than {size_text(max_bytes)}, {limit}"
            )
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb", buffering=0)
    except BaseException:
        os.close(fd)
        raise


def read_input_file(path: Path, max_bytes: int) -> bytes:
    """All of a regular file of at most `max_bytes` (a screen image, an audio file)."""
    with open_regular_file(
        path, max_bytes, hint="give the file itself", limit="the most this import reads"
    ) as fh:
        chunks: list[bytes] = []
        total = 0
        try:
            while chunk := fh.read(CHUNK):
                total += len(chunk)
                if total > max_bytes:  # it grew while being read
                    raise ImportFormatError(
                        f"{path}: more than {size_text(max_bytes)}, the most this import reads"
                    )
                chunks.append(chunk)
        except OSError as exc:
            raise ImportFormatError(f"{path}: cannot read: {exc.strerror}") from None
    return b"".join(chunks)
