"""Opening the store: a private data dir, a private SQLite file, WAL, migrations.

Every string bound to a statement passes `clean_text` (a lone surrogate would make
SQLite's UTF-8 encoding raise), JSON included; SQLAlchemy never puts parameters in
its error messages (they are the owner's messages). A store that a newer version
migrated, a damaged file, a full disk or a read-only folder each give one line.

The driver is SQLCipher (`cipher.py`) for every store: with a key the file is
encrypted, without one (the owner's explicit opt-out) it is plain SQLite. The key
reaches each pooled connection through `creator`, never through the URL, so it is in
no `repr`, log line or error message of SQLAlchemy's.
"""

from __future__ import annotations

import contextlib
import json
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
import sqlcipher3.dbapi2 as sqlcipher

from persona_desktop.adapters.store.cipher import connect as cipher_connect
from persona_desktop.adapters.store.deleted_text import SECURE_DELETE
from persona_desktop.adapters.store.failures import store_failure
from persona_desktop.domain.text_clean import clean_text, clean_value, has_lone_surrogate
from persona_desktop.errors import PersonaError, StoreCorruptError, StoreError
from persona_desktop.private_files import ensure_private_dir, ensure_private_file

if TYPE_CHECKING:
    from alembic.config import Config

DB_FILE = "persona.sqlite3"
DAMAGED_MARK = "store-damaged"  # written when SQLite reports damage; the store then opens read-only
# The newest migration. Checked against the migration scripts by a test, it lets a store
# that is up to date open without importing Alembic at all (~17 MB less in the tray app).
SCHEMA_HEAD = "0005"
BUSY_TIMEOUT_S = 15.0
_MIGRATIONS = Path(__file__).with_name("migrations")


def _on_connect(dbapi_connection: sqlcipher.Connection, _record: Any) -> None:
    # Let SQLAlchemy's "begin" event issue BEGIN itself (pysqlite's own
    # transaction handling would defer it and break BEGIN IMMEDIATE).
    dbapi_connection.isolation_level = None
    cur = dbapi_connection.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.execute(SECURE_DELETE)  # forgotten text is zeroed, not left in free space (deleted_text.py)
    cur.close()


def _on_connect_read_only(dbapi_connection: sqlcipher.Connection, _record: Any) -> None:
    dbapi_connection.isolation_level = None
    dbapi_connection.execute("PRAGMA query_only=ON")
    dbapi_connection.execute(SECURE_DELETE)


def _on_begin(conn: sa.Connection) -> None:
    conn.exec_driver_sql(conn.info.pop("begin_sql", "BEGIN"))


def _clean_row(row: Any) -> Any:
    if isinstance(row, tuple | list):
        if any(isinstance(v, str) and has_lone_surrogate(v) for v in row):
            return type(row)(clean_text(v) if isinstance(v, str) else v for v in row)
        return row
    if isinstance(row, dict) and any(isinstance(v, str) and has_lone_surrogate(v) for v in row.values()):
        return {k: clean_text(v) if isinstance(v, str) else v for k, v in row.items()}
    return row


def _clean_parameters(
    _conn: Any, _cursor: Any, statement: str, parameters: Any, _context: Any, executemany: bool
) -> tuple[str, Any]:
    """Text normalization at the store boundary: no lone surrogate ever reaches SQLite."""
    if executemany and isinstance(parameters, Sequence):
        return statement, [_clean_row(p) for p in parameters]
    return statement, _clean_row(parameters)


def _json_dumps(value: Any) -> str:
    # Not ASCII-escaped: an escaped lone surrogate ("\\ud800") would survive the store and
    # break whoever prints it later; written raw, `_clean_parameters` replaces it.
    return json.dumps(value, ensure_ascii=False)


def _json_loads(text: str) -> Any:
    value = json.loads(text)
    return clean_value(value) if "\\u" in text else value  # old rows may hold escaped surrogates


def _alembic_config() -> Config:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(_MIGRATIONS))
    return cfg


class _Connector:
    """Makes the pool's connections, keyed; holds the key in memory only.

    Read-only (a damaged store's fallback) opens the file as a `mode=ro` URI, keyed
    like any other connection."""

    def __init__(self, db_path: Path, key: bytes | None, read_only: bool, busy_timeout_s: float) -> None:
        self._db_path = db_path
        self._read_only = read_only
        self._busy_timeout_s = busy_timeout_s
        self.key = key

    def __call__(self) -> sqlcipher.Connection:
        if self._read_only:
            uri = f"{self._db_path.absolute().as_uri()}?mode=ro"
            return cipher_connect(uri, self.key, timeout=self._busy_timeout_s, uri=True)
        return cipher_connect(self._db_path, self.key, timeout=self._busy_timeout_s)

    def __repr__(self) -> str:
        return f"_Connector({self._db_path})"  # never the key


_CONNECTORS: weakref.WeakKeyDictionary[sa.Engine, _Connector] = weakref.WeakKeyDictionary()


def set_engine_key(engine: sa.Engine, key: bytes | None) -> None:
    """After a change of key: drop pooled connections, key the next ones with `key`."""
    engine.dispose()
    _CONNECTORS[engine].key = key


def create_engine(
    db_path: Path, key: bytes | None = None, *, read_only: bool = False, busy_timeout_s: float | None = None
) -> sa.Engine:
    """An engine on the store; `key` None opens a plain (unencrypted) file.

    `busy_timeout_s`: how long a writer waits for another one's lock (default `BUSY_TIMEOUT_S`).
    The URL only names the file for SQLAlchemy's dialect (and `is_read_only`, `db_path_of`):
    connections come from the keyed `creator`."""
    busy_timeout_s = BUSY_TIMEOUT_S if busy_timeout_s is None else busy_timeout_s
    connector = _Connector(db_path, key, read_only, busy_timeout_s)
    url = f"sqlite:///file:{db_path}?mode=ro&uri=true" if read_only else f"sqlite:///{db_path}"
    engine = sa.create_engine(
        url,
        module=sqlcipher,
        creator=connector,
        pool_size=4,
        max_overflow=4,
        # Reuse the connection used last: its page cache is still valid. With SQLCipher a page
        # read again from the file is decrypted and authenticated again (bench_sleep, bench_ui).
        pool_use_lifo=True,
        hide_parameters=True,
        json_serializer=_json_dumps,
        json_deserializer=_json_loads,
    )
    sa.event.listen(engine, "connect", _on_connect_read_only if read_only else _on_connect)
    sa.event.listen(engine, "begin", _on_begin)
    sa.event.listen(engine, "before_cursor_execute", _clean_parameters, retval=True)
    _CONNECTORS[engine] = connector
    return engine


def is_read_only(engine: sa.Engine) -> bool:
    return engine.url.query.get("mode") == "ro"


def db_path_of(engine: sa.Engine) -> Path:
    name = engine.url.database or ""
    return Path(name.removeprefix("file:"))


def _current_revision(engine: sa.Engine) -> str | None:
    with engine.connect() as conn:
        has_table = conn.exec_driver_sql(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'alembic_version'"
        ).first()
        value = (
            conn.exec_driver_sql("SELECT version_num FROM alembic_version").scalar() if has_table else None
        )
    return None if value is None else str(value)


class NewerStoreError(StoreError):
    """The store was migrated by a newer version of Persona Desktop."""


def upgrade(engine: sa.Engine) -> None:
    """Bring the schema to the newest revision; cheap when it already is.

    Migrations run with foreign keys off (on one connection, set before its
    transaction, as SQLite requires): rebuilding a table to add AUTOINCREMENT drops
    the old one, which would otherwise cascade or trip a RESTRICT.
    """
    current = _current_revision(engine)
    if current == SCHEMA_HEAD:
        return
    from alembic import command
    from alembic.script import ScriptDirectory

    cfg = _alembic_config()
    if current is not None:
        known = {rev.revision for rev in ScriptDirectory.from_config(cfg).walk_revisions()}
        if current not in known:
            raise NewerStoreError(
                f"this data dir ({db_path_of(engine).parent}) was written by a newer version of Persona "
                f"Desktop (store schema {current}; this version knows up to {SCHEMA_HEAD}): update "
                "Persona Desktop, or choose another --data-dir"
            )
    _migrate(engine, lambda cfg: command.upgrade(cfg, "head"))


def _migrate(engine: sa.Engine, step: Callable[[Config], None]) -> None:
    """Run alembic on one connection with foreign keys off (set before its transaction)."""
    cfg = _alembic_config()
    with engine.connect() as conn:
        raw = conn.connection.driver_connection
        assert isinstance(raw, sqlcipher.Connection)
        raw.execute("PRAGMA foreign_keys=OFF")
        try:
            with conn.begin():
                cfg.attributes["connection"] = conn
                step(cfg)
        finally:
            raw.execute("PRAGMA foreign_keys=ON")


def downgrade(engine: sa.Engine, revision: str) -> None:
    """Take the schema back to `revision` (development and tests), under the same rules as upgrade."""
    from alembic import command

    _migrate(engine, lambda cfg: command.downgrade(cfg, revision))


def mark_damaged(db_path: Path) -> None:
    """Remember that SQLite found damage: later opens are read-only until a check passes."""
    with contextlib.suppress(OSError):
        (db_path.parent / DAMAGED_MARK).write_text("SQLite reported this store damaged\n", encoding="utf-8")


def _still_damaged(engine: sa.Engine, db_path: Path) -> bool:
    """A full integrity check, only for a store marked damaged (it reads every page; with
    SQLCipher a page whose HMAC fails reads as SQLITE_CORRUPT, so it is found too)."""
    try:
        with engine.connect() as conn:
            verdict = conn.exec_driver_sql("PRAGMA quick_check(1)").scalar()
    except sa.exc.DBAPIError:
        return True
    if verdict == "ok":
        with contextlib.suppress(OSError):
            (db_path.parent / DAMAGED_MARK).unlink()
        return False
    return True


def open_database(data_dir: Path, key: bytes | None = None) -> sa.Engine:
    """Create the data dir (0700) and database (0600) if needed, migrate, return the engine.

    `key` is the store's key (see `open_store`, which also encrypts, decrypts and
    re-keys); None opens a plain store. A damaged store that can still be read is
    opened read-only (`is_read_only`), with its key, so the owner can get their data
    out; anything that writes is refused with the reason.
    """
    ensure_private_dir(data_dir)
    db_path = data_dir / DB_FILE
    ensure_private_file(db_path, "the store")
    engine = create_engine(db_path, key)
    if (data_dir / DAMAGED_MARK).exists() and _still_damaged(engine, db_path):
        engine.dispose()
        fallback = _open_read_only(db_path, key)
        if fallback is not None:
            return fallback
        engine = create_engine(db_path, key)
    try:
        upgrade(engine)
    except sa.exc.DBAPIError as exc:
        engine.dispose()
        failure = store_failure(exc, db_path)
        if failure is None:
            raise PersonaError(f"the store {db_path} cannot be opened: {exc.orig}") from None
        if isinstance(failure, StoreCorruptError) and "malformed" in str(failure):
            mark_damaged(db_path)
            fallback = _open_read_only(db_path, key)
            if fallback is not None:
                return fallback
        raise failure from None
    return engine


def _open_read_only(db_path: Path, key: bytes | None) -> sa.Engine | None:
    engine = create_engine(db_path, key, read_only=True)
    try:
        if _current_revision(engine) == SCHEMA_HEAD:
            return engine
    except sa.exc.DBAPIError:
        pass
    engine.dispose()
    return None
