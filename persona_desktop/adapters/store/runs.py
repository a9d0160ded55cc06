"""Repositories that keep the sleep cycle safe: runs, leases, the journal."""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
import sqlcipher3.dbapi2 as sqlcipher

from persona_desktop.adapters.store.journal_chain import GENESIS, TRIGGERS, entry_hash, same_sql
from persona_desktop.adapters.store.tables import (
    extracted_documents,
    inserted_id,
    key_values,
    leases,
    revisions,
    sleep_runs,
    utc_text,
)
from persona_desktop.domain.model import Revision, RunStatus, SleepRun
from persona_desktop.domain.text_clean import clean_text, clean_value
from persona_desktop.ports import JournalCheck

_b = sa.bindparam
# Statements the sleep cycle runs per document or per write, built once (see memory.py).
_DOCUMENT = sa.select(extracted_documents).where(extracted_documents.c.digest == _b("digest"))
_DOCUMENT_OK = sa.select(extracted_documents.c.ok).where(extracted_documents.c.digest == _b("digest"))
_RENEW = leases.update().where(leases.c.name == _b("lease"), leases.c.holder == _b("me"))
_HOLDER = sa.select(leases.c.holder).where(leases.c.name == _b("lease"))
_KV_GET = sa.select(key_values.c.value).where(key_values.c.key == _b("k"))
_KV_UPDATE = key_values.update().where(key_values.c.key == _b("k"))


def _run(row: Any) -> SleepRun:
    return SleepRun(
        id=row.id,
        idempotency_key=row.idempotency_key,
        status=RunStatus(row.status),
        holder=row.holder,
        started_at=row.started_at,
        finished_at=row.finished_at,
        counters=row.counters,
        error=row.error,
    )


class SqlRuns:
    def __init__(self, conn: sa.Connection) -> None:
        self._conn = conn

    def create(self, key: str, holder: str, at: datetime) -> int:
        result = self._conn.execute(
            sleep_runs.insert().values(
                idempotency_key=key, status=RunStatus.RUNNING.value, holder=holder, started_at=at, counters={}
            )
        )
        return inserted_id(result)

    def get(self, run_id: int) -> SleepRun | None:
        row = self._conn.execute(sa.select(sleep_runs).where(sleep_runs.c.id == run_id)).first()
        return _run(row) if row else None

    def latest(self) -> SleepRun | None:
        row = self._conn.execute(sa.select(sleep_runs).order_by(sleep_runs.c.id.desc()).limit(1)).first()
        return _run(row) if row else None

    def finish(
        self, run_id: int, status: RunStatus, at: datetime, counters: dict[str, Any], error: str | None
    ) -> None:
        self._conn.execute(
            sleep_runs.update()
            .where(sleep_runs.c.id == run_id)
            .values(status=status.value, finished_at=at, counters=counters, error=error)
        )

    def set_holder(self, run_id: int, holder: str) -> None:
        self._conn.execute(sleep_runs.update().where(sleep_runs.c.id == run_id).values(holder=holder))

    def running(self) -> list[SleepRun]:
        q = (
            sa.select(sleep_runs)
            .where(sleep_runs.c.status == RunStatus.RUNNING.value)
            .order_by(sleep_runs.c.id)
        )
        return [_run(r) for r in self._conn.execute(q)]

    def by_key_prefix(self, prefix: str) -> list[SleepRun]:
        q = (
            sa.select(sleep_runs)
            .where(
                sa.or_(
                    sleep_runs.c.idempotency_key == prefix,
                    sleep_runs.c.idempotency_key.startswith(prefix + "#"),
                )
            )
            .order_by(sleep_runs.c.id)
        )
        return [_run(r) for r in self._conn.execute(q)]

    def record_document(self, digest: str, run_id: int, ok: bool, at: datetime) -> int:
        row = self._conn.execute(_DOCUMENT, {"digest": digest}).first()
        failures = (row.failures if row else 0) + (0 if ok else 1)
        if row is None:
            self._conn.execute(
                extracted_documents.insert().values(
                    digest=digest, run_id=run_id, ok=ok, failures=failures, at=at
                )
            )
        else:
            self._conn.execute(
                extracted_documents.update()
                .where(extracted_documents.c.digest == digest)
                .values(run_id=run_id, ok=ok, failures=failures, at=at)
            )
        return int(failures)

    def document_done(self, digest: str) -> bool:
        return bool(self._conn.execute(_DOCUMENT_OK, {"digest": digest}).scalar())


def holder_is_dead(holder: str) -> bool:
    """True when the holder is a process on this host that no longer runs (or is a zombie)."""
    host, _, rest = holder.partition(":")
    pid_text = rest.partition(":")[0]
    if host != socket.gethostname() or not pid_text.isdigit():
        return False
    pid = int(pid_text)
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return False


class SqlLeases:
    def __init__(self, conn: sa.Connection) -> None:
        self._conn = conn

    def acquire(self, name: str, holder: str, now: datetime, ttl_s: float) -> str | None:
        row = self._conn.execute(sa.select(leases).where(leases.c.name == name)).first()
        expires = now + timedelta(seconds=ttl_s)
        if row is None:
            self._conn.execute(leases.insert().values(name=name, holder=holder, expires_at=expires))
            return None
        if row.holder == holder or row.expires_at <= now or holder_is_dead(row.holder):
            self._conn.execute(
                leases.update().where(leases.c.name == name).values(holder=holder, expires_at=expires)
            )
            return None
        return str(row.holder)

    def renew(self, name: str, holder: str, now: datetime, ttl_s: float) -> bool:
        expires = now + timedelta(seconds=ttl_s)
        return self._conn.execute(_RENEW, {"lease": name, "me": holder, "expires_at": expires}).rowcount == 1

    def holder(self, name: str) -> str | None:
        value = self._conn.execute(_HOLDER, {"lease": name}).scalar()
        return None if value is None else str(value)

    def release(self, name: str, holder: str) -> None:
        self._conn.execute(leases.delete().where(leases.c.name == name, leases.c.holder == holder))


class SqlKeyValues:
    def __init__(self, conn: sa.Connection) -> None:
        self._conn = conn

    def get(self, key: str) -> str | None:
        value = self._conn.execute(_KV_GET, {"k": key}).scalar()
        return None if value is None else str(value)

    def set(self, key: str, value: str) -> None:
        updated = self._conn.execute(_KV_UPDATE, {"k": key, "value": value})
        if updated.rowcount == 0:
            self._conn.execute(key_values.insert().values(key=key, value=value))


_LAST_ENTRY = "SELECT id, hash FROM revisions ORDER BY id DESC LIMIT 1"
_SEQUENCE = "SELECT coalesce(max(seq), 0) FROM sqlite_sequence WHERE name = 'revisions'"
_INSERT_ENTRY = (
    "INSERT INTO revisions (id, at, actor, action, entity, entity_id, run_id, data, hash) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


class SqlJournal:
    """The revision journal: append-only (triggers) and hash-chained (journal_chain.py)."""

    def __init__(self, conn: sa.Connection) -> None:
        self._conn = conn

    def append(
        self,
        *,
        at: datetime,
        actor: str,
        action: str,
        entity: str,
        entity_id: int | None = None,
        run_id: int | None = None,
        data: dict[str, Any] | None = None,
    ) -> int:
        # Straight to the driver (SQLCipher), inside this unit of work's transaction: the journal is
        # appended to several times per candidate, and a Core insert costs ~10x more.
        raw = self._conn.connection.driver_connection
        assert isinstance(raw, sqlcipher.Connection)
        last = raw.execute(_LAST_ENTRY).fetchone()
        seq = raw.execute(_SEQUENCE).fetchone()[0]
        new_id = max(int(seq), last[0] if last else 0) + 1
        at_text = utc_text(at)
        # The exact text stored is the text hashed: serialized once, here.
        data_text = clean_text(json.dumps(clean_value(data or {}), ensure_ascii=False, default=str))
        actor, action, entity = clean_text(actor), clean_text(action), clean_text(entity)
        fields = (new_id, at_text, actor, action, entity, entity_id, run_id, data_text)
        digest = entry_hash(last[1] if last else GENESIS, fields)
        raw.execute(_INSERT_ENTRY, (*fields, digest))
        return new_id

    def all(self, limit: int | None = None, actions: Sequence[str] | None = None) -> list[Revision]:
        q = sa.select(revisions).order_by(revisions.c.id.desc())
        if actions:
            q = q.where(revisions.c.action.in_(list(actions)))
        if limit is not None:
            q = q.limit(limit)
        rows = list(self._conn.execute(q))
        rows.reverse()
        return [
            Revision(r.id, r.at, r.actor, r.action, r.entity, r.entity_id, r.run_id, r.data) for r in rows
        ]

    def get(self, revision_id: int) -> Revision | None:
        r = self._conn.execute(sa.select(revisions).where(revisions.c.id == revision_id)).first()
        return Revision(r.id, r.at, r.actor, r.action, r.entity, r.entity_id, r.run_id, r.data) if r else None

    def verify(self) -> JournalCheck:
        """Walk the chain; the first entry that was rewritten, deleted or slipped in is named."""
        table = self._conn.exec_driver_sql(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'revisions'"
        ).first()
        if table is None:
            return JournalCheck(False, 0, None, "the journal itself (the table revisions) is missing")
        present = {
            name: sql
            for name, sql in self._conn.exec_driver_sql(
                "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'revisions'"
            )
        }
        for name, expected in TRIGGERS.items():
            if name not in present:
                return JournalCheck(
                    False, 0, None, f"the trigger {name} that keeps the journal append-only is missing"
                )
            if not same_sql(present[name], expected):
                return JournalCheck(
                    False, 0, None, f"the trigger {name} that keeps the journal append-only was changed"
                )
        seq = int(self._conn.exec_driver_sql(_SEQUENCE).scalar_one())
        raw = self._conn.connection.driver_connection
        assert isinstance(raw, sqlcipher.Connection)
        rows = raw.execute(  # the driver's own cursor: a journal can hold millions of entries
            "SELECT id, CAST(at AS BLOB), CAST(actor AS BLOB), CAST(action AS BLOB), CAST(entity AS BLOB), "
            "entity_id, run_id, CAST(data AS BLOB), hash FROM revisions ORDER BY id"
        )
        previous, previous_id, count = GENESIS, 0, 0
        for row in rows:
            entry_id = int(row[0])
            if entry_id != previous_id + 1:
                gone = _span(previous_id + 1, entry_id - 1)
                return JournalCheck(
                    False,
                    count,
                    previous_id + 1,
                    f"journal {gone} deleted (the chain skips from {previous_id} to {entry_id})",
                )
            stored = row[8]
            if not isinstance(stored, str) or entry_hash(previous, tuple(row[:8])) != stored:
                how = (
                    "inserted out of chain (it has no valid hash)"
                    if not _is_hash(stored)
                    else "rewritten or inserted out of chain (its hash does not match)"
                )
                return JournalCheck(False, count, entry_id, f"journal entry {entry_id} was {how}")
            previous, previous_id, count = stored, entry_id, count + 1
        if seq > previous_id:
            gone = _span(previous_id + 1, seq)
            return JournalCheck(
                False, count, previous_id + 1, f"journal {gone} deleted (the journal ends early)"
            )
        return JournalCheck(
            True, count, None, f"journal intact: {count} entries, hash chain and triggers in place"
        )


def _span(first: int, last: int) -> str:
    return f"entry {first} was" if first == last else f"entries {first} to {last} were"


def _is_hash(value: object) -> bool:
    return isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value)
