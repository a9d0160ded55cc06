"""Forgotten text leaves the disk, not only the search results.

A deleted row's bytes stay in SQLite's free space, and FTS5 records a deletion as a
tombstone that repeats every deleted word. These tests store a word no other text holds,
forget it the ways the owner can (a source, a day, retention, deleting all captures, an
undone fact), and then read what an attacker with the disk would read: the database file
and its WAL byte for byte, and the full-text indexes' own segment tables. Both kinds of store: the default encrypted
one is read with its key (someone who later learns the passphrase, or reaches the keyring,
reads its free pages too), the owner's plaintext opt-out as it is.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlcipher3.dbapi2 as sqlcipher

from persona_desktop.adapters.store.cipher import connect
from persona_desktop.adapters.store.database import DB_FILE
from persona_desktop.bootstrap import Runtime
from persona_desktop.domain.model import Author, Kind, Trust
from persona_desktop.services import review
from persona_desktop.services.data_admin import delete_captured_data
from persona_desktop.services.screen_retention import purge_expired_fragments
from persona_desktop.services.search import search
from tests.search_support import add_source, approved_fact, source_id
from tests.store_support import readable_bytes, store_key

SECRET = "zqxjvorb"  # porter leaves it whole; nothing else in these stores starts with "zq"
# FTS5 stores a term after the prefix it shares with the term before it: the tail is always there.
TAIL = SECRET[2:].encode()
FTS_TABLES = [
    ("fragments_fts_data", "block"),
    ("fragments_fts_idx", "term"),
    ("facts_fts_data", "block"),
    ("facts_fts_idx", "term"),
    ("facts_fts_content", "c0 || ' ' || c1"),
]


@pytest.fixture(params=["encrypted", "plaintext"])
def data_dir(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    data = tmp_path / "data"
    if request.param == "plaintext":  # the owner's opt-out
        data.mkdir(mode=0o700)
        (data / "settings.json").write_text(json.dumps({"storage.encrypted": False}) + "\n")
    return data


@pytest.fixture(autouse=True)
def _library_default_keeps_deleted_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    """SQLite's own default is to leave deleted bytes in free space. Debian's build turns
    secure_delete on by default, others (python.org's, SQLCipher's wheels) may not: so
    every connection here, of either library, starts with it off, and only the store's own
    setting counts."""
    for module in (sqlite3.dbapi2, sqlcipher):
        library_connect = module.connect

        def insecure_connect(*args: Any, _connect: Any = library_connect, **kwargs: Any) -> Any:
            conn = _connect(*args, **kwargs)
            conn.execute("PRAGMA secure_delete=OFF")
            return conn

        monkeypatch.setattr(module, "connect", insecure_connect)


def _raw(data_dir: Path) -> sqlcipher.Connection:
    """Any tool that can open the file, with the key when it has one (read-only: it must
    not checkpoint what it reads)."""
    return connect(f"file:{data_dir / DB_FILE}?mode=ro", store_key(data_dir), uri=True)


def _in_files(data_dir: Path) -> list[str]:
    """The files of the store that hold the word's bytes (an encrypted one's pages decrypted)."""
    return [DB_FILE + suffix for suffix in ("", "-wal") if TAIL in readable_bytes(data_dir, suffix)]


def _in_indexes(data_dir: Path) -> list[str]:
    """The full-text index tables (segments, segment index, stored content) that hold the word."""
    raw = _raw(data_dir)
    try:
        return [
            table
            for table, column in FTS_TABLES
            if raw.execute(
                f"SELECT count(*) FROM {table} WHERE instr(CAST({column} AS BLOB), ?)", (TAIL,)
            ).fetchone()[0]
        ]
    finally:
        raw.close()


def _traces(data_dir: Path) -> list[str]:
    return _in_files(data_dir) + _in_indexes(data_dir)


def _found(rt: Runtime) -> bool:
    return bool(search(rt.uow, SECRET))


def _others(rt: Runtime) -> None:
    """Text that stays, so the indexes are not simply empty afterwards."""
    add_source(rt, "chat:kept", Kind.CHAT, ["the quarterly report is due", "quokka photos from the zoo"])


def test_a_forgotten_source_leaves_no_trace_on_disk(runtime: Runtime, data_dir: Path) -> None:
    _others(runtime)
    refs = add_source(runtime, "chat:secret", Kind.CHAT, [f"my locker code word is {SECRET}", "see you"])
    approved_fact(runtime, "The owner has a locker", refs)  # the line is also a fact's evidence
    assert _found(runtime)
    assert _in_files(data_dir) and {"fragments_fts_data", "facts_fts_data"} <= set(_in_indexes(data_dir))

    review.forget_source(runtime.uow, source_id(runtime, "chat:secret"), datetime.now(UTC))

    assert not _found(runtime)
    assert _traces(data_dir) == []
    assert [r.hit.ref for r in search(runtime.uow, "quokka")] == ["chat:kept:1"]  # the rest is intact


def test_a_forgotten_day_of_screen_text_leaves_no_trace_on_disk(runtime: Runtime, data_dir: Path) -> None:
    _others(runtime)
    day = datetime.now().astimezone().replace(hour=12, minute=0, second=0, microsecond=0) - timedelta(days=3)
    text = [f"Password hint: {SECRET}", "Inbox (3)"]
    add_source(runtime, "screen:a", Kind.SCREEN, text, at=day, author=Author.UNKNOWN, trust=Trust.UNTRUSTED)
    assert _found(runtime)

    review.forget_day(runtime.uow, Kind.SCREEN, day.date(), datetime.now(UTC))

    assert not _found(runtime)
    assert _traces(data_dir) == []


def test_retention_leaves_no_trace_on_disk(runtime: Runtime, data_dir: Path) -> None:
    _others(runtime)
    old = datetime.now(UTC) - timedelta(days=60)
    add_source(runtime, "screen:old", Kind.SCREEN, [f"balance {SECRET}"], at=old, author=Author.UNKNOWN)
    assert _found(runtime)

    assert purge_expired_fragments(runtime.uow, Kind.SCREEN, 30, datetime.now(UTC)).deleted == 1

    assert not _found(runtime)
    assert _traces(data_dir) == []


def test_deleting_all_captured_data_leaves_no_trace_on_disk(runtime: Runtime, data_dir: Path) -> None:
    _others(runtime)
    add_source(runtime, "speech:1", Kind.SPEECH, [f"the code word is {SECRET}"], author=Author.UNKNOWN)
    assert _found(runtime)

    delete_captured_data(runtime.uow, datetime.now(UTC))

    assert _traces(data_dir) == []


def test_an_undone_fact_leaves_the_fact_index(runtime: Runtime, data_dir: Path) -> None:
    """Undoing an approval deletes the fact row. (Its candidate and the journal keep the
    statement by design, so only the index is checked here.)"""
    _others(runtime)
    refs = add_source(runtime, "chat:s", Kind.CHAT, ["call me by my nickname"])
    approved_fact(runtime, f"The owner's nickname is {SECRET}", refs)
    assert "facts_fts_data" in _in_indexes(data_dir)

    review.undo(runtime.uow, datetime.now(UTC))

    assert not _found(runtime)
    assert _in_indexes(data_dir) == []


def test_every_connection_of_the_store_zeroes_what_it_deletes(runtime: Runtime) -> None:
    with runtime.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA secure_delete").scalar() == 1
    with runtime.uow.read() as uow:
        assert uow.connection.exec_driver_sql("PRAGMA secure_delete").scalar() == 1


def test_nothing_deleted_costs_no_merge(runtime: Runtime, data_dir: Path) -> None:
    """A unit of work that deleted nothing leaves the index's segments as they were."""
    _others(runtime)
    add_source(runtime, "chat:more", Kind.CHAT, ["one more line"])
    raw = _raw(data_dir)
    try:
        before = raw.execute("SELECT count(*) FROM fragments_fts_data").fetchone()[0]
    finally:
        raw.close()
    purge_expired_fragments(runtime.uow, Kind.SCREEN, 30, datetime.now(UTC))  # nothing is that old
    review.forget_day(runtime.uow, Kind.SCREEN, datetime(2001, 1, 1).date(), datetime.now(UTC))
    raw = _raw(data_dir)
    try:
        assert raw.execute("SELECT count(*) FROM fragments_fts_data").fetchone()[0] == before
    finally:
        raw.close()
