"""The journal's hash chain and the triggers that keep it append-only.

Each entry of `revisions` carries ``hash = sha256(previous entry's hash + canonical
entry)``; the first entry chains to `GENESIS`. The canonical entry is the entry *as
stored*: its id, then the exact UTF-8 bytes SQLite holds for `at`, `actor`, `action`,
`entity`, `entity_id`, `run_id` and `data` (the JSON text, not a re-serialization,
so no float or key-order question can make an intact entry look rewritten), each
written as a netstring ``<length>:<bytes>,`` and NULL as ``~,``. The timestamp is the
store's fixed UTC text (``2026-11-30T10:00:00.000000+00:00``).

This is a storage format: changing any of it needs a migration that re-chains.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

GENESIS = "0" * 64

Field = bytes | str | int | None


def _field(value: Field) -> bytes:
    if value is None:
        return b"~,"
    if isinstance(value, int):
        raw = str(value).encode("ascii")
    elif isinstance(value, str):
        raw = value.encode("utf-8", "surrogatepass")
    else:
        raw = value
    return str(len(raw)).encode("ascii") + b":" + raw + b","


def entry_hash(previous: str, fields: Sequence[Field]) -> str:
    """`fields`: id, at, actor, action, entity, entity_id, run_id, data, as stored."""
    h = hashlib.sha256(previous.encode("ascii", "replace"))
    for value in fields:
        h.update(_field(value))
    return h.hexdigest()


# The database refuses every rewrite of the journal: UPDATE, DELETE, and any INSERT
# that is not a new entry at its end (INSERT OR REPLACE, REPLACE INTO, an upsert, an
# entry slipped into a gap). DROP TABLE / DROP TRIGGER cannot be refused by SQLite;
# `journal verify` and the app's start-up check notice those.
TRIGGERS: dict[str, str] = {
    "revisions_no_update": (
        "CREATE TRIGGER revisions_no_update BEFORE UPDATE ON revisions "
        "BEGIN SELECT RAISE(ABORT, 'the revision journal is append-only'); END"
    ),
    "revisions_no_delete": (
        "CREATE TRIGGER revisions_no_delete BEFORE DELETE ON revisions "
        "BEGIN SELECT RAISE(ABORT, 'the revision journal is append-only'); END"
    ),
    "revisions_append_only": (
        "CREATE TRIGGER revisions_append_only BEFORE INSERT ON revisions "
        "WHEN NEW.id < 1 "
        "OR NEW.id <= (SELECT coalesce(max(id), 0) FROM revisions) "
        "OR NEW.id <= (SELECT coalesce(max(seq), 0) FROM sqlite_sequence WHERE name = 'revisions') "
        "BEGIN SELECT RAISE(ABORT, 'the revision journal is append-only: entries are only added at its end'); END"
    ),
}


def same_sql(a: str, b: str) -> bool:
    """Trigger SQL compared as SQLite keeps it, whitespace aside."""
    return " ".join(a.split()).rstrip(";") == " ".join(b.split()).rstrip(";")
