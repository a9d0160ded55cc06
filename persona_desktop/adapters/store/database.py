"""Opening the store: a private data dir, a private SQLite file, WAL, migrations."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

from persona_desktop.errors import PersonaError

DB_FILE = "persona.sqlite3"
_MIGRATIONS = Path(__file__).with_name("migrations")


def ensure_private_dir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(path, 0o700)
    return path


def _ensure_private_file(path: Path) -> None:
    fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o600)
    os.close(fd)
    os.chmod(path, 0o600)


def _on_connect(dbapi_connection: sqlite3.Connection, _record: Any) -> None:
    # Let SQLAlchemy's "begin" event issue BEGIN itself (pysqlite's own
    # transaction handling would defer it and break BEGIN IMMEDIATE).
    dbapi_connection.isolation_level = None
    cur = dbapi_connection.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute("PRAGMA busy_timeout=15000")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.close()


def _on_begin(conn: sa.Connection) -> None:
    conn.exec_driver_sql(conn.info.pop("begin_sql", "BEGIN"))


def _alembic_config() -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(_MIGRATIONS))
    return cfg


def create_engine(db_path: Path) -> sa.Engine:
    engine = sa.create_engine(
        f"sqlite:///{db_path}",
        connect_args={"check_same_thread": False, "timeout": 15},
        pool_size=4,
        max_overflow=4,
    )
    sa.event.listen(engine, "connect", _on_connect)
    sa.event.listen(engine, "begin", _on_begin)
    return engine


def upgrade(engine: sa.Engine) -> None:
    """Bring the schema to the newest revision; cheap when it already is."""
    cfg = _alembic_config()
    head = ScriptDirectory.from_config(cfg).get_current_head()
    with engine.connect() as conn:
        current = MigrationContext.configure(conn).get_current_revision()
    if current == head:
        return
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "head")


def open_database(data_dir: Path) -> sa.Engine:
    """Create the data dir (0700) and database (0600) if needed, migrate, return the engine."""
    try:
        ensure_private_dir(data_dir)
        db_path = data_dir / DB_FILE
        _ensure_private_file(db_path)
    except OSError as exc:
        raise PersonaError(f"cannot create the data dir {data_dir}: {exc.strerror}") from None
    engine = create_engine(db_path)
    try:
        upgrade(engine)
    except sa.exc.DatabaseError as exc:
        engine.dispose()
        raise PersonaError(f"the database {db_path} cannot be opened: {exc.orig}") from None
    return engine
