"""The `LLM` port over a local Ollama host, with failures turned into one-line errors.

Transient failures (unreachable host, dropped connection, timeout, HTTP 5xx) raise
`TransientLLMError`, which the caller may retry; everything else raises `LLMError`.
Every message names the host, since "connection refused" alone does not say where.
"""

from __future__ import annotations

import json
from collections.abc import Generator, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, cast

import httpx
import ollama
import pydantic

from persona_desktop.errors import LLMError, TransientLLMError


class OllamaLLM:
    def __init__(self, host: str, model: str, timeout_s: float = 120.0) -> None:
        self.host = host.rstrip("/")
        self.model = model
        self.timeout_s = timeout_s
        self._client = ollama.Client(host=self.host, timeout=timeout_s)

    def chat_json(self, messages: Sequence[dict[str, str]], schema: dict[str, Any]) -> str:
        with self._errors():
            response = self._client.chat(
                model=self.model, messages=list(messages), format=schema, stream=False
            )
        return response.message.content or ""

    def chat_stream(
        self, messages: Sequence[Mapping[str, Any]], options: Mapping[str, Any] | None = None
    ) -> Iterator[str]:
        """Yield the reply's content as it arrives; closing the iterator closes the request."""
        parts = cast(
            Generator[ollama.ChatResponse, None, None],
            self._client.chat(
                model=self.model,
                messages=list(messages),
                stream=True,
                options=dict(options) if options else None,
            ),
        )
        try:
            with self._errors():
                for part in parts:
                    if part.message.content:
                        yield part.message.content
        finally:
            parts.close()

    def chat_tools(
        self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]]
    ) -> dict[str, Any]:
        """One non-streamed turn offering `tools`: {"content": str, "tool_calls": [{"name", "arguments"}]}."""
        with self._errors():
            response = self._client.chat(
                model=self.model, messages=list(messages), tools=list(tools), stream=False
            )
        calls = [
            {"name": call.function.name, "arguments": dict(call.function.arguments or {})}
            for call in response.message.tool_calls or []
        ]
        return {"content": response.message.content or "", "tool_calls": calls}

    def list_models(self) -> list[str]:
        with self._errors():
            listed = self._client.list()
        return [m.model for m in listed.models if m.model]

    def version(self) -> str:
        with self._errors():
            response = httpx.get(f"{self.host}/api/version", timeout=self.timeout_s)
            if response.is_error:
                raise ollama.ResponseError(response.text, response.status_code)
            return str(response.json()["version"])

    def close(self) -> None:
        self._client.close()  # type: ignore[no-untyped-call]

    @contextmanager
    def _errors(self) -> Iterator[None]:
        at = f"Ollama at {self.host}"
        try:
            yield
        except ollama.ResponseError as e:
            raise self._response_error(e) from e
        except (ConnectionError, httpx.ConnectError) as e:
            reason = _reason(e.__context__ if isinstance(e, ConnectionError) and e.__context__ else e)
            raise TransientLLMError(f"cannot reach {at}: {reason}") from e
        except httpx.TimeoutException as e:
            raise TransientLLMError(f"{at} did not answer within {self.timeout_s:g} s") from e
        except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as e:
            raise TransientLLMError(f"{at} closed the connection before answering") from e
        except httpx.TransportError as e:
            raise TransientLLMError(f"cannot talk to {at}: {_reason(e)}") from e
        except (json.JSONDecodeError, pydantic.ValidationError, KeyError) as e:
            raise LLMError(f"{at} sent a reply that is not Ollama's format") from e

    def _response_error(self, e: ollama.ResponseError) -> LLMError:
        text = " ".join(str(e.error).split()) or "no details"
        at = f"Ollama at {self.host}"
        if "not found" in text.lower() and "model" in text.lower():
            return LLMError(f"model '{self.model}' is not on {self.host}: run `ollama pull {self.model}`")
        if e.status_code == -1:  # an error line inside a stream: the runner failed mid-reply
            return TransientLLMError(f"{at} failed: {text}")
        if e.status_code >= 500:
            return TransientLLMError(f"{at} failed (HTTP {e.status_code}): {text}")
        return LLMError(f"{at} refused the request (HTTP {e.status_code}): {text}")


def _reason(e: BaseException) -> str:
    text = " ".join(str(e).split())
    if "refused" in text.lower():
        return "connection refused"
    return text or type(e).__name__
