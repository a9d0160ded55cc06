"""Getting a model running: each way Ollama can be missing is told apart, with its next step,
in `sleep run` (text and JSON); and a run the owner asks for may skip the quiet gate, never the lease.

Ollama itself cannot be installed here: "installed" is a stand-in `ollama` on PATH, "not
running" a closed loopback port, "model missing" the loopback server without that model.
"""

from __future__ import annotations

import os
import socket
from datetime import timedelta
from pathlib import Path

import pytest

from persona_desktop.adapters.ollama_probe import check_ollama
from persona_desktop.services.ollama_diagnosis import RECOMMENDED_SMALL_MODEL, Problem
from tests.conftest import Cli, chat_line, write_jsonl
from tests.ollama_server import OllamaServer, error
from tests.sleep_support import Claim, ScriptedModel

PEANUTS = "I am allergic to peanuts, so please never suggest peanut dishes."


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # closed once we leave: nobody listens there


@pytest.fixture
def no_ollama(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A PATH with no `ollama` on it (the tools the tests need stay reachable by full path)."""
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))


@pytest.fixture
def ollama_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A stand-in `ollama` executable on PATH (the real one cannot be installed here)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exe = bin_dir / "ollama"
    exe.write_text("#!/bin/sh\nexit 0\n")
    exe.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    return exe


def _failing_run(cli: Cli, tmp_path: Path, host: str) -> tuple[int, str, str]:
    for key, value in (
        ("sleep.enabled", "true"),
        ("ollama.host", host),
        ("ollama.retries", "0"),
        ("ollama.timeout_seconds", "2"),
    ):
        assert cli("config", "set", key, value).code == 0
    assert cli("ingest", "chat", str(write_jsonl(tmp_path / "c.jsonl", [chat_line("1", PEANUTS)]))).code == 0
    result = cli("sleep", "run")
    return result.code, result.out, result.err


def test_not_installed(cli: Cli, tmp_path: Path, no_ollama: None) -> None:
    host = f"http://127.0.0.1:{_closed_port()}"
    d = check_ollama(host, "llama3.1:8b", timeout_s=2)
    assert d.problem is Problem.NOT_INSTALLED
    code, out, err = _failing_run(cli, tmp_path, host)
    text = out + err
    assert code != 0
    assert "not installed" in text and "ollama serve" in text and "ollama pull llama3.1:8b" in text
    assert RECOMMENDED_SMALL_MODEL in text  # a smaller model for a smaller computer
    assert "README" in text


def test_installed_but_not_running(cli: Cli, tmp_path: Path, ollama_installed: Path) -> None:
    host = f"http://127.0.0.1:{_closed_port()}"
    assert check_ollama(host, "llama3.1:8b", timeout_s=2).problem is Problem.NOT_RUNNING
    _code, out, err = _failing_run(cli, tmp_path, host)
    assert "not running" in out + err and "`ollama serve`" in out + err
    assert "not installed" not in out + err


def test_model_missing_lists_what_is_there(cli: Cli, tmp_path: Path, ollama_installed: Path) -> None:
    with OllamaServer(models=("qwen2.5:7b", "llama3.2:latest")) as server:
        server.missing_model()
        d = check_ollama(server.url, "llama3.1:8b", timeout_s=2)
        assert d.problem is Problem.MODEL_MISSING and d.models == ["qwen2.5:7b", "llama3.2:latest"]
        assert check_ollama(server.url, "llama3.2", timeout_s=2).problem is Problem.READY  # :latest implied
        code, out, err = _failing_run(cli, tmp_path, server.url)
    assert code != 0
    assert "ollama pull llama3.1:8b" in out + err and "qwen2.5:7b" in out + err


def test_no_models_recommends_a_small_one(ollama_installed: Path) -> None:
    with OllamaServer(models=()) as server:
        d = check_ollama(server.url, "llama3.1:8b", timeout_s=2)
    assert d.problem is Problem.NO_MODELS
    assert "ollama pull llama3.1:8b" in d.next_step and RECOMMENDED_SMALL_MODEL in d.next_step


def test_something_else_answers(ollama_installed: Path) -> None:
    """A web server on the Ollama port is not Ollama: say so instead of 'model missing'."""
    with OllamaServer() as server:
        server.push(error(404, "404 page not found"), path="/api/tags")
        d = check_ollama(server.url, "llama3.1:8b", timeout_s=2)
    assert d.problem is Problem.NOT_OLLAMA and "11434" in d.next_step


def test_sleep_run_json_carries_the_diagnosis(cli: Cli, tmp_path: Path, ollama_installed: Path) -> None:
    host = f"http://127.0.0.1:{_closed_port()}"
    _failing_run(cli, tmp_path, host)
    out = cli("sleep", "run", "--json").json()
    assert out["status"] == "failed"
    assert out["diagnosis"]["problem"] == "not_running" and "ollama serve" in out["diagnosis"]["next_step"]


# --- run anyway ----------------------------------------------------------------------------


def _ready(cli: Cli, server: OllamaServer) -> None:
    for key, value in (
        ("sleep.enabled", "true"),
        ("ollama.host", server.url),
        ("ollama.retry_backoff_seconds", "0"),
        ("ollama.timeout_seconds", "2"),
    ):
        assert cli("config", "set", key, value).code == 0


def test_a_deferred_run_names_the_way_to_run_anyway(
    cli: Cli, ollama_server: OllamaServer, tmp_path: Path
) -> None:
    ollama_server.default = ScriptedModel({PEANUTS: Claim("The owner is allergic to peanuts")})
    _ready(cli, ollama_server)
    lines = [chat_line("1", PEANUTS, ago=timedelta(minutes=5))]
    assert cli("ingest", "chat", str(write_jsonl(tmp_path / "c.jsonl", lines))).code == 0
    deferred = cli("sleep", "run")
    assert "Deferred" in deferred.out and "sleep run --anyway" in deferred.out + deferred.err
    assert ollama_server.chat_bodies() == []
    anyway = cli("sleep", "run", "--anyway", "--json").json()
    assert anyway["status"] == "done" and anyway["applied"] == 1


def test_run_anyway_still_respects_the_lease(cli: Cli, ollama_server: OllamaServer, data_dir: Path) -> None:
    from datetime import UTC, datetime

    from persona_desktop.bootstrap import open_runtime

    _ready(cli, ollama_server)
    rt = open_runtime(data_dir)
    try:
        with rt.uow() as uow:
            assert uow.leases.acquire("sleep", "someone-else:1:x", datetime.now(UTC), 600) is None
            uow.commit()
    finally:
        rt.close()
    out = cli("sleep", "run", "--anyway", "--json").json()
    assert out["status"] == "skipped" and out["lease_holder"] == "someone-else:1:x"
    assert ollama_server.chat_bodies() == []


def test_a_disabled_cycle_names_the_command_that_enables_it(cli: Cli) -> None:
    result = cli("sleep", "run")
    assert (
        f"persona-desktop --data-dir {cli.data_dir} config set sleep.enabled true" in result.out + result.err
    )
    anyway = cli("sleep", "run", "--anyway", "--json").json()
    assert anyway["status"] == "disabled"  # "anyway" skips the quiet gate, never the master switch
