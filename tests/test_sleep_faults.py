"""Faults: `sleep run` killed with SIGKILL at several points, two runners, stale leases."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from persona_desktop.adapters.store.database import DB_FILE
from persona_desktop.adapters.store.tables import utc_text
from tests.conftest import Cli, chat_line, write_jsonl
from tests.ollama_server import OllamaServer, document_lines, hang, reply, schema_keys
from tests.sleep_support import Claim, ScriptedModel, enable_cycle
from tests.store_support import RawOperationalError, raw_connect


@pytest.fixture
def ready(cli: Cli, ollama_server: OllamaServer) -> Cli:
    return enable_cycle(cli, ollama_server)


def _start_run(cli: Cli) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "persona_desktop", "--data-dir", str(cli.data_dir), "sleep", "run", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _kill(proc: subprocess.Popen[str]) -> None:
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=10)  # reap it: a zombie still "exists" for kill(pid, 0)
    assert proc.returncode == -signal.SIGKILL


def _wait_for(check: Callable[[], bool], timeout: float = 30.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.002)


def _db(cli: Cli) -> Any:
    return raw_connect(cli.data_dir, isolation_level=None, timeout=30)


def _scalar(cli: Cli, sql: str) -> Any:
    conn = _db(cli)
    try:
        return conn.execute(sql).fetchone()[0]
    finally:
        conn.close()


def _three_documents(cli: Cli, tmp_path: Path, model: ScriptedModel) -> None:
    lines = []
    for i in range(1, 4):
        text = f"I have been doing hobby number {i} for years."
        model.claims[text] = Claim(f"The owner does hobby number {i}")
        lines.append(
            chat_line(str(i), text, chat=f"c{i}", chat_type="personal", ago=timedelta(days=i, hours=2))
        )
    assert cli("ingest", "chat", str(write_jsonl(tmp_path / "c.jsonl", lines))).code == 0


def _extraction_count(server: OllamaServer, ref: str) -> int:
    return sum(
        1
        for b in server.chat_bodies()
        if "candidates" in schema_keys(b) and any(r == ref for r, _ in document_lines(b))
    )


def _check_consistent(cli: Cli, fragments: int) -> dict[str, Any]:
    out = cli("sleep", "run", "--json").json()
    assert out["status"] == "done", out
    assert len(cli("fragments", "--json").json()) == fragments, "a fragment was lost"
    facts = cli("facts", "--json").json()
    statements = [f["statement"] for f in facts]
    assert len(statements) == len(set(statements)), "a fact was applied twice"
    candidate_ids = [f["candidate_id"] for f in facts]
    assert len(candidate_ids) == len(set(candidate_ids))
    assert _scalar(cli, "SELECT count(*) FROM fragments WHERE read_run_id IS NULL") == 0, (
        "a fragment was left unread"
    )
    assert _scalar(cli, "SELECT count(*) FROM candidates WHERE scored = 0") == 0
    assert _scalar(cli, "SELECT count(*) FROM sleep_runs WHERE status = 'running'") == 0
    return out


def test_killed_during_extraction_then_rerun_finishes(
    ready: Cli, ollama_server: OllamaServer, tmp_path: Path
) -> None:
    model = ScriptedModel()
    _three_documents(ready, tmp_path, model)
    ollama_server.push(hang(60))
    ollama_server.default = model
    proc = _start_run(ready)
    _wait_for(lambda: len(ollama_server.chat_bodies()) >= 1, what="the first extraction request")
    _kill(proc)
    assert _scalar(ready, "SELECT count(*) FROM facts") == 0
    out = _check_consistent(ready, fragments=3)
    assert out["applied"] == 3
    assert len(ready("facts", "--json").json()) == 3
    journal = ready("journal", "--json").json()
    assert any(e["action"] == "run.resumed" for e in journal), "the interrupted run was not resumed"


def test_killed_between_documents_does_not_resend_finished_ones(
    ready: Cli, ollama_server: OllamaServer, tmp_path: Path
) -> None:
    model = ScriptedModel()
    _three_documents(ready, tmp_path, model)
    first: dict[str, Any] = {}

    def responder(body: dict[str, Any]) -> Any:
        if not first:
            first["body"] = body
            return reply(model(body))
        return hang(60)

    ollama_server.default = responder
    proc = _start_run(ready)
    _wait_for(lambda: len(ollama_server.chat_bodies()) >= 2, what="the second extraction request")
    _kill(proc)
    assert _scalar(ready, "SELECT count(*) FROM extracted_documents WHERE ok = 1") == 1
    ollama_server.default = model
    _check_consistent(ready, fragments=3)
    done_ref = document_lines(first["body"])[0][0]
    assert _extraction_count(ollama_server, done_ref) == 1, "a finished document was sent again"
    assert len(ready("facts", "--json").json()) == 3


def test_killed_during_apply_applies_nothing_twice(
    ready: Cli, ollama_server: OllamaServer, tmp_path: Path
) -> None:
    model = ScriptedModel()
    lines = []
    # caps high enough for all 160 to apply in one run: this test is about the kill, not the caps
    assert ready("config", "set", "sleep.auto_apply_per_document", "100").code == 0
    assert ready("config", "set", "sleep.auto_apply_per_run", "1000").code == 0
    for i in range(1, 161):
        text = f"My favourite number this time is {i}."
        model.claims[text] = Claim(f"The owner's favourite number is {i}")
        lines.append(chat_line(str(i), text, ago=timedelta(hours=2, seconds=i)))
    assert ready("ingest", "chat", str(write_jsonl(tmp_path / "many.jsonl", lines))).code == 0
    ollama_server.default = model
    proc = _start_run(ready)
    _wait_for(lambda: (ready.data_dir / DB_FILE).exists(), what="the database")
    # No busy timeout: SQLite's busy handler backs off so long that the runner would
    # finish first. Spin instead, and grab the write lock between two candidates.
    lock = raw_connect(ready.data_dir, isolation_level=None, timeout=0)
    try:
        deadline = time.monotonic() + 60
        while True:
            assert time.monotonic() < deadline, "phase 3 never started"
            try:
                lock.execute("BEGIN IMMEDIATE")
            except RawOperationalError:
                continue
            if lock.execute("SELECT count(*) FROM facts").fetchone()[0] > 0:
                break  # the runner is inside phase 3 and now blocks on its next candidate
            lock.execute("ROLLBACK")
            time.sleep(0.001)
        applied_at_kill = lock.execute("SELECT count(*) FROM facts").fetchone()[0]
        _kill(proc)
        lock.execute("ROLLBACK")
    finally:
        lock.close()
    assert 0 < applied_at_kill < 160, "the kill did not land in the middle of phase 3"
    _check_consistent(ready, fragments=160)
    assert len(ready("facts", "--json").json()) == 160
    runs = json.loads(ready("journal", "--json").out)
    finished = [e["data"]["status"] for e in runs if e["action"] == "run.finished"]
    assert finished[-1] == "done"


def test_second_runner_is_skipped_while_the_first_holds_the_lease(
    ready: Cli, ollama_server: OllamaServer, tmp_path: Path
) -> None:
    model = ScriptedModel()
    _three_documents(ready, tmp_path, model)
    release = threading.Event()

    def responder(body: dict[str, Any]) -> Any:
        release.wait(30)
        return reply(model(body))

    ollama_server.default = responder
    proc = _start_run(ready)
    try:
        _wait_for(lambda: len(ollama_server.chat_bodies()) >= 1, what="the first runner's request")
        second = ready("sleep", "run", "--json").json()
        assert second["status"] == "skipped"
        assert second["lease_holder"].split(":")[1] == str(proc.pid)
    finally:
        release.set()
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert json.loads(out)["status"] == "done"


def _set_lease(cli: Cli, holder: str, expires: datetime) -> None:
    conn = _db(cli)
    try:
        conn.execute(
            "INSERT OR REPLACE INTO leases (name, holder, expires_at) VALUES ('sleep', ?, ?)",
            (holder, utc_text(expires)),
        )
    finally:
        conn.close()


def test_a_live_lease_of_another_host_skips(ready: Cli, tmp_path: Path) -> None:
    ready("fragments")  # creates the store
    _set_lease(ready, "laptop:4242:abcd", datetime.now(UTC) + timedelta(minutes=5))
    out = ready("sleep", "run", "--json").json()
    assert out["status"] == "skipped"
    assert out["lease_holder"] == "laptop:4242:abcd"


def test_an_expired_lease_is_taken_over(ready: Cli, ollama_server: OllamaServer, tmp_path: Path) -> None:
    model = ScriptedModel()
    ollama_server.default = model
    _three_documents(ready, tmp_path, model)
    _set_lease(ready, "laptop:4242:abcd", datetime.now(UTC) - timedelta(seconds=1))
    out = ready("sleep", "run", "--json").json()
    assert out["status"] == "done"
    assert out["applied"] == 3
    assert _scalar(ready, "SELECT count(*) FROM leases") == 0  # released after the run
