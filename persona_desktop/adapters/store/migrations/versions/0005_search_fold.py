"""search: the indexes hold folded text, so a query finds a word however either side spelled it

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01 09:00:00

FTS5's unicode61 tokenizer folds less than a person expects ("Hauptstraße" was not found by
"Hauptstrasse", "İstanbul" not by "istanbul", OCR's "ﬁnance" not by "finance", full-width
letters not by ASCII ones), and the query side folded differently again. Both sides now
go through `domain/search_fold.fold`:

- `fragments.search_text` and `facts.search_statement` hold the folded text, only where
  it differs from the text itself (never for ASCII text), written by the store's
  adapters; this migration folds the rows already stored.
- `fragments_fts` reads its content through the view `fragments_search` (the folded text
  where there is one); its triggers index and delete exactly that. `facts_fts` indexes the
  folded statement and the folded text of the evidence.
- Both indexes are built anew from the rows. Dropping the old ones (with secure_delete
  on) also clears what earlier deletions had left in their segments.
"""

import importlib
from collections.abc import Sequence

from alembic import op

from persona_desktop.domain.search_fold import index_text

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TOKENIZE = "porter unicode61 remove_diacritics 2"
EVIDENCE_CHARS = 20000  # a fact's evidence text in the recall index is capped (as in 0003)
_BATCH = 2000

_EVIDENCE_OF = (
    "(SELECT substr(coalesce(group_concat(coalesce(fr.search_text, fr.text), char(10)), ''), 1, "
    f"{EVIDENCE_CHARS}) FROM evidence e JOIN fragments fr ON fr.id = e.fragment_id "
    "WHERE e.candidate_id = {cid})"
)
_FRAGMENT = "coalesce({row}.search_text, {row}.text)"
_STATEMENT = "coalesce({row}.search_statement, {row}.statement)"


def _evidence(cid: str) -> str:
    return _EVIDENCE_OF.format(cid=cid)


def _refresh_facts_of(cid: str) -> str:
    return (
        f"UPDATE facts_fts SET evidence = {_evidence(cid)} "
        f"WHERE rowid IN (SELECT id FROM facts WHERE candidate_id = {cid});"
    )


_OLD_TRIGGERS = [
    "fragments_fts_insert",
    "fragments_fts_delete",
    "fragments_fts_update",
    "facts_fts_insert",
    "facts_fts_delete",
    "facts_fts_update",
    "evidence_fts_insert",
    "evidence_fts_delete",
]

FRAGMENT_INDEX = [
    "CREATE VIEW fragments_search AS SELECT id, coalesce(search_text, text) AS text FROM fragments",
    f"CREATE VIRTUAL TABLE fragments_fts USING fts5(text, content='fragments_search', content_rowid='id', "
    f"tokenize='{TOKENIZE}', prefix='3')",
    "CREATE TRIGGER fragments_fts_insert AFTER INSERT ON fragments BEGIN "
    f"INSERT INTO fragments_fts(rowid, text) VALUES (new.id, {_FRAGMENT.format(row='new')}); END",
    "CREATE TRIGGER fragments_fts_delete AFTER DELETE ON fragments BEGIN "
    "INSERT INTO fragments_fts(fragments_fts, rowid, text) "
    f"VALUES ('delete', old.id, {_FRAGMENT.format(row='old')}); END",
    "CREATE TRIGGER fragments_fts_update AFTER UPDATE OF text, search_text ON fragments BEGIN "
    "INSERT INTO fragments_fts(fragments_fts, rowid, text) "
    f"VALUES ('delete', old.id, {_FRAGMENT.format(row='old')}); "
    f"INSERT INTO fragments_fts(rowid, text) VALUES (new.id, {_FRAGMENT.format(row='new')}); END",
    "INSERT INTO fragments_fts(fragments_fts) VALUES ('rebuild')",
]

FACT_INDEX = [
    f"CREATE VIRTUAL TABLE facts_fts USING fts5(statement, evidence, tokenize='{TOKENIZE}')",
    "CREATE TRIGGER facts_fts_insert AFTER INSERT ON facts BEGIN "
    "INSERT INTO facts_fts(rowid, statement, evidence) "
    f"VALUES (new.id, {_STATEMENT.format(row='new')}, {_evidence('new.candidate_id')}); END",
    "CREATE TRIGGER facts_fts_delete AFTER DELETE ON facts BEGIN DELETE FROM facts_fts WHERE rowid = old.id; END",
    "CREATE TRIGGER facts_fts_update AFTER UPDATE OF statement, search_statement, candidate_id ON facts BEGIN "
    f"UPDATE facts_fts SET statement = {_STATEMENT.format(row='new')}, "
    f"evidence = {_evidence('new.candidate_id')} WHERE rowid = new.id; END",
    f"CREATE TRIGGER evidence_fts_insert AFTER INSERT ON evidence BEGIN {_refresh_facts_of('new.candidate_id')} END",
    f"CREATE TRIGGER evidence_fts_delete AFTER DELETE ON evidence BEGIN {_refresh_facts_of('old.candidate_id')} END",
    "INSERT INTO facts_fts(rowid, statement, evidence) "
    f"SELECT f.id, {_STATEMENT.format(row='f')}, {_evidence('f.candidate_id')} FROM facts f",
]


def _fold_column(table: str, column: str, folded: str) -> None:
    """Fill `folded` for the rows whose `column` is not ASCII (more bytes than characters)."""
    bind = op.get_bind()
    last = 0
    while True:
        rows = bind.exec_driver_sql(
            f"SELECT id, {column} FROM {table} WHERE id > ? "
            f"AND length(CAST({column} AS BLOB)) != length({column}) ORDER BY id LIMIT {_BATCH}",
            (last,),
        ).fetchall()
        if not rows:
            return
        changes = [(index_text(str(text)), row_id) for row_id, text in rows]
        bind.exec_driver_sql(
            f"UPDATE {table} SET {folded} = ? WHERE id = ?", [c for c in changes if c[0] is not None]
        )
        last = rows[-1][0]


def _drop_indexes() -> None:
    for trigger in _OLD_TRIGGERS:
        op.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    op.execute("DROP TABLE IF EXISTS fragments_fts")
    op.execute("DROP TABLE IF EXISTS facts_fts")


def upgrade() -> None:
    op.execute("ALTER TABLE fragments ADD COLUMN search_text TEXT")
    op.execute("ALTER TABLE facts ADD COLUMN search_statement TEXT")
    _drop_indexes()  # first: the old update triggers would re-index each row as it is folded
    _fold_column("fragments", "text", "search_text")
    _fold_column("facts", "statement", "search_statement")
    for statement in FRAGMENT_INDEX + FACT_INDEX:
        op.execute(statement)


def downgrade() -> None:
    """Back to 0004: the indexes of 0003 over the text as captured."""
    _drop_indexes()
    op.execute("DROP VIEW IF EXISTS fragments_search")
    op.execute("ALTER TABLE fragments DROP COLUMN search_text")
    op.execute("ALTER TABLE facts DROP COLUMN search_statement")
    v3 = importlib.import_module("persona_desktop.adapters.store.migrations.versions.0003_search_index")
    for statement in v3.STATEMENTS:
        if "fact_embeddings" not in statement:  # they stay from 0003
            op.execute(statement)
