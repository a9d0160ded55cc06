"""SQLite's failures as one line the owner can act on, naming the store's path.

SQLAlchemy's own message carries the SQL and (unless hidden) its parameters, i.e.
the owner's messages: it never reaches the owner. Only SQLite's short reason does.
"""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path

import sqlalchemy as sa

from persona_desktop.adapters.store.cipher import DriverError, FileState, file_state
from persona_desktop.errors import (
    StoreBusyError,
    StoreCorruptError,
    StoreError,
    StoreFullError,
)

_MB = 1024 * 1024
SQLITE_FULL = 13  # SQLite's result code, the same in every driver
MIN_FREE = 64 * _MB


def _mb(n: int) -> str:
    return f"{n / _MB:.0f} MB" if n >= _MB else f"{n / 1024:.0f} kB"


def space_needed(db_path: Path) -> int:
    """A generous estimate of what the next writes need: room for the WAL to grow and checkpoint."""
    size = 0
    for suffix in ("", "-wal"):
        with contextlib.suppress(OSError):
            size += (db_path.parent / (db_path.name + suffix)).stat().st_size
    return max(MIN_FREE, size // 10)


def _nearly_full(folder: Path) -> bool:
    try:
        return shutil.disk_usage(folder).free < _MB
    except OSError:
        return False


def disk_full(folder: Path, db_path: Path | None = None) -> StoreFullError:
    try:
        free = _mb(shutil.disk_usage(folder).free)
    except OSError:
        free = "unknown"
    needed = _mb(space_needed(db_path) if db_path is not None else MIN_FREE)
    return StoreFullError(
        f"the disk holding {folder} is full ({free} free): free at least {needed} and run it again; "
        "nothing already stored was lost, and the sleep cycle resumes where it stopped"
    )


def store_failure(exc: BaseException, db_path: Path, read_only: bool = False) -> StoreError | None:
    """The owner's version of a SQLite error, or None when it is not one (a bug)."""
    orig = exc.orig if isinstance(exc, sa.exc.DBAPIError) else exc
    if not isinstance(orig, DriverError):
        return None
    reason = " ".join(str(orig).split()) or type(orig).__name__
    text = reason.lower()
    if "disk is full" in text or getattr(orig, "sqlite_errorcode", None) == SQLITE_FULL:
        return disk_full(db_path.parent, db_path)
    if "locked" in text or "busy" in text:
        return StoreBusyError(
            f"the store {db_path} is busy: another program holds its lock (another Persona Desktop "
            "run, or a sqlite3 shell); wait for it or close it, then try again"
        )
    if "not a database" in text or "file is encrypted" in text:
        return StoreCorruptError(
            f"the store {db_path} is not a database Persona Desktop can read ({reason}): nothing was "
            "changed; restore it from a backup, or move it aside to start an empty store"
        )
    if "malformed" in text:
        if file_state(db_path) is FileState.ENCRYPTED:  # no sqlite3 shell reads it without the key
            return StoreCorruptError(
                f"the store {db_path} is damaged ({reason}): nothing was changed; copy the data dir "
                "somewhere safe; from now on it opens read-only, so `persona-desktop fragments --json` "
                "and `facts --json` get out what can still be read"
            )
        return StoreCorruptError(
            f"the store {db_path} is damaged ({reason}): nothing was changed; copy the data dir "
            f"somewhere safe, then rescue what can be read with `sqlite3 {db_path} .recover`"
        )
    if "readonly" in text or "read-only" in text:
        if read_only:
            return StoreError(
                f"the store {db_path} is damaged and was opened read-only: reading works, changes are "
                "refused; see `persona-desktop fragments` to get your data out"
            )
        return StoreError(
            f"the store {db_path} cannot be written (read-only file or folder): check the permissions "
            f"of {db_path.parent} and the files in it"
        )
    if "unable to open" in text:
        return StoreError(
            f"the store {db_path} cannot be opened: check that {db_path.parent} exists and is yours"
        )
    if "disk i/o error" in text and _nearly_full(db_path.parent):
        return disk_full(db_path.parent, db_path)  # SQLite cannot even grow its -shm file
    if "disk i/o error" in text:
        return StoreError(
            f"the store {db_path} hit a disk I/O error: the disk may be failing or was unplugged; "
            "nothing was changed, try again"
        )
    return None
