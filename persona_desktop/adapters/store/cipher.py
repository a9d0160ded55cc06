"""SQLCipher connections: the one driver of the store, encrypted or not.

Every connection is made by `connect`, which sets the key with `PRAGMA key` on the
raw connection before anything reads the file. The key is never part of a URL, a
statement SQLAlchemy sees, or an error message: SQLAlchemy only gets a `creator`
that already holds a keyed connection. The raw key form (`x'<64 hex>'`) skips
SQLCipher's own PBKDF2, so a new pooled connection costs microseconds, not 0.2 s.

`sqlcipher3` bundles SQLCipher 4 (SQLite 3.53, FTS5 enabled, temp store in memory, so
no plaintext spills to /tmp). Without a key it reads and writes plain SQLite files,
which is what the explicit opt-out (`storage.encrypted false`) uses.
"""

from __future__ import annotations

import os
import sqlite3
from enum import Enum
from pathlib import Path

import sqlcipher3.dbapi2 as dbapi

SQLITE_HEADER = b"SQLite format 3\x00"
KEY_BYTES = 32

# What a driver error is, whichever module raised it (the stdlib's in tests and tools).
DriverError: tuple[type[Exception], ...] = (dbapi.Error, sqlite3.Error)
IntegrityError: tuple[type[Exception], ...] = (dbapi.IntegrityError, sqlite3.IntegrityError)


class FileState(Enum):
    MISSING = "missing"  # no file, or an empty one: a new store
    PLAIN = "plain"  # a plain SQLite file
    ENCRYPTED = "encrypted"  # anything else: SQLCipher (or a damaged file; the key decides)


def file_state(path: Path) -> FileState:
    try:
        with open(path, "rb") as fh:
            head = fh.read(len(SQLITE_HEADER))
    except FileNotFoundError:
        return FileState.MISSING
    if not head:
        return FileState.MISSING
    return FileState.PLAIN if head == SQLITE_HEADER else FileState.ENCRYPTED


def key_pragma_value(key: bytes) -> str:
    """The raw-key literal SQLCipher takes in PRAGMA key / ATTACH ... KEY."""
    if len(key) != KEY_BYTES:
        raise ValueError("a store key is 32 bytes")
    return f"\"x'{key.hex()}'\""


def apply_key(conn: dbapi.Connection, key: bytes | None) -> None:
    """Key a fresh connection (or leave it plain); must come before the first read."""
    conn.execute("PRAGMA cipher_log_level = NONE")  # SQLCipher would print HMAC failures on stderr
    if key is not None:
        conn.execute(f"PRAGMA key = {key_pragma_value(key)}")


def connect(
    path: Path | str, key: bytes | None, *, timeout: float = 15.0, uri: bool = False
) -> dbapi.Connection:
    conn = dbapi.connect(str(path), timeout=timeout, check_same_thread=False, isolation_level=None, uri=uri)
    try:
        apply_key(conn, key)
        # SQLCipher never encrypts temp files (temp tables such as search's scratch index of
        # matched lines, big sorts, statement journals): keep them in memory, whatever the build.
        conn.execute("PRAGMA temp_store = MEMORY")
    except BaseException:
        conn.close()
        raise
    return conn


def opens_with(path: Path, key: bytes | None) -> bool:
    """True when `key` reads the store's schema (False: wrong key, or not a database)."""
    conn = connect(path, key, timeout=5.0)
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return True
    except dbapi.DatabaseError as exc:
        if "not a database" in str(exc) or "encrypted" in str(exc):
            return False
        raise
    finally:
        conn.close()


def fsync_path(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def export_copy(src: Path, src_key: bytes | None, dest: Path, dest_key: bytes | None) -> None:
    """Write a complete copy of `src` to `dest` (which must not exist), keyed with `dest_key`.

    `sqlcipher_export` copies the schema (tables, indexes, triggers) and every row; the
    copy gets WAL and incremental auto-vacuum, and is fsync'ed before this returns.
    The caller holds the store's exclusive lock, so no one writes `src` meanwhile.
    """
    fd = os.open(dest, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    os.close(fd)
    conn = connect(src, src_key)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        target_key = key_pragma_value(dest_key) if dest_key else "''"
        conn.execute(f"ATTACH DATABASE ? AS export_target KEY {target_key}", (str(dest),))
        conn.execute("PRAGMA export_target.auto_vacuum = INCREMENTAL")
        conn.execute("SELECT sqlcipher_export('export_target')")
        version = conn.execute("PRAGMA main.user_version").fetchone()[0]
        conn.execute(f"PRAGMA export_target.user_version = {int(version)}")
        conn.execute("DETACH DATABASE export_target")
    finally:
        conn.close()
    out = connect(dest, dest_key)
    try:
        out.execute("PRAGMA journal_mode = WAL")
        out.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        out.close()
    fsync_path(dest)
