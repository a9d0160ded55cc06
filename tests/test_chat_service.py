"""The chat service: the memory-carrying prompt, stored messages, streaming, a failing model."""

from __future__ import annotations

from datetime import UTC, datetime

from persona_desktop.bootstrap import Runtime
from persona_desktop.domain.model import Author, Kind, Trust
from persona_desktop.services.chat import latest_conversation, load_messages
from tests.chat_support import add_fact, say, session
from tests.ollama_server import OllamaServer


def test_prompt_carries_applied_facts_and_observations_only_when_allowed(
    runtime: Runtime, ollama_server: OllamaServer
) -> None:
    fid = add_fact(runtime, "The owner drinks green tea")
    reverted = add_fact(runtime, "The owner lives in Oslo")
    from persona_desktop.services.review import revert_fact

    revert_fact(runtime.uow, reverted, datetime.now(UTC))
    with runtime.uow() as uow:
        uow.observations.add(None, "The owner seems to travel a lot lately.", ["travel"], datetime.now(UTC))
        uow.commit()

    with runtime.uow() as uow:
        uow.skills.add("weekly-report", "# Weekly report\n\nSend it on Friday.\n", datetime.now(UTC))
        uow.skills.add("retired-one", "# Old\n", datetime.now(UTC))
        retired = uow.skills.by_name("retired-one")
        assert retired is not None
        uow.skills.update(retired.id, retired.content, "retired", datetime.now(UTC))
        uow.commit()
    plain = session(runtime, ollama_server).system_prompt()
    assert "### Skill: weekly-report\n# Weekly report\n\nSend it on Friday." in plain
    assert "retired-one" not in plain
    assert f"{fid}. The owner drinks green tea (preference)" in plain
    assert "Oslo" not in plain
    assert "travel a lot" not in plain

    allowed = session(runtime, ollama_server, include_observations=True).system_prompt()
    hypotheses = allowed.split("Unverified hypotheses", 1)
    assert len(hypotheses) == 2, allowed
    assert "NOT facts" in hypotheses[1] and "travel a lot" in hypotheses[1]
    assert "travel a lot" not in hypotheses[0]


def test_each_message_is_a_chat_fragment_and_the_answer_streams(
    runtime: Runtime, ollama_server: OllamaServer
) -> None:
    ollama_server.reply("Green tea it is.", chunks=["Green ", "tea ", "it is."])
    ollama_server.reply("Noted.")
    s = session(runtime, ollama_server)
    pieces: list[str] = []
    gen = s.ask("I only drink green tea")
    while True:
        try:
            pieces.append(next(gen))
        except StopIteration as stop:
            outcome = stop.value
            break
    assert pieces == ["Green ", "tea ", "it is."]
    assert outcome.reply is not None and outcome.reply.text == "Green tea it is."
    say(s, "And coffee never")

    body = ollama_server.chat_bodies()[-1]
    assert body["stream"] is True
    assert [m["role"] for m in body["messages"]] == ["system", "user", "assistant", "user"]
    assert body["messages"][-1]["content"] == "And coffee never"

    conv, source_id = latest_conversation(runtime.uow)
    assert conv == s.id
    with runtime.uow.read() as uow:
        frags = uow.fragments.of_source(source_id)
        found = uow.sources.get(source_id)
    assert found is not None and found[0].key == f"chat:assistant:{s.id}"
    assert [f.ref for f in frags] == [f"chat:assistant:{s.id}:{n}" for n in range(4)]
    assert [f.author for f in frags] == [Author.OWNER, Author.ASSISTANT, Author.OWNER, Author.ASSISTANT]
    assert all(f.kind is Kind.CHAT for f in frags)
    assert frags[0].trust is Trust.TRUSTED
    assert [m.text for m in load_messages(runtime.uow, source_id)][:2] == [
        "I only drink green tea",
        "Green tea it is.",
    ]
    # the quiet gate of the sleep cycle sees the owner's messages
    with runtime.uow.read() as uow:
        assert uow.fragments.last_owner_chat_at() == frags[2].captured_at


def test_a_failing_model_does_not_end_the_chat(runtime: Runtime, ollama_server: OllamaServer) -> None:
    ollama_server.fail(500, "the runner crashed")
    ollama_server.reply("I am back.")
    s = session(runtime, ollama_server)
    failed = say(s, "hello?")
    assert failed.reply is None
    assert failed.error is not None and "the runner crashed" in failed.error
    ok = say(s, "hello again")
    assert ok.error is None and ok.reply is not None and ok.reply.text == "I am back."
    assert [m.role for m in s.conversation.messages] == ["owner", "owner", "assistant"]


def test_a_cancelled_answer_keeps_what_came_and_says_so(
    runtime: Runtime, ollama_server: OllamaServer
) -> None:
    ollama_server.reply("", chunks=["one ", "two ", "three ", "four"], chunk_delay=0.05)
    s = session(runtime, ollama_server)
    seen: list[str] = []
    gen = s.ask("count", cancel=lambda: len(seen) >= 2)
    try:
        while True:
            seen.append(next(gen))
    except StopIteration as stop:
        outcome = stop.value
    assert outcome.cancelled
    assert outcome.reply is not None and outcome.reply.text == "one two"
    with runtime.uow.read() as uow:
        frag = uow.fragments.by_refs([outcome.reply.ref])[outcome.reply.ref]
    assert frag.locator["cancelled"] is True
