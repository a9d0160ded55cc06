"""`persona-desktop chat` in the terminal: streamed answers, a failing model, an explicit "remember"."""

from __future__ import annotations

import io

import pytest

from persona_desktop.bootstrap import Runtime
from tests.chat_support import use_server
from tests.conftest import Cli
from tests.ollama_server import OllamaServer, error, reply


def test_a_failing_model_is_reported_and_the_terminal_chat_goes_on(
    runtime: Runtime, ollama_server: OllamaServer, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_server(runtime, ollama_server)
    ollama_server.push(error(500, "the runner crashed"), reply("", chunks=["Back ", "again."]))
    monkeypatch.setattr("sys.stdin", io.StringIO("hello?\n\nhello again\n"))
    result = cli("chat")
    assert result.code == 0
    assert "could not answer" in result.err and "the runner crashed" in result.err
    assert result.out.endswith("Back again.\n")
    owner = [f for f in cli("fragments", "--json").json() if f["author"] == "owner"]
    assert [f["text"] for f in owner] == ["hello?", "hello again"]  # nothing the owner said was lost
    assert all(f["trust"] == "trusted" and f["ref"].startswith("chat:assistant:") for f in owner)


def test_asking_to_remember_triggers_a_review_at_once_and_unknown_tool_sets_warn(
    runtime: Runtime, ollama_server: OllamaServer, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_server(runtime, ollama_server, review__enabled=True, review__memory_interval=50)
    runtime.settings.set("review.allowed_toolsets", ["memory", "shell"])
    runtime.settings.save()
    reviews: list[int] = []

    def respond(body):  # type: ignore[no-untyped-def]
        if not body.get("tools"):
            return reply("Okay.")
        reviews.append(len(body["messages"]))
        if len(reviews) == 1:
            return reply(
                "", tool_calls=[("propose_fact", {"statement": "The owner is vegetarian", "refs": []})]
            )
        return reply("Done.")

    ollama_server.default = respond
    monkeypatch.setattr("sys.stdin", io.StringIO("hi\nplease remember that I am vegetarian\n"))
    result = cli("chat")
    assert result.code == 0, result.err
    assert len(reviews) == 2  # one review (two rounds), on the second turn, not after 50
    assert "Memory review: 1 fact proposed" in result.err
    assert "unknown tool set(s) shell ignored" in result.err
    [cand] = cli("candidates", "--json").json()
    # no ref cited: the evidence is the owner's messages of the snapshot
    assert cand["origin"] == "review" and len(cand["refs"]) == 2
