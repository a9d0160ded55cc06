"""The tamper-evident journal: the database refuses rewrites, `journal verify` names the first bad entry.

Every attack comes from a raw connection, as anyone with the file could make: the
store is encrypted, so that is SQLCipher with the store's key (an attacker without the
key cannot read or write it at all; with it, the triggers and the chain still hold).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from persona_desktop.adapters.store.cipher import SQLITE_HEADER
from persona_desktop.adapters.store.database import DB_FILE
from tests.conftest import Cli
from tests.store_support import RawIntegrityError, raw_connect


@pytest.fixture
def journal(cli: Cli) -> Iterator[Cli]:
    """A store with five journal entries (settings changes do not journal; forgetting does)."""
    from persona_desktop.bootstrap import open_runtime

    rt = open_runtime(cli.data_dir)
    with rt.uow() as uow:
        for i in range(1, 6):
            uow.journal.append(
                at=rt.clock.now(), actor="test", action=f"probe.{i}", entity="none", data={"n": i, "x": 0.1}
            )
        uow.commit()
    rt.close()
    assert (cli.data_dir / DB_FILE).read_bytes()[:16] != SQLITE_HEADER, "the store is not encrypted"
    yield cli


def _raw(cli: Cli) -> Any:
    return raw_connect(cli.data_dir, isolation_level=None)


def _verify(cli: Cli) -> tuple[int, str]:
    result = cli("journal", "verify")
    return result.code, (result.out + result.err).strip()


ATTACKS = [
    "INSERT OR REPLACE INTO revisions (id, at, actor, action, entity, data, hash) "
    "VALUES (2, '2026-01-01T00:00:00.000000+00:00', 'owner', 'forged', 'none', '{}', 'x')",
    "REPLACE INTO revisions (id, at, actor, action, entity, data, hash) "
    "VALUES (2, '2026-01-01T00:00:00.000000+00:00', 'owner', 'forged', 'none', '{}', 'x')",
    "INSERT INTO revisions (id, at, actor, action, entity, data, hash) "
    "VALUES (2, '2026-01-01T00:00:00.000000+00:00', 'owner', 'forged', 'none', '{}', 'x') "
    "ON CONFLICT(id) DO UPDATE SET action = 'forged'",
    "INSERT INTO revisions (id, at, actor, action, entity, data, hash) "
    "VALUES (2, '2026-01-01T00:00:00.000000+00:00', 'owner', 'forged', 'none', '{}', 'x') ON CONFLICT DO NOTHING",
    "INSERT OR IGNORE INTO revisions (id, at, actor, action, entity, data, hash) "
    "VALUES (2, '2026-01-01T00:00:00.000000+00:00', 'owner', 'forged', 'none', '{}', 'x')",
    "INSERT OR REPLACE INTO revisions (at, actor, action, entity, data, hash) "
    "VALUES ('2026-01-01T00:00:00.000000+00:00', 'owner', 'forged', 'none', '{}', 'x')",
    "UPDATE OR REPLACE revisions SET action = 'forged' WHERE id = 2",
    "DELETE FROM revisions WHERE id = 5",
]


@pytest.mark.parametrize("sql", ATTACKS)
def test_the_database_refuses_every_rewrite(journal: Cli, sql: str) -> None:
    raw = _raw(journal)
    try:
        with pytest.raises(RawIntegrityError, match="append-only"):
            raw.execute(sql)
    finally:
        raw.close()
    assert [e["action"] for e in journal("journal", "--json").json()] == [f"probe.{i}" for i in range(1, 6)]
    assert _verify(journal) == (0, "journal intact: 5 entries, hash chain and triggers in place")


def test_appending_keeps_the_chain_and_verify_says_intact(journal: Cli) -> None:
    code, text = _verify(journal)
    assert code == 0, text
    json_out = journal("journal", "verify", "--json").json()
    assert json_out == {
        "ok": True,
        "entries": 5,
        "first_bad": None,
        "message": "journal intact: 5 entries, hash chain and triggers in place",
    }


def _tamper(cli: Cli, *sql: str) -> None:
    raw = _raw(cli)
    try:
        for statement in sql:
            raw.execute(statement)
    finally:
        raw.close()


def test_a_rewritten_entry_is_named(journal: Cli) -> None:
    _tamper(
        journal,
        "DROP TRIGGER revisions_no_update",
        """UPDATE revisions SET data = '{"n": 3, "x": 0.2}' WHERE id = 3""",
        "CREATE TRIGGER revisions_no_update BEFORE UPDATE ON revisions "
        "BEGIN SELECT RAISE(ABORT, 'the revision journal is append-only'); END",
    )
    code, text = _verify(journal)
    assert code == 1
    assert "journal entry 3 was rewritten or inserted out of chain" in text


def test_a_deleted_entry_is_named(journal: Cli) -> None:
    _tamper(journal, "DROP TRIGGER revisions_no_delete", "DELETE FROM revisions WHERE id = 2")
    code, text = _verify(journal)
    assert code == 1
    assert "trigger revisions_no_delete" in text  # the missing trigger comes first
    _tamper(
        journal,
        "CREATE TRIGGER revisions_no_delete BEFORE DELETE ON revisions "
        "BEGIN SELECT RAISE(ABORT, 'the revision journal is append-only'); END",
    )
    assert _verify(journal) == (
        1,
        "persona-desktop: error: journal entry 2 was deleted (the chain skips from 1 to 3)",
    )


def test_the_last_entries_deleted_are_named(journal: Cli) -> None:
    _tamper(journal, "DROP TRIGGER revisions_no_delete", "DELETE FROM revisions WHERE id >= 4")
    from persona_desktop.adapters.store.journal_chain import TRIGGERS

    _tamper(journal, TRIGGERS["revisions_no_delete"])
    code, text = _verify(journal)
    assert code == 1
    assert "entries 4 to 5 were deleted (the journal ends early)" in text
    # The app keeps appending after the gap: the gap stays visible.
    from persona_desktop.bootstrap import open_runtime

    rt = open_runtime(journal.data_dir)
    with rt.uow() as uow:
        assert uow.journal.append(at=rt.clock.now(), actor="test", action="later", entity="none") == 6
        uow.commit()
    rt.close()
    assert "entries 4 to 5 were deleted" in _verify(journal)[1]


def test_an_entry_inserted_out_of_chain_is_named(journal: Cli) -> None:
    _tamper(
        journal,
        "DROP TRIGGER revisions_append_only",
        "INSERT INTO revisions (id, at, actor, action, entity, data, hash) "
        "VALUES (6, '2026-01-01T00:00:00.000000+00:00', 'owner', 'fact.applied', 'fact', '{}', 'forged')",
    )
    from persona_desktop.adapters.store.journal_chain import TRIGGERS

    _tamper(journal, TRIGGERS["revisions_append_only"])
    code, text = _verify(journal)
    assert code == 1
    assert "journal entry 6 was inserted out of chain" in text


@pytest.mark.parametrize("trigger", ["revisions_no_update", "revisions_no_delete", "revisions_append_only"])
def test_a_missing_trigger_is_named(journal: Cli, trigger: str) -> None:
    _tamper(journal, f"DROP TRIGGER {trigger}")
    code, text = _verify(journal)
    assert code == 1
    assert f"the trigger {trigger} that keeps the journal append-only is missing" in text


def test_a_trigger_made_harmless_is_named(journal: Cli) -> None:
    _tamper(
        journal,
        "DROP TRIGGER revisions_no_update",
        "CREATE TRIGGER revisions_no_update BEFORE UPDATE ON revisions BEGIN SELECT 1; END",
    )
    assert (
        "the trigger revisions_no_update that keeps the journal append-only was changed"
        in _verify(journal)[1]
    )


def test_the_journal_table_dropped_is_named_not_a_traceback(journal: Cli) -> None:
    _tamper(journal, "DROP TABLE revisions")
    code, text = _verify(journal)
    assert code == 1
    assert "Traceback" not in text
    assert "the journal itself (the table revisions) is missing" in text


def test_entries_hash_exactly_what_is_stored(journal: Cli, tmp_path: Path) -> None:
    """A float, a non-ASCII and a lone-surrogate value round-trip without breaking the chain."""
    from persona_desktop.bootstrap import open_runtime

    rt = open_runtime(journal.data_dir)
    with rt.uow() as uow:
        uow.journal.append(
            at=rt.clock.now(),
            actor="test",
            action="odd",
            entity="none",
            data={"score": 0.1 + 0.2, "text": "Привет \ud800 ✓", "nested": {"b": 1, "a": [1.5e-7]}},
        )
        uow.commit()
    with rt.uow.read() as uow:
        [entry] = uow.journal.all(limit=1)
    rt.close()
    assert entry.data["text"] == "Привет \ufffd ✓"
    assert _verify(journal)[0] == 0
