"""The data dir's store lock: every open store holds it shared; a change of key holds it alone.

Encrypting, decrypting or re-keying replaces the store's file by a rename. A process
that still had the old file open would go on writing into the replaced inode and
lose it all, so those changes take the lock exclusively and refuse to start while
anyone else (the tray app, another command) has the store open. The lock is an
advisory `flock` on `store.lock`, released by the kernel when a process dies.
"""

from __future__ import annotations

import errno
import logging
import os
import sys
import time
from pathlib import Path

from persona_desktop.errors import PersonaError

LOCK_FILE = "store.lock"

log = logging.getLogger(__name__)

if sys.platform == "win32":  # no flock; a change of key then relies on the app's single instance
    fcntl = None
else:
    import fcntl


class StoreInUseError(PersonaError):
    """Another process has the store open while it must be replaced."""


class StoreLock:
    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / LOCK_FILE
        self._fd: int | None = None
        self.mode = "none"

    def _open(self) -> int | None:
        if fcntl is None:
            return None
        if self._fd is None:
            self._fd = os.open(self.path, os.O_CREAT | os.O_RDWR | getattr(os, "O_NOFOLLOW", 0), 0o600)
        return self._fd

    def _take(self, fd: int, flag: int, wait_s: float) -> bool:
        """Try `flag` until `wait_s` passed; True when held (or when the file system has no locks)."""
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(fd, flag | fcntl.LOCK_NB)
                return True
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    log.info("store lock unavailable (%s); going on without it", exc.strerror)
                    return True
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)

    def shared(self, timeout_s: float = 120.0) -> None:
        """Wait (for a change of key in another process to finish), then hold the lock shared."""
        fd = self._open()
        if fd is None:
            return
        if not self._take(fd, fcntl.LOCK_SH, timeout_s):
            raise StoreInUseError(
                f"the store in {self.path.parent} is being encrypted or re-keyed by another process "
                "for too long; try again when it is done"
            )
        self.mode = "shared"

    def exclusive(self, what: str, wait_s: float = 3.0) -> None:
        """Hold the lock alone (waiting a moment for a command to end), or say who is in the way."""
        fd = self._open()
        if fd is None:
            return
        if self._take(fd, fcntl.LOCK_EX, wait_s):
            self.mode = "exclusive"
            return
        if self.mode == "shared":  # a failed conversion may have dropped the shared lock
            fcntl.flock(fd, fcntl.LOCK_SH)
        raise StoreInUseError(
            f"cannot {what}: the store in {self.path.parent} is open in another Persona Desktop "
            "(the tray app, or a command still running); close it and try again"
        )

    def downgrade(self) -> None:
        fd = self._open()
        if fd is not None and self.mode == "exclusive":
            fcntl.flock(fd, fcntl.LOCK_SH)
            self.mode = "shared"

    def release(self) -> None:
        if self._fd is not None:
            try:
                fcntl.flock(self._fd, fcntl.LOCK_UN)
            finally:
                os.close(self._fd)
                self._fd = None
                self.mode = "none"
