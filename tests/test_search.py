"""Search of everything: the index follows every path that writes or deletes, and no query raises."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from persona_desktop.bootstrap import Runtime
from persona_desktop.domain.model import Author, Kind, Trust
from persona_desktop.domain.search_query import parse_query
from persona_desktop.services import review
from persona_desktop.services.data_admin import delete_captured_data
from persona_desktop.services.screen_retention import purge_expired_fragments
from persona_desktop.services.search import search
from tests.conftest import Cli
from tests.search_support import add_source, approved_fact, source_id
from tests.store_support import raw_connect

HOSTILE = [
    '"',
    '""',
    '"unbalanced phrase',
    "NEAR(",
    "NEAR(heat pump, 2)",
    "heat NEAR/2 pump",
    "*",
    "heat*",
    "*heat",
    "-",
    "-heat",
    "heat -pump",
    "text:heat",
    "{text statement}: heat",
    "statement:heat",
    "AND",
    "OR heat",
    "heat AND",
    "NOT",
    "^heat",
    "heat^",
    "(heat",
    "heat)",
    "+",
    "'",
    "\\",
    "\x00heat",
    "\ue000heat\ue001",
    "x" * 5000,
    "heat " * 500,
    "\ud800",
    "😀 heat",
    "",
    "   ",
]


def _refs(rt: Runtime, text: str, **kw: object) -> set[str]:
    return {r.hit.ref or f"fact:{r.hit.fact_id}" for r in search(rt.uow, text, **kw)}  # type: ignore[arg-type]


@pytest.mark.parametrize("query", HOSTILE)
def test_hostile_queries_never_raise_and_never_act_as_syntax(runtime: Runtime, query: str) -> None:
    add_source(runtime, "chat:s", Kind.CHAT, ["heat pump installed", "NEAR the pump", "text statement"])
    results = search(runtime.uow, query)
    for r in results:  # whatever was found, it holds a word of the query
        assert set(parse_query(query).words()) & set(parse_query(r.hit.text).words()) or "*" in query


def test_hostile_queries_from_the_cli_exit_zero(cli: Cli, runtime: Runtime) -> None:
    add_source(runtime, "chat:s", Kind.CHAT, ["heat pump installed"])
    for query in HOSTILE[:-6]:
        result = cli("search", "--json", "--", query)  # `--`: a query may start with a dash
        assert result.code == 0, (query, result.err)
        assert isinstance(result.json(), list)


def test_operators_are_words_not_syntax(runtime: Runtime) -> None:
    add_source(runtime, "chat:s", Kind.CHAT, ["heat pump", "pump only", "NOT a pump"])
    # `heat -pump` would exclude in FTS5 syntax; as words it means heat AND pump
    assert _refs(runtime, "heat -pump") == {"chat:s:0"}
    assert _refs(runtime, "NOT pump") == {"chat:s:2"}  # NOT is a word here
    assert _refs(runtime, "pump OR heat") == set()  # "or" is a word no line holds


def test_phrase_prefix_stemming_and_highlights(runtime: Runtime) -> None:
    add_source(
        runtime, "chat:s", Kind.CHAT, ["We talked about heat pumps.\nThey need insulation", "pump the heat"]
    )
    assert _refs(runtime, '"heat pump"') == {"chat:s:0"}  # the phrase, in order
    assert _refs(runtime, "heat pump") == {"chat:s:0", "chat:s:1"}
    assert _refs(runtime, "insul*") == {"chat:s:0"}
    [hit] = search(runtime.uow, "insulation")
    assert hit.line == "They need insulation"  # the matching line, not the first one
    assert [hit.line[a:b] for a, b in hit.spans] == ["insulation"]
    [first] = search(runtime.uow, '"heat pump"')
    assert [first.line[a:b] for a, b in first.spans] == ["heat pumps"]  # a phrase is one mark


def test_marker_characters_in_captured_text_do_not_fake_highlights(runtime: Runtime) -> None:
    add_source(runtime, "screen:x", Kind.SCREEN, ["\ue000evil\ue001 heat"], author=Author.UNKNOWN)
    [hit] = search(runtime.uow, "heat")
    assert hit.spans == () and "heat" in hit.line


def test_kind_and_since_filters(runtime: Runtime, cli: Cli) -> None:
    old = datetime.now(UTC) - timedelta(days=10)
    add_source(runtime, "chat:s", Kind.CHAT, ["garden tomato"], at=old)
    add_source(runtime, "screen:1", Kind.SCREEN, ["tomato soup recipe"], author=Author.UNKNOWN)
    add_source(runtime, "speech:1", Kind.SPEECH, ["buy tomato seeds"], author=Author.UNKNOWN)
    assert _refs(runtime, "tomato", kind="screen") == {"screen:1:0"}
    assert _refs(runtime, "tomato", kind="speech") == {"speech:1:0"}
    recent = (datetime.now(UTC) - timedelta(days=2)).date().isoformat()
    assert cli("search", "tomato", "--since", recent, "--json").json()
    assert {h["ref"] for h in cli("search", "tomato", "--since", recent, "--json").json()} == {
        "screen:1:0",
        "speech:1:0",
    }
    bad = cli("search", "tomato", "--since", "last tuesday")
    assert bad.code == 1 and bad.err.count("\n") == 1 and "--since" in bad.err
    hit = cli("search", "tomato", "--kind", "chat", "--json").json()[0]
    assert {"ref", "kind", "captured_at", "text", "score"} <= set(hit)


def test_facts_are_found_only_while_applied(runtime: Runtime) -> None:
    refs = add_source(runtime, "chat:s", Kind.CHAT, ["my cat is called Miso"])
    fact = approved_fact(runtime, "The owner's cat is called Miso", refs)
    assert _refs(runtime, "miso", kind="fact") == {f"fact:{fact}"}
    review.revert_fact(runtime.uow, fact, datetime.now(UTC))
    assert _refs(runtime, "miso", kind="fact") == set()
    review.undo(runtime.uow, datetime.now(UTC))  # the revert undone: known again
    assert _refs(runtime, "miso", kind="fact") == {f"fact:{fact}"}
    newer = approved_fact(runtime, "The owner's cat is called Miso Soup", refs, supersedes=fact)
    assert _refs(runtime, "miso", kind="fact") == {f"fact:{newer}"}  # the superseded one is gone
    review.undo(runtime.uow, datetime.now(UTC))  # the approval undone: the fact row is deleted
    assert _refs(runtime, "miso", kind="fact") == {f"fact:{fact}"}


def test_forgotten_source_never_shows_up(runtime: Runtime) -> None:
    add_source(runtime, "chat:secret", Kind.CHAT, ["the surprise party is on friday"])
    add_source(runtime, "chat:other", Kind.CHAT, ["a party of two"])
    assert _refs(runtime, "party") == {"chat:secret:0", "chat:other:0"}
    review.forget_source(runtime.uow, source_id(runtime, "chat:secret"), datetime.now(UTC))
    assert _refs(runtime, "party") == {"chat:other:0"}
    assert _refs(runtime, "surprise") == set()


def test_forgotten_day_never_shows_up(runtime: Runtime) -> None:
    day = datetime.now().astimezone().replace(hour=12, minute=0, second=0, microsecond=0)
    add_source(runtime, "screen:a", Kind.SCREEN, ["bank balance 1200"], at=day, author=Author.UNKNOWN)
    review.forget_day(runtime.uow, Kind.SCREEN, day.date(), datetime.now(UTC))
    assert _refs(runtime, "balance") == set()


def test_retention_deleted_fragments_never_show_up_but_cited_ones_stay(runtime: Runtime) -> None:
    old = datetime.now(UTC) - timedelta(days=60)
    refs = add_source(
        runtime,
        "screen:old",
        Kind.SCREEN,
        ["invoice number 4471", "invoice due in march"],
        at=old,
        author=Author.UNKNOWN,
        trust=Trust.UNTRUSTED,
    )
    approved_fact(runtime, "The owner's invoice is due in March", [refs[1]])
    result = purge_expired_fragments(runtime.uow, Kind.SCREEN, 30, datetime.now(UTC))
    assert (result.deleted, result.kept) == (1, 1)
    assert _refs(runtime, "invoice", kind="screen") == {"screen:old:1"}


def test_deleting_all_captured_data_empties_the_index(runtime: Runtime) -> None:
    add_source(runtime, "chat:s", Kind.CHAT, ["lighthouse keeper"])
    delete_captured_data(runtime.uow, datetime.now(UTC))
    assert _refs(runtime, "lighthouse") == set()


def test_a_raw_delete_leaves_no_trace_in_the_index(runtime: Runtime, data_dir: Path) -> None:
    """The database keeps the index in step, whatever connection deletes: not the app's code."""
    add_source(runtime, "chat:s", Kind.CHAT, ["zeppelin museum"])
    raw = raw_connect(data_dir, isolation_level="")  # SQLCipher with the key, as any tool would
    try:
        raw.execute("PRAGMA foreign_keys=ON")
        raw.execute("DELETE FROM fragments WHERE ref = 'chat:s:0'")
        raw.commit()
        assert raw.execute(
            "SELECT count(*) FROM fragments_fts WHERE fragments_fts MATCH 'zeppelin'"
        ).fetchone() == (0,)
        raw.execute("INSERT INTO fragments_fts(fragments_fts, rank) VALUES ('integrity-check', 1)")
    finally:
        raw.close()
    assert _refs(runtime, "zeppelin") == set()


def test_the_migration_indexes_what_was_stored_before_it(runtime: Runtime, data_dir: Path) -> None:
    from persona_desktop.adapters.store.database import downgrade, upgrade

    refs = add_source(runtime, "chat:s", Kind.CHAT, ["my piano teacher is Olga"])
    approved_fact(runtime, "The owner's piano teacher is Olga", refs)
    downgrade(runtime.engine, "0002")  # with foreign keys off: later migrations rebuild tables
    upgrade(runtime.engine)
    assert _refs(runtime, "olga") == {"chat:s:0", "fact:1"}


@pytest.mark.parametrize(
    "since",
    [
        "9999-12-31T23:59:59-14:00",
        "0001-01-01T00:00:00+14:00",
        "0001-01-01",
        "2026-13-01",
        "2026-11-20T25:00",
    ],
)
def test_dates_at_the_calendar_ends_are_one_line_errors(cli: Cli, runtime: Runtime, since: str) -> None:
    add_source(runtime, "chat:s", Kind.CHAT, ["tomato"])
    result = cli("search", "tomato", "--since", since)
    assert result.code == 1 and result.err.count("\n") == 1 and "--since" in result.err
    assert "Traceback" not in result.err
