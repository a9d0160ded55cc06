"""Full-text search over the FTS5 indexes of migrations 0003 and 0005, and the fact embeddings.

Fragment hits are the best BM25 matches among the newest RANK_WINDOW lines that match,
which keeps a search of a million lines fast whatever the words; facts are few and
ranked in full.
Every term of a query goes into FTS5 inside double quotes, so nothing the owner (or
another assistant over MCP) types is ever read as FTS5 syntax. The indexes hold folded
text (`domain/search_fold.py`, migration 0005) and queries are folded the same way; a
hit's highlights are found in its folded text and put back on its words. Ranking first takes
ids and BM25 scores only; the text, its highlights and the source are read for the
few hits kept, never for every match.
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from persona_desktop.adapters.store.tables import fact_embeddings, facts, parse_utc_text, utc_text
from persona_desktop.domain.model import FactStatus, Kind
from persona_desktop.domain.search_fold import fold, original_spans
from persona_desktop.domain.search_query import SearchQuery, Term
from persona_desktop.ports import MARK_END, MARK_START, SearchHit

_APPLIED = FactStatus.APPLIED.value
TOKENIZE = "porter unicode61 remove_diacritics 2"  # as migration 0003 made the indexes
RANK_WINDOW = 2000  # fragment matches ranked per query, newest first (see `SqlSearch.fragments`)


def _quoted(token: str) -> str:
    return '"' + token.replace('"', '""') + '"'


def _term(term: Term) -> str:
    text = _quoted(term.text)
    return text + "*" if term.prefix else text


def fts_expression(query: SearchQuery, any_term: bool = False) -> str:
    """The FTS5 MATCH expression: every term quoted; all terms (AND) or any (OR)."""
    return (" OR " if any_term else " AND ").join(_term(t) for t in query.terms)


def _time(value: Any) -> datetime:
    assert value is not None
    return parse_utc_text(value)


def _marked_original(text: str, marked_folded: str) -> str | None:
    """`text` with the marks that `marked_folded` (its folded form, marked) has, or None."""
    spans = []
    start = length = 0
    for ch in marked_folded:
        if ch == MARK_START:
            start = length
        elif ch == MARK_END:
            spans.append((start, length))
        else:
            length += 1
    found = original_spans(text, spans)
    if found is None:
        return None
    out, at = [], 0
    for a, b in found:
        out += [text[at:a], MARK_START, text[a:b], MARK_END]
        at = b
    return "".join([*out, text[at:]])


def _marked(text: str, marked: str | None) -> str:
    """Hostile text may hold the marker characters themselves: then no highlight at all."""
    if marked is None or MARK_START in text or MARK_END in text:
        return ""
    return marked


class SqlSearch:
    def __init__(self, conn: sa.Connection) -> None:
        self._conn = conn

    def fragments(
        self, query: SearchQuery, kinds: Sequence[Kind] | None, since: datetime | None, limit: int
    ) -> list[SearchHit]:
        if query.empty or limit <= 0:
            return []
        expr = fts_expression(query)
        params: dict[str, Any] = {"q": expr}
        filters = []
        if kinds:
            names = sorted({k.value for k in kinds})
            filters.append("fr.kind IN (" + ", ".join(f":k{i}" for i in range(len(names))) + ")")
            params.update({f"k{i}": n for i, n in enumerate(names)})
        if since is not None:
            filters.append("fr.captured_at >= :since")
            params["since"] = utc_text(since)
        # Ranked among the newest RANK_WINDOW matches: FTS5 walks its doclists in rowid order
        # and stops there, so a word found in 200,000 lines costs what one in 2,000 does.
        join = "JOIN fragments fr ON fr.id = fragments_fts.rowid " if filters else ""
        where = "".join(f" AND {f}" for f in filters)
        sql = (
            "SELECT fragments_fts.rowid, bm25(fragments_fts) FROM fragments_fts "
            f"{join}WHERE fragments_fts MATCH :q{where} ORDER BY fragments_fts.rowid DESC LIMIT :window"
        )
        params["window"] = RANK_WINDOW
        scored = [(int(r[0]), float(r[1])) for r in self._conn.execute(sa.text(sql), params)]
        ranked = sorted(scored, key=lambda p: (p[1], -p[0]))[: int(limit)]
        return self._fragment_hits(expr, ranked)

    def _fragment_hits(self, expr: str, ranked: list[tuple[int, float]]) -> list[SearchHit]:
        if not ranked:
            return []
        ids = [i for i, _ in ranked]
        marks = ", ".join(f":id{n}" for n in range(len(ids)))
        rows = self._conn.execute(
            sa.text(
                "SELECT fr.id, fr.ref, fr.kind, fr.author, fr.trust, fr.text, fr.captured_at, fr.source_id, "
                f"s.label FROM fragments fr JOIN sources s ON s.id = fr.source_id WHERE fr.id IN ({marks})"
            ),
            {f"id{n}": i for n, i in enumerate(ids)},
        )
        by_id = {int(r.id): r for r in rows}
        marked = self._highlights(expr, {fid: str(r.text) for fid, r in by_id.items()})
        hits = []
        for fid, rank in ranked:
            r = by_id.get(fid)
            if r is None:
                continue
            hits.append(
                SearchHit(
                    kind=str(r.kind),
                    text=str(r.text),
                    marked=_marked(str(r.text), marked.get(fid)),
                    captured_at=_time(r.captured_at),
                    score=-rank,
                    ref=str(r.ref),
                    fragment_id=fid,
                    source_id=int(r.source_id),
                    source_label=str(r.label),
                    author=str(r.author),
                    trust=str(r.trust),
                )
            )
        return hits

    def _highlights(self, expr: str, texts: dict[int, str]) -> dict[int, str]:
        """The matched words of a few texts, marked by FTS5 itself in a small scratch index.

        Asking the big index would load each term's whole doclist again; this marks exactly
        what the big index matched (same tokenizer, same folded text, same query) for the
        cost of a few lines. The marks found in the folded text are put on the words of
        the text as it was captured (`_marked_original`).
        """
        if not texts:
            return {}
        self._conn.exec_driver_sql(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.hit_marks USING fts5(text, tokenize='{TOKENIZE}')"
        )
        self._conn.exec_driver_sql("DELETE FROM temp.hit_marks")
        self._conn.execute(
            sa.text("INSERT INTO temp.hit_marks(rowid, text) VALUES (:id, :text)"),
            [{"id": fid, "text": fold(text)} for fid, text in texts.items()],
        )
        rows = self._conn.execute(
            sa.text(
                "SELECT rowid, highlight(hit_marks, 0, :ms, :me) FROM temp.hit_marks WHERE hit_marks MATCH :q"
            ),
            {"q": expr, "ms": MARK_START, "me": MARK_END},
        )
        marked = {int(r[0]): str(r[1]) for r in rows}
        self._conn.exec_driver_sql("DELETE FROM temp.hit_marks")
        out = {fid: _marked_original(texts[fid], m) for fid, m in marked.items() if fid in texts}
        return {fid: m for fid, m in out.items() if m is not None}

    def facts(self, query: SearchQuery, since: datetime | None, limit: int) -> list[SearchHit]:
        if query.empty or limit <= 0:
            return []
        params: dict[str, Any] = {
            "q": "statement : (" + fts_expression(query) + ")",
            "limit": int(limit),
            "applied": _APPLIED,
        }
        since_sql = ""
        if since is not None:
            since_sql = " AND f.valid_from >= :since"
            params["since"] = utc_text(since)
        rows = self._conn.execute(
            sa.text(
                "SELECT f.id, f.statement, f.valid_from, bm25(facts_fts) AS rank "
                "FROM facts_fts JOIN facts f ON f.id = facts_fts.rowid "
                f"WHERE facts_fts MATCH :q AND f.status = :applied{since_sql} "
                "ORDER BY rank LIMIT :limit"
            ),
            params,
        ).all()
        marked = self._highlights(fts_expression(query), {int(r.id): str(r.statement) for r in rows})
        return [
            SearchHit(
                kind="fact",
                text=str(r.statement),
                marked=_marked(str(r.statement), marked.get(int(r.id))),
                captured_at=_time(r.valid_from),
                score=-float(r.rank),
                fact_id=int(r.id),
            )
            for r in rows
        ]

    def rank_facts(self, query: SearchQuery, limit: int) -> list[tuple[int, float]]:
        if query.empty or limit <= 0:
            return []
        rows = self._conn.execute(
            sa.text(
                "SELECT f.id, bm25(facts_fts, 2.0, 1.0) AS rank FROM facts_fts "
                "JOIN facts f ON f.id = facts_fts.rowid "
                "WHERE facts_fts MATCH :q AND f.status = :applied ORDER BY rank LIMIT :limit"
            ),
            {"q": fts_expression(query, any_term=True), "applied": _APPLIED, "limit": int(limit)},
        )
        return [(int(r.id), -float(r.rank)) for r in rows]


def text_hash(model: str, statement: str) -> str:
    return hashlib.sha256(f"{model}\n{statement}".encode()).hexdigest()


def _pack(vector: Sequence[float]) -> bytes:
    return array("f", (float(v) for v in vector)).tobytes()


class SqlEmbeddings:
    def __init__(self, conn: sa.Connection, now: datetime) -> None:
        self._conn = conn
        self._now = now

    def missing(self, model: str, limit: int) -> list[tuple[int, str]]:
        rows = self._conn.execute(
            sa.select(facts.c.id, facts.c.statement, fact_embeddings.c.text_hash)
            .outerjoin(fact_embeddings, fact_embeddings.c.fact_id == facts.c.id)
            .where(facts.c.status == _APPLIED)
            .order_by(facts.c.id.desc())
        )
        out = []
        for fid, statement, stored in rows:
            if stored != text_hash(model, statement):
                out.append((int(fid), str(statement)))
                if len(out) >= limit:
                    break
        return out

    def put(self, fact_id: int, model: str, statement: str, vector: Sequence[float]) -> None:
        values = {
            "model": model,
            "text_hash": text_hash(model, statement),
            "dim": len(vector),
            "vector": _pack(vector),
            "created_at": self._now,
        }
        self._conn.execute(fact_embeddings.delete().where(fact_embeddings.c.fact_id == fact_id))
        self._conn.execute(fact_embeddings.insert().values(fact_id=fact_id, **values))

    def nearest(self, model: str, vector: Sequence[float], limit: int) -> list[tuple[int, float]]:
        import numpy as np

        q = np.asarray(vector, dtype=np.float32)
        rows = self._conn.execute(
            sa.select(fact_embeddings.c.fact_id, fact_embeddings.c.vector)
            .join(facts, facts.c.id == fact_embeddings.c.fact_id)
            .where(
                facts.c.status == _APPLIED,
                fact_embeddings.c.model == model,
                fact_embeddings.c.dim == len(q),
            )
        ).all()
        if not rows or not np.isfinite(q).all():
            return []
        ids = [int(r[0]) for r in rows]
        matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), len(q))
        norms = np.linalg.norm(matrix, axis=1) * (float(np.linalg.norm(q)) or 1.0)
        sims = (matrix @ q) / np.where(norms == 0, 1.0, norms)
        order = np.argsort(-sims)[:limit]
        return [(ids[i], float(sims[i])) for i in order]

    def count(self) -> int:
        return int(self._conn.execute(sa.select(sa.func.count()).select_from(fact_embeddings)).scalar_one())
