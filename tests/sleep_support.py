"""A scripted "model" for sleep-cycle tests: it proposes facts for lines the test names.

It reads the document exactly as the contract says (`[<ref>] <text>` lines in the
last user message) and answers in the contract's JSON, so the tests exercise the
real request, the real client and the real parsing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tests.ollama_server import OllamaServer, document_lines, schema_keys

if TYPE_CHECKING:
    from tests.conftest import Cli


def enable_cycle(cli: Cli, server: OllamaServer, timeout_s: str = "30") -> Cli:
    """The cycle switched on and pointed at the loopback server, retries without waiting."""
    for key, value in [
        ("sleep.enabled", "true"),
        ("ollama.host", server.url),
        ("ollama.retry_backoff_seconds", "0"),
        ("ollama.timeout_seconds", timeout_s),
    ]:
        assert cli("config", "set", key, value).code == 0
    return cli


@dataclass
class Claim:
    statement: str
    subject: str = "owner"
    confidence: float = 0.9
    extra_refs: list[str] = field(default_factory=list)


@dataclass
class ScriptedModel:
    """`claims` maps a line's text to the candidate the model proposes for it."""

    claims: dict[str, Claim] = field(default_factory=dict)
    observation: str = "The owner spent the week on health and food topics."
    extraction_calls: int = 0
    generalization_calls: int = 0

    def __call__(self, body: dict[str, Any]) -> str:
        keys = schema_keys(body)
        if "candidates" in keys:
            self.extraction_calls += 1
            out = []
            for ref, text in document_lines(body):
                claim = self.claims.get(text)
                if claim is not None:
                    out.append(
                        {
                            "statement": claim.statement,
                            "subject": claim.subject,
                            "refs": [ref, *claim.extra_refs],
                            "category": "profile",
                            "confidence": claim.confidence,
                        }
                    )
            return json.dumps({"candidates": out})
        if "observation" in keys:
            self.generalization_calls += 1
            return json.dumps({"observation": self.observation, "themes": ["health", "food"]})
        raise AssertionError(f"unexpected request schema: {keys}")
