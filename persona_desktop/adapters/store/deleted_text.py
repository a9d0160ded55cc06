"""Forgotten text leaves the database file, not only the query results.

SQLite leaves a deleted row's bytes in its page's free space and in freed pages, and
FTS5 records a deletion as a tombstone, in a new index segment, that spells out every
word of the deleted text again; it stays until a merge reaches the oldest segment. So:

- every connection the store opens turns `secure_delete` on (`SECURE_DELETE`, run by
  `database._on_connect`): SQLite overwrites deleted content and freed pages with zeros;
- the adapters that delete indexed text note which index they touched (`DeletedText`),
  and the unit of work merges those indexes into one segment before it commits
  (`merge_out`, FTS5 'optimize': the tombstones and what they delete cancel out). Its
  cost grows with the index (bench_search prints it), so it runs only when something
  was deleted;
- after such a commit, a checkpoint (`checkpoint`) moves the zeroed pages into the
  database file and empties the WAL, which still held the old page images.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

import sqlalchemy as sa

SECURE_DELETE = "PRAGMA secure_delete=ON"
FRAGMENT_INDEXES = ("fragments_fts", "facts_fts")  # a deleted fragment may be a fact's evidence
FACT_INDEXES = ("facts_fts",)
CHECKPOINT_WAIT_MS = 2000  # a reader in the middle of a long query is not waited for longer

log = logging.getLogger(__name__)


class DeletedText:
    """The full-text indexes that a unit of work deleted text from."""

    def __init__(self) -> None:
        self.indexes: set[str] = set()

    def note(self, indexes: Iterable[str]) -> None:
        self.indexes.update(indexes)


def merge_out(conn: sa.Connection, indexes: Iterable[str]) -> None:
    """Merge each index into one segment: the deleted words are then gone from its pages."""
    for name in sorted(indexes):
        conn.exec_driver_sql(f"INSERT INTO {name}({name}) VALUES ('optimize')")


def checkpoint(conn: sa.Connection) -> None:
    """Copy the newest pages into the database file and truncate the WAL (best effort).

    Run outside a write transaction. A reader still on an older snapshot keeps the WAL
    from being emptied; then the next checkpoint (SQLite makes one every 1000 pages)
    overwrites those frames."""
    try:
        waited = int(conn.exec_driver_sql("PRAGMA busy_timeout").scalar() or 0)
        conn.exec_driver_sql(f"PRAGMA busy_timeout = {CHECKPOINT_WAIT_MS}")
        try:
            busy = conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)").first()
        finally:
            conn.exec_driver_sql(f"PRAGMA busy_timeout = {waited}")
        conn.commit()
    except sa.exc.DBAPIError as exc:
        log.info("checkpoint after a deletion did not run: %s", type(exc.orig).__name__)
        conn.rollback()
        return
    if busy is not None and busy[0]:
        log.info("checkpoint after a deletion: a reader kept the WAL; the next checkpoint empties it")
