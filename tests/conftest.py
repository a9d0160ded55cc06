"""Shared fixtures: a private data dir per test, the CLI run in-process or as a process, and the
tripwires every test runs under (tests/tripwires.py): an unexpected logged warning fails it,
and so does a Qt test that leaves a thread, a worker, an app timer or a window behind."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import time_machine

from persona_desktop.adapters.keys import key_info
from persona_desktop.adapters.keys.key_info import ScryptParams
from persona_desktop.bootstrap import Runtime, open_runtime
from persona_desktop.cli import main as cli_main
from tests.ollama_server import OllamaServer
from tests.tripwires import LeakWatch, LogTripwire

REPO = Path(__file__).resolve().parents[1]
pytest_plugins = ["pytester"]


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Never touch the real user dirs: settings and data live under tmp_path."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg-state"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    monkeypatch.delenv("PERSONA_DATA_DIR", raising=False)
    _encrypted_stores(monkeypatch)


TEST_PASSPHRASE = "correct horse battery staple"
FAST_SCRYPT = ScryptParams(n=2**12, r=8, p=1)


def _encrypted_stores(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test's store is encrypted, as the owner's is by default: with no OS keyring
    here (tests/test_keyring.py runs a real one), the key comes from the passphrase in
    the environment, which child processes inherit. New stores made in this process use
    a cheap scrypt cost (4 MiB); the cost is stored with the store, so a child process
    opening it pays the same. The default cost is checked by its own test."""
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    monkeypatch.setenv("PERSONA_DESKTOP_PASSPHRASE", TEST_PASSPHRASE)
    monkeypatch.delenv("PERSONA_DESKTOP_NEW_PASSPHRASE", raising=False)
    monkeypatch.setattr(key_info, "DEFAULT_SCRYPT", FAST_SCRYPT)


@pytest.fixture(autouse=True)
def _log_tripwire(request: pytest.FixtureRequest) -> Iterator[LogTripwire]:
    """Fail the test on any WARNING (or worse) the app logs that the test did not ask for."""
    with LogTripwire().attached() as tripwire:
        yield tripwire
    if tripwire.records and "logged_warnings" not in request.fixturenames:
        pytest.fail(
            "the app logged what this test did not expect (ask for `logged_warnings` if it should):\n"
            + tripwire.describe(),
            pytrace=False,
        )


@pytest.fixture
def logged_warnings(_log_tripwire: LogTripwire) -> list[logging.LogRecord]:
    """This test expects the app to log warnings: they are collected here, for it to check."""
    return _log_tripwire.records


@pytest.fixture(autouse=True)
def _qt_leak_tripwire(request: pytest.FixtureRequest) -> Iterator[None]:
    """A Qt test fails when, after it and its fixtures are done, a thread it started still runs,
    an app worker has not finished, a QTimer of the app's is still active, or a window is open."""
    if "qapp" not in request.fixturenames:
        yield
        return
    watch = LeakWatch()
    with watch.watching():
        yield
        leaks = watch.settle()
    if leaks:
        watch.clean_up()
        pytest.fail("the test left behind:\n" + "\n".join(f"  {leak}" for leak in leaks), pytrace=False)


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def runtime(data_dir: Path) -> Iterator[Runtime]:
    rt = open_runtime(data_dir)
    yield rt
    rt.close()


@dataclass
class CliResult:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


class Cli:
    """Runs `persona-desktop --data-dir DIR ...` in this process (fast) or as a child process."""

    def __init__(self, data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
        self.data_dir = data_dir
        self._capsys = capsys

    def __call__(self, *args: str) -> CliResult:
        self._capsys.readouterr()
        code = cli_main(["--data-dir", str(self.data_dir), *args])
        captured = self._capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    def process(self, *args: str, env: dict[str, str] | None = None, timeout: float = 120) -> CliResult:
        proc = subprocess.run(
            [sys.executable, "-m", "persona_desktop", "--data-dir", str(self.data_dir), *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            env={**os.environ, **(env or {})},
            check=False,
        )
        return CliResult(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture
def cli(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> Cli:
    return Cli(data_dir, capsys)


def chat_line(
    msg_id: str,
    text: str,
    *,
    role: str = "owner",
    chat: str = "saved",
    chat_type: str = "saved",
    ago: timedelta = timedelta(hours=3),
    sender: str | None = None,
) -> str:
    when = datetime.now(UTC) - ago
    return json.dumps(
        {
            "id": msg_id,
            "chat": chat,
            "chat_type": chat_type,
            "from": sender or {"owner": "Ann", "assistant": "Persona", "other": "Bob"}[role],
            "role": role,
            "date": when.isoformat(),
            "text": text,
        }
    )


def write_jsonl(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def utc_noon() -> Iterator[datetime]:
    """The wall clock moved back to the last UTC noon, ticking, for the test's duration.

    The sleep cycle cuts documents at UTC midnight (DESIGN.md), so chat lines a few
    hours apart share a document at 15:00 and not at 02:30: a test that counts
    documents or model calls over such lines asks for this clock and reads the same
    whenever it runs. In process only; a child process keeps the real clock.
    """
    now = datetime.now(UTC)
    noon = now.replace(hour=12, minute=0, second=0, microsecond=0)
    if noon > now:
        noon -= timedelta(days=1)
    with time_machine.travel(noon, tick=True):
        yield noon


def chat_import_error(cli: Cli, *args: str) -> str:
    """The error of `ingest chat ARGS`, which must fail with one line and no traceback."""
    result = cli("ingest", "chat", *args)
    assert result.code == 1, result.out
    assert result.err.startswith("persona-desktop: error: ") and len(result.err.strip().splitlines()) == 1
    assert "Traceback" not in result.err
    return result.err


@pytest.fixture
def ollama_server() -> Iterator[OllamaServer]:
    """A scripted loopback Ollama (see tests/ollama_server.py); `.url` is its host."""
    with OllamaServer() as server:
        yield server


@pytest.fixture(scope="session")
def pulse_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One private PulseAudio (null sink + virtual microphone) for the rest of the session.

    Qt's audio layer binds to the first sound server it meets and keeps it for the
    process: a server stopped after one test module left later media playback to
    block inside QMediaPlayer.stop(). So it lives until the session ends.
    """
    from tests.speech_support import private_pulseaudio

    with private_pulseaudio(tmp_path_factory.mktemp("pulse")) as server, pytest.MonkeyPatch.context() as mp:
        mp.setenv("PULSE_SERVER", server.server)
        yield server
