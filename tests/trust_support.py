"""A scripted hostile model for the trust tests: it reads the document as the contract says and
answers whatever its plan says, obeying injected text, citing cover lines, flooding, sending NaN."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.ollama_server import document_lines, schema_keys

Lines = list[tuple[str, str]]  # (ref, text) of the document, as sent
Plan = Callable[[Lines], "list[dict[str, Any]] | str"]


def ref_of(lines: Lines, needle: str) -> str:
    """The ref of the document line that contains `needle`."""
    return next(ref for ref, text in lines if needle in text)


def claim(statement: str, refs: list[str], confidence: Any = 1.0, subject: str = "owner") -> dict[str, Any]:
    return {
        "statement": statement,
        "subject": subject,
        "refs": refs,
        "category": "profile",
        "confidence": confidence,
    }


@dataclass
class HostileModel:
    """Each extraction request is answered by `plan(lines)`: candidates, or raw reply text."""

    plan: Plan
    documents: list[Lines] = field(default_factory=list)

    def __call__(self, body: dict[str, Any]) -> str:
        keys = schema_keys(body)
        if "candidates" in keys:
            lines = document_lines(body)
            self.documents.append(lines)
            out = self.plan(lines)
            return out if isinstance(out, str) else json.dumps({"candidates": out})
        if "observation" in keys:
            return json.dumps({"observation": "A quiet week.", "themes": []})
        raise AssertionError(f"unexpected request schema: {keys}")


def strict_json(text: str) -> Any:
    """json.loads that refuses NaN and Infinity, as any standard JSON reader does."""

    def refuse(token: str) -> Any:
        raise ValueError(f"non-standard JSON constant {token}")

    return json.loads(text, parse_constant=refuse)
