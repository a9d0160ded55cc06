"""Hostile values already in the store or coming back from the model: no crash, no stuck cycle.

Lone surrogates (a message or a model reply), capture times at the calendar's ends,
a message dated in the future, ids the owner types wrongly.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from persona_desktop.domain.model import Author, Kind, NewFragment, SourceInfo, Trust
from tests.conftest import Cli, chat_line, write_jsonl
from tests.ollama_server import OllamaServer
from tests.sleep_support import Claim, ScriptedModel, enable_cycle


@pytest.fixture
def ready(cli: Cli, ollama_server: OllamaServer) -> Cli:
    return enable_cycle(cli, ollama_server, timeout_s="5")


def _store_raw(cli: Cli, texts_and_times: list[tuple[str, datetime]]) -> None:
    """Fragments written straight through the store (as an older version or another importer could)."""
    from persona_desktop.bootstrap import open_runtime

    rt = open_runtime(cli.data_dir)
    with rt.uow() as uow:
        source = uow.sources.upsert(SourceInfo("chat:edge", Kind.CHAT, "edge", {}))
        uow.fragments.add_many(
            source,
            [
                NewFragment(
                    ref=f"chat:edge:{i}",
                    kind=Kind.CHAT,
                    author=Author.OWNER,
                    trust=Trust.TRUSTED,
                    text=text,
                    captured_at=when,
                    locator={"chat": "edge", "message_id": i, "note": text},
                    session="chat:edge",
                    seq=i,
                )
                for i, (text, when) in enumerate(texts_and_times)
            ],
        )
        uow.commit()
    rt.close()


def test_a_message_with_a_lone_surrogate_is_stored_and_printed(ready: Cli) -> None:
    _store_raw(ready, [("I like tea \ud800 a lot", datetime.now(UTC) - timedelta(hours=3))])
    [frag] = ready("fragments", "--json").json()
    assert frag["text"] == "I like tea \ufffd a lot"
    assert frag["locator"]["note"] == "I like tea \ufffd a lot"
    assert "I like tea" in ready("fragments").out


def test_a_model_reply_with_a_lone_surrogate_is_scored_once(
    ready: Cli, ollama_server: OllamaServer, tmp_path: Path
) -> None:
    """It raised UnicodeEncodeError before: the candidate was never scored, and every rerun repeated it."""
    line = "I drink green tea every morning."
    ingest = ready("ingest", "chat", str(write_jsonl(tmp_path / "c.jsonl", [chat_line("1", line)])))
    assert ingest.code == 0
    content = (
        '{"candidates": [{"statement": "The owner drinks green \\ud800 tea", "subject": "owner", '
        '"refs": ["chat:saved:1"], "confidence": 0.9}]}'
    )
    ollama_server.reply(content)
    ollama_server.default = {"observation": "Tea \\udfff time", "themes": ["tea \ud800"]}
    out = ready("sleep", "run", "--json").json()
    assert out["status"] == "done", out
    [cand] = ready("candidates", "--json").json()
    assert cand["statement"] == "The owner drinks green \ufffd tea"
    assert cand["status"] in ("applied", "pending")
    again = ready("sleep", "run", "--json").json()
    assert again["status"] == "done" and again["documents"] == 0
    assert ready("journal", "verify").code == 0


@pytest.mark.parametrize(
    "when",
    [
        datetime(1, 1, 1, tzinfo=UTC),
        datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC),
    ],
    ids=["0001-01-01", "9999-12-31"],
)
def test_capture_times_at_the_calendar_edges_never_crash_the_cycle(
    ready: Cli, ollama_server: OllamaServer, when: datetime
) -> None:
    text = "I have kept bees since I was young."
    model = ScriptedModel(claims={text: Claim("The owner keeps bees")})
    ollama_server.default = model
    _store_raw(
        ready, [(text, when), ("Bees are calm in the morning.", datetime.now(UTC) - timedelta(hours=2))]
    )
    out = ready("sleep", "run", "--json").json()
    assert out["status"] == "done", out
    assert out["fragments_read"] == 2
    assert model.extraction_calls == 2
    frags = ready("fragments", "--json").json()
    assert {f["captured_at"][:4] for f in frags} >= {f"{when.year:04d}"}
    [cand] = ready("candidates", "--json").json()
    assert cand["statement"] == "The owner keeps bees"
    if cand["status"] == "pending":  # evidence from year 1 is not recent: it waits for the owner
        assert ready("approve", str(cand["id"])).code == 0
    facts = ready("facts", "--json").json()
    assert [f["statement"] for f in facts] == ["The owner keeps bees"]
    why = ready("facts", "why", str(facts[0]["id"]))
    assert why.code == 0 and "bees" in why.out
    assert ready("candidates").code == 0
    assert ready("journal", "verify").code == 0


def test_a_message_dated_in_the_future_is_clamped_at_import_with_a_warning(
    ready: Cli, tmp_path: Path
) -> None:
    """The importers refuse years past 2100; a phone with its clock set to 2099 still gets through."""
    future = json.loads(chat_line("7", "Hello from the future"))
    future["date"] = "2099-01-01T00:00:00+00:00"
    result = ready("ingest", "chat", str(write_jsonl(tmp_path / "f.jsonl", [json.dumps(future)])))
    assert result.code == 0
    assert (
        "line 1: chat:saved:7: dated 2099-01-01T00:00:00+00:00, in the future; stored as imported now"
        in result.err
    )
    [frag] = ready("fragments", "--json").json()
    assert datetime.fromisoformat(frag["captured_at"]) <= datetime.now(UTC)


def test_a_future_dated_message_already_in_the_store_never_blocks_the_gate(
    ready: Cli, ollama_server: OllamaServer
) -> None:
    """One owner message dated 2999 made every run 'Deferred: you were active 0 min ago', forever."""
    ollama_server.default = ScriptedModel()
    _store_raw(ready, [("A message from 2999", datetime(2999, 1, 1, tzinfo=UTC))])
    out = ready("sleep", "run", "--json").json()
    assert out["status"] == "done", out
    ready("config", "set", "sleep.quiet_minutes", "0")
    _store_raw(ready, [("Another one", datetime.now(UTC) + timedelta(days=3))])
    assert ready("sleep", "run", "--json").json()["status"] == "done"


@pytest.mark.parametrize(
    "args",
    [
        ("approve", "²"),
        ("approve", "٣"),
        ("approve", "99999999999999999999"),
        ("approve", "-1"),
        ("reject", "1e3"),
        ("facts", "why", "99999999999999999999"),
        ("facts", "revert", "½"),
        ("forget", "source", "99999999999999999999"),
    ],
)
def test_a_mistyped_id_is_one_line(cli: Cli, args: tuple[str, ...]) -> None:
    result = cli(*args)
    assert result.code == 1
    assert result.err.startswith("persona-desktop: error: expected a ")
    assert result.err.count("\n") == 1


@pytest.mark.parametrize("limit", ["99999999999999999999", "-5", "x", "١٢"])
def test_a_bad_journal_limit_is_a_usage_error(cli: Cli, limit: str) -> None:
    result = cli.process("journal", "--limit", limit)
    assert result.code == 2
    assert "Traceback" not in result.err and result.err.count("\n") == 1


@pytest.mark.parametrize("zone", ["Asia/Tokyo", "America/Los_Angeles"])
def test_calendar_edges_shown_in_local_time_never_overflow(
    monkeypatch: pytest.MonkeyPatch, zone: str
) -> None:
    """The review window and the memory browser show capture times in local time."""
    import time

    from persona_desktop.domain.dates import as_local

    monkeypatch.setenv("TZ", zone)
    time.tzset()
    try:
        for edge in (datetime(1, 1, 1, tzinfo=UTC), datetime(9999, 12, 31, 23, 59, tzinfo=UTC)):
            shown = as_local(edge)
            assert shown.tzinfo is not None and shown.year in (1, 9999)
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
