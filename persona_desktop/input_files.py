"""Reading a file the owner named: only a regular file, only up to a size.

`/dev/zero` would be read until memory runs out, a FIFO would block forever, a
folder is not a file: each is refused with one line naming the path, before a byte
is read. The file is opened non-blocking (a FIFO cannot stall the open) and checked
on the opened descriptor, so a swap between the check and the read changes nothing.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from persona_desktop.errors import ImportFormatError

MB = 1024 * 1024


def _size(n: int) -> str:
    return f"{n / MB:,.0f} MB" if n >= MB else f"{n:,} bytes"


def read_input_file(path: Path, max_bytes: int) -> bytes:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise ImportFormatError(f"{path}: cannot read: no such file") from None
    except IsADirectoryError:
        raise ImportFormatError(f"{path}: is a directory, not a file") from None
    except OSError as exc:
        raise ImportFormatError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except ValueError:  # an embedded NUL byte
        raise ImportFormatError(f"{path!r}: not a usable file name") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise ImportFormatError(f"{path}: is a directory, not a file")
        if not stat.S_ISREG(info.st_mode):
            raise ImportFormatError(f"{path}: not a regular file (a device, pipe or socket); give a file")
        if info.st_size > max_bytes:
            raise ImportFormatError(
                f"{path}: {_size(info.st_size)} is more than the {_size(max_bytes)} this import reads"
            )
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read(max_bytes + 1)
    except OSError as exc:
        if exc.errno == errno.EISDIR:
            raise ImportFormatError(f"{path}: is a directory, not a file") from None
        raise ImportFormatError(f"{path}: cannot read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if len(data) > max_bytes:  # it grew while being read
        raise ImportFormatError(f"{path}: more than the {_size(max_bytes)} this import reads")
    return data
