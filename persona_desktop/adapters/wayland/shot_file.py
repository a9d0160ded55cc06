"""The screenshot file a portal hands back: read it safely, then delete exactly that file.

The portal answers with a URI. GNOME writes ~/Pictures/Screenshot*.png, KDE
~/Pictures/Screenshot_*.png, xdg-desktop-portal-wlr a fixed /tmp/out.png, which anyone
on the machine could have put a symlink or an old picture at. So the file is opened
without following links, must be a regular file of ours with no other name (no hard
link), written since the request, and of a sane size; only then is it read and unlinked
(the link itself, by name, once we know the name still leads to the file we read). A file
that fails a check is left alone; one that cannot be deleted is an error (ShotFileError).
"""

from __future__ import annotations

import io
import os
import stat
import warnings
from pathlib import Path
from urllib.parse import unquote, urlsplit

import numpy as np
from PIL import Image, UnidentifiedImageError

from persona_desktop.errors import PersonaError
from persona_desktop.ports.screen import MAX_IMAGE_PIXELS, Pixels

MAX_FILE_BYTES = 512 * 1024 * 1024
CLOCK_SLACK_S = 2.0  # file systems with coarse timestamps


class ShotFileError(PersonaError):
    """The returned file cannot be used as this request's screenshot."""


def path_from_uri(uri: str) -> Path:
    parts = urlsplit(uri)
    if parts.scheme != "file" or parts.netloc not in ("", "localhost") or parts.query or parts.fragment:
        raise ShotFileError(f"the portal returned {uri[:200]!r}, not a local file")
    path = unquote(parts.path)
    if not path.startswith("/") or "\0" in path:
        raise ShotFileError(f"the portal returned {uri[:200]!r}, not an absolute file path")
    return Path(path)


def take_file(uri: str, requested_at: float) -> bytes:
    """The bytes of the screenshot at `uri`, which is then deleted; ShotFileError if it is not ours."""
    path = path_from_uri(uri)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise ShotFileError(f"the screenshot {path} the portal named does not exist") from None
    except OSError as exc:  # ELOOP: a symlink
        raise ShotFileError(f"the screenshot {path} cannot be opened safely: {exc.strerror}") from None
    try:
        st = os.fstat(fd)
        _check(path, st, requested_at)
        data = _read_all(fd, st.st_size)
    finally:
        os.close(fd)
    _unlink_same(path, st)
    return data


def _check(path: Path, st: os.stat_result, requested_at: float) -> None:
    if not stat.S_ISREG(st.st_mode):
        raise ShotFileError(f"the screenshot {path} is not a regular file; left alone")
    if st.st_uid != os.geteuid():
        raise ShotFileError(f"the screenshot {path} belongs to another user; left alone")
    if st.st_nlink != 1:  # a fresh screenshot has one name; a hard link is someone's file
        raise ShotFileError(f"the screenshot {path} has other names too; left alone")
    if st.st_size > MAX_FILE_BYTES:
        raise ShotFileError(f"the screenshot {path} is too large ({st.st_size} bytes); left alone")
    if st.st_mtime < requested_at - CLOCK_SLACK_S:
        raise ShotFileError(f"the screenshot {path} is older than the request (a stale file); left alone")


def _read_all(fd: int, size: int) -> bytes:
    chunks: list[bytes] = []
    total = 0
    while total <= MAX_FILE_BYTES:
        chunk = os.read(fd, max(65536, size - total))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
    raise ShotFileError("the screenshot grew past the size limit while being read")


def _unlink_same(path: Path, st: os.stat_result) -> None:
    """Delete `path` if it still is the file we read (not a file swapped in meanwhile)."""
    try:
        now = os.lstat(path)
        if (now.st_dev, now.st_ino) == (st.st_dev, st.st_ino):
            path.unlink(missing_ok=True)
    except FileNotFoundError:
        return
    except OSError as exc:  # EPERM, EROFS, ...: it would stay behind, and the next one too
        raise ShotFileError(f"the screenshot {path} could not be deleted: {exc.strerror}") from None


def decode_rgb(data: bytes, what: str) -> Pixels:
    """PNG (portal) or PPM (grim) bytes as an H x W x 3 uint8 array."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as img:
                if img.width * img.height > MAX_IMAGE_PIXELS:
                    raise ShotFileError(f"{what} is too large ({img.width}x{img.height})")
                rgb = np.asarray(img.convert("RGB"))
    except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError,
            Image.DecompressionBombWarning) as exc:  # fmt: skip
        raise ShotFileError(f"{what} is not an image Pillow can read: {exc}") from None
    if rgb.ndim != 3 or rgb.size == 0:
        raise ShotFileError(f"{what} is an empty image")
    return rgb
