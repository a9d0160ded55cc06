"""A raw SQLite connection to a test's store, as a tool outside the app would open it.

The store is encrypted, so `sqlite3` cannot read it: this opens it with `sqlcipher3`
and the key, unwrapped from keyinfo.json with the tests' passphrase.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import sqlcipher3.dbapi2 as sqlcipher
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from persona_desktop.adapters.keys import key_info
from persona_desktop.adapters.store.cipher import apply_key
from persona_desktop.adapters.store.database import DB_FILE
from tests.conftest import TEST_PASSPHRASE

RawError = sqlcipher.Error
RawIntegrityError = sqlcipher.IntegrityError
RawOperationalError = sqlcipher.OperationalError


def store_key(data_dir: Path, passphrase: str = TEST_PASSPHRASE) -> bytes | None:
    info = key_info.load(data_dir)
    if info is None:
        return None
    key = key_info.unlock(info.current, passphrase)
    assert key is not None, "the tests' passphrase does not open this store"
    return key


def raw_connect(
    data_dir: Path, *, timeout: float = 30.0, isolation_level: str | None = None
) -> sqlcipher.Connection:
    conn = sqlcipher.connect(str(data_dir / DB_FILE), timeout=timeout, isolation_level=isolation_level)
    apply_key(conn, store_key(data_dir))
    return conn


# SQLCipher 4's page layout, as the store uses it (its defaults): each 4096-byte page is
# AES-256-CBC, with its IV and HMAC-SHA512 in the last 80 bytes; page 1 starts with the salt.
PAGE_SIZE = 4096
PAGE_RESERVE = 16 + 64
WAL_HEADER = 32
WAL_FRAME_HEADER = 24


def readable_bytes(data_dir: Path, suffix: str = "") -> bytes:
    """What someone holding the key reads in the store file (suffix "") or its WAL ("-wal"):
    every page image decrypted, free pages and stale WAL frames included, end to end. A
    plain store's file as it is."""
    path = data_dir / (DB_FILE + suffix)
    if not path.exists():
        return b""
    raw = path.read_bytes()
    key = store_key(data_dir)
    if key is None:
        return raw

    def page(image: bytes, first: bool) -> bytes:
        iv = image[PAGE_SIZE - PAGE_RESERVE : PAGE_SIZE - PAGE_RESERVE + 16]
        body = image[16 if first else 0 : PAGE_SIZE - PAGE_RESERVE]
        decryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).decryptor()
        return decryptor.update(body) + decryptor.finalize()

    if suffix == "-wal":
        frames = range(WAL_HEADER, len(raw) - WAL_FRAME_HEADER - PAGE_SIZE + 1, WAL_FRAME_HEADER + PAGE_SIZE)
        pages = [
            page(
                raw[at + WAL_FRAME_HEADER : at + WAL_FRAME_HEADER + PAGE_SIZE],
                raw[at : at + 4] == b"\0\0\0\1",
            )
            for at in frames
        ]
    else:
        pages = [page(raw[at : at + PAGE_SIZE], at == 0) for at in range(0, len(raw), PAGE_SIZE)]
        # the database header's page size (plain bytes 16-17) proves the layout and the key
        assert pages[0][:2] == PAGE_SIZE.to_bytes(2, "big"), "not SQLCipher 4's page layout"
    return b"".join(pages)


def read_media(data_dir: Path, path: Path) -> bytes:
    """A kept crop's or clip's plain bytes, opened as the app opens it (decrypted in memory)."""
    from persona_desktop.bootstrap import open_runtime

    rt = open_runtime(data_dir)
    try:
        return rt.media.read(path)
    finally:
        rt.close()


def run_without_passphrase(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The CLI as a script runs it: no passphrase in the environment, no terminal to ask on."""
    env = {k: v for k, v in os.environ.items() if k != "PERSONA_DESKTOP_PASSPHRASE"}
    return subprocess.run(
        [sys.executable, "-m", "persona_desktop", "--data-dir", str(data_dir), *args],
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=120,
        check=False,
    )


def wait_for(check: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.001)


def kill_when(
    data_dir: Path,
    check: Callable[[], bool],
    what: str,
    args: tuple[str, ...] = ("sources", "--json"),
    env: dict[str, str] | None = None,
) -> None:
    """Start the CLI on `data_dir` (it opens the store: migrating, re-keying...), SIGKILL it the
    moment `check` holds; fails when the command ended before that."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "persona_desktop", "--data-dir", str(data_dir), *args],
        env={**os.environ, **(env or {})},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for(lambda: check() or proc.poll() is not None, what)
        ended = proc.poll() is not None
        if not ended:
            os.kill(proc.pid, signal.SIGKILL)
    finally:
        _out, err = proc.communicate(timeout=30)
    assert not ended, f"the command ended before {what}: {err!r}"
    assert proc.returncode == -signal.SIGKILL
