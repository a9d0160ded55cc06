"""The unit of work: one SQLite transaction, committed explicitly, else rolled back.

A SQLite failure inside it (disk full, locked, damaged, read-only) leaves as a
`StoreError` that names the store and says what to do; the transaction is rolled
back, so nothing half-written stays.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from types import TracebackType

import sqlalchemy as sa

from persona_desktop.adapters.store.cipher import DriverError
from persona_desktop.adapters.store.content import SqlFragments, SqlSources
from persona_desktop.adapters.store.database import db_path_of, is_read_only, mark_damaged
from persona_desktop.adapters.store.deleted_text import DeletedText, checkpoint, merge_out
from persona_desktop.adapters.store.failures import store_failure
from persona_desktop.adapters.store.memory import SqlCandidates, SqlFacts, SqlObservations
from persona_desktop.adapters.store.runs import SqlJournal, SqlKeyValues, SqlLeases, SqlRuns
from persona_desktop.adapters.store.search import SqlEmbeddings, SqlSearch
from persona_desktop.adapters.store.skills import SqlSkills
from persona_desktop.adapters.store.storage import SqlStorage
from persona_desktop.errors import StoreCorruptError

# What a store failure can arrive as: wrapped by SQLAlchemy, or straight from the driver
# (the journal appends through the driver's own connection).
_FAILURES: tuple[type[BaseException], ...] = (sa.exc.DBAPIError, *DriverError)


class SqlUnitOfWork:
    """A write transaction (BEGIN IMMEDIATE, so two writers queue instead of deadlocking).

    `read_only=True` takes a deferred transaction for readers.
    """

    def __init__(self, engine: sa.Engine, clock: Callable[[], datetime], read_only: bool = False) -> None:
        self._engine = engine
        self._clock = clock
        self._read_only = read_only
        self._conn: sa.Connection | None = None
        self._tx: sa.RootTransaction | None = None

    def _translated(self, exc: BaseException) -> BaseException:
        if not isinstance(exc, _FAILURES):
            return exc
        db_path = db_path_of(self._engine)
        failure = store_failure(exc, db_path, is_read_only(self._engine))
        if isinstance(failure, StoreCorruptError):
            mark_damaged(db_path)
        return exc if failure is None else failure

    def __enter__(self) -> SqlUnitOfWork:
        try:
            conn = self._engine.connect()
        except _FAILURES as exc:
            raise self._translated(exc) from exc
        conn.info["begin_sql"] = "BEGIN" if self._read_only else "BEGIN IMMEDIATE"
        try:
            self._tx = conn.begin()
        except _FAILURES as exc:
            conn.close()
            raise self._translated(exc) from exc
        self._conn = conn
        now = self._clock()
        self._deleted = DeletedText()
        self.sources = SqlSources(conn, now)
        self.fragments = SqlFragments(conn, now, self._deleted)
        self.candidates = SqlCandidates(conn)
        self.facts = SqlFacts(conn, now, self._deleted)
        self.observations = SqlObservations(conn)
        self.runs = SqlRuns(conn)
        self.leases = SqlLeases(conn)
        self.kv = SqlKeyValues(conn)
        self.journal = SqlJournal(conn)
        self.skills = SqlSkills(conn)
        self.search = SqlSearch(conn)
        self.embeddings = SqlEmbeddings(conn, now)
        self.storage = SqlStorage(conn)
        return self

    def commit(self) -> None:
        """Commit; when text was deleted, merge it out of the indexes first, checkpoint after."""
        assert self._tx is not None and self._conn is not None, "commit() outside of `with`"
        deleted = sorted(self._deleted.indexes)
        try:
            if deleted:
                merge_out(self._conn, deleted)
            self._tx.commit()
        except _FAILURES as exc:
            raise self._translated(exc) from exc
        if deleted:
            self._deleted.indexes.clear()
            checkpoint(self._conn)

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        try:
            if self._tx is not None and self._tx.is_active:
                self._tx.rollback()
            if self._conn is not None:
                self._conn.close()
        except _FAILURES:
            if exc is None:
                raise
        finally:
            self._tx = self._conn = None
        if exc is not None:
            translated = self._translated(exc)
            if translated is not exc:
                raise translated from exc

    @property
    def connection(self) -> sa.Connection:
        assert self._conn is not None
        return self._conn


def utc_now() -> datetime:
    return datetime.now(UTC)


class SqlUnitOfWorkFactory:
    def __init__(self, engine: sa.Engine, clock: Callable[[], datetime] = utc_now) -> None:
        self.engine = engine
        self._clock = clock

    def __call__(self) -> SqlUnitOfWork:
        return SqlUnitOfWork(self.engine, self._clock)

    def read(self) -> SqlUnitOfWork:
        return SqlUnitOfWork(self.engine, self._clock, read_only=True)
