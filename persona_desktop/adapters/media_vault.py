"""Kept screen crops and speech clips, sealed with AES-256-GCM when the store is encrypted.

Why files and not rows: crops and clips are written by the capture threads and
removed by retention by their age (mtime), one file each; keeping them files keeps
that, and keeps large blobs out of the database's WAL. Why a key stored *inside* the
encrypted database rather than derived from the store key: a change of passphrase
re-keys the store (a new store key) without rewriting every file; it adds a new
media key, which new files use, while older files keep naming theirs.

A sealed file is `PDMEDIA1` + key id (4 bytes) + nonce (12) + ciphertext and tag; the
header and the file's path under the data dir are authenticated, so a file swapped
for another, or truncated, does not open. A file without the header is plain (the
store is not encrypted, or it is still being migrated) and reads as-is.
"""

from __future__ import annotations

import contextlib
import os
import struct
from collections.abc import Iterator
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from persona_desktop.errors import PersonaError

MAGIC = b"PDMEDIA1"
_HEADER = len(MAGIC) + 4
_NONCE = 12
MEDIA_DIRS = ("screens", "clips")  # under the data dir: kept crops, kept speech clips


class MediaUnreadableError(PersonaError):
    """A kept crop or clip cannot be opened (no key for it, or it was altered)."""


def is_sealed(data: bytes) -> bool:
    return data[: len(MAGIC)] == MAGIC


class MediaVault:
    """Reads and writes kept media under `data_dir`; seals new files when `seal` is on."""

    def __init__(self, data_dir: Path, keys: dict[int, bytes] | None = None, seal: bool = False) -> None:
        self.data_dir = data_dir
        self._keys = dict(keys or {})
        if seal and not self._keys:
            raise ValueError("sealing needs a media key")
        self.seal = seal

    @property
    def current_key_id(self) -> int:
        return max(self._keys)

    def _aad(self, header: bytes, path: Path) -> bytes:
        try:
            rel = path.resolve().relative_to(self.data_dir.resolve()).as_posix()
        except ValueError:
            rel = path.name
        return header + rel.encode("utf-8")

    def seal_bytes(self, path: Path, data: bytes) -> bytes:
        key_id = self.current_key_id
        header = MAGIC + struct.pack(">I", key_id)
        nonce = os.urandom(_NONCE)
        return header + nonce + AESGCM(self._keys[key_id]).encrypt(nonce, data, self._aad(header, path))

    def open_bytes(self, path: Path, blob: bytes) -> bytes:
        if not is_sealed(blob):
            return blob
        header = blob[:_HEADER]
        (key_id,) = struct.unpack(">I", header[len(MAGIC) :])
        key = self._keys.get(key_id)
        if key is None:
            raise MediaUnreadableError(f"{path.name}: sealed with a key this store does not hold")
        nonce = blob[_HEADER : _HEADER + _NONCE]
        try:
            return AESGCM(key).decrypt(nonce, blob[_HEADER + _NONCE :], self._aad(header, path))
        except InvalidTag:
            raise MediaUnreadableError(f"{path.name}: altered or not written for this place") from None

    def write(self, path: Path, data: bytes, mtime: float | None = None) -> None:
        """Write atomically (temp file, rename), 0600, sealed when the store is encrypted."""
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        payload = self.seal_bytes(path, data) if self.seal else data
        _atomic_write(path, payload, mtime=mtime, sync=False)

    def read(self, path: Path) -> bytes:
        try:
            blob = path.read_bytes()
        except OSError as exc:
            raise MediaUnreadableError(f"{path.name}: {exc.strerror or exc}") from None
        return self.open_bytes(path, blob)

    def convert(self, path: Path) -> bool:
        """Seal a plain file (or open a sealed one, when not sealing); True if it changed.

        The new content is fsync'ed and renamed over the old; the old content is then
        overwritten with zeros before its last name goes (best effort: a copy-on-write
        or flash file system may keep the old blocks)."""
        blob = path.read_bytes()
        if is_sealed(blob) == self.seal:
            return False
        data = self.seal_bytes(path, blob) if self.seal else self.open_bytes(path, blob)
        stat = path.stat()
        replace_and_scrub(path, data, mtime=stat.st_mtime)
        return True


def media_files(data_dir: Path) -> Iterator[Path]:
    for name in MEDIA_DIRS:
        root = data_dir / name
        if root.is_dir():
            for path in sorted(root.rglob("*")):
                if path.is_file() and not path.is_symlink() and not path.name.startswith("."):
                    yield path


def scrub_leftovers(data_dir: Path) -> int:
    """Remove what a write or a conversion cut short (a kill, a power cut) left beside the
    kept media, under names that listings, retention and the budget skip: `.NAME.tmp` (new
    content never renamed) and `.NAME.old` (the old content, not yet zeroed: a plain crop
    when sealing was cut short). A `.NAME.old` that still is NAME itself (cut short before
    the replacement) only loses its second name. Returns how many went."""
    removed = 0
    for folder in MEDIA_DIRS:
        root = data_dir / folder
        if not root.is_dir():
            continue
        for path in sorted(root.rglob(".*")):
            if path.is_symlink() or not path.is_file() or not path.name.endswith((".tmp", ".old")):
                continue
            original = path.with_name(path.name[1:-4])
            with contextlib.suppress(FileNotFoundError):
                if original.exists() and os.path.samefile(original, path):
                    path.unlink()
                else:
                    scrub(path)
                removed += 1
    return removed


def _atomic_write(path: Path, payload: bytes, *, mtime: float | None, sync: bool) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_CREAT | os.O_TRUNC | os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            if sync:
                fh.flush()
                os.fsync(fh.fileno())
        if mtime is not None:
            os.utime(tmp, (mtime, mtime))
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def replace_and_scrub(path: Path, payload: bytes, *, mtime: float | None) -> None:
    """Replace `path`'s content atomically, then zero the old content before it is freed."""
    old = path.with_name(f".{path.name}.old")
    old.unlink(missing_ok=True)
    os.link(path, old)
    try:
        _atomic_write(path, payload, mtime=mtime, sync=True)
    except BaseException:
        old.unlink(missing_ok=True)
        raise
    scrub(old)


def scrub(path: Path) -> None:
    """Overwrite a file with zeros, fsync, unlink (best effort on flash and CoW file systems)."""
    with contextlib.suppress(FileNotFoundError):
        size = path.stat().st_size
        with open(path, "r+b") as fh:
            chunk = b"\0" * 65536
            left = size
            while left > 0:
                n = min(left, len(chunk))
                fh.write(chunk[:n])
                left -= n
            fh.flush()
            os.fsync(fh.fileno())
        path.unlink()
