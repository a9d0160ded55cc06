"""durability: ids never reused, per-fragment read marks, a hash-chained journal, a store id

- `sources`, `fragments` and `revisions` are rebuilt with AUTOINCREMENT, so a deleted
  row's id is never handed out again (SQLite cannot add it in place). The store opens
  migrations with foreign keys off (database.upgrade): dropping `fragments` with them
  on would trip evidence's RESTRICT, and dropping `sources` would cascade.
- `fragments.read_run_id` replaces the sleep cursor (and its table), which skipped everything older than
  the period for good. Fragments at or below the old cursor count as read (0), except
  those the old rule passed over: captured more than 7 days (the default period) before
  they were imported and cited by no candidate. Those are history to read now.
- `revisions.hash` chains every entry to the one before (journal_chain.py); existing
  entries are chained in id order. A third trigger refuses REPLACE / upserts / inserts
  anywhere but at the end.
- `key_values['store.id']`: a random id that binds a Markdown export folder to this store.
- Years written with fewer than four digits by the old time format are padded.

A rebuilt table's triggers go with the old one (the search index's, for `fragments`):
they are read from the schema first and created again on the new table. The rename runs
with `legacy_alter_table` on, since other tables' triggers (evidence -> fragments) name
the table while it is briefly missing, which a modern RENAME refuses.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30 18:00:00
"""

import uuid
from collections.abc import Sequence

from alembic import op

from persona_desktop.adapters.store.journal_chain import GENESIS, TRIGGERS, entry_hash

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_SOURCES = """
CREATE TABLE sources_new (
    id INTEGER NOT NULL,
    "key" VARCHAR NOT NULL,
    kind VARCHAR(16) NOT NULL,
    label VARCHAR NOT NULL,
    meta JSON NOT NULL,
    created_at VARCHAR(32) NOT NULL,
    CONSTRAINT pk_sources PRIMARY KEY (id AUTOINCREMENT),
    CONSTRAINT uq_sources_key UNIQUE ("key")
)"""

_FRAGMENTS = """
CREATE TABLE fragments_new (
    id INTEGER NOT NULL,
    ref VARCHAR NOT NULL,
    source_id INTEGER NOT NULL,
    kind VARCHAR(16) NOT NULL,
    author VARCHAR(16) NOT NULL,
    trust VARCHAR(16) NOT NULL,
    text TEXT NOT NULL,
    captured_at VARCHAR(32) NOT NULL,
    locator JSON NOT NULL,
    session VARCHAR NOT NULL,
    seq INTEGER DEFAULT '0' NOT NULL,
    inserted_at VARCHAR(32) NOT NULL,
    read_run_id INTEGER,
    CONSTRAINT pk_fragments PRIMARY KEY (id AUTOINCREMENT),
    CONSTRAINT fk_fragments_source_id_sources FOREIGN KEY(source_id) REFERENCES sources (id) ON DELETE CASCADE,
    CONSTRAINT uq_fragments_ref UNIQUE (ref)
)"""

_FRAGMENT_INDEXES = [
    "CREATE INDEX ix_fragments_captured_at ON fragments (captured_at)",
    "CREATE INDEX ix_fragments_kind_author ON fragments (kind, author, captured_at)",
    "CREATE INDEX ix_fragments_source_seq ON fragments (source_id, seq)",
    "CREATE INDEX ix_fragments_unread ON fragments (captured_at, id) WHERE read_run_id IS NULL",
    "CREATE INDEX ix_fragments_unread_group ON fragments (source_id, session, captured_at) "
    "WHERE read_run_id IS NULL",
]

_REVISIONS = """
CREATE TABLE revisions_new (
    id INTEGER NOT NULL,
    at VARCHAR(32) NOT NULL,
    actor VARCHAR(16) NOT NULL,
    action VARCHAR(40) NOT NULL,
    entity VARCHAR(24) NOT NULL,
    entity_id INTEGER,
    run_id INTEGER,
    data JSON NOT NULL,
    hash VARCHAR(64) NOT NULL,
    CONSTRAINT pk_revisions PRIMARY KEY (id AUTOINCREMENT)
)"""

_OLD_PERIOD_DAYS = 7


def _swap(new: str, name: str, keep_triggers: bool = True) -> None:
    """Replace table `name` by `new`, keeping the triggers other migrations put on `name`."""
    bind = op.get_bind()
    triggers = bind.exec_driver_sql(
        "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ?", (name,)
    ).fetchall()
    op.execute(f"DROP TABLE {name}")
    op.execute("PRAGMA legacy_alter_table = ON")
    op.execute(f"ALTER TABLE {new} RENAME TO {name}")
    op.execute("PRAGMA legacy_alter_table = OFF")
    if keep_triggers:
        for (sql,) in triggers:
            op.execute(sql)


def _rebuild_sources() -> None:
    op.execute(_SOURCES)
    op.execute(
        'INSERT INTO sources_new (id, "key", kind, label, meta, created_at) '
        'SELECT id, "key", kind, label, meta, created_at FROM sources'
    )
    _swap("sources_new", "sources")


def _rebuild_fragments() -> None:
    bind = op.get_bind()
    cursor = bind.exec_driver_sql("SELECT value FROM cursors WHERE name = 'sleep'").scalar()
    read_up_to = int(cursor) if cursor is not None and str(cursor).isdigit() else 0
    op.execute(_FRAGMENTS)
    bind.exec_driver_sql(
        "INSERT INTO fragments_new (id, ref, source_id, kind, author, trust, text, captured_at, "
        "locator, session, seq, inserted_at, read_run_id) "
        "SELECT f.id, f.ref, f.source_id, f.kind, f.author, f.trust, f.text, f.captured_at, "
        "f.locator, f.session, f.seq, f.inserted_at, "
        "CASE WHEN f.id <= ? AND (julianday(f.captured_at) >= julianday(f.inserted_at) - ? "
        "OR f.id IN (SELECT fragment_id FROM evidence)) THEN 0 ELSE NULL END "
        "FROM fragments AS f",
        (read_up_to, _OLD_PERIOD_DAYS),
    )
    _swap("fragments_new", "fragments")
    for sql in _FRAGMENT_INDEXES:
        op.execute(sql)
    op.execute("DROP TABLE cursors")


def _rebuild_revisions() -> None:
    bind = op.get_bind()
    op.execute(_REVISIONS)
    rows = bind.exec_driver_sql(
        "SELECT id, at, actor, action, entity, entity_id, run_id, data FROM revisions ORDER BY id"
    ).fetchall()
    previous = GENESIS
    chained = []
    for row in rows:
        previous = entry_hash(previous, tuple(row))
        chained.append((*tuple(row), previous))
    if chained:
        bind.exec_driver_sql(
            "INSERT INTO revisions_new (id, at, actor, action, entity, entity_id, run_id, data, hash) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            chained,
        )
    _swap("revisions_new", "revisions", keep_triggers=False)  # its own triggers are replaced below
    op.execute("CREATE INDEX ix_revisions_action ON revisions (action)")
    for sql in TRIGGERS.values():
        op.execute(sql)


def _pad_short_years() -> None:
    """'1-01-01T...' (strftime's %Y for year 1) -> '0001-01-01T...', so text order is time order."""
    bind = op.get_bind()
    for table, column in (("fragments", "captured_at"), ("facts", "valid_from"), ("facts", "valid_to")):
        bad = bind.exec_driver_sql(
            f"SELECT id, {column} FROM {table} WHERE {column} IS NOT NULL "
            f"AND {column} NOT GLOB '[0-9][0-9][0-9][0-9]-*'"
        ).fetchall()
        for row_id, value in bad:
            year, _, rest = str(value).partition("-")
            if year.isdigit() and rest:
                bind.exec_driver_sql(
                    f"UPDATE {table} SET {column} = ? WHERE id = ?", (f"{int(year):04d}-{rest}", row_id)
                )


def upgrade() -> None:
    _pad_short_years()
    _rebuild_sources()
    _rebuild_fragments()
    _rebuild_revisions()
    op.get_bind().exec_driver_sql(
        "INSERT OR IGNORE INTO key_values (\"key\", value) VALUES ('store.id', ?)", (uuid.uuid4().hex,)
    )


def _plain(create: str, name: str) -> str:
    """The CREATE TABLE of 0001 for `name`: the rebuilt one without AUTOINCREMENT."""
    return create.replace(f"CREATE TABLE {name}_new", f"CREATE TABLE {name}_old").replace(
        "PRIMARY KEY (id AUTOINCREMENT)", "PRIMARY KEY (id)"
    )


def downgrade() -> None:
    """Back to 0003 (for development): the chain, the read marks and AUTOINCREMENT go.

    The sleep cursor comes back just below the first unread fragment.
    """
    bind = op.get_bind()
    first_unread = bind.exec_driver_sql("SELECT min(id) FROM fragments WHERE read_run_id IS NULL").scalar()
    last = bind.exec_driver_sql("SELECT coalesce(max(id), 0) FROM fragments").scalar()
    cursor = int(first_unread) - 1 if first_unread is not None else int(last or 0)

    op.execute(_plain(_REVISIONS, "revisions").replace("    hash VARCHAR(64) NOT NULL,\n", ""))
    op.execute(
        "INSERT INTO revisions_old (id, at, actor, action, entity, entity_id, run_id, data) "
        "SELECT id, at, actor, action, entity, entity_id, run_id, data FROM revisions"
    )
    _swap("revisions_old", "revisions", keep_triggers=False)
    op.execute("CREATE INDEX ix_revisions_action ON revisions (action)")
    for name in ("revisions_no_update", "revisions_no_delete"):
        op.execute(TRIGGERS[name])

    op.execute("DROP INDEX IF EXISTS ix_fragments_unread")
    op.execute("DROP INDEX IF EXISTS ix_fragments_unread_group")
    op.execute(_plain(_FRAGMENTS, "fragments").replace("    read_run_id INTEGER,\n", ""))
    op.execute(
        "INSERT INTO fragments_old (id, ref, source_id, kind, author, trust, text, captured_at, locator, "
        "session, seq, inserted_at) SELECT id, ref, source_id, kind, author, trust, text, captured_at, "
        "locator, session, seq, inserted_at FROM fragments"
    )
    _swap("fragments_old", "fragments")
    for sql in _FRAGMENT_INDEXES[:3]:
        op.execute(sql)

    op.execute(_plain(_SOURCES, "sources"))
    op.execute('INSERT INTO sources_old SELECT id, "key", kind, label, meta, created_at FROM sources')
    _swap("sources_old", "sources")

    op.execute(
        "CREATE TABLE cursors (name VARCHAR NOT NULL, value VARCHAR NOT NULL, "
        "CONSTRAINT pk_cursors PRIMARY KEY (name))"
    )
    bind.exec_driver_sql("INSERT INTO cursors (name, value) VALUES ('sleep', ?)", (str(cursor),))
