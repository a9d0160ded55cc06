"""Repositories for what was captured: sources and fragments."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from persona_desktop.adapters.store.deleted_text import FRAGMENT_INDEXES, DeletedText
from persona_desktop.adapters.store.tables import evidence, fragments, inserted_id, sources
from persona_desktop.domain.message_versions import VERSION_MARK
from persona_desktop.domain.model import Author, Fragment, FragmentHead, Kind, NewFragment, SourceInfo, Trust
from persona_desktop.domain.search_fold import index_text

_CHUNK = 500


def row_to_fragment(row: Any) -> Fragment:
    return Fragment(
        id=row.id,
        ref=row.ref,
        kind=Kind(row.kind),
        author=Author(row.author),
        trust=Trust(row.trust),
        text=row.text,
        captured_at=row.captured_at,
        locator=row.locator,
        session=row.session,
        source_id=row.source_id,
        seq=row.seq,
    )


class SqlSources:
    def __init__(self, conn: sa.Connection, now: datetime) -> None:
        self._conn = conn
        self._now = now

    def upsert(self, source: SourceInfo) -> int:
        found = self._conn.execute(sa.select(sources.c.id).where(sources.c.key == source.key)).scalar()
        if found is not None:
            return int(found)
        result = self._conn.execute(
            sources.insert().values(
                key=source.key,
                kind=source.kind.value,
                label=source.label,
                meta=source.meta,
                created_at=self._now,
            )
        )
        return inserted_id(result)

    def find(self, key: str) -> tuple[int, SourceInfo] | None:
        row = self._conn.execute(sa.select(sources).where(sources.c.key == key)).first()
        return None if row is None else (row.id, SourceInfo(row.key, Kind(row.kind), row.label, row.meta))

    def all(self) -> list[tuple[int, SourceInfo, int]]:
        counts = (
            sa.select(fragments.c.source_id, sa.func.count().label("n"))
            .group_by(fragments.c.source_id)
            .subquery()
        )
        q = (
            sa.select(sources, sa.func.coalesce(counts.c.n, 0))
            .outerjoin(counts, counts.c.source_id == sources.c.id)
            .order_by(sources.c.id)
        )
        return [
            (r.id, SourceInfo(r.key, Kind(r.kind), r.label, r.meta), int(r[-1]))
            for r in self._conn.execute(q)
        ]

    def captured_between(self, kind: Kind, start: datetime, end: datetime) -> list[int]:
        q = (
            sa.select(fragments.c.source_id)
            .distinct()
            .where(
                fragments.c.kind == kind.value,
                fragments.c.captured_at >= start,
                fragments.c.captured_at < end,
            )
            .order_by(fragments.c.source_id)
        )
        return [int(i) for i in self._conn.execute(q).scalars()]

    def get(self, source_id: int) -> tuple[SourceInfo, datetime] | None:
        row = self._conn.execute(sa.select(sources).where(sources.c.id == source_id)).first()
        if row is None:
            return None
        return SourceInfo(row.key, Kind(row.kind), row.label, row.meta), row.created_at


class SqlFragments:
    def __init__(self, conn: sa.Connection, now: datetime, deleted: DeletedText) -> None:
        self._conn = conn
        self._now = now
        self._deleted = deleted  # what this unit of work deleted, merged out at its commit

    def add_many(self, source_id: int, items: Sequence[NewFragment]) -> int:
        if not items:
            return 0
        existing: set[str] = set()
        refs = [f.ref for f in items]
        for i in range(0, len(refs), _CHUNK):
            chunk = refs[i : i + _CHUNK]
            existing.update(
                self._conn.execute(sa.select(fragments.c.ref).where(fragments.c.ref.in_(chunk))).scalars()
            )
        rows = []
        seen: set[str] = set()
        for f in items:
            if f.ref in existing or f.ref in seen:
                continue
            seen.add(f.ref)
            rows.append(
                {
                    "ref": f.ref,
                    "source_id": source_id,
                    "kind": f.kind.value,
                    "author": f.author.value,
                    "trust": f.trust.value,
                    "text": f.text,
                    "search_text": index_text(f.text),
                    "captured_at": f.captured_at,
                    "locator": f.locator,
                    "session": f.session,
                    "seq": f.seq,
                    "inserted_at": self._now,
                }
            )
        if rows:
            self._conn.execute(fragments.insert(), rows)
        return len(rows)

    def by_refs(self, refs: Sequence[str]) -> dict[str, Fragment]:
        out: dict[str, Fragment] = {}
        refs = list(refs)
        for i in range(0, len(refs), _CHUNK):
            q = sa.select(fragments).where(fragments.c.ref.in_(refs[i : i + _CHUNK]))
            out.update({r.ref: row_to_fragment(r) for r in self._conn.execute(q)})
        return out

    def newest_versions(self, message_refs: Collection[str]) -> dict[str, int]:
        out: dict[str, int] = {}
        for ref in set(message_refs):  # a message and its versions: one range of the ref index
            first, after = ref + VERSION_MARK, ref + VERSION_MARK[:-1] + ";"  # ';' sorts right after ':'
            q = sa.select(sa.func.max(fragments.c.id)).where(
                sa.or_(fragments.c.ref == ref, sa.and_(fragments.c.ref >= first, fragments.c.ref < after))
            )
            newest = self._conn.execute(q).scalar()
            if newest is not None:
                out[ref] = int(newest)
        return out

    def by_ids(self, ids: Sequence[int]) -> list[Fragment]:
        out: list[Fragment] = []
        ids = list(ids)
        for i in range(0, len(ids), _CHUNK):
            q = sa.select(fragments).where(fragments.c.id.in_(ids[i : i + _CHUNK]))
            out.extend(row_to_fragment(r) for r in self._conn.execute(q))
        return sorted(out, key=lambda f: f.id)

    def _heads(self) -> sa.Select[Any]:
        c = fragments.c
        return sa.select(c.id, c.ref, c.source_id, c.session, c.captured_at, c.seq, sa.func.length(c.text))

    def unread_page(self, before: tuple[datetime, int] | None, limit: int) -> list[FragmentHead]:
        c = fragments.c
        q = self._heads().where(c.read_run_id.is_(None))
        if before is not None:
            at = sa.literal(before[0], c.captured_at.type)
            q = q.where(sa.tuple_(c.captured_at, c.id) < sa.tuple_(at, sa.literal(before[1])))
        q = q.order_by(c.captured_at.desc(), c.id.desc()).limit(limit)
        return [FragmentHead(*row) for row in self._conn.execute(q)]

    def unread_in_group(
        self, source_id: int, session: str, start: datetime, end: datetime | None
    ) -> list[FragmentHead]:
        c = fragments.c
        q = self._heads().where(
            c.read_run_id.is_(None), c.source_id == source_id, c.session == session, c.captured_at >= start
        )
        if end is not None:
            q = q.where(c.captured_at < end)
        return [FragmentHead(*row) for row in self._conn.execute(q.order_by(c.captured_at, c.id))]

    def max_id(self) -> int:
        return int(
            self._conn.execute(sa.select(sa.func.coalesce(sa.func.max(fragments.c.id), 0))).scalar_one()
        )

    def mark_read(self, ids: Sequence[int], run_id: int) -> int:
        marked = 0
        ids = list(ids)
        for i in range(0, len(ids), _CHUNK):
            marked += self._conn.execute(
                fragments.update()
                .where(fragments.c.id.in_(ids[i : i + _CHUNK]), fragments.c.read_run_id.is_(None))
                .values(read_run_id=run_id)
            ).rowcount
        return marked

    def unread_counts(self, older_than: datetime) -> tuple[int, int]:
        c = fragments.c
        at = sa.literal(older_than, c.captured_at.type)
        q = sa.select(
            sa.func.count().filter(c.captured_at >= at), sa.func.count().filter(c.captured_at < at)
        ).where(c.read_run_id.is_(None))
        recent, history = self._conn.execute(q).one()
        return int(recent), int(history)

    def all(self, kind: Kind | None = None, limit: int | None = None) -> list[Fragment]:
        q = sa.select(fragments).order_by(fragments.c.captured_at, fragments.c.id)
        if kind is not None:
            q = q.where(fragments.c.kind == kind.value)
        if limit is not None:
            q = q.limit(limit)
        return [row_to_fragment(r) for r in self._conn.execute(q)]

    def around(self, fragment: Fragment, before: int, after: int) -> list[Fragment]:
        same = sa.and_(fragments.c.source_id == fragment.source_id, fragments.c.session == fragment.session)
        order_key = sa.tuple_(fragments.c.captured_at, fragments.c.seq, fragments.c.id)
        pivot = sa.tuple_(
            sa.literal(fragment.captured_at, fragments.c.captured_at.type), fragment.seq, fragment.id
        )
        earlier = self._conn.execute(
            sa.select(fragments)
            .where(same, order_key < pivot)
            .order_by(fragments.c.captured_at.desc(), fragments.c.seq.desc(), fragments.c.id.desc())
            .limit(before)
        ).all()
        later = self._conn.execute(
            sa.select(fragments)
            .where(same, order_key > pivot)
            .order_by(fragments.c.captured_at, fragments.c.seq, fragments.c.id)
            .limit(after)
        ).all()
        return (
            [row_to_fragment(r) for r in reversed(earlier)] + [fragment] + [row_to_fragment(r) for r in later]
        )

    def last_owner_chat_at(self, until: datetime | None = None) -> datetime | None:
        q = sa.select(sa.func.max(fragments.c.captured_at)).where(
            fragments.c.kind == Kind.CHAT.value, fragments.c.author == Author.OWNER.value
        )
        if until is not None:  # a message dated in the future says nothing about the owner's activity
            q = q.where(fragments.c.captured_at <= sa.literal(until, fragments.c.captured_at.type))
        value: datetime | None = self._conn.execute(q).scalar()  # max() keeps the column's type
        return value

    def latest_by_author(self, author: Author) -> list[tuple[int, datetime]]:
        q = (
            sa.select(fragments.c.source_id, sa.func.max(fragments.c.captured_at).label("last"))
            .where(fragments.c.author == author.value)
            .group_by(fragments.c.source_id)
            .order_by(sa.desc("last"), sa.desc(fragments.c.source_id))
        )
        return [(int(source_id), last) for source_id, last in self._conn.execute(q)]

    def of_source(self, source_id: int) -> list[Fragment]:
        q = sa.select(fragments).where(fragments.c.source_id == source_id).order_by(fragments.c.id)
        return [row_to_fragment(r) for r in self._conn.execute(q)]

    def delete_source(self, source_id: int) -> int:
        ids = sa.select(fragments.c.id).where(fragments.c.source_id == source_id).scalar_subquery()
        self._conn.execute(evidence.delete().where(evidence.c.fragment_id.in_(ids)))
        deleted = self._conn.execute(fragments.delete().where(fragments.c.source_id == source_id)).rowcount
        self._conn.execute(sources.delete().where(sources.c.id == source_id))
        if deleted:
            self._deleted.note(FRAGMENT_INDEXES)
        return int(deleted)

    def purge_before(self, kind: Kind, before: datetime) -> tuple[int, int]:
        old = sa.select(fragments.c.id).where(
            fragments.c.kind == kind.value, fragments.c.captured_at < before
        )
        cited = cited_fragment_ids()
        doomed = old.where(fragments.c.id.not_in(cited))
        kept = self._conn.execute(
            sa.select(sa.func.count()).select_from(old.where(fragments.c.id.in_(cited)).subquery())
        ).scalar_one()
        self._conn.execute(evidence.delete().where(evidence.c.fragment_id.in_(doomed)))
        deleted = self._conn.execute(fragments.delete().where(fragments.c.id.in_(doomed))).rowcount
        has_fragments = sa.exists().where(fragments.c.source_id == sources.c.id)
        self._conn.execute(sources.delete().where(sources.c.kind == kind.value, ~has_fragments))
        if deleted:
            self._deleted.note(FRAGMENT_INDEXES)
        return int(deleted), int(kept)


def cited_fragment_ids() -> sa.Select[tuple[int]]:
    """Fragments that back a fact (applied, superseded or reverted: its provenance must stay
    whole) or a candidate still waiting for review: retention and the budget keep them."""
    from persona_desktop.adapters.store.tables import candidates, facts

    return (
        sa.select(evidence.c.fragment_id)
        .join(candidates, candidates.c.id == evidence.c.candidate_id)
        .where(
            sa.or_(
                candidates.c.status == "pending",
                candidates.c.id.in_(sa.select(facts.c.candidate_id).where(facts.c.candidate_id.is_not(None))),
            )
        )
    )
