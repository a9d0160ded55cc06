"""The sleep cycle end to end through the CLI, against the loopback Ollama server.

One test per risk named in DESIGN.md: the model's own conclusions fed back,
observations turning into facts, other people's words applied as the owner's,
reprocessing counted as new evidence, facts without a traceable source, and
decisions missing from the journal.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from tests.conftest import Cli, chat_line, write_jsonl
from tests.ollama_server import OllamaServer, document_lines, schema_keys
from tests.sleep_support import Claim, ScriptedModel

# Lines hours apart must share one document: a UTC noon, not the hour the suite runs at.
pytestmark = pytest.mark.usefixtures("utc_noon")

PEANUTS = "I am allergic to peanuts, so please never suggest peanut dishes."


@pytest.fixture
def model(ollama_server: OllamaServer) -> ScriptedModel:
    scripted = ScriptedModel()
    ollama_server.default = scripted
    return scripted


@pytest.fixture
def ready(cli: Cli, ollama_server: OllamaServer) -> Cli:
    """A data dir with the cycle switched on and pointed at the loopback server."""
    assert cli("config", "set", "sleep.enabled", "true").code == 0
    assert cli("config", "set", "ollama.host", ollama_server.url).code == 0
    assert cli("config", "set", "ollama.retry_backoff_seconds", "0").code == 0
    assert cli("config", "set", "ollama.timeout_seconds", "2").code == 0
    return cli


def _ingest(cli: Cli, tmp_path: Path, lines: list[str], name: str = "chat.jsonl") -> None:
    result = cli("ingest", "chat", str(write_jsonl(tmp_path / name, lines)))
    assert result.code == 0, result.err


def _run(cli: Cli) -> dict:
    result = cli("sleep", "run", "--json")
    assert result.out, result.err
    return result.json()


def _facts(cli: Cli) -> list[dict]:
    return cli("facts", "--json").json()


def _candidates(cli: Cli) -> list[dict]:
    return cli("candidates", "--json").json()


# --- the gate -----------------------------------------------------------------------------


def test_disabled_by_default_and_no_llm_call(cli: Cli, ollama_server: OllamaServer, tmp_path: Path) -> None:
    _ingest(cli, tmp_path, [chat_line("1", PEANUTS)])
    assert cli("config", "get", "sleep.enabled").out.strip() == "false"
    cli("config", "set", "ollama.host", ollama_server.url)
    assert _run(cli)["status"] == "disabled"
    assert ollama_server.requests == []


def test_owner_message_ten_minutes_old_defers(ready: Cli, model: ScriptedModel, tmp_path: Path) -> None:
    _ingest(ready, tmp_path, [chat_line("1", PEANUTS, ago=timedelta(minutes=10))])
    out = _run(ready)
    assert out["status"] == "deferred"
    assert out["run_id"] is None
    assert model.extraction_calls == 0


def test_quiet_owner_lets_the_cycle_run(ready: Cli, model: ScriptedModel, tmp_path: Path) -> None:
    _ingest(ready, tmp_path, [chat_line("1", PEANUTS, ago=timedelta(minutes=61))])
    out = _run(ready)
    assert out["status"] == "done"
    assert isinstance(out["run_id"], int)


# --- the exchange contract ----------------------------------------------------------------


def test_request_follows_the_exchange_contract(
    ready: Cli, model: ScriptedModel, ollama_server: OllamaServer, tmp_path: Path
) -> None:
    model.claims[PEANUTS] = Claim("The owner is allergic to peanuts")
    _ingest(
        ready, tmp_path, [chat_line("1", PEANUTS), chat_line("2", "Good morning!", ago=timedelta(hours=2))]
    )
    assert _run(ready)["status"] == "done"
    extraction = [b for b in ollama_server.chat_bodies() if "candidates" in schema_keys(b)]
    assert len(extraction) == 1
    body = extraction[0]
    assert body["stream"] is False
    assert body["messages"][-1]["role"] == "user"
    assert document_lines(body) == [("chat:saved:1", PEANUTS), ("chat:saved:2", "Good morning!")]
    assert body["messages"][-1]["content"].splitlines() == [
        f"[chat:saved:1] {PEANUTS}",
        "[chat:saved:2] Good morning!",
    ]
    generalization = [b for b in ollama_server.chat_bodies() if "observation" in schema_keys(b)]
    assert len(generalization) == 1


def test_proven_owner_fact_applies_with_its_provenance(
    ready: Cli, model: ScriptedModel, tmp_path: Path
) -> None:
    model.claims[PEANUTS] = Claim("The owner is allergic to peanuts")
    _ingest(ready, tmp_path, [chat_line("1", PEANUTS)])
    out = _run(ready)
    assert out["applied"] == 1
    [fact] = _facts(ready)
    assert fact["status"] == "applied"
    assert fact["subject"] == "owner"
    assert fact["refs"] == ["chat:saved:1"]
    why = ready("facts", "why", str(fact["id"]), "--json").json()
    [ev] = why["evidence"]
    assert ev["ref"] == "chat:saved:1"
    assert ev["text"] == PEANUTS
    assert ev["source"] == "chat:saved"
    assert ev["author"] == "owner" and ev["trust"] == "trusted"
    assert ev["locator"]["message_id"] == "1"
    plain = ready("facts", "why", str(fact["id"]))
    assert "chat:saved:1" in plain.out and PEANUTS in plain.out


# --- risks --------------------------------------------------------------------------------


def test_assistant_repeating_a_fact_is_not_evidence(ready: Cli, model: ScriptedModel, tmp_path: Path) -> None:
    echo = "Noted: you love hiking in the Alps."
    model.claims[echo] = Claim("The owner loves hiking in the Alps")
    _ingest(
        ready,
        tmp_path,
        [
            chat_line("1", echo, role="assistant", ago=timedelta(hours=3)),
            chat_line("2", echo, role="assistant", ago=timedelta(hours=2)),
            chat_line("3", "Thanks!", ago=timedelta(hours=2)),
        ],
    )
    _run(ready)
    assert _facts(ready) == []
    [cand] = _candidates(ready)
    assert cand["status"] == "dropped"
    assert cand["refs"] == []  # the assistant's lines never became evidence
    journal = ready("journal", "--json").json()
    proposed = [e for e in journal if e["action"] == "candidate.proposed"]
    assert proposed[0]["data"]["assistant_refs_not_evidence"] == ["chat:saved:1"]


def test_a_document_of_only_assistant_lines_is_not_sent(
    ready: Cli, model: ScriptedModel, tmp_path: Path
) -> None:
    _ingest(ready, tmp_path, [chat_line("1", "Noted: you love hiking.", role="assistant")])
    out = _run(ready)
    assert out["documents_skipped"] == 1
    assert model.extraction_calls == 0


def test_assistant_echo_does_not_strengthen_an_owner_statement(
    ready: Cli, model: ScriptedModel, tmp_path: Path
) -> None:
    said = "I started learning the cello last month."
    echo = "Great, so you are learning the cello!"
    model.claims[said] = Claim("The owner is learning the cello", confidence=0.5)
    model.claims[echo] = Claim("The owner is learning the cello", confidence=0.5)
    _ingest(ready, tmp_path, [chat_line("1", said), chat_line("2", echo, role="assistant")])
    _run(ready)
    [cand] = _candidates(ready)
    assert cand["refs"] == ["chat:saved:1"]
    assert cand["signals"]["frequency"] == pytest.approx(0.5)  # one independent fragment, not two


def test_group_chat_and_other_people_never_auto_apply(
    ready: Cli, model: ScriptedModel, tmp_path: Path
) -> None:
    group = "Ann is vegan, she told me so"
    model.claims[group] = Claim("The owner is vegan", confidence=1.0)
    other = "My brother lives in Lisbon"
    model.claims[other] = Claim("The owner's brother lives in Lisbon", subject="other", confidence=1.0)
    _ingest(
        ready,
        tmp_path,
        [
            chat_line("g1", group, role="other", chat="friends", chat_type="group"),
            chat_line("g2", group, role="other", chat="friends", chat_type="group", ago=timedelta(days=1)),
            chat_line("3", other),
        ],
    )
    _run(ready)
    assert _facts(ready) == []
    by_statement = {c["statement"]: c for c in _candidates(ready)}
    vegan = by_statement["The owner is vegan"]
    assert vegan["status"] == "pending"
    assert "no evidence written by the owner on a trusted channel" in vegan["reason"]
    assert by_statement["The owner's brother lives in Lisbon"]["status"] == "pending"


def test_observations_never_become_facts(ready: Cli, model: ScriptedModel, tmp_path: Path) -> None:
    model.claims[PEANUTS] = Claim("The owner is allergic to peanuts")
    model.observation = "The owner seems to care about food a lot this week."
    _ingest(ready, tmp_path, [chat_line("1", PEANUTS)])
    out = _run(ready)
    assert out["observation_id"] is not None
    statements = [f["statement"] for f in _facts(ready)]
    assert model.observation not in statements
    assert all(model.observation != c["statement"] for c in _candidates(ready))
    journal = ready("journal", "--json").json()
    [obs] = [e for e in journal if e["action"] == "observation.added"]
    assert obs["data"]["observation"] == model.observation


def test_reimport_and_reprocessing_are_not_new_evidence(
    ready: Cli, model: ScriptedModel, tmp_path: Path
) -> None:
    said = "I usually go climbing on Saturdays."
    model.claims[said] = Claim("The owner goes climbing on Saturdays", confidence=0.4)
    lines = [chat_line("1", said)]
    _ingest(ready, tmp_path, lines)
    _run(ready)
    [before] = _candidates(ready)
    assert before["status"] == "pending"
    _ingest(ready, tmp_path, lines)  # the same export again
    assert ready("fragments", "--json").json().__len__() == 1
    out = _run(ready)
    assert out["documents"] == 0  # nothing unread: nothing re-sent
    [after] = _candidates(ready)
    assert after["refs"] == before["refs"]
    assert after["score"] == before["score"]


def test_same_fragment_reprocessed_in_a_new_run_adds_no_evidence(
    ready: Cli, model: ScriptedModel, tmp_path: Path
) -> None:
    """A fragment read again (its read mark lost, say) is not new evidence."""
    said = "I usually go climbing on Saturdays."
    model.claims[said] = Claim("The owner goes climbing on Saturdays", confidence=0.4)
    _ingest(ready, tmp_path, [chat_line("1", said)])
    _run(ready)
    first = _candidates(ready)[0]
    # Force the same fragment through extraction again by clearing its read mark.
    from persona_desktop.bootstrap import open_runtime

    rt = open_runtime(ready.data_dir)
    with rt.engine.begin() as conn:
        conn.exec_driver_sql("UPDATE fragments SET read_run_id = NULL")
        conn.exec_driver_sql("DELETE FROM extracted_documents")
    rt.close()
    _run(ready)
    [again] = _candidates(ready)
    assert again["refs"] == first["refs"]
    assert again["signals"]["frequency"] == first["signals"]["frequency"]
    assert again["signals"]["consolidation"] == first["signals"]["consolidation"]


def test_journal_shows_every_candidate_and_decision(ready: Cli, model: ScriptedModel, tmp_path: Path) -> None:
    model.claims[PEANUTS] = Claim("The owner is allergic to peanuts")
    weak = "Maybe I'll try pottery some day."
    model.claims[weak] = Claim("The owner might try pottery", confidence=0.3)
    _ingest(ready, tmp_path, [chat_line("1", PEANUTS), chat_line("2", weak)])
    out = _run(ready)
    candidates = _candidates(ready)
    assert len(candidates) == 2
    pending = [c for c in candidates if c["status"] == "pending"]
    assert len(pending) == 1 and out["applied"] == 1
    assert ready("reject", str(pending[0]["id"])).code == 0
    journal = ready("journal", "--json").json()
    proposed = {e["entity_id"] for e in journal if e["action"] == "candidate.proposed"}
    decided = {e["entity_id"] for e in journal if e["action"] in ("candidate.applied", "candidate.pending")}
    assert proposed == decided == {c["id"] for c in candidates}
    assert any(e["action"] == "fact.applied" for e in journal)
    assert any(e["action"] == "candidate.rejected" and e["actor"] == "owner" for e in journal)
    assert journal[-1]["action"] == "candidate.rejected"


def test_unknown_refs_are_rejected_journaled_and_block_auto_apply(
    ready: Cli, model: ScriptedModel, tmp_path: Path
) -> None:
    model.claims[PEANUTS] = Claim(
        "The owner is allergic to peanuts", extra_refs=["chat:saved:999", "made-up"]
    )
    _ingest(ready, tmp_path, [chat_line("1", PEANUTS)])
    out = _run(ready)
    assert out["refs_rejected"] == 2
    assert _facts(ready) == []
    [cand] = _candidates(ready)
    assert cand["status"] == "pending"
    assert cand["refs"] == ["chat:saved:1"]
    assert "not in the document" in cand["reason"]
    journal = ready("journal", "--json").json()
    problems = [e["data"]["problem"] for e in journal if e["action"] == "extraction.problem"]
    assert any("chat:saved:999" in p and "made-up" in p for p in problems)


def test_contradiction_with_an_applied_fact_waits_with_a_link(
    ready: Cli, model: ScriptedModel, tmp_path: Path
) -> None:
    model.claims["I drink coffee every morning."] = Claim("I drink coffee")
    _ingest(ready, tmp_path, [chat_line("1", "I drink coffee every morning.", ago=timedelta(days=2))])
    _run(ready)
    [fact] = _facts(ready)
    model.claims["I quit coffee, I don't drink coffee anymore."] = Claim("I don't drink coffee")
    _ingest(ready, tmp_path, [chat_line("2", "I quit coffee, I don't drink coffee anymore.")], "more.jsonl")
    _run(ready)
    [new] = [c for c in _candidates(ready) if c["statement"] == "I don't drink coffee"]
    assert new["status"] == "pending"
    assert new["supersedes_fact_id"] == fact["id"]
    assert ready("approve", str(new["id"])).code == 0
    statuses = {f["statement"]: f["status"] for f in _facts(ready)}
    assert statuses == {"I drink coffee": "superseded", "I don't drink coffee": "applied"}


# --- malformed and failing replies ----------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [
        "this is not json {",
        '{"candidates": "none"}',
        "[1, 2, 3]",
        '{"candidates": [{"statement": 42, "subject": "owner", "refs": ["chat:saved:1"]}]}',
        '{"candidates": [{"statement": "x", "subject": "owner", "refs": "chat:saved:1"}]}',
        '{"candidates": [' + ",".join(['{"statement": "s", "subject": "owner", "refs": []}'] * 500) + "]}",
        "",
    ],
)
def test_malformed_replies_are_journaled_and_never_crash(
    ready: Cli, ollama_server: OllamaServer, tmp_path: Path, content: str
) -> None:
    ollama_server.reply(content)
    ollama_server.default = {"observation": "x", "themes": []}
    _ingest(ready, tmp_path, [chat_line("1", PEANUTS)])
    out = _run(ready)
    assert out["status"] == "done"
    assert _facts(ready) == []
    journal = ready("journal", "--json").json()
    assert any(e["action"] in ("extraction.failed", "extraction.problem") for e in journal)


def test_malformed_document_stays_unread_then_is_abandoned(
    ready: Cli, ollama_server: OllamaServer, model: ScriptedModel, tmp_path: Path
) -> None:
    _ingest(ready, tmp_path, [chat_line("1", PEANUTS)])
    for attempt in range(1, 4):
        ollama_server.reply("{broken")
        out = _run(ready)
        if attempt < 3:
            assert out["documents_failed"] == 1
            assert out["fragments_read"] == 0, "a failed document was marked read"
    assert out["documents_abandoned"] == 1
    assert out["fragments_read"] == 1
    journal = ready("journal", "--json").json()
    assert [e["action"] for e in journal].count("extraction.failed") == 3
    assert any(e["action"] == "document.abandoned" for e in journal)


def test_transient_errors_are_retried(
    ready: Cli, ollama_server: OllamaServer, model: ScriptedModel, tmp_path: Path
) -> None:
    model.claims[PEANUTS] = Claim("The owner is allergic to peanuts")
    ollama_server.fail(500, "overloaded")
    ollama_server.drop()
    _ingest(ready, tmp_path, [chat_line("1", PEANUTS)])
    out = _run(ready)
    assert out["status"] == "done"
    assert out["applied"] == 1
    retries = [e for e in ready("journal", "--json").json() if e["action"] == "llm.retry"]
    assert len(retries) == 2


def test_host_down_fails_the_run_and_leaves_the_document_unread(
    ready: Cli, ollama_server: OllamaServer, tmp_path: Path
) -> None:
    ollama_server.hang(30)
    ollama_server.hang(30)
    ollama_server.hang(30)
    _ingest(ready, tmp_path, [chat_line("1", PEANUTS)])
    result = ready("sleep", "run", "--json")
    assert result.code != 0
    out = result.json()
    assert out["status"] == "failed"
    assert "did not answer" in out["error"] and "127.0.0.1" in out["error"]
    assert out["fragments_read"] == 0


def test_unreachable_host_names_the_host(ready: Cli, tmp_path: Path) -> None:
    ready("config", "set", "ollama.host", "http://127.0.0.1:9")
    ready("config", "set", "ollama.retries", "0")
    _ingest(ready, tmp_path, [chat_line("1", PEANUTS)])
    out = _run(ready)
    assert out["status"] == "failed"
    assert "cannot reach Ollama at http://127.0.0.1:9" in out["error"]


def test_missing_model_says_ollama_pull(ready: Cli, ollama_server: OllamaServer, tmp_path: Path) -> None:
    ollama_server.missing_model()
    _ingest(ready, tmp_path, [chat_line("1", PEANUTS)])
    out = _run(ready)
    assert out["status"] == "failed"
    assert "ollama pull llama3.1:8b" in out["error"]


# --- runs: idempotency, lease, batches ----------------------------------------------------


def test_rerun_on_the_same_snapshot_gives_the_same_result(
    ready: Cli, model: ScriptedModel, tmp_path: Path
) -> None:
    model.claims[PEANUTS] = Claim("The owner is allergic to peanuts")
    _ingest(ready, tmp_path, [chat_line("1", PEANUTS)])
    from persona_desktop.bootstrap import open_runtime

    first = _run(ready)
    facts_before = _facts(ready)
    # Put the snapshot back exactly as it was (nothing read): the same key, the same run.
    rt = open_runtime(ready.data_dir)
    with rt.engine.begin() as conn:
        conn.exec_driver_sql("UPDATE fragments SET read_run_id = NULL")
    rt.close()
    calls = model.extraction_calls
    second = _run(ready)
    assert second["run_id"] == first["run_id"]
    assert second["reused"] is True
    assert model.extraction_calls == calls
    assert _facts(ready) == facts_before


def test_max_documents_per_run_newest_first_until_done(
    ready: Cli, model: ScriptedModel, ollama_server: OllamaServer, tmp_path: Path
) -> None:
    ready("config", "set", "sleep.max_documents", "2")
    lines = [
        chat_line(
            str(i), f"Message on day {i}", chat=f"c{i}", chat_type="personal", ago=timedelta(days=i, hours=2)
        )
        for i in range(1, 6)
    ]
    _ingest(ready, tmp_path, lines)
    runs = [_run(ready) for _ in range(3)]
    assert [r["documents"] for r in runs] == [2, 2, 1]
    assert model.extraction_calls == 5
    assert sum(r["fragments_read"] for r in runs) == 5
    read_order = [
        document_lines(b)[0][1] for b in ollama_server.chat_bodies() if "candidates" in schema_keys(b)
    ]
    assert read_order == [f"Message on day {i}" for i in range(1, 6)]  # newest first


def test_history_older_than_the_period_is_read_after_the_new_material(
    ready: Cli, model: ScriptedModel, ollama_server: OllamaServer, tmp_path: Path
) -> None:
    """The README's first example: a Telegram-style export of old messages is read, newest first."""
    ready("config", "set", "sleep.max_documents", "2")
    old = [
        chat_line(
            str(i), f"Old message from day {i}", chat=f"old{i}", chat_type="personal", ago=timedelta(days=i)
        )
        for i in (30, 60, 90)
    ]
    _ingest(ready, tmp_path, old, "history.jsonl")
    _ingest(ready, tmp_path, [chat_line("new", "A new message today", chat="now", chat_type="personal")])
    first = _run(ready)
    assert first["documents"] == 2
    assert first["history"]["left"] == 2 and first["history"]["total"] == 3
    assert "2 of 3" in first["history"]["summary"]
    second = _run(ready)
    assert second["documents"] == 2
    assert second["history"] == {"left": 0, "total": 0, "summary": "History: nothing older left to read."}
    read = [document_lines(b)[0][1] for b in ollama_server.chat_bodies() if "candidates" in schema_keys(b)]
    assert read == [
        "A new message today",
        "Old message from day 30",
        "Old message from day 60",
        "Old message from day 90",
    ]
    assert _run(ready)["documents"] == 0
