"""initial schema

Revision ID: 0001
Revises:
Create Date: 2026-11-29 21:42:52.804200
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "cursors",
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("value", sa.String(), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_cursors")),
    )
    op.create_table(
        "key_values",
        sa.Column("key", sa.String(), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_key_values")),
    )
    op.create_table(
        "leases",
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("holder", sa.String(), nullable=False),
        sa.Column("expires_at", sa.String(length=32), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_leases")),
    )
    op.create_table(
        "revisions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("at", sa.String(length=32), nullable=False),
        sa.Column("actor", sa.String(length=16), nullable=False),
        sa.Column("action", sa.String(length=40), nullable=False),
        sa.Column("entity", sa.String(length=24), nullable=False),
        sa.Column("entity_id", sa.Integer(), nullable=True),
        sa.Column("run_id", sa.Integer(), nullable=True),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_revisions")),
    )
    with op.batch_alter_table("revisions", schema=None) as batch_op:
        batch_op.create_index("ix_revisions_action", ["action"], unique=False)

    op.create_table(
        "sleep_runs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("idempotency_key", sa.String(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("holder", sa.String(), nullable=False),
        sa.Column("started_at", sa.String(length=32), nullable=False),
        sa.Column("finished_at", sa.String(length=32), nullable=True),
        sa.Column("counters", sa.JSON(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sleep_runs")),
        sa.UniqueConstraint("idempotency_key", name=op.f("uq_sleep_runs_idempotency_key")),
    )
    op.create_table(
        "sources",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("key", sa.String(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("label", sa.String(), nullable=False),
        sa.Column("meta", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.String(length=32), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sources")),
        sa.UniqueConstraint("key", name=op.f("uq_sources_key")),
    )
    op.create_table(
        "candidates",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=True),
        sa.Column("origin", sa.String(length=16), nullable=False),
        sa.Column("statement", sa.Text(), nullable=False),
        sa.Column("subject", sa.String(length=16), nullable=False),
        sa.Column("key", sa.Text(), nullable=False),
        sa.Column("category", sa.String(), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("score", sa.Float(), nullable=True),
        sa.Column("signals", sa.JSON(), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("supersedes_fact_id", sa.Integer(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("refs_rejected", sa.Integer(), server_default="0", nullable=False),
        sa.Column("scored", sa.Boolean(), server_default=sa.text("0"), nullable=False),
        sa.Column("created_at", sa.String(length=32), nullable=False),
        sa.Column("decided_at", sa.String(length=32), nullable=True),
        sa.ForeignKeyConstraint(["run_id"], ["sleep_runs.id"], name=op.f("fk_candidates_run_id_sleep_runs")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_candidates")),
    )
    with op.batch_alter_table("candidates", schema=None) as batch_op:
        batch_op.create_index("ix_candidates_key", ["key", "subject"], unique=False)
        batch_op.create_index("ix_candidates_status", ["status"], unique=False)

    op.create_table(
        "extracted_documents",
        sa.Column("digest", sa.String(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("ok", sa.Boolean(), nullable=False),
        sa.Column("failures", sa.Integer(), server_default="0", nullable=False),
        sa.Column("at", sa.String(length=32), nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"], ["sleep_runs.id"], name=op.f("fk_extracted_documents_run_id_sleep_runs")
        ),
        sa.PrimaryKeyConstraint("digest", name=op.f("pk_extracted_documents")),
    )
    op.create_table(
        "fragments",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("ref", sa.String(), nullable=False),
        sa.Column("source_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("author", sa.String(length=16), nullable=False),
        sa.Column("trust", sa.String(length=16), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("captured_at", sa.String(length=32), nullable=False),
        sa.Column("locator", sa.JSON(), nullable=False),
        sa.Column("session", sa.String(), nullable=False),
        sa.Column("seq", sa.Integer(), server_default="0", nullable=False),
        sa.Column("inserted_at", sa.String(length=32), nullable=False),
        sa.ForeignKeyConstraint(
            ["source_id"],
            ["sources.id"],
            name=op.f("fk_fragments_source_id_sources"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_fragments")),
        sa.UniqueConstraint("ref", name=op.f("uq_fragments_ref")),
    )
    with op.batch_alter_table("fragments", schema=None) as batch_op:
        batch_op.create_index("ix_fragments_captured_at", ["captured_at"], unique=False)
        batch_op.create_index("ix_fragments_kind_author", ["kind", "author", "captured_at"], unique=False)
        batch_op.create_index("ix_fragments_source_seq", ["source_id", "seq"], unique=False)

    op.create_table(
        "observations",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=True),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("themes", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.String(length=32), nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"], ["sleep_runs.id"], name=op.f("fk_observations_run_id_sleep_runs")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_observations")),
    )
    op.create_table(
        "evidence",
        sa.Column("candidate_id", sa.Integer(), nullable=False),
        sa.Column("fragment_id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(
            ["candidate_id"],
            ["candidates.id"],
            name=op.f("fk_evidence_candidate_id_candidates"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["fragment_id"],
            ["fragments.id"],
            name=op.f("fk_evidence_fragment_id_fragments"),
            ondelete="RESTRICT",
        ),
        sa.ForeignKeyConstraint(["run_id"], ["sleep_runs.id"], name=op.f("fk_evidence_run_id_sleep_runs")),
        sa.PrimaryKeyConstraint("candidate_id", "fragment_id", name=op.f("pk_evidence")),
    )
    with op.batch_alter_table("evidence", schema=None) as batch_op:
        batch_op.create_index("ix_evidence_fragment", ["fragment_id"], unique=False)

    op.create_table(
        "facts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("candidate_id", sa.Integer(), nullable=True),
        sa.Column("statement", sa.Text(), nullable=False),
        sa.Column("subject", sa.String(length=16), nullable=False),
        sa.Column("key", sa.Text(), nullable=False),
        sa.Column("category", sa.String(), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("valid_from", sa.String(length=32), nullable=False),
        sa.Column("valid_to", sa.String(length=32), nullable=True),
        sa.Column("superseded_by", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.String(length=32), nullable=False),
        sa.ForeignKeyConstraint(
            ["candidate_id"], ["candidates.id"], name=op.f("fk_facts_candidate_id_candidates")
        ),
        sa.ForeignKeyConstraint(["superseded_by"], ["facts.id"], name=op.f("fk_facts_superseded_by_facts")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_facts")),
        sa.UniqueConstraint("candidate_id", name=op.f("uq_facts_candidate_id")),
    )
    with op.batch_alter_table("facts", schema=None) as batch_op:
        batch_op.create_index("ix_facts_status_key", ["status", "key"], unique=False)
    # The journal is append-only, enforced by the database: no code path can
    # rewrite or erase history, whatever it does with its own connection.
    op.execute(
        "CREATE TRIGGER revisions_no_update BEFORE UPDATE ON revisions "
        "BEGIN SELECT RAISE(ABORT, 'the revision journal is append-only'); END"
    )
    op.execute(
        "CREATE TRIGGER revisions_no_delete BEFORE DELETE ON revisions "
        "BEGIN SELECT RAISE(ABORT, 'the revision journal is append-only'); END"
    )


def downgrade() -> None:
    op.execute("DROP TRIGGER IF EXISTS revisions_no_update")
    op.execute("DROP TRIGGER IF EXISTS revisions_no_delete")
    with op.batch_alter_table("facts", schema=None) as batch_op:
        batch_op.drop_index("ix_facts_status_key")

    op.drop_table("facts")
    with op.batch_alter_table("evidence", schema=None) as batch_op:
        batch_op.drop_index("ix_evidence_fragment")

    op.drop_table("evidence")
    op.drop_table("observations")
    with op.batch_alter_table("fragments", schema=None) as batch_op:
        batch_op.drop_index("ix_fragments_source_seq")
        batch_op.drop_index("ix_fragments_kind_author")
        batch_op.drop_index("ix_fragments_captured_at")

    op.drop_table("fragments")
    op.drop_table("extracted_documents")
    with op.batch_alter_table("candidates", schema=None) as batch_op:
        batch_op.drop_index("ix_candidates_status")
        batch_op.drop_index("ix_candidates_key")

    op.drop_table("candidates")
    op.drop_table("sources")
    op.drop_table("sleep_runs")
    with op.batch_alter_table("revisions", schema=None) as batch_op:
        batch_op.drop_index("ix_revisions_action")

    op.drop_table("revisions")
    op.drop_table("leases")
    op.drop_table("key_values")
    op.drop_table("cursors")
