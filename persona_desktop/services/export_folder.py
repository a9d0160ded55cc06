"""A folder the export writes into without ever following a link or clobbering a file.

Every operation goes through a file descriptor of the folder (`dir_fd`), names are
single path components, and nothing is opened without `O_NOFOLLOW`: a symlink planted
at a note's name, at its temp file's name or at `skills/` can only make the export
skip that name, never write or delete through it. New files are written to a temp
file created with `O_EXCL` and then linked into place, which fails if the name was
taken meanwhile (renamed into place where the file system has no hard links).
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from enum import Enum
from pathlib import Path

from persona_desktop.errors import PersonaError

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
MAX_READ = 8 * 1024 * 1024


class Entry(Enum):
    MISSING = "missing"
    FILE = "file"
    OTHER = "other"  # a symlink, a folder, a pipe: never ours to touch


class NotOurs(Exception):
    """A name the export must leave alone (taken by a non-regular file, or raced)."""


class ExportFolder:
    """One folder, opened once; `sub(name)` gives a subfolder that is not a symlink."""

    def __init__(self, fd: int, path: Path) -> None:
        self._fd = fd
        self.path = path

    @classmethod
    def open(cls, path: Path) -> ExportFolder:
        """The configured folder itself may be reached through a link (~/vault -> /data/vault)."""
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
        return cls(os.open(path, os.O_RDONLY | _DIRECTORY), path)

    def close(self) -> None:
        os.close(self._fd)

    def __enter__(self) -> ExportFolder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def sub(self, name: str, create: bool) -> ExportFolder | None:
        """The subfolder `name`, or None when it is missing (and not created) or is not a real folder."""
        if create:
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, 0o700, dir_fd=self._fd)
        try:
            fd = os.open(name, os.O_RDONLY | _DIRECTORY | _NOFOLLOW, dir_fd=self._fd)
        except FileNotFoundError:
            return None
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                return None  # a symlink or a file where the folder should be
            raise
        return ExportFolder(fd, self.path / name)

    def entry(self, name: str) -> Entry:
        try:
            info = os.stat(name, dir_fd=self._fd, follow_symlinks=False)
        except FileNotFoundError:
            return Entry.MISSING
        return Entry.FILE if stat.S_ISREG(info.st_mode) else Entry.OTHER

    def read(self, name: str, limit: int = MAX_READ) -> bytes:
        """A regular file's bytes; NotOurs for anything else (or a file over `limit`)."""
        try:
            fd = os.open(name, os.O_RDONLY | _NOFOLLOW | _NONBLOCK, dir_fd=self._fd)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.EISDIR, errno.ENXIO):
                raise NotOurs(name) from None
            raise
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
                raise NotOurs(name)
            chunks = []
            while chunk := os.read(fd, 1 << 20):
                chunks.append(chunk)
            return b"".join(chunks)
        finally:
            os.close(fd)

    def _temp(self, name: str, data: bytes) -> str:
        for _ in range(8):
            tmp = f".{name}.{secrets.token_hex(6)}.tmp"
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600, dir_fd=self._fd)
            except FileExistsError:
                continue  # someone planted that name (a symlink, say): pick another, never follow it
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
            except BaseException:
                os.close(fd)
                os.unlink(tmp, dir_fd=self._fd)
                raise
            os.close(fd)
            return tmp
        raise PersonaError(f"cannot create a temporary file in {self.path}")

    def create(self, name: str, data: bytes) -> None:
        """Write a new file; NotOurs if `name` exists by the time it is placed."""
        tmp = self._temp(name, data)
        try:
            try:
                os.link(tmp, name, src_dir_fd=self._fd, dst_dir_fd=self._fd, follow_symlinks=False)
            except FileExistsError:
                raise NotOurs(name) from None
            except OSError as exc:
                if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV):
                    raise
                if self.entry(name) is not Entry.MISSING:  # no hard links here: check, then rename
                    raise NotOurs(name) from None
                os.replace(tmp, name, src_dir_fd=self._fd, dst_dir_fd=self._fd)
                return
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp, dir_fd=self._fd)

    def replace(self, name: str, data: bytes) -> None:
        """Swap a file the export wrote (checked by the caller) for new content, atomically.

        A rename replaces the directory entry: had `name` turned into a symlink, the
        link itself is replaced and its target is never written.
        """
        tmp = self._temp(name, data)
        try:
            os.replace(tmp, name, src_dir_fd=self._fd, dst_dir_fd=self._fd)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp, dir_fd=self._fd)
            raise

    def delete(self, name: str) -> None:
        os.unlink(name, dir_fd=self._fd)  # removes a link itself, never what it points to
