"""A loopback Ollama-compatible HTTP server for tests, scripted reply by reply.

It speaks the wire format the real `ollama` client expects: `POST /api/chat` (one
JSON object when `stream` is false, NDJSON lines ending with `"done": true`
otherwise, sent with chunked transfer encoding), `GET /api/tags`, `GET /api/version`,
`POST /api/show`, `POST /api/embed` (by default a deterministic bag-of-words vector per
input, so texts sharing words are near; the model must be in `models`). Every request is recorded. Each request to a path takes the next
queued `Behaviour` for that path; with an empty queue it falls back to `default`.

    server.reply({"candidates": []})            # dict/list -> json.dumps, str as-is
    server.reply("not json {")                  # malformed content
    server.reply("", tool_calls=[("search", {"q": "x"})])
    server.reply("Hello there", chunks=["Hel", "lo ", "there"])   # for stream: true
    server.fail(500, "boom"); server.missing_model(); server.drop(); server.hang(30)
    server.push(reply({...}, drip=0.2))         # the whole response a byte at a time (slow drip)
    server.push(raw(b"\xff\xfe not utf-8"))      # a 200 whose body is exactly these bytes
    server.default = lambda body: reply(...)    # or a Behaviour; str/dict also work
    server.chat_bodies()[-1]["format"]          # what the client sent
"""

from __future__ import annotations

import hashlib
import json
import re
import socket
import threading
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Content = str | dict[str, Any] | list[Any]


@dataclass(frozen=True)
class Behaviour:
    """What the server does with one request.

    kind: "reply" (200 with content/tool calls), "error" (HTTP `status` with
    {"error": message}), "drop" (close the socket without any response).
    `delay` seconds pass first (a hang); shutdown cuts it short and then drops.
    """

    kind: str
    content: str = ""
    tool_calls: tuple[tuple[str, dict[str, Any]], ...] = ()
    chunks: tuple[str, ...] | None = None
    chunk_delay: float = 0.0
    stream_error: str | None = None
    cut_stream: bool = False
    status: int = 200
    message: str = ""
    delay: float = 0.0
    drip: float = 0.0  # seconds between two bytes of the response, status line included
    body: bytes | None = None  # kind "raw": the response body as-is


def _as_text(content: Content) -> str:
    return content if isinstance(content, str) else json.dumps(content)


def reply(
    content: Content = "",
    *,
    tool_calls: Sequence[tuple[str, dict[str, Any]]] = (),
    chunks: Sequence[str] | None = None,
    chunk_delay: float = 0.0,
    stream_error: str | None = None,
    cut_stream: bool = False,
    delay: float = 0.0,
    drip: float = 0.0,
) -> Behaviour:
    """A 200 reply. For `stream: true` requests, `chunks` (default: the content split
    into words) become one NDJSON line each; `stream_error` ends the stream with an
    {"error": ...} line, `cut_stream` closes the socket before the done line."""
    return Behaviour(
        "reply",
        content=_as_text(content) if chunks is None else "".join(chunks),
        tool_calls=tuple((name, dict(args)) for name, args in tool_calls),
        chunks=None if chunks is None else tuple(chunks),
        chunk_delay=chunk_delay,
        stream_error=stream_error,
        cut_stream=cut_stream,
        delay=delay,
        drip=drip,
    )


def raw(body: bytes, *, content_type: str = "application/json; charset=utf-8") -> Behaviour:
    """A 200 whose body is exactly `body` (not UTF-8, a JSON list, anything)."""
    return Behaviour("raw", body=body, message=content_type)


def error(status: int = 500, message: str = "internal server error", *, delay: float = 0.0) -> Behaviour:
    return Behaviour("error", status=status, message=message, delay=delay)


MISSING_MODEL = "__missing_model__"


def missing_model() -> Behaviour:
    """404 {"error": "model '<requested model>' not found"}, as Ollama answers."""
    return Behaviour("error", status=404, message=MISSING_MODEL)


def drop(*, delay: float = 0.0) -> Behaviour:
    return Behaviour("drop", delay=delay)


def hang(seconds: float = 60.0) -> Behaviour:
    """Answer nothing for `seconds` (released at shutdown), then drop the connection."""
    return Behaviour("drop", delay=seconds)


Responder = Callable[[dict[str, Any]], "Behaviour | Content"]


@dataclass
class Recorded:
    method: str
    path: str
    body: dict[str, Any] | None
    headers: dict[str, str] = field(default_factory=dict)


_REF_LINE = re.compile(r"^\[([^\]]+)\] (.*)$")


def document_lines(body: dict[str, Any]) -> list[tuple[str, str]]:
    """The `[ref] text` lines of the last user message (the extraction contract)."""
    users = [m for m in body.get("messages", []) if m.get("role") == "user"]
    if not users:
        return []
    found = (_REF_LINE.match(line) for line in str(users[-1].get("content", "")).splitlines())
    return [(m.group(1), m.group(2)) for m in found if m]


def schema_keys(body: dict[str, Any]) -> set[str]:
    """Top-level property names of the request's `format` schema (empty if none)."""
    fmt = body.get("format")
    return set(fmt.get("properties", {})) if isinstance(fmt, dict) else set()


def _no_script(body: dict[str, Any]) -> Behaviour:
    return error(500, "ollama test server: no reply scripted for this request")


class OllamaServer:
    """Start with `start()` (or `with`), stop with `close()`; `url` is http://127.0.0.1:PORT."""

    def __init__(self, models: Sequence[str] = ("llama3.1:8b",), version: str = "0.12.3") -> None:
        self.models = list(models)
        self.version = version
        self.default: Behaviour | Responder | Content = _no_script
        self._queues: dict[str, deque[Behaviour]] = {}
        self._requests: list[Recorded] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._httpd = _Httpd(("127.0.0.1", 0), _Handler)
        self._httpd.owner = self
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> OllamaServer:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="ollama-test-server"
        )
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving, release hanging handlers and join every thread."""
        self._stop.set()
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join(timeout=10)
        self._httpd.server_close()  # joins the handler threads (block_on_close)

    def __enter__(self) -> OllamaServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # scripting
    def push(self, *behaviours: Behaviour, path: str = "/api/chat") -> None:
        with self._lock:
            self._queues.setdefault(path, deque()).extend(behaviours)

    def reply(self, content: Content = "", *, path: str = "/api/chat", **kw: Any) -> None:
        self.push(reply(content, **kw), path=path)

    def fail(
        self, status: int = 500, message: str = "internal server error", *, path: str = "/api/chat"
    ) -> None:
        self.push(error(status, message), path=path)

    def missing_model(self, *, path: str = "/api/chat") -> None:
        self.push(missing_model(), path=path)

    def drop(self, *, path: str = "/api/chat") -> None:
        self.push(drop(), path=path)

    def hang(self, seconds: float = 60.0, *, path: str = "/api/chat") -> None:
        self.push(hang(seconds), path=path)

    def pending(self, path: str = "/api/chat") -> int:
        with self._lock:
            return len(self._queues.get(path, ()))

    # inspection
    @property
    def requests(self) -> list[Recorded]:
        with self._lock:
            return list(self._requests)

    def chat_bodies(self) -> list[dict[str, Any]]:
        return [r.body or {} for r in self.requests if r.path == "/api/chat"]

    # used by the handler
    def _record(self, rec: Recorded) -> None:
        with self._lock:
            self._requests.append(rec)

    def _next(self, path: str, body: dict[str, Any]) -> Behaviour | None:
        with self._lock:
            queue = self._queues.get(path)
            if queue:
                return queue.popleft()
        if path != "/api/chat":
            return None
        chosen = self.default
        if callable(chosen) and not isinstance(chosen, Behaviour):
            chosen = chosen(body)
        return chosen if isinstance(chosen, Behaviour) else reply(chosen)

    def _wait(self, seconds: float) -> bool:
        """Sleep; False if shutdown interrupted it."""
        return seconds <= 0 or not self._stop.wait(seconds)


class _Httpd(ThreadingHTTPServer):
    daemon_threads = False
    block_on_close = True
    owner: OllamaServer


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Httpd

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def do_HEAD(self) -> None:
        self._send_json(200, {})

    def _serve(self) -> None:
        owner = self.server.owner
        self.close_connection = True
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        path = self.path.split("?", 1)[0]
        owner._record(Recorded(self.command, path, body, dict(self.headers.items())))
        req = body if isinstance(body, dict) else {}
        behaviour = owner._next(path, req)
        if behaviour is not None:
            if not owner._wait(behaviour.delay) or behaviour.kind == "drop":
                self._drop()
            elif behaviour.kind == "raw":
                self._send_bytes(200, behaviour.body or b"", behaviour.message)
            elif behaviour.kind == "error":
                message = behaviour.message
                if message == MISSING_MODEL:
                    message = f"model '{req.get('model', '')}' not found"
                self._send_json(behaviour.status, {"error": message})
            elif path == "/api/chat":
                self._chat(req, behaviour)
            else:
                self._send_json(200, json.loads(behaviour.content or "{}"))
            return
        self._builtin(path, req)

    def _builtin(self, path: str, req: dict[str, Any]) -> None:
        owner = self.server.owner
        if path == "/api/version":
            self._send_json(200, {"version": owner.version})
        elif path == "/api/tags":
            self._send_json(200, {"models": [_model_entry(name) for name in owner.models]})
        elif path == "/api/show":
            name = str(req.get("model") or req.get("name") or "")
            if name not in owner.models:
                self._send_json(404, {"error": f"model '{name}' not found"})
            else:
                self._send_json(200, _show_entry(name))
        elif path == "/api/embed":
            self._embed(req)
        elif path == "/":
            self._send_text(200, "Ollama is running")
        else:
            self._send_text(404, "404 page not found")

    def _chat(self, req: dict[str, Any], b: Behaviour) -> None:
        model = str(req.get("model", ""))
        calls = [
            {"function": {"index": i, "name": n, "arguments": a}} for i, (n, a) in enumerate(b.tool_calls)
        ]
        if not req.get("stream", True):
            message: dict[str, Any] = {"role": "assistant", "content": b.content}
            if calls:
                message["tool_calls"] = calls
            body = {"model": model, "created_at": _now(), "message": message, **_DONE}
            if b.drip:
                return self._drip(json.dumps(body).encode(), b.drip)
            self._send_json(200, body)
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        self.end_headers()
        chunks = b.chunks if b.chunks is not None else re.findall(r"\S+\s*|\s+", b.content)
        owner = self.server.owner
        try:
            for i, chunk in enumerate(chunks):
                if i and not owner._wait(b.chunk_delay):
                    return self._drop()
                msg = {"role": "assistant", "content": chunk}
                self._write_line({"model": model, "created_at": _now(), "message": msg, "done": False})
            if b.cut_stream:
                return self._drop()
            if b.stream_error is not None:
                self._write_line({"error": b.stream_error})
            else:
                final: dict[str, Any] = {"role": "assistant", "content": ""}
                if calls:
                    final["tool_calls"] = calls
                self._write_line({"model": model, "created_at": _now(), "message": final, **_DONE})
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client stopped reading (a cancelled stream)

    def _embed(self, req: dict[str, Any]) -> None:
        owner = self.server.owner
        model = str(req.get("model") or "")
        if model not in owner.models:
            self._send_json(404, {"error": f'model "{model}" not found, try pulling it first'})
            return
        raw = req.get("input", "")
        texts = [raw] if isinstance(raw, str) else [str(t) for t in raw]
        self._send_json(
            200,
            {
                "model": model,
                "embeddings": [bag_of_words_vector(t) for t in texts],
                "total_duration": 1_000_000,
                "load_duration": 100_000,
                "prompt_eval_count": sum(len(t.split()) for t in texts),
            },
        )

    def _write_line(self, obj: dict[str, Any]) -> None:
        data = json.dumps(obj).encode() + b"\n"
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _send_json(self, status: int, obj: dict[str, Any]) -> None:
        self._send_bytes(status, json.dumps(obj).encode(), "application/json; charset=utf-8")

    def _send_text(self, status: int, text: str) -> None:
        self._send_bytes(status, text.encode(), "text/plain; charset=utf-8")

    def _send_bytes(self, status: int, data: bytes, content_type: str) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _drip(self, data: bytes, interval: float) -> None:
        """Status line, headers and body one byte at a time: every read gets a byte in time."""
        head = (
            "HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=utf-8\r\n"
            f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n"
        ).encode()
        owner = self.server.owner
        whole = head + data
        try:
            for i in range(len(whole)):
                self.wfile.write(whole[i : i + 1])
                self.wfile.flush()
                if not owner._wait(interval):
                    return self._drop()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up: its deadline passed

    def _drop(self) -> None:
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


_DONE: dict[str, Any] = {
    "done": True,
    "done_reason": "stop",
    "total_duration": 1_000_000,
    "load_duration": 100_000,
    "prompt_eval_count": 10,
    "prompt_eval_duration": 200_000,
    "eval_count": 5,
    "eval_duration": 500_000,
}


EMBED_DIM = 64


def bag_of_words_vector(text: str, dim: int = EMBED_DIM) -> list[float]:
    """A stand-in for an embedding model: words hashed into `dim` buckets, L2-normalized.

    Deterministic across runs (no `hash()` salt), so a test can predict nearness.
    """
    vec = [0.0] * dim
    for word in re.findall(r"\w+", text.lower()):
        bucket = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little") % dim
        vec[bucket] += 1.0
    norm = sum(v * v for v in vec) ** 0.5 or 1.0
    return [v / norm for v in vec]


def _model_entry(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "model": name,
        "modified_at": "2026-01-01T00:00:00Z",
        "size": 4_920_753_328,
        "digest": "0" * 64,
        "details": _details(),
    }


def _details() -> dict[str, Any]:
    return {
        "parent_model": "",
        "format": "gguf",
        "family": "llama",
        "families": ["llama"],
        "parameter_size": "8.0B",
        "quantization_level": "Q4_K_M",
    }


def _show_entry(name: str) -> dict[str, Any]:
    return {
        "modelfile": f"FROM {name}\n",
        "parameters": "",
        "template": "{{ .Prompt }}",
        "details": _details(),
        "model_info": {"general.architecture": "llama"},
        "capabilities": ["completion", "tools"],
        "modified_at": "2026-01-01T00:00:00Z",
    }
