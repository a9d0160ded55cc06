"""Opening the store: a private data dir, a private SQLite file, WAL, migrations."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from persona_desktop.errors import PersonaError

if TYPE_CHECKING:
    from alembic.config import Config

DB_FILE = "persona.sqlite3"
# The newest migration. Checked against the migration scripts by a test, it lets a store
# that is up to date open without importing Alembic at all (~17 MB less in the tray app).
SCHEMA_HEAD = "0003"
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
    from alembic.config import Config

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
    with engine.connect() as conn:
        has_table = conn.exec_driver_sql(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'alembic_version'"
        ).first()
        current = (
            conn.exec_driver_sql("SELECT version_num FROM alembic_version").scalar() if has_table else None
        )
    if current == SCHEMA_HEAD:
        return
    from alembic import command

    cfg = _alembic_config()
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
