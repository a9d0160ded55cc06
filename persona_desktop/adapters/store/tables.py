"""The schema, as SQLAlchemy Core tables. Alembic migrations create and upgrade it."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator

from persona_desktop.domain.dates import as_utc

metadata = sa.MetaData(
    naming_convention={
        "ix": "ix_%(column_0_label)s",
        "uq": "uq_%(table_name)s_%(column_0_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)


class UTCDateTime(TypeDecorator[datetime]):
    """Aware datetimes stored as fixed-width UTC ISO text, so text order is time order.

    ``2026-11-30T10:00:00.000000+00:00``; the year always has four digits (strftime's
    ``%Y`` writes year 1 as ``1``, which sorted after 2026 and could not be read back).
    """

    impl = sa.String(32)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> str | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to the store; use an aware one")
        return utc_text(value)

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return parse_utc_text(value)


def utc_text(value: datetime) -> str:
    return as_utc(value).isoformat(timespec="microseconds")


def parse_utc_text(value: str) -> datetime:
    try:
        return datetime.fromisoformat(value)  # the fixed format above is ISO 8601; this is C-fast
    except ValueError:
        # A year written with fewer than four digits by an older version ("1-01-01T...").
        year, _, rest = str(value).partition("-")
        if not year.isdigit() or not rest:
            raise
        return datetime.fromisoformat(f"{int(year):04d}-{rest}").astimezone(UTC)


# AUTOINCREMENT (sources, fragments, revisions): a deleted row's id is never handed out
# again, so an id the sleep cycle or the journal saw always means the same row.
sources = sa.Table(
    "sources",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("key", sa.String, nullable=False, unique=True),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("label", sa.String, nullable=False),
    sa.Column("meta", sa.JSON, nullable=False),
    sa.Column("created_at", UTCDateTime, nullable=False),
    sqlite_autoincrement=True,
)

fragments = sa.Table(
    "fragments",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("ref", sa.String, nullable=False, unique=True),
    sa.Column("source_id", sa.Integer, sa.ForeignKey("sources.id", ondelete="CASCADE"), nullable=False),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("author", sa.String(16), nullable=False),
    sa.Column("trust", sa.String(16), nullable=False),
    sa.Column("text", sa.Text, nullable=False),
    sa.Column("captured_at", UTCDateTime, nullable=False),
    sa.Column("locator", sa.JSON, nullable=False),
    sa.Column("session", sa.String, nullable=False),
    sa.Column("seq", sa.Integer, nullable=False, server_default="0"),
    sa.Column("inserted_at", UTCDateTime, nullable=False),
    # The run that read it in phase 1 (0: read before this was recorded, or never for the model:
    # a text sent over MCP); NULL: unread.
    sa.Column("read_run_id", sa.Integer),
    # The text as search compares it (domain/search_fold.py) where that differs from `text`;
    # the full-text index reads it (migration 0005).
    sa.Column("search_text", sa.Text),
    sa.Index("ix_fragments_captured_at", "captured_at"),
    sa.Index("ix_fragments_source_seq", "source_id", "seq"),
    sa.Index("ix_fragments_kind_author", "kind", "author", "captured_at"),
    # Partial indexes over what is still unread: as small as the backlog, whatever the store's size.
    sa.Index("ix_fragments_unread", "captured_at", "id", sqlite_where=sa.text("read_run_id IS NULL")),
    sa.Index(
        "ix_fragments_unread_group",
        "source_id",
        "session",
        "captured_at",
        sqlite_where=sa.text("read_run_id IS NULL"),
    ),
    sqlite_autoincrement=True,
)

sleep_runs = sa.Table(
    "sleep_runs",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("idempotency_key", sa.String, nullable=False, unique=True),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("holder", sa.String, nullable=False),
    sa.Column("started_at", UTCDateTime, nullable=False),
    sa.Column("finished_at", UTCDateTime),
    sa.Column("counters", sa.JSON, nullable=False),
    sa.Column("error", sa.Text),
)

leases = sa.Table(
    "leases",
    metadata,
    sa.Column("name", sa.String, primary_key=True),
    sa.Column("holder", sa.String, nullable=False),
    sa.Column("expires_at", UTCDateTime, nullable=False),
)

extracted_documents = sa.Table(
    "extracted_documents",
    metadata,
    sa.Column("digest", sa.String, primary_key=True),
    sa.Column("run_id", sa.Integer, sa.ForeignKey("sleep_runs.id"), nullable=False),
    sa.Column("ok", sa.Boolean, nullable=False),
    sa.Column("failures", sa.Integer, nullable=False, server_default="0"),
    sa.Column("at", UTCDateTime, nullable=False),
)

candidates = sa.Table(
    "candidates",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("run_id", sa.Integer, sa.ForeignKey("sleep_runs.id")),
    sa.Column("origin", sa.String(16), nullable=False),
    sa.Column("statement", sa.Text, nullable=False),
    sa.Column("subject", sa.String(16), nullable=False),
    sa.Column("key", sa.Text, nullable=False),
    sa.Column("category", sa.String),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("score", sa.Float),
    sa.Column("signals", sa.JSON, nullable=False),
    sa.Column("payload", sa.JSON, nullable=False),
    sa.Column("supersedes_fact_id", sa.Integer),  # no FK: facts -> candidates already points the other way
    sa.Column("reason", sa.Text),
    sa.Column("refs_rejected", sa.Integer, nullable=False, server_default="0"),
    sa.Column("scored", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("created_at", UTCDateTime, nullable=False),
    sa.Column("decided_at", UTCDateTime),
    sa.Index("ix_candidates_status", "status"),
    sa.Index("ix_candidates_key", "key", "subject"),
)

evidence = sa.Table(
    "evidence",
    metadata,
    sa.Column(
        "candidate_id", sa.Integer, sa.ForeignKey("candidates.id", ondelete="CASCADE"), primary_key=True
    ),
    sa.Column(
        "fragment_id", sa.Integer, sa.ForeignKey("fragments.id", ondelete="RESTRICT"), primary_key=True
    ),
    sa.Column("run_id", sa.Integer, sa.ForeignKey("sleep_runs.id")),
    sa.Index("ix_evidence_fragment", "fragment_id"),
)

facts = sa.Table(
    "facts",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("candidate_id", sa.Integer, sa.ForeignKey("candidates.id"), unique=True),
    sa.Column("statement", sa.Text, nullable=False),
    sa.Column("subject", sa.String(16), nullable=False),
    sa.Column("key", sa.Text, nullable=False),
    sa.Column("category", sa.String),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("valid_from", UTCDateTime, nullable=False),
    sa.Column("valid_to", UTCDateTime),
    sa.Column("superseded_by", sa.Integer, sa.ForeignKey("facts.id")),
    sa.Column("created_at", UTCDateTime, nullable=False),
    sa.Column("search_statement", sa.Text),  # as `fragments.search_text`, for the statement
    sa.Index("ix_facts_status_key", "status", "key"),
)

observations = sa.Table(
    "observations",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("run_id", sa.Integer, sa.ForeignKey("sleep_runs.id")),
    sa.Column("text", sa.Text, nullable=False),
    sa.Column("themes", sa.JSON, nullable=False),
    sa.Column("created_at", UTCDateTime, nullable=False),
)

revisions = sa.Table(
    "revisions",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("at", UTCDateTime, nullable=False),
    sa.Column("actor", sa.String(16), nullable=False),
    sa.Column("action", sa.String(40), nullable=False),
    sa.Column("entity", sa.String(24), nullable=False),
    sa.Column("entity_id", sa.Integer),
    sa.Column("run_id", sa.Integer),
    sa.Column("data", sa.JSON, nullable=False),
    # sha256 over the previous entry's hash and this entry as stored (journal_chain.py).
    sa.Column("hash", sa.String(64), nullable=False),
    sa.Index("ix_revisions_action", "action"),
    sqlite_autoincrement=True,
)

key_values = sa.Table(
    "key_values",
    metadata,
    sa.Column("key", sa.String, primary_key=True),
    sa.Column("value", sa.Text, nullable=False),
)

# Created by migration 0003 (with the full-text indexes `fragments_fts` and `facts_fts`,
# virtual tables queried in SQL by `adapters/store/search.py`).
fact_embeddings = sa.Table(
    "fact_embeddings",
    metadata,
    sa.Column("fact_id", sa.Integer, sa.ForeignKey("facts.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("model", sa.String, nullable=False),
    sa.Column("text_hash", sa.String(64), nullable=False),
    sa.Column("dim", sa.Integer, nullable=False),
    sa.Column("vector", sa.LargeBinary, nullable=False),
    sa.Column("created_at", UTCDateTime, nullable=False),
)


def inserted_id(result: sa.CursorResult[Any]) -> int:
    """The primary key a single-row INSERT assigned (SQLAlchemy types it as optional)."""
    key = result.inserted_primary_key
    assert key is not None, "not a single-row INSERT"
    return int(key[0])
