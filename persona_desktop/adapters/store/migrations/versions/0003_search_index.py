"""search: full-text indexes over fragments and facts, kept in step by triggers; fact embeddings

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30 17:30:00

The indexes follow the rows they index inside the database itself, so every path that
inserts, deletes or rewrites a fragment or a fact (ingest, retention, forget a source or a
day, delete all captured data, revert, supersede, undo) keeps search and recall true
without remembering to. `fragments_fts` is an external-content index (the text is stored
once, in `fragments`); `facts_fts` holds each fact's statement and the text of its
evidence, for recall. A fact that stops being applied loses its stored embedding.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TOKENIZE = "porter unicode61 remove_diacritics 2"
EVIDENCE_CHARS = 20000  # a fact's evidence text in the recall index is capped

_EVIDENCE_OF = (
    "(SELECT substr(coalesce(group_concat(fr.text, char(10)), ''), 1, {cap}) FROM evidence e "
    "JOIN fragments fr ON fr.id = e.fragment_id WHERE e.candidate_id = {cid})"
)


def _evidence(cid: str) -> str:
    return _EVIDENCE_OF.format(cap=EVIDENCE_CHARS, cid=cid)


def _refresh_facts_of(cid: str) -> str:
    return (
        f"UPDATE facts_fts SET evidence = {_evidence(cid)} "
        f"WHERE rowid IN (SELECT id FROM facts WHERE candidate_id = {cid});"
    )


STATEMENTS = [
    # prefix='3': `word*` searches read a prefix index instead of merging every word that starts so
    f"CREATE VIRTUAL TABLE fragments_fts USING fts5(text, content='fragments', content_rowid='id', tokenize='{TOKENIZE}', prefix='3')",
    "CREATE TRIGGER fragments_fts_insert AFTER INSERT ON fragments BEGIN "
    "INSERT INTO fragments_fts(rowid, text) VALUES (new.id, new.text); END",
    "CREATE TRIGGER fragments_fts_delete AFTER DELETE ON fragments BEGIN "
    "INSERT INTO fragments_fts(fragments_fts, rowid, text) VALUES ('delete', old.id, old.text); END",
    "CREATE TRIGGER fragments_fts_update AFTER UPDATE OF text ON fragments BEGIN "
    "INSERT INTO fragments_fts(fragments_fts, rowid, text) VALUES ('delete', old.id, old.text); "
    "INSERT INTO fragments_fts(rowid, text) VALUES (new.id, new.text); END",
    "INSERT INTO fragments_fts(fragments_fts) VALUES ('rebuild')",
    f"CREATE VIRTUAL TABLE facts_fts USING fts5(statement, evidence, tokenize='{TOKENIZE}')",
    "CREATE TRIGGER facts_fts_insert AFTER INSERT ON facts BEGIN "
    f"INSERT INTO facts_fts(rowid, statement, evidence) VALUES (new.id, new.statement, {_evidence('new.candidate_id')}); END",
    "CREATE TRIGGER facts_fts_delete AFTER DELETE ON facts BEGIN DELETE FROM facts_fts WHERE rowid = old.id; END",
    "CREATE TRIGGER facts_fts_update AFTER UPDATE OF statement, candidate_id ON facts BEGIN "
    f"UPDATE facts_fts SET statement = new.statement, evidence = {_evidence('new.candidate_id')} "
    "WHERE rowid = new.id; END",
    f"CREATE TRIGGER evidence_fts_insert AFTER INSERT ON evidence BEGIN {_refresh_facts_of('new.candidate_id')} END",
    f"CREATE TRIGGER evidence_fts_delete AFTER DELETE ON evidence BEGIN {_refresh_facts_of('old.candidate_id')} END",
    "INSERT INTO facts_fts(rowid, statement, evidence) "
    f"SELECT f.id, f.statement, {_evidence('f.candidate_id')} FROM facts f",
    "CREATE TABLE fact_embeddings ("
    "fact_id INTEGER NOT NULL PRIMARY KEY REFERENCES facts(id) ON DELETE CASCADE, "
    "model VARCHAR NOT NULL, text_hash VARCHAR(64) NOT NULL, dim INTEGER NOT NULL, "
    "vector BLOB NOT NULL, created_at VARCHAR(32) NOT NULL)",
    "CREATE TRIGGER fact_embeddings_forget AFTER UPDATE OF status ON facts WHEN new.status != 'applied' "
    "BEGIN DELETE FROM fact_embeddings WHERE fact_id = new.id; END",
]


def upgrade() -> None:
    for statement in STATEMENTS:
        op.execute(statement)


def downgrade() -> None:
    for trigger in (
        "fact_embeddings_forget",
        "evidence_fts_delete",
        "evidence_fts_insert",
        "facts_fts_update",
        "facts_fts_delete",
        "facts_fts_insert",
        "fragments_fts_update",
        "fragments_fts_delete",
        "fragments_fts_insert",
    ):
        op.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    op.execute("DROP TABLE IF EXISTS fact_embeddings")
    op.execute("DROP TABLE IF EXISTS facts_fts")
    op.execute("DROP TABLE IF EXISTS fragments_fts")
