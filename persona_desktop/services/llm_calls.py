"""Calling the LLM with retries and backoff for transient errors, cancellable while waiting."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from persona_desktop.errors import TransientLLMError
from persona_desktop.ports import LLM


class Cancelled(Exception):
    """The owner (or the app closing) asked the run to stop."""


def call_with_retries(
    llm: LLM,
    messages: Sequence[dict[str, str]],
    schema: dict[str, Any],
    *,
    retries: int,
    backoff_s: float,
    cancel: Callable[[], bool],
    on_retry: Callable[[int, TransientLLMError], None] | None = None,
    sleep: Callable[[float], None] = time.sleep,
    before_attempt: Callable[[], None] | None = None,
) -> str:
    """`before_attempt` runs before each request (the sleep cycle renews its lease there)."""
    attempt = 0
    while True:
        if cancel():
            raise Cancelled
        if before_attempt is not None:
            before_attempt()
        try:
            return llm.chat_json(messages, schema)
        except TransientLLMError as exc:
            if attempt >= retries:
                raise
            if on_retry is not None:
                on_retry(attempt + 1, exc)
            delay = backoff_s * (2**attempt)
            attempt += 1
            waited = 0.0
            while waited < delay:  # sleep in slices so a cancel is seen quickly
                if cancel():
                    raise Cancelled from None
                step = min(0.1, delay - waited)
                sleep(step)
                waited += step
