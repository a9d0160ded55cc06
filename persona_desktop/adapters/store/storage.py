"""How much room the store takes, and which captures could go to free it."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import sqlalchemy as sa

from persona_desktop.adapters.store.content import cited_fragment_ids
from persona_desktop.adapters.store.tables import fragments, sources
from persona_desktop.domain.model import Kind
from persona_desktop.ports import CaptureToFree, StoreSpace

CAPTURE_KINDS = (Kind.SCREEN.value, Kind.SPEECH.value)


def _file_bytes(conn: sa.Connection) -> int:
    name = conn.engine.url.database or ""
    total = 0
    for suffix in ("", "-wal"):
        with contextlib.suppress(OSError):
            total += os.stat(Path(name.removeprefix("file:").split("?")[0] + suffix)).st_size
    return total


# A fragment row's bytes: text, locator, ref, session, and ~64 for ids, times, author, trust.
_ROW_BYTES = (
    sa.func.length(sa.cast(fragments.c.text, sa.LargeBinary))
    + sa.func.length(sa.cast(fragments.c.locator, sa.LargeBinary))
    + sa.func.length(fragments.c.ref)
    + sa.func.length(fragments.c.session)
    + 64
)


class SqlStorage:
    def __init__(self, conn: sa.Connection) -> None:
        self._conn = conn

    def space(self, detailed: bool = False) -> StoreSpace:
        pragma = self._conn.exec_driver_sql
        page_size = int(pragma("PRAGMA page_size").scalar_one())
        pages = int(pragma("PRAGMA page_count").scalar_one())
        free = int(pragma("PRAGMA freelist_count").scalar_one())
        by_kind: dict[Kind, int] = {}
        if detailed:
            size = (
                sa.func.length(sa.cast(fragments.c.text, sa.LargeBinary))
                + sa.func.length(sa.cast(fragments.c.locator, sa.LargeBinary))
                + sa.func.length(fragments.c.ref)
                + sa.func.length(fragments.c.session)
                + 64  # ids, times, author, trust: the fixed part of a row
            )
            rows = self._conn.execute(
                sa.select(fragments.c.kind, sa.func.sum(size)).group_by(fragments.c.kind)
            )
            by_kind = {Kind(kind): int(total or 0) for kind, total in rows if kind in Kind._value2member_map_}
        return StoreSpace((pages - free) * page_size, _file_bytes(self._conn), by_kind)

    def uncited_captures(self, limit: int) -> list[CaptureToFree]:
        """Captures none of whose fragments back a fact (any status) or a waiting candidate."""
        cited_source = sa.select(fragments.c.source_id).where(fragments.c.id.in_(cited_fragment_ids()))
        first = sa.func.min(fragments.c.captured_at)
        q = (
            sa.select(
                sources.c.id, sources.c.kind, first, sa.func.count(fragments.c.id), sa.func.sum(_ROW_BYTES)
            )
            .join(fragments, fragments.c.source_id == sources.c.id)
            .where(sources.c.kind.in_(CAPTURE_KINDS), sources.c.id.not_in(cited_source))
            .group_by(sources.c.id)
            .order_by(first, sources.c.id)
            .limit(limit)
        )
        from persona_desktop.adapters.store.tables import UTCDateTime

        decode = UTCDateTime().process_result_value
        out = []
        for sid, kind, at, n, size in self._conn.execute(q):
            when = decode(at, self._conn.dialect) if isinstance(at, str) else at
            assert when is not None
            out.append(CaptureToFree(int(sid), Kind(kind), when, int(n), int(size or 0)))
        return out

    def reclaim(self) -> None:
        if int(self._conn.exec_driver_sql("PRAGMA auto_vacuum").scalar_one()) == 2:
            self._conn.exec_driver_sql("PRAGMA incremental_vacuum")
