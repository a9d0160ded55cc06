"""Helpers for the chat and turn-review tests: settings, a session on the loopback server, seeding."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from typing import Any

from persona_desktop.adapters.ollama_llm import OllamaLLM
from persona_desktop.bootstrap import Runtime
from persona_desktop.domain.model import Subject
from persona_desktop.domain.text import statement_key
from persona_desktop.service_configs import review_config, sleep_config
from persona_desktop.services.chat import ChatSession, drain_turn
from persona_desktop.services.turn_review import TurnReview
from tests.ollama_server import Behaviour, OllamaServer, reply


def use_server(rt: Runtime, server: OllamaServer, **settings: Any) -> None:
    rt.settings.set("ollama.host", server.url)
    rt.settings.set("ollama.timeout_seconds", 10)
    for key, value in settings.items():
        rt.settings.set(key.replace("__", "."), value)
    rt.settings.save()


def session(rt: Runtime, server: OllamaServer, include_observations: bool = False) -> ChatSession:
    return ChatSession(
        rt.uow,
        lambda: OllamaLLM(server.url, "llama3.1:8b", timeout_s=10),
        rt.clock,
        include_observations=include_observations,
    )


def say(s: ChatSession, text: str) -> Any:
    return drain_turn(s.ask(text), lambda _p: None)


def reviewer(rt: Runtime, server: OllamaServer, **overrides: Any) -> TurnReview:
    cfg = dataclasses.replace(review_config(rt.settings.values), **overrides)
    return TurnReview(
        rt.uow,
        OllamaLLM(server.url, "llama3.1:8b", timeout_s=10),
        rt.clock,
        cfg,
        sleep_config(rt.settings.values),
    )


def add_fact(rt: Runtime, statement: str, category: str | None = "preference") -> int:
    with rt.uow() as uow:
        fid = uow.facts.add(
            statement=statement,
            subject=Subject.OWNER,
            key=statement_key(statement),
            category=category,
            candidate_id=None,
            valid_from=datetime.now(UTC),
        )
        uow.commit()
    return fid


def by_kind(chat_reply: str = "Sure.", review: Behaviour | None = None):  # type: ignore[no-untyped-def]
    """A responder for concurrent chat and review requests: tool requests get `review`."""

    def respond(body: dict[str, Any]) -> Behaviour:
        if body.get("tools"):
            return review or reply("Nothing to save.")
        return reply(chat_reply)

    return respond
