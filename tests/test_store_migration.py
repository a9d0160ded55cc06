"""Migration 0004 on a store written by a previous version, and ids that are never reused.

A store from before encryption is plain: the first start encrypts it as it is (schema
0002 or 0003), then migrates the encrypted copy; a store that is already encrypted
migrates with its key. A kill in the middle of either leaves a store that opens.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from persona_desktop.adapters.store.cipher import SQLITE_HEADER
from persona_desktop.adapters.store.database import (
    DB_FILE,
    SCHEMA_HEAD,
    _alembic_config,
    create_engine,
    open_database,
)
from tests.conftest import Cli, chat_line, write_jsonl
from tests.store_support import kill_when, raw_connect

NOW = datetime.now(UTC)


def _t(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f+00:00")  # the old format, as 0002 wrote it


def _store_at_0002(data_dir: Path) -> Path:
    from alembic import command

    data_dir.mkdir(mode=0o700)
    db = data_dir / DB_FILE
    engine = create_engine(db)
    cfg = _alembic_config()
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0002")
    engine.dispose()
    raw = sqlite3.connect(db, isolation_level=None)
    raw.execute("PRAGMA foreign_keys=ON")
    raw.execute(
        "INSERT INTO sources (id, key, kind, label, meta, created_at) VALUES (1, 'chat:a', 'chat', 'a', '{}', ?)",
        (_t(NOW),),
    )
    rows = [
        # id, captured, inserted: 1-2 read in the period, 3 history the old cursor skipped,
        # 4 history cited by a candidate (so it was read), 5 after the cursor (unread).
        (1, NOW - timedelta(days=1), NOW),
        (2, NOW - timedelta(days=2), NOW),
        (3, NOW - timedelta(days=400), NOW),
        (4, NOW - timedelta(days=300), NOW),
        (5, NOW - timedelta(hours=1), NOW),
    ]
    for fid, captured, inserted in rows:
        raw.execute(
            "INSERT INTO fragments (id, ref, source_id, kind, author, trust, text, captured_at, locator, "
            "session, seq, inserted_at) VALUES (?, ?, 1, 'chat', 'owner', 'trusted', ?, ?, '{}', 's', ?, ?)",
            (fid, f"chat:a:{fid}", f"message {fid}", _t(captured), fid, _t(inserted)),
        )
    raw.execute("INSERT INTO cursors (name, value) VALUES ('sleep', '4')")
    raw.execute(
        "INSERT INTO candidates (id, origin, statement, subject, key, status, signals, payload, created_at) "
        "VALUES (1, 'sleep', 's', 'owner', 's', 'applied', '{}', '{}', ?)",
        (_t(NOW),),
    )
    raw.execute("INSERT INTO evidence (candidate_id, fragment_id) VALUES (1, 4)")
    raw.execute(
        "INSERT INTO facts (id, candidate_id, statement, subject, key, status, valid_from, created_at) "
        "VALUES (1, 1, 's', 'owner', 's', 'applied', '1-01-01T00:00:00.000000+00:00', ?)",
        (_t(NOW),),
    )
    for i in range(1, 4):
        raw.execute(
            "INSERT INTO revisions (at, actor, action, entity, data) VALUES (?, 'sleep', ?, 'run', ?)",
            (_t(NOW), f"old.{i}", json.dumps({"i": i, "score": 0.1 + 0.2, "t": "ü"})),
        )
    raw.close()
    return db


@pytest.mark.parametrize("first_open", ["plain", "encrypting"])
def test_a_previous_store_upgrades_with_its_history_unread_and_its_journal_chained(
    cli: Cli, data_dir: Path, first_open: str
) -> None:
    """plain: migrated to the head as a plain store, then encrypted; encrypting: the app's
    first start encrypts the store at 0002, then migrates the encrypted copy to the head."""
    db = _store_at_0002(data_dir)
    if first_open == "plain":
        open_database(data_dir).dispose()
    verified = cli("journal", "verify")
    assert verified.code == 0, verified.err
    assert "5 entries" in verified.out  # the 3 old ones, then the store's encryption, chained after them
    actions = [e["action"] for e in cli("journal", "--json").json()]
    assert actions == ["old.1", "old.2", "old.3", "store.encrypted", "media.sealed"]
    assert db.read_bytes()[:16] != SQLITE_HEADER, "the store was not encrypted"
    raw = raw_connect(data_dir)  # SQLCipher, with the key
    try:
        marks = dict(raw.execute("SELECT id, read_run_id FROM fragments ORDER BY id"))
        assert marks == {1: 0, 2: 0, 3: None, 4: 0, 5: None}
        assert raw.execute("PRAGMA foreign_key_check").fetchall() == []
        assert raw.execute("SELECT count(*) FROM evidence").fetchone()[0] == 1
        assert dict(raw.execute("SELECT name, seq FROM sqlite_sequence"))["fragments"] == 5
        tables = {r[0] for r in raw.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert "cursors" not in tables
        assert raw.execute("SELECT valid_from FROM facts").fetchone()[0].startswith("0001-01-01T")
        assert raw.execute("SELECT value FROM key_values WHERE key = 'store.id'").fetchone()[0]
    finally:
        raw.close()
    [fact] = cli("facts", "--json").json()
    assert fact["valid_from"].startswith("0001-01-01")
    assert cli("journal", "--json").json()[0]["data"] == {"i": 1, "score": 0.1 + 0.2, "t": "ü"}


def test_a_forgotten_source_ids_are_never_reused_and_the_next_import_is_read(
    cli: Cli, ollama_server: object, tmp_path: Path
) -> None:
    first = [chat_line(str(i), f"first {i}", chat="one") for i in range(3)]
    second = [chat_line(str(i), f"second {i}", chat="two") for i in range(3)]
    assert cli("ingest", "chat", str(write_jsonl(tmp_path / "a.jsonl", first))).code == 0
    assert cli("ingest", "chat", str(write_jsonl(tmp_path / "b.jsonl", second))).code == 0
    ids_before = [f["id"] for f in cli("fragments", "--json").json()]
    sources = cli("sources", "--json").json()
    two = next(s["id"] for s in sources if s["key"] == "chat:two")
    assert cli("forget", "source", str(two)).code == 0
    third = [chat_line(str(i), f"third {i}", chat="three") for i in range(3)]
    assert cli("ingest", "chat", str(write_jsonl(tmp_path / "c.jsonl", third))).code == 0
    after = cli("fragments", "--json").json()
    new_ids = [f["id"] for f in after if f["text"].startswith("third")]
    assert min(new_ids) > max(ids_before), "a deleted fragment id was handed out again"
    new_source = next(s["id"] for s in cli("sources", "--json").json() if s["key"] == "chat:three")
    assert new_source > two


def test_a_store_from_a_newer_version_says_so(cli: Cli, data_dir: Path) -> None:
    assert cli("fragments").code == 0
    raw = raw_connect(data_dir)  # the store is encrypted: SQLCipher with the key
    raw.execute("UPDATE alembic_version SET version_num = '0099'")
    raw.close()
    result = cli("fragments")
    assert result.code == 1
    assert result.err.count("\n") == 1
    assert "was written by a newer version of Persona Desktop" in result.err
    assert "0099" in result.err and "update Persona Desktop" in result.err


@pytest.mark.parametrize(
    "when", ["0001-01-01T00:00:00+00:00", "0001-01-01T00:30:00+05:00", "9999-12-31T23:59:59-05:00"]
)
def test_times_at_the_calendar_edges_are_stored_in_order(data_dir: Path, when: str) -> None:
    from persona_desktop.adapters.store.tables import parse_utc_text, utc_text

    text = utc_text(datetime.fromisoformat(when))
    assert len(text) == 32 and text[4] == "-"
    assert parse_utc_text(text).tzinfo is not None
    assert parse_utc_text("1-01-01T00:00:00.000000+00:00").year == 1  # written by the old format


def test_the_rebuild_keeps_the_search_index_and_its_triggers(
    cli: Cli, data_dir: Path, tmp_path: Path
) -> None:
    _store_at_0002(data_dir)
    open_database(data_dir).dispose()
    raw = raw_connect(data_dir)
    triggers = {
        r[0]
        for r in raw.execute(
            "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'fragments'"
        )
    }
    raw.close()
    assert {"fragments_fts_insert", "fragments_fts_delete", "fragments_fts_update"} <= triggers
    found = {r["ref"] for r in cli("search", "message", "--json").json()}
    assert {"chat:a:1", "chat:a:5"} <= found
    new = write_jsonl(tmp_path / "n.jsonl", [chat_line("9", "a fresh message about lighthouses")])
    assert cli("ingest", "chat", str(new)).code == 0
    assert [r["ref"] for r in cli("search", "lighthouses", "--json").json()] == ["chat:saved:9"]


def test_down_to_0003_and_up_again_keeps_everything(cli: Cli, data_dir: Path) -> None:
    """0003 -> 0004 (and on to the head) on an encrypted store: the rebuild, the read marks
    and the chain, keyed."""
    from persona_desktop.adapters.store.database import downgrade, upgrade
    from persona_desktop.bootstrap import open_runtime

    _store_at_0002(data_dir)
    rt = open_runtime(data_dir)  # encrypts the store, migrates it to the head
    try:
        assert rt.store.encrypted
        downgrade(rt.engine, "0003")
        raw = raw_connect(data_dir)
        try:
            assert raw.execute("SELECT value FROM cursors").fetchone()[0] == "2"  # below the first unread (3)
            assert raw.execute("SELECT version_num FROM alembic_version").fetchone()[0] == "0003"
        finally:
            raw.close()
        upgrade(rt.engine)
    finally:
        rt.close()
    assert (data_dir / DB_FILE).read_bytes()[:16] != SQLITE_HEADER
    assert cli("journal", "verify").code == 0
    assert len(cli("fragments", "--json").json()) == 5
    raw = raw_connect(data_dir)
    try:
        marks = dict(raw.execute("SELECT id, read_run_id FROM fragments ORDER BY id"))
        # Read below the cursor 0003 kept; unread from the first unread one on (re-reading is
        # never new evidence, so the round trip may only read more, never skip).
        assert marks[1] == marks[2] == 0 and marks[3] is None and marks[5] is None
        assert raw.execute("SELECT version_num FROM alembic_version").fetchone()[0] == SCHEMA_HEAD
    finally:
        raw.close()


def test_killed_while_migrating_the_just_encrypted_store_the_next_start_finishes(
    cli: Cli, data_dir: Path
) -> None:
    """SIGKILL after the plain 0002 store was encrypted, during 0003.. on the encrypted copy:
    the migration is one transaction, so the store is whole and encrypted at 0002, and opens."""
    db = _store_at_0002(data_dir)
    raw = sqlite3.connect(db, isolation_level=None)
    raw.execute("BEGIN")
    raw.executemany(
        "INSERT INTO fragments (id, ref, source_id, kind, author, trust, text, captured_at, locator, "
        "session, seq, inserted_at) VALUES (?, ?, 1, 'chat', 'owner', 'trusted', ?, ?, '{}', 's', ?, ?)",
        [(i, f"chat:a:{i}", f"message {i} " + "z" * 200, _t(NOW), i, _t(NOW)) for i in range(10, 20_010)],
    )
    raw.execute("COMMIT")
    raw.close()
    wal = db.with_name(db.name + "-wal")

    def migrating() -> bool:  # encrypted, and the migration's pages pile up in the WAL
        try:
            return db.read_bytes()[:16] != SQLITE_HEADER and wal.stat().st_size > 2_000_000
        except FileNotFoundError:
            return False

    kill_when(data_dir, migrating, "the encrypted store being migrated")
    raw = raw_connect(data_dir)  # encrypted, whole, still at the old schema
    try:
        assert raw.execute("SELECT version_num FROM alembic_version").fetchone()[0] == "0002"
        assert raw.execute("SELECT count(*) FROM fragments").fetchone()[0] == 20_005
        assert raw.execute("PRAGMA quick_check").fetchone()[0] == "ok"
    finally:
        raw.close()
    verified = cli("journal", "verify")  # the next start migrates to the head and chains the journal
    assert verified.code == 0, verified.err
    raw = raw_connect(data_dir)
    try:
        assert raw.execute("SELECT version_num FROM alembic_version").fetchone()[0] == SCHEMA_HEAD
        assert raw.execute("SELECT count(*) FROM fragments WHERE read_run_id IS NULL").fetchone()[0] > 20_000
    finally:
        raw.close()
