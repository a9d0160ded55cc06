"""The store: private files, migrations, and a journal the database keeps append-only."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from persona_desktop.adapters.store.database import DB_FILE, open_database
from persona_desktop.bootstrap import Runtime
from tests.store_support import RawIntegrityError, raw_connect


def test_data_dir_and_database_are_private(runtime: Runtime, data_dir: Path) -> None:
    assert stat.S_IMODE(os.stat(data_dir).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(data_dir / DB_FILE).st_mode) == 0o600


def test_wal_and_foreign_keys_are_on(runtime: Runtime) -> None:
    with runtime.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1


def test_migrations_run_once_and_reach_head(data_dir: Path) -> None:
    engine = open_database(data_dir)
    engine.dispose()
    engine = open_database(data_dir)  # second open: already at head, nothing to do
    with engine.connect() as conn:
        version = conn.exec_driver_sql("SELECT version_num FROM alembic_version").scalar()
        tables = {r[0] for r in conn.exec_driver_sql("SELECT name FROM sqlite_master WHERE type='table'")}
    engine.dispose()
    from alembic.script import ScriptDirectory

    from persona_desktop.adapters.store.database import SCHEMA_HEAD, _alembic_config

    assert version == ScriptDirectory.from_config(_alembic_config()).get_current_head() == SCHEMA_HEAD
    assert {
        "sources",
        "fragments",
        "candidates",
        "evidence",
        "facts",
        "observations",
        "sleep_runs",
        "key_values",
        "revisions",
        "leases",
    } <= tables


def test_journal_rejects_update_and_delete_even_from_raw_sqlite(runtime: Runtime, data_dir: Path) -> None:
    with runtime.uow() as uow:
        uow.journal.append(at=runtime.clock.now(), actor="test", action="probe", entity="none")
        uow.commit()
    assert (data_dir / DB_FILE).read_bytes()[:16] != b"SQLite format 3\x00", "the store is not encrypted"
    raw = raw_connect(data_dir, isolation_level="")  # with the key, as any SQLCipher tool would
    try:
        with pytest.raises(RawIntegrityError, match="append-only"):
            raw.execute("UPDATE revisions SET action = 'rewritten'")
        with pytest.raises(RawIntegrityError, match="append-only"):
            raw.execute("DELETE FROM revisions")
    finally:
        raw.close()
    with runtime.uow.read() as uow:
        assert [r.action for r in uow.journal.all()] == ["probe"]


def test_uncommitted_unit_of_work_rolls_back(runtime: Runtime) -> None:
    with runtime.uow() as uow:
        uow.journal.append(at=runtime.clock.now(), actor="test", action="lost", entity="none")
    with runtime.uow.read() as uow:
        assert uow.journal.all() == []


def test_corrupt_database_gives_a_clear_error(data_dir: Path) -> None:
    from persona_desktop.errors import PersonaError

    data_dir.mkdir(mode=0o700)
    (data_dir / DB_FILE).write_bytes(b"this is not a database" * 100)
    with pytest.raises(PersonaError, match="is not a database Persona Desktop can read"):
        open_database(data_dir)
