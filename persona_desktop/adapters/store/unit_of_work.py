"""The unit of work: one SQLite transaction, committed explicitly, else rolled back."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import sqlalchemy as sa

from persona_desktop.adapters.store.content import SqlFragments, SqlSources
from persona_desktop.adapters.store.memory import SqlCandidates, SqlFacts, SqlObservations
from persona_desktop.adapters.store.runs import SqlCursors, SqlJournal, SqlKeyValues, SqlLeases, SqlRuns
from persona_desktop.adapters.store.search import SqlEmbeddings, SqlSearch
from persona_desktop.adapters.store.skills import SqlSkills


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

    def __enter__(self) -> SqlUnitOfWork:
        conn = self._engine.connect()
        conn.info["begin_sql"] = "BEGIN" if self._read_only else "BEGIN IMMEDIATE"
        self._tx = conn.begin()
        self._conn = conn
        now = self._clock()
        self.sources = SqlSources(conn, now)
        self.fragments = SqlFragments(conn, now)
        self.candidates = SqlCandidates(conn)
        self.facts = SqlFacts(conn, now)
        self.observations = SqlObservations(conn)
        self.runs = SqlRuns(conn)
        self.leases = SqlLeases(conn)
        self.cursors = SqlCursors(conn)
        self.kv = SqlKeyValues(conn)
        self.journal = SqlJournal(conn)
        self.skills = SqlSkills(conn)
        self.search = SqlSearch(conn)
        self.embeddings = SqlEmbeddings(conn, now)
        return self

    def commit(self) -> None:
        assert self._tx is not None, "commit() outside of `with`"
        self._tx.commit()

    def __exit__(self, *exc: object) -> None:
        if self._tx is not None and self._tx.is_active:
            self._tx.rollback()
        if self._conn is not None:
            self._conn.close()
        self._tx = self._conn = None

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
