"""Recall in the chat: the facts that matter for a turn reach its prompt within the budget."""

from __future__ import annotations

import io
import logging
from datetime import UTC, datetime

import pytest

from persona_desktop.adapters.ollama_llm import OllamaLLM
from persona_desktop.bootstrap import Runtime
from persona_desktop.domain.model import Kind
from persona_desktop.service_configs import recall_config
from persona_desktop.services import review
from persona_desktop.services.chat import ChatSession
from persona_desktop.services.recall import RecallConfig, recall
from tests.chat_support import add_fact, say, use_server
from tests.conftest import Cli
from tests.ollama_server import OllamaServer
from tests.search_support import add_source, approved_fact, source_id

FILLER = [f"The owner's colleague number {n} works in building {n}" for n in range(60)]


def _session(rt: Runtime, server: OllamaServer, config: RecallConfig, embed: bool = False) -> ChatSession:
    return ChatSession(
        rt.uow,
        lambda: OllamaLLM(server.url, "llama3.1:8b", timeout_s=10),
        rt.clock,
        recall=config,
        embedder=(lambda: rt.embedder()) if embed else None,
    )


def _system(server: OllamaServer) -> str:
    return str(server.chat_bodies()[-1]["messages"][0]["content"])


def test_the_relevant_fact_reaches_the_prompt_when_newest_n_would_miss_it(
    runtime: Runtime, ollama_server: OllamaServer
) -> None:
    bike = add_fact(runtime, "The owner rides a red Cannondale bicycle to work")
    for line in FILLER:
        add_fact(runtime, line, category=None)
    config = RecallConfig(budget_tokens=200)
    # what the prompt carried before: the newest facts; the bicycle is the oldest
    assert bike not in [r.fact.id for r in recall(runtime.uow, "", config).facts]
    ollama_server.reply("It is red.")
    outcome = say(_session(runtime, ollama_server, config), "Which bicycle do I ride?")
    prompt = _system(ollama_server)
    assert f"{bike}. The owner rides a red Cannondale bicycle to work" in prompt
    assert [m.fact.id for m in outcome.memories] == [bike]
    facts_block = prompt.split("What you know about the owner (facts, numbered):\n", 1)[1].split("\n\n")[0]
    assert sum(len(line) for line in facts_block.splitlines()) / 4 <= 200  # the budget holds


def test_recall_finds_a_fact_through_the_owners_own_words_in_its_evidence(runtime: Runtime) -> None:
    refs = add_source(runtime, "chat:s", Kind.CHAT, ["my sister Lena just had twins, I'm an aunt now"])
    fact = approved_fact(runtime, "The owner's sister is Lena", refs)
    for line in FILLER:
        add_fact(runtime, line, category=None)
    got = recall(runtime.uow, "how are the twins doing?", RecallConfig(budget_tokens=40))
    assert [r.fact.id for r in got.relevant] == [fact]


def test_reverted_and_forgotten_facts_are_never_recalled(runtime: Runtime) -> None:
    refs = add_source(runtime, "chat:secret", Kind.CHAT, ["I am saving for a sailboat"])
    sail = approved_fact(runtime, "The owner is saving for a sailboat", refs)
    kayak = add_fact(runtime, "The owner paddles a sea kayak")
    assert {r.fact.id for r in recall(runtime.uow, "sailboat kayak").relevant} == {sail, kayak}
    review.revert_fact(runtime.uow, kayak, datetime.now(UTC))
    review.forget_source(runtime.uow, source_id(runtime, "chat:secret"), datetime.now(UTC))
    got = recall(runtime.uow, "sailboat kayak")
    assert got.facts == []  # not even as "newest"


def test_hostile_chat_text_never_breaks_recall(runtime: Runtime) -> None:
    add_fact(runtime, "The owner likes NEAR field radios")
    for text in ['"', "NEAR(", "*", "-x", "text: statement:", "\ud800", "AND OR NOT", "x" * 10000]:
        recall(runtime.uow, text)


def test_recall_by_meaning_is_off_by_default(runtime: Runtime, ollama_server: OllamaServer) -> None:
    use_server(runtime, ollama_server)
    add_fact(runtime, "The owner drinks oolong tea")
    ollama_server.reply("Sure.")
    say(_session(runtime, ollama_server, recall_config(runtime.settings.values), embed=True), "tea?")
    assert not [r for r in ollama_server.requests if r.path == "/api/embed"]


def test_recall_by_meaning_finds_a_fact_sharing_no_word_and_forgets_with_it(
    runtime: Runtime, ollama_server: OllamaServer
) -> None:
    ollama_server.models.append("nomic-embed-text")
    use_server(runtime, ollama_server, recall__embeddings=True)
    cat = add_fact(runtime, "The owner has a tabby cat")
    car = add_fact(runtime, "The owner drives an old Volvo")
    # the model's vectors: the question is near the car fact, in meaning only
    ollama_server.reply({"embeddings": [[0.0, 1.0], [1.0, 0.0]]}, path="/api/embed")  # car, cat
    ollama_server.reply({"embeddings": [[0.1, 0.9]]}, path="/api/embed")  # the question
    ollama_server.reply("Your Volvo.")
    config = recall_config(runtime.settings.values)
    outcome = say(_session(runtime, ollama_server, config, embed=True), "what automobile is mine?")
    assert [(m.fact.id, m.reason) for m in outcome.memories][:1] == [(car, "meaning")]
    embed = [r.body for r in ollama_server.requests if r.path == "/api/embed"]
    assert embed[0] == {
        "model": "nomic-embed-text",
        "input": ["The owner drives an old Volvo", "The owner has a tabby cat"],
    }
    with runtime.uow.read() as uow:
        assert uow.embeddings.count() == 2
    review.revert_fact(runtime.uow, car, datetime.now(UTC))
    with runtime.uow.read() as uow:
        assert uow.embeddings.count() == 1  # a reverted fact keeps no vector
        assert [fid for fid, _ in uow.embeddings.nearest("nomic-embed-text", [0.0, 1.0], 5)] == [cat]


@pytest.mark.parametrize(
    "bad",
    [
        {"embeddings": [[0.1, 0.2]]},  # one vector for two texts
        {"embeddings": [[0.1, 0.2], [0.3]]},  # lengths differ
        {"embeddings": [["x", 1.0], [0.1, 0.2]]},  # not numbers
        {"embeddings": [[1e400, 1.0], [0.1, 0.2]]},  # not finite
        {"nothing": True},
    ],
)
def test_an_unusable_embedding_reply_stores_nothing_and_the_chat_goes_on(
    runtime: Runtime,
    ollama_server: OllamaServer,
    bad: dict[str, object],
    logged_warnings: list[logging.LogRecord],
) -> None:
    ollama_server.models.append("nomic-embed-text")
    use_server(runtime, ollama_server, recall__embeddings=True)
    add_fact(runtime, "The owner has a tabby cat")
    add_fact(runtime, "The owner drives an old Volvo")
    ollama_server.reply(bad, path="/api/embed")
    ollama_server.reply("Your Volvo.")
    config = recall_config(runtime.settings.values)
    got = recall(runtime.uow, "which Volvo?", config, runtime.embedder)
    [warning] = got.warnings
    assert "cannot be used" in warning or "not Ollama's format" in warning
    [logged] = logged_warnings  # the cause, in the log too
    assert logged.getMessage().removeprefix("embedding recall failed: ") in warning
    assert [r.fact.statement for r in got.relevant] == ["The owner drives an old Volvo"]  # words still work
    with runtime.uow.read() as uow:
        assert uow.embeddings.count() == 0


def test_a_missing_embedding_model_is_a_warning_not_a_failure(
    runtime: Runtime, ollama_server: OllamaServer, logged_warnings: list[logging.LogRecord]
) -> None:
    use_server(runtime, ollama_server, recall__embeddings=True)
    add_fact(runtime, "The owner drives an old Volvo")
    got = recall(runtime.uow, "Volvo", recall_config(runtime.settings.values), runtime.embedder)
    assert "ollama pull nomic-embed-text" in got.warnings[0]
    [logged] = logged_warnings
    assert logged.getMessage().removeprefix("embedding recall failed: ") in got.warnings[0]
    assert len(got.relevant) == 1


def test_the_terminal_chat_uses_the_same_recall_and_says_which_memories(
    runtime: Runtime, ollama_server: OllamaServer, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_server(runtime, ollama_server, recall__budget_tokens=60)
    bike = add_fact(runtime, "The owner rides a red Cannondale bicycle to work")
    for line in FILLER:
        add_fact(runtime, line, category=None)
    ollama_server.reply("Red.")
    monkeypatch.setattr("sys.stdin", io.StringIO("what colour is my bicycle?\n"))
    result = cli("chat")
    assert result.code == 0 and result.out.strip() == "Red."
    assert f"(used 1 memory: #{bike};" in result.err
    assert "Cannondale" in _system(ollama_server)
