"""The `LLM` port over a local Ollama host, with failures turned into one-line errors.

Transient failures (unreachable host, dropped connection, timeout, HTTP 5xx) raise
`TransientLLMError`, which the caller may retry; everything else raises `LLMError`.
Every message names the host, since "connection refused" alone does not say where.

A non-streamed call has one total deadline (`timeout_s`), not a timeout per socket
read: httpx's read timeout restarts with every byte, so a server dripping a byte a
second would turn 2 s into minutes. `DeadlineTransport` clamps every connect, read
and write to what is left of the calling thread's deadline.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, cast

import httpcore
import httpx
import ollama
import pydantic

from persona_desktop.errors import LLMError, TransientLLMError

_deadline = threading.local()  # .at: time.monotonic() by which the current call must be over


def _left(timeout: float | None, expired: type[Exception]) -> float | None:
    at: float | None = getattr(_deadline, "at", None)
    if at is None:
        return timeout
    left = at - time.monotonic()
    if left <= 0:
        raise expired("the call's deadline passed")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _left(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _left(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.NetworkStream:
        left = _left(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self._inner.start_tls(ssl_context, server_hostname, left))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    def __init__(self) -> None:
        self._inner = httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        left = _left(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self._inner.connect_tcp(host, port, left, local_address, socket_options))

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.NetworkStream:
        left = _left(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self._inner.connect_unix_socket(path, left, socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class DeadlineTransport(httpx.HTTPTransport):
    """httpx's own transport over a connection pool whose sockets honour the deadline."""

    def __init__(self) -> None:
        super().__init__()
        self._pool = httpcore.ConnectionPool(network_backend=_DeadlineBackend())


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Everything this thread sends or receives inside must be over within `seconds`."""
    previous = getattr(_deadline, "at", None)
    _deadline.at = time.monotonic() + seconds
    try:
        yield
    finally:
        _deadline.at = previous


class OllamaLLM:
    def __init__(self, host: str, model: str, timeout_s: float = 120.0) -> None:
        self.host = host.rstrip("/")
        self.model = model
        self.timeout_s = timeout_s
        self._client = ollama.Client(host=self.host, timeout=timeout_s, transport=DeadlineTransport())

    def chat_json(self, messages: Sequence[dict[str, str]], schema: dict[str, Any]) -> str:
        with self._errors(), deadline(self.timeout_s):
            response = self._client.chat(
                model=self.model, messages=list(messages), format=schema, stream=False
            )
        return _content(response)

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
        with self._errors(), deadline(self.timeout_s):
            response = self._client.chat(
                model=self.model, messages=list(messages), tools=list(tools), stream=False
            )
        calls = [
            {"name": call.function.name, "arguments": dict(call.function.arguments or {})}
            for call in response.message.tool_calls or []
        ]
        return {"content": _content(response), "tool_calls": calls}

    def list_models(self) -> list[str]:
        with self._errors(), deadline(self.timeout_s):
            listed = self._client.list()
        return [m.model for m in listed.models if m.model]

    def version(self) -> str:
        with self._errors(), deadline(self.timeout_s):
            response = httpx.get(f"{self.host}/api/version", timeout=self.timeout_s)
            if response.is_error:
                raise ollama.ResponseError(response.text, response.status_code)
            return str(response.json()["version"])

    def close(self) -> None:
        close: Callable[[], None] = self._client.close  # unannotated in the ollama package
        close()

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
        except (ValueError, TypeError, pydantic.ValidationError, KeyError, AttributeError) as e:
            # not JSON, not UTF-8 (UnicodeDecodeError is a ValueError), a list where an
            # object belongs (`ChatResponse(**[...])` is a TypeError), missing fields
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


def _content(response: Any) -> str:
    content = getattr(getattr(response, "message", None), "content", None)
    return content if isinstance(content, str) else ""


def _reason(e: BaseException) -> str:
    text = " ".join(str(e).split())
    if "refused" in text.lower():
        return "connection refused"
    return text or type(e).__name__
