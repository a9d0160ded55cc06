"""The Ollama adapter, driven by the real `ollama` client against the loopback server."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from persona_desktop.adapters.ollama_llm import OllamaLLM
from persona_desktop.errors import LLMError, TransientLLMError
from tests.ollama_server import OllamaServer, document_lines, reply, schema_keys

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"candidates": {"type": "array", "items": {"type": "object"}}},
    "required": ["candidates"],
}
MESSAGES = [{"role": "system", "content": "Extract facts."}, {"role": "user", "content": "[c:1] I like tea"}]


@pytest.fixture(autouse=True)
def _no_leaked_threads() -> Iterator[None]:
    before = set(threading.enumerate())
    yield
    deadline = time.monotonic() + 2
    while (extra := set(threading.enumerate()) - before) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not extra, f"threads left behind: {extra}"


@pytest.fixture
def llm(ollama_server: OllamaServer) -> Iterator[OllamaLLM]:
    adapter = OllamaLLM(host=ollama_server.url, model="llama3.1:8b", timeout_s=1.0)
    yield adapter
    adapter.close()


def test_chat_json_returns_content_and_sends_the_schema(llm: OllamaLLM, ollama_server: OllamaServer) -> None:
    ollama_server.reply({"candidates": [{"statement": "likes tea", "subject": "owner", "refs": ["c:1"]}]})
    content = llm.chat_json(MESSAGES, SCHEMA)
    assert json.loads(content)["candidates"][0]["refs"] == ["c:1"]
    (body,) = ollama_server.chat_bodies()
    assert body["format"] == SCHEMA
    assert body["stream"] is False
    assert body["model"] == "llama3.1:8b"
    assert body["messages"] == MESSAGES
    assert schema_keys(body) == {"candidates"}
    assert document_lines(body) == [("c:1", "I like tea")]


def test_malformed_content_is_returned_as_is(llm: OllamaLLM, ollama_server: OllamaServer) -> None:
    ollama_server.reply('{"candidates": [')
    assert llm.chat_json(MESSAGES, SCHEMA) == '{"candidates": ['


def test_default_responder_answers_when_nothing_is_queued(
    llm: OllamaLLM, ollama_server: OllamaServer
) -> None:
    ollama_server.default = lambda body: {"echo": document_lines(body)[0][0]}
    assert json.loads(llm.chat_json(MESSAGES, SCHEMA)) == {"echo": "c:1"}
    ollama_server.reply("queued first")
    assert llm.chat_json(MESSAGES, SCHEMA) == "queued first"


def test_server_error_is_transient_and_names_the_host(llm: OllamaLLM, ollama_server: OllamaServer) -> None:
    ollama_server.fail(500, "llama runner process has terminated")
    with pytest.raises(TransientLLMError) as info:
        llm.chat_json(MESSAGES, SCHEMA)
    assert ollama_server.url in str(info.value)
    assert "llama runner process has terminated" in str(info.value)
    assert "500" in str(info.value)


def test_missing_model_says_how_to_pull_it(llm: OllamaLLM, ollama_server: OllamaServer) -> None:
    ollama_server.missing_model()
    with pytest.raises(LLMError) as info:
        llm.chat_json(MESSAGES, SCHEMA)
    assert not isinstance(info.value, TransientLLMError)
    assert str(info.value) == (
        f"model 'llama3.1:8b' is not on {ollama_server.url}: run `ollama pull llama3.1:8b`"
    )


def test_other_client_error_keeps_the_server_text(llm: OllamaLLM, ollama_server: OllamaServer) -> None:
    ollama_server.fail(400, "invalid format: expected object")
    with pytest.raises(LLMError) as info:
        llm.chat_json(MESSAGES, SCHEMA)
    assert not isinstance(info.value, TransientLLMError)
    assert "invalid format: expected object" in str(info.value)
    assert ollama_server.url in str(info.value)


def test_unreachable_host_is_transient_and_names_the_host() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    host = f"http://127.0.0.1:{port}"
    llm = OllamaLLM(host=host, model="m", timeout_s=1.0)
    with pytest.raises(TransientLLMError) as info:
        llm.chat_json(MESSAGES, SCHEMA)
    assert str(info.value) == f"cannot reach Ollama at {host}: connection refused"
    with pytest.raises(TransientLLMError, match="connection refused"):
        llm.list_models()
    with pytest.raises(TransientLLMError, match="connection refused"):
        list(llm.chat_stream(MESSAGES))
    llm.close()


def test_hang_past_the_timeout_is_transient(ollama_server: OllamaServer) -> None:
    llm = OllamaLLM(host=ollama_server.url, model="m", timeout_s=0.3)
    ollama_server.hang(30)
    started = time.monotonic()
    with pytest.raises(TransientLLMError) as info:
        llm.chat_json(MESSAGES, SCHEMA)
    assert time.monotonic() - started < 5
    assert str(info.value) == f"Ollama at {ollama_server.url} did not answer within 0.3 s"
    llm.close()


def test_slow_reply_within_the_timeout_arrives(llm: OllamaLLM, ollama_server: OllamaServer) -> None:
    ollama_server.push(reply("late but fine", delay=0.2))
    assert llm.chat_json(MESSAGES, SCHEMA) == "late but fine"


def test_dropped_connection_is_transient(llm: OllamaLLM, ollama_server: OllamaServer) -> None:
    ollama_server.drop()
    with pytest.raises(TransientLLMError) as info:
        llm.chat_json(MESSAGES, SCHEMA)
    assert ollama_server.url in str(info.value)
    ollama_server.reply("recovered")
    assert llm.chat_json(MESSAGES, SCHEMA) == "recovered"


def test_list_models_and_version(llm: OllamaLLM, ollama_server: OllamaServer) -> None:
    ollama_server.models = ["llama3.1:8b", "qwen2.5:7b"]
    assert llm.list_models() == ["llama3.1:8b", "qwen2.5:7b"]
    assert llm.version() == ollama_server.version
    ollama_server.fail(503, "busy", path="/api/tags")
    with pytest.raises(TransientLLMError, match="busy"):
        llm.list_models()


def test_stream_yields_chunks_in_order(llm: OllamaLLM, ollama_server: OllamaServer) -> None:
    ollama_server.reply(chunks=["Hel", "lo, ", "Ann", "!"])
    assert list(llm.chat_stream(MESSAGES, options={"temperature": 0.2})) == ["Hel", "lo, ", "Ann", "!"]
    (body,) = ollama_server.chat_bodies()
    assert body["stream"] is True
    assert body["options"]["temperature"] == 0.2
    ollama_server.reply("split into words")
    assert list(llm.chat_stream(MESSAGES)) == ["split ", "into ", "words"]


def test_stream_can_be_cancelled_midway(llm: OllamaLLM, ollama_server: OllamaServer) -> None:
    ollama_server.reply(chunks=["a", "b", "c", "d"], chunk_delay=0.05)
    stream = llm.chat_stream(MESSAGES)
    assert next(stream) == "a"
    stream.close()  # the server's remaining writes fail quietly; no thread stays behind
    ollama_server.reply("next")
    assert llm.chat_json(MESSAGES, SCHEMA) == "next"


def test_stream_failures_are_mapped(llm: OllamaLLM, ollama_server: OllamaServer) -> None:
    ollama_server.reply(chunks=["a", "b"], stream_error="runner crashed")
    got: list[str] = []
    with pytest.raises(TransientLLMError, match="runner crashed"):
        got.extend(llm.chat_stream(MESSAGES))
    assert got == ["a", "b"]
    ollama_server.reply(chunks=["a"], cut_stream=True)
    with pytest.raises(TransientLLMError, match="closed the connection"):
        list(llm.chat_stream(MESSAGES))
    ollama_server.missing_model()
    with pytest.raises(LLMError, match="ollama pull"):
        list(llm.chat_stream(MESSAGES))


def test_tool_calls_are_parsed(llm: OllamaLLM, ollama_server: OllamaServer) -> None:
    tools = [
        {
            "type": "function",
            "function": {
                "name": "search_memory",
                "description": "Search facts",
                "parameters": {"type": "object", "properties": {"query": {"type": "string"}}},
            },
        }
    ]
    ollama_server.reply("", tool_calls=[("search_memory", {"query": "tea"})])
    result = llm.chat_tools(MESSAGES, tools)
    assert result == {"content": "", "tool_calls": [{"name": "search_memory", "arguments": {"query": "tea"}}]}
    (body,) = ollama_server.chat_bodies()
    assert body["tools"][0]["function"]["name"] == "search_memory"
    ollama_server.reply("no tools needed")
    assert llm.chat_tools(MESSAGES, tools) == {"content": "no tools needed", "tool_calls": []}


def test_unscripted_chat_fails_loudly(llm: OllamaLLM, ollama_server: OllamaServer) -> None:
    with pytest.raises(TransientLLMError, match="no reply scripted"):
        llm.chat_json(MESSAGES, SCHEMA)


def test_shutdown_releases_a_hanging_handler() -> None:
    server = OllamaServer().start()
    server.hang(60)
    llm = OllamaLLM(host=server.url, model="m", timeout_s=0.2)
    with pytest.raises(TransientLLMError):
        llm.chat_json(MESSAGES, SCHEMA)
    started = time.monotonic()
    server.close()
    assert time.monotonic() - started < 2
    llm.close()


def test_a_slow_drip_cannot_stretch_the_deadline(llm: OllamaLLM, ollama_server: OllamaServer) -> None:
    """A byte every 50 ms keeps every socket read under the 1 s timeout; the call must still end at ~1 s.

    The reply is ~1,600 bytes: dripped whole it would take over 80 s.
    """
    from tests.ollama_server import reply as make_reply

    ollama_server.push(make_reply({"candidates": [], "pad": "x" * 1200}, drip=0.05))
    start = time.monotonic()
    with pytest.raises(TransientLLMError, match=r"did not answer within 1 s"):
        llm.chat_json(MESSAGES, SCHEMA)
    assert time.monotonic() - start < 5.0  # one deadline (1 s), not one timeout per byte


def test_a_reply_dripping_within_the_deadline_is_read(ollama_server: OllamaServer) -> None:
    from tests.ollama_server import reply as make_reply

    adapter = OllamaLLM(host=ollama_server.url, model="llama3.1:8b", timeout_s=30.0)
    try:
        ollama_server.push(make_reply({"candidates": []}, drip=0.001))
        assert json.loads(adapter.chat_json(MESSAGES, SCHEMA)) == {"candidates": []}
    finally:
        adapter.close()


@pytest.mark.parametrize(
    "body",
    [
        b"\xff\xfe\x00 this is not UTF-8 \xc3\x28",
        b'[{"message": {"role": "assistant", "content": "hi"}, "done": true}]',
        b'{"message": ["not", "an", "object"], "done": true}',
        b'{"message": {"role": "assistant", "content": 42}, "done": true}',
        b"null",
        b"",
    ],
    ids=["not-utf8", "json-list", "message-list", "content-int", "null", "empty"],
)
def test_a_reply_that_is_not_ollamas_format_is_one_clear_error(
    llm: OllamaLLM, ollama_server: OllamaServer, body: bytes
) -> None:
    from tests.ollama_server import raw

    ollama_server.push(raw(body))
    with pytest.raises(LLMError, match="sent a reply that is not Ollama's format") as info:
        llm.chat_json(MESSAGES, SCHEMA)
    assert not isinstance(info.value, TransientLLMError)
