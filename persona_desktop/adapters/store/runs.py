"""Repositories that keep the sleep cycle safe: runs, leases, cursors, the journal."""

from __future__ import annotations

import os
import socket
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa

from persona_desktop.adapters.store.tables import (
    cursors,
    extracted_documents,
    key_values,
    leases,
    revisions,
    sleep_runs,
)
from persona_desktop.domain.model import Revision, RunStatus, SleepRun


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
        return int(result.inserted_primary_key[0])

    def get(self, run_id: int) -> SleepRun | None:
        row = self._conn.execute(sa.select(sleep_runs).where(sleep_runs.c.id == run_id)).first()
        return _run(row) if row else None

    def by_key(self, key: str) -> SleepRun | None:
        row = self._conn.execute(sa.select(sleep_runs).where(sleep_runs.c.idempotency_key == key)).first()
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
        row = self._conn.execute(
            sa.select(extracted_documents).where(extracted_documents.c.digest == digest)
        ).first()
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
        q = sa.select(extracted_documents.c.ok).where(extracted_documents.c.digest == digest)
        return bool(self._conn.execute(q).scalar())


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
        result = self._conn.execute(
            leases.update()
            .where(leases.c.name == name, leases.c.holder == holder)
            .values(expires_at=now + timedelta(seconds=ttl_s))
        )
        return result.rowcount == 1

    def release(self, name: str, holder: str) -> None:
        self._conn.execute(leases.delete().where(leases.c.name == name, leases.c.holder == holder))


class SqlCursors:
    def __init__(self, conn: sa.Connection) -> None:
        self._conn = conn

    def get(self, name: str) -> int:
        value = self._conn.execute(sa.select(cursors.c.value).where(cursors.c.name == name)).scalar()
        return int(value) if value is not None else 0

    def set(self, name: str, value: int) -> None:
        updated = self._conn.execute(cursors.update().where(cursors.c.name == name).values(value=str(value)))
        if updated.rowcount == 0:
            self._conn.execute(cursors.insert().values(name=name, value=str(value)))


class SqlKeyValues:
    def __init__(self, conn: sa.Connection) -> None:
        self._conn = conn

    def get(self, key: str) -> str | None:
        value = self._conn.execute(sa.select(key_values.c.value).where(key_values.c.key == key)).scalar()
        return None if value is None else str(value)

    def set(self, key: str, value: str) -> None:
        updated = self._conn.execute(key_values.update().where(key_values.c.key == key).values(value=value))
        if updated.rowcount == 0:
            self._conn.execute(key_values.insert().values(key=key, value=value))


class SqlJournal:
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
        result = self._conn.execute(
            revisions.insert().values(
                at=at,
                actor=actor,
                action=action,
                entity=entity,
                entity_id=entity_id,
                run_id=run_id,
                data=data or {},
            )
        )
        return int(result.inserted_primary_key[0])

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
