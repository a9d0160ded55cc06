"""Repositories for what memory is made of: candidates, evidence, facts, observations."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from persona_desktop.adapters.store.content import row_to_fragment
from persona_desktop.adapters.store.deleted_text import FACT_INDEXES, DeletedText
from persona_desktop.adapters.store.tables import (
    candidates,
    evidence,
    facts,
    fragments,
    inserted_id,
    observations,
)
from persona_desktop.domain.model import (
    OUTSIDE,
    Candidate,
    CandidateStatus,
    Fact,
    FactStatus,
    Fragment,
    Observation,
    Subject,
)
from persona_desktop.domain.proposals import Proposal, from_payload, to_payload
from persona_desktop.domain.search_fold import index_text

_OPEN = (CandidateStatus.PENDING.value,)
_b = sa.bindparam

# Statements the sleep cycle runs per candidate, built once: building a Core statement
# costs more than running it on SQLite, and these run hundreds of times a night.
_ADD = candidates.insert()
_GET = sa.select(candidates).where(candidates.c.id == _b("id"))
_OPEN_BY_KEY = (
    sa.select(candidates)
    .where(candidates.c.key == _b("key"), candidates.c.subject == _b("subject"))
    .where(candidates.c.status.in_(_OPEN))
    .order_by(candidates.c.id)
    .limit(1)
)
_OPEN_BY_KEY_OUTSIDE = _OPEN_BY_KEY.where(candidates.c.origin == OUTSIDE)
_OPEN_BY_KEY_INSIDE = _OPEN_BY_KEY.where(candidates.c.origin != OUTSIDE)
_UNSCORED = sa.select(candidates).where(candidates.c.scored.is_(False)).order_by(candidates.c.id)
_MARK_UNSCORED = candidates.update().where(candidates.c.id == _b("cid")).values(scored=False)
_REJECTED_REFS = (
    candidates.update()
    .where(candidates.c.id == _b("cid"))
    .values(refs_rejected=candidates.c.refs_rejected + _b("count"))
)
_SET_PAYLOAD = candidates.update().where(candidates.c.id == _b("cid"))
_SET_SCORED = candidates.update().where(candidates.c.id == _b("cid"))
_EVIDENCE_IDS = sa.select(evidence.c.fragment_id).where(evidence.c.candidate_id == _b("cid"))
_ADD_EVIDENCE = evidence.insert()
_EVIDENCE = (
    sa.select(fragments)
    .join(evidence, evidence.c.fragment_id == fragments.c.id)
    .where(evidence.c.candidate_id == _b("cid"))
    .order_by(fragments.c.captured_at, fragments.c.id)
)
_EVIDENCE_RUNS = sa.select(sa.func.count(sa.distinct(evidence.c.run_id))).where(
    evidence.c.candidate_id == _b("cid"), evidence.c.run_id.is_not(None)
)
_REFUSED = sa.union_all(
    sa.select(candidates.c.id).where(
        candidates.c.key == _b("key"), candidates.c.status == CandidateStatus.REJECTED.value
    ),
    sa.select(facts.c.id).where(facts.c.key == _b("key"), facts.c.status == FactStatus.REVERTED.value),
).limit(1)
_COUNT_STATUS = sa.select(sa.func.count()).select_from(candidates).where(candidates.c.status == _b("status"))
_ADD_FACT = facts.insert()
_GET_FACT = sa.select(facts).where(facts.c.id == _b("id"))


def _candidate(row: Any) -> Candidate:
    return Candidate(
        id=row.id,
        statement=row.statement,
        subject=Subject(row.subject),
        key=row.key,
        status=CandidateStatus(row.status),
        category=row.category,
        score=row.score,
        signals=row.signals,
        origin=row.origin,
        run_id=row.run_id,
        supersedes_fact_id=row.supersedes_fact_id,
        reason=row.reason,
        proposal=from_payload(row.payload),
        created_at=row.created_at,
        scored=bool(row.scored),
        refs_rejected=row.refs_rejected,
    )


def _fact(row: Any) -> Fact:
    return Fact(
        id=row.id,
        statement=row.statement,
        subject=Subject(row.subject),
        key=row.key,
        status=FactStatus(row.status),
        category=row.category,
        candidate_id=row.candidate_id,
        valid_from=row.valid_from,
        valid_to=row.valid_to,
        superseded_by=row.superseded_by,
        created_at=row.created_at,
    )


class SqlCandidates:
    def __init__(self, conn: sa.Connection) -> None:
        self._conn = conn

    def add(
        self,
        *,
        statement: str,
        subject: Subject,
        key: str,
        category: str | None,
        origin: str,
        run_id: int | None,
        proposal: Proposal,
        supersedes_fact_id: int | None,
        created_at: datetime,
    ) -> int:
        result = self._conn.execute(
            _ADD,
            {
                "statement": statement,
                "subject": subject.value,
                "key": key,
                "category": category,
                "origin": origin,
                "run_id": run_id,
                "status": CandidateStatus.PENDING.value,
                "signals": {},
                "payload": to_payload(proposal),
                "supersedes_fact_id": supersedes_fact_id,
                "created_at": created_at,
                "scored": False,
            },
        )
        return inserted_id(result)

    def get(self, candidate_id: int) -> Candidate | None:
        row = self._conn.execute(_GET, {"id": candidate_id}).first()
        return _candidate(row) if row else None

    def open_by_key(self, key: str, subject: Subject, *, outside: bool) -> Candidate | None:
        query = _OPEN_BY_KEY_OUTSIDE if outside else _OPEN_BY_KEY_INSIDE
        row = self._conn.execute(query, {"key": key, "subject": subject.value}).first()
        return _candidate(row) if row else None

    def all(self, status: CandidateStatus | None = None) -> list[Candidate]:
        q = sa.select(candidates).order_by(candidates.c.id)
        if status is not None:
            q = q.where(candidates.c.status == status.value)
        return [_candidate(r) for r in self._conn.execute(q)]

    def unscored(self) -> list[Candidate]:
        return [_candidate(r) for r in self._conn.execute(_UNSCORED)]

    def mark_unscored(self, candidate_id: int) -> None:
        self._conn.execute(_MARK_UNSCORED, {"cid": candidate_id})

    def note_rejected_refs(self, candidate_id: int, count: int) -> None:
        self._conn.execute(_REJECTED_REFS, {"cid": candidate_id, "count": count})

    def set_proposal(self, candidate_id: int, proposal: Proposal) -> None:
        self._conn.execute(_SET_PAYLOAD, {"cid": candidate_id, "payload": to_payload(proposal)})

    def set_scored(
        self,
        candidate_id: int,
        *,
        status: CandidateStatus,
        score: float,
        signals: dict[str, float],
        reason: str,
        supersedes_fact_id: int | None,
    ) -> None:
        self._conn.execute(
            _SET_SCORED,
            {
                "cid": candidate_id,
                "status": status.value,
                "score": score,
                "signals": signals,
                "reason": reason,
                "supersedes_fact_id": supersedes_fact_id,
                "scored": True,
            },
        )

    def set_status(
        self, candidate_id: int, status: CandidateStatus, reason: str | None, at: datetime
    ) -> None:
        values: dict[str, Any] = {"status": status.value, "decided_at": at}
        if reason is not None:
            values["reason"] = reason
        self._conn.execute(candidates.update().where(candidates.c.id == candidate_id).values(**values))

    def set_statement(self, candidate_id: int, statement: str, key: str) -> None:
        self._conn.execute(
            candidates.update().where(candidates.c.id == candidate_id).values(statement=statement, key=key)
        )

    def add_evidence(self, candidate_id: int, fragment_ids: Sequence[int], run_id: int | None) -> int:
        if not fragment_ids:
            return 0
        have = set(self._conn.execute(_EVIDENCE_IDS, {"cid": candidate_id}).scalars())
        new = [fid for fid in dict.fromkeys(fragment_ids) if fid not in have]
        if new:
            self._conn.execute(
                _ADD_EVIDENCE,
                [{"candidate_id": candidate_id, "fragment_id": fid, "run_id": run_id} for fid in new],
            )
        return len(new)

    def evidence(self, candidate_id: int) -> list[Fragment]:
        return [row_to_fragment(r) for r in self._conn.execute(_EVIDENCE, {"cid": candidate_id})]

    def evidence_index(self, candidate_ids: Sequence[int]) -> dict[int, list[tuple[str, str]]]:
        out: dict[int, list[tuple[str, str]]] = {cid: [] for cid in candidate_ids}
        ids = list(out)
        for i in range(0, len(ids), 500):
            q = (
                sa.select(evidence.c.candidate_id, fragments.c.ref, fragments.c.session)
                .join(fragments, fragments.c.id == evidence.c.fragment_id)
                .where(evidence.c.candidate_id.in_(ids[i : i + 500]))
                .order_by(fragments.c.captured_at, fragments.c.id)
            )
            for cid, ref, session in self._conn.execute(q):
                out[cid].append((ref, session))
        return out

    def statuses(self, candidate_ids: Sequence[int]) -> dict[int, CandidateStatus]:
        out: dict[int, CandidateStatus] = {}
        ids = list(dict.fromkeys(candidate_ids))
        for i in range(0, len(ids), 500):
            q = sa.select(candidates.c.id, candidates.c.status).where(candidates.c.id.in_(ids[i : i + 500]))
            out.update({cid: CandidateStatus(st) for cid, st in self._conn.execute(q)})
        return out

    def evidence_documents(self, candidate_id: int) -> int:
        """In how many runs this candidate was found again (its consolidation)."""
        return int(self._conn.execute(_EVIDENCE_RUNS, {"cid": candidate_id}).scalar_one())

    def count(self) -> int:
        return int(self._conn.execute(sa.select(sa.func.count()).select_from(candidates)).scalar_one())

    def count_status(self, status: CandidateStatus) -> int:
        return int(self._conn.execute(_COUNT_STATUS, {"status": status.value}).scalar_one())

    def recent_statements(self, since: datetime, limit: int) -> list[str]:
        q = (
            sa.select(candidates.c.statement)
            .where(candidates.c.created_at >= since, candidates.c.status != CandidateStatus.DROPPED.value)
            .where(candidates.c.origin != OUTSIDE)
            .order_by(candidates.c.id.desc())
            .limit(limit)
        )
        return list(reversed(self._conn.execute(q).scalars().all()))

    def was_refused(self, key: str) -> bool:
        return self._conn.execute(_REFUSED, {"key": key}).first() is not None

    def citing_source(self, source_id: int) -> list[Candidate]:
        ids = (
            sa.select(evidence.c.candidate_id)
            .join(fragments, fragments.c.id == evidence.c.fragment_id)
            .where(fragments.c.source_id == source_id)
        )
        q = sa.select(candidates).where(candidates.c.id.in_(ids)).order_by(candidates.c.id)
        return [_candidate(r) for r in self._conn.execute(q)]


class SqlFacts:
    def __init__(self, conn: sa.Connection, now: datetime, deleted: DeletedText) -> None:
        self._conn = conn
        self._now = now
        self._deleted = deleted  # what this unit of work deleted, merged out at its commit

    def add(
        self,
        *,
        statement: str,
        subject: Subject,
        key: str,
        category: str | None,
        candidate_id: int | None,
        valid_from: datetime,
    ) -> int:
        result = self._conn.execute(
            _ADD_FACT,
            {
                "statement": statement,
                "search_statement": index_text(statement),
                "subject": subject.value,
                "key": key,
                "category": category,
                "candidate_id": candidate_id,
                "status": FactStatus.APPLIED.value,
                "valid_from": valid_from,
                "created_at": self._now,
            },
        )
        return inserted_id(result)

    def get(self, fact_id: int) -> Fact | None:
        row = self._conn.execute(_GET_FACT, {"id": fact_id}).first()
        return _fact(row) if row else None

    def by_candidate(self, candidate_id: int) -> Fact | None:
        row = self._conn.execute(sa.select(facts).where(facts.c.candidate_id == candidate_id)).first()
        return _fact(row) if row else None

    def all(self, status: FactStatus | None = None) -> list[Fact]:
        q = sa.select(facts).order_by(facts.c.id)
        if status is not None:
            q = q.where(facts.c.status == status.value)
        return [_fact(r) for r in self._conn.execute(q)]

    def applied_by_key(self, key: str) -> Fact | None:
        row = self._conn.execute(
            sa.select(facts).where(facts.c.key == key, facts.c.status == FactStatus.APPLIED.value).limit(1)
        ).first()
        return _fact(row) if row else None

    def superseded_by(self, fact_id: int) -> list[Fact]:
        q = sa.select(facts).where(facts.c.superseded_by == fact_id).order_by(facts.c.id)
        return [_fact(r) for r in self._conn.execute(q)]

    def delete(self, fact_id: int) -> None:
        self._conn.execute(facts.update().where(facts.c.superseded_by == fact_id).values(superseded_by=None))
        if self._conn.execute(facts.delete().where(facts.c.id == fact_id)).rowcount:
            self._deleted.note(FACT_INDEXES)

    def set_status(
        self,
        fact_id: int,
        status: FactStatus,
        valid_to: datetime | None,
        superseded_by: int | None = None,
    ) -> None:
        self._conn.execute(
            facts.update()
            .where(facts.c.id == fact_id)
            .values(status=status.value, valid_to=valid_to, superseded_by=superseded_by)
        )


class SqlObservations:
    def __init__(self, conn: sa.Connection) -> None:
        self._conn = conn

    def add(self, run_id: int | None, text: str, themes: list[str], at: datetime) -> int:
        result = self._conn.execute(
            observations.insert().values(run_id=run_id, text=text, themes=themes, created_at=at)
        )
        return inserted_id(result)

    def all(self) -> list[Observation]:
        rows = self._conn.execute(sa.select(observations).order_by(observations.c.id.desc()))
        return [Observation(r.id, r.run_id, r.text, list(r.themes), r.created_at) for r in rows]
