"""A word is found however the owner types it and however it was captured, and the
highlight marks the word as it was captured: one folding for the index and the query.

Through the real store (its triggers build the index), the search service, the
`search` CLI, recall's fact ranking, and migration 0005 on a store written before it.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from persona_desktop.adapters.store.database import downgrade, upgrade
from persona_desktop.bootstrap import Runtime
from persona_desktop.domain.model import Kind
from persona_desktop.domain.search_fold import fold, index_text
from persona_desktop.domain.search_query import recall_query
from persona_desktop.services import review
from persona_desktop.services.search import search
from tests.conftest import Cli
from tests.search_support import add_source, approved_fact, source_id
from tests.store_support import raw_connect

# (captured text, what the owner types, the word the highlight must mark in the captured text)
SPELLINGS = [
    ("Meeting at Hauptstraße 5", "hauptstrasse", "Hauptstraße"),
    ("Meeting at Hauptstraße 5", "HAUPTSTRASSE", "Hauptstraße"),
    ("Meeting at Hauptstraße 5", "Hauptstraße", "Hauptstraße"),
    ("Meeting at Hauptstraße 5", "hauptstr*", "Hauptstraße"),
    ("MEETING AT HAUPTSTRAẞE 5", "hauptstraße", "HAUPTSTRAẞE"),
    ("Meet me on Hauptstrasse", "Hauptstraße", "Hauptstrasse"),
    ("Flight to İstanbul tomorrow", "istanbul", "İstanbul"),
    ("Flight to İstanbul tomorrow", "İstanbul", "İstanbul"),
    ("Flight to ISTANBUL tomorrow", "İstanbul", "ISTANBUL"),
    ("Flight to i\u0307stanbul tomorrow", "Istanbul", "i\u0307stanbul"),
    ("Quarterly ﬁnance report", "finance", "ﬁnance"),
    ("Quarterly finance report", "ﬁnance", "finance"),
    ("ＰＹＴＨＯＮ workshop", "python", "ＰＹＴＨＯＮ"),
    ("python workshop", "Ｐｙｔｈｏｎ", "python"),
    ("cafe\u0301 cre\u0300me", "creme", "cre\u0300me"),
    ("cafe\u0301 cre\u0300me", "café", "cafe\u0301"),
    ("Crème brûlée", "brulee", "brûlée"),
    ("Łódź trip", "lodz", "Łódź"),
    ("и\u0306од в аптеке", "йод", "и\u0306од"),
    ("ΤΟ ΚΑΦΕ ΤΗΣ ΟΔΟΣ", "οδος", "ΟΔΟΣ"),
    ("NEAR the pump", "NEAŔ", "NEAR"),
    ("x² + y²", "x2", "x²"),
]


def _marked(result: object) -> list[str]:
    line, spans = result.line, result.spans  # type: ignore[attr-defined]
    return [line[a:b] for a, b in spans]


@pytest.mark.parametrize(("captured", "typed", "word"), SPELLINGS)
def test_a_word_is_found_however_either_side_spells_it(
    runtime: Runtime, captured: str, typed: str, word: str
) -> None:
    add_source(runtime, "chat:s", Kind.CHAT, [captured, "nothing to see here"])
    [hit] = search(runtime.uow, typed)
    assert hit.hit.ref == "chat:s:0" and hit.line == captured
    assert _marked(hit) == [word]


def test_the_cli_finds_and_marks_the_captured_spelling(runtime: Runtime, cli: Cli) -> None:
    add_source(runtime, "screen:1", Kind.SCREEN, ["Lieferung an Hauptstraße 12, İstanbul"])
    for typed in ("hauptstrasse", "ISTANBUL", "-- -hauptstrasse"):
        result = cli("search", "--json", *typed.split(" "))
        assert result.code == 0, result.err
        [hit] = result.json()
        assert hit["ref"] == "screen:1:0"
        assert [hit["text"][a:b] for a, b in hit["highlights"]] in (["Hauptstraße"], ["İstanbul"])
    text = cli("search", "HauptStrasse").out
    assert "Hauptstraße" in text and "1 hit(s)" in text


def test_facts_and_recall_fold_the_statement_and_its_evidence(runtime: Runtime) -> None:
    refs = add_source(runtime, "chat:s", Kind.CHAT, ["I moved to İstanbul in May"])
    fact = approved_fact(runtime, "The owner lives on the Hauptstraße", refs)
    [hit] = search(runtime.uow, "hauptstrasse", "fact")
    assert hit.hit.fact_id == fact and _marked(hit) == ["Hauptstraße"]
    with runtime.uow.read() as uow:
        assert [i for i, _ in uow.search.rank_facts(recall_query("Where is HAUPTSTRASSE?"), 5)] == [fact]
        # the evidence is folded too: the statement does not say where
        assert [i for i, _ in uow.search.rank_facts(recall_query("anything about istanbul"), 5)] == [fact]


def test_the_index_stays_consistent_through_inserts_and_deletes(runtime: Runtime, data_dir: Path) -> None:
    add_source(runtime, "chat:a", Kind.CHAT, ["Straße ﬁne İstanbul", "ＰＹＴＨＯＮ", "plain ascii"])
    add_source(runtime, "chat:b", Kind.CHAT, ["Hauptstraße again", "Crème brûlée"])
    review.forget_source(runtime.uow, source_id(runtime, "chat:a"), datetime.now(UTC))
    raw = raw_connect(data_dir)  # SQLCipher with the store's key
    try:
        for index in ("fragments_fts", "facts_fts"):
            raw.execute(f"INSERT INTO {index}({index}, rank) VALUES ('integrity-check', 1)")
        raw.execute("PRAGMA foreign_keys=ON")
        raw.execute("DELETE FROM fragments WHERE ref = 'chat:b:1'")  # any connection, no app code
        raw.commit()
        raw.execute("INSERT INTO fragments_fts(fragments_fts, rank) VALUES ('integrity-check', 1)")
    finally:
        raw.close()
    assert [r.hit.ref for r in search(runtime.uow, "hauptstrasse")] == ["chat:b:0"]
    assert search(runtime.uow, "brulee") == [] and search(runtime.uow, "python") == []


def test_migration_0005_folds_what_was_stored_before_it(runtime: Runtime, data_dir: Path) -> None:
    refs = add_source(runtime, "chat:s", Kind.CHAT, ["Hotel near İstanbul airport", "ﬁnal answer"])
    approved_fact(runtime, "The owner booked a hotel on the Hauptstraße", refs[:1])
    downgrade(runtime.engine, "0004")  # a store as the previous version left it
    raw = raw_connect(data_dir)  # SQLCipher with the store's key
    try:
        columns = {r[1] for r in raw.execute("PRAGMA table_info(fragments)")}
        assert "search_text" not in columns
        unfolded = raw.execute("SELECT count(*) FROM fragments_fts WHERE fragments_fts MATCH 'final'")
        assert unfolded.fetchone() == (0,)  # what this migration is for
    finally:
        raw.close()
    upgrade(runtime.engine)
    assert [r.hit.ref for r in search(runtime.uow, "istanbul")] == ["chat:s:0"]
    assert [r.hit.ref for r in search(runtime.uow, "final")] == ["chat:s:1"]
    assert [r.hit.fact_id for r in search(runtime.uow, "hauptstrasse", "fact")] == [1]
    raw = raw_connect(data_dir)  # SQLCipher with the store's key
    try:
        for index in ("fragments_fts", "facts_fts"):
            raw.execute(f"INSERT INTO {index}({index}, rank) VALUES ('integrity-check', 1)")
    finally:
        raw.close()


@pytest.mark.parametrize("text", [s for s, _, _ in SPELLINGS] + [t for _, t, _ in SPELLINGS])
def test_folding_is_stable_and_only_stored_where_it_changes_the_words(text: str) -> None:
    assert fold(fold(text)) == fold(text)
    stored = index_text(text)
    assert stored is None if text.isascii() else stored in (None, fold(text))
    assert index_text("Plain ASCII, UPPER and lower") is None
