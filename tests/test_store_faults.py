"""Faults of the machine, not of the code: a lost lease, a full disk, a locked, damaged,
read-only or foreign-owned store, any umask. Each asserts the owner's one line, nothing
lost, nothing applied twice, and that the next run finishes.

Disk full uses a real 2 MB tmpfs mounted for the test (root with mount rights; skipped
with the reason otherwise); read-only uses a tmpfs remounted read-only.
"""

from __future__ import annotations

import contextlib
import logging
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from persona_desktop.adapters.store.cipher import SQLITE_HEADER
from persona_desktop.adapters.store.database import DB_FILE
from persona_desktop.adapters.store.tables import utc_text
from tests.conftest import Cli, chat_line, write_jsonl
from tests.ollama_server import OllamaServer, reply, schema_keys
from tests.sleep_support import ScriptedModel, enable_cycle
from tests.store_support import raw_connect
from tests.test_sleep_faults import _check_consistent, _start_run, _three_documents, _wait_for

pytestmark = pytest.mark.timeout(120)


def _sql(cli: Cli, sql: str, *args: Any) -> Any:
    conn = raw_connect(cli.data_dir, isolation_level=None, timeout=30)
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()


def _one_line(err: str) -> None:
    assert "Traceback" not in err
    assert err.strip().count("\n") == 0, err


# --- a lost lease ---------------------------------------------------------------------------


def test_a_runner_that_lost_its_lease_stops_before_its_next_write(
    cli: Cli, ollama_server: OllamaServer, tmp_path: Path
) -> None:
    ready = enable_cycle(cli, ollama_server)
    model = ScriptedModel()
    _three_documents(ready, tmp_path, model)
    release = threading.Event()
    held: list[dict[str, Any]] = []

    def responder(body: dict[str, Any]) -> Any:
        if not held:  # the first runner's first call: held while its lease is taken over
            held.append(body)
            release.wait(60)
        return reply(model(body))

    ollama_server.default = responder
    proc = _start_run(ready)
    try:
        _wait_for(lambda: bool(held), what="the first runner's first call")
        # The first runner stalled past its lease; a second one took it over.
        later = utc_text(datetime.now(UTC) + timedelta(minutes=10))
        _sql(ready, "UPDATE leases SET holder = 'laptop:4242:other', expires_at = ?", later)
    finally:
        release.set()
    out, err = proc.communicate(timeout=60)
    import json

    first = json.loads(out)
    assert first["status"] == "skipped", (first, err)
    assert first["lease_lost"] is True and first["lease_holder"] == "laptop:4242:other"
    assert "took over this sleep cycle's lease" in first["error"]
    calls_by_first = len(ollama_server.chat_bodies())
    assert calls_by_first == 1, "the runner that lost its lease called the model again"
    assert _sql(ready, "SELECT count(*) FROM candidates") == [(0,)]
    assert _sql(ready, "SELECT count(*) FROM fragments WHERE read_run_id IS NOT NULL") == [(0,)]
    # The other runner's lease runs out; the next run finishes everything, once.
    _sql(ready, "UPDATE leases SET expires_at = ?", utc_text(datetime.now(UTC) - timedelta(seconds=1)))
    done = _check_consistent(ready, fragments=3)
    assert done["applied"] == 3
    assert _sql(ready, "SELECT count(*) FROM observations") == [(1,)]
    extraction = [b for b in ollama_server.chat_bodies() if "candidates" in schema_keys(b)]
    assert len(extraction) == 1 + 3  # the lost call, then each document once
    assert ready("journal", "verify").code == 0


# --- a full disk ----------------------------------------------------------------------------


@contextlib.contextmanager
def _tmpfs(path: Path, size: str) -> Iterator[Path]:
    path.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(
            f"cannot mount a tmpfs here ({mounted.stderr.strip() or 'not root'}): disk-full test skipped"
        )
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def _fill(folder: Path) -> Path:
    """Take every free byte of `folder`'s file system."""
    filler = folder / "filler"
    with open(filler, "wb", buffering=0) as fh:
        block = b"\0" * 65536
        with contextlib.suppress(OSError):
            while True:
                fh.write(block)
        with contextlib.suppress(OSError):
            while True:
                fh.write(b"\0")
    return filler


def test_disk_full_mid_run_says_so_loses_nothing_and_the_next_run_finishes(
    tmp_path: Path, ollama_server: OllamaServer, capsys: pytest.CaptureFixture[str]
) -> None:
    with _tmpfs(tmp_path / "disk", "3m") as disk:
        cli = enable_cycle(Cli(disk / "data", capsys), ollama_server)
        model = ScriptedModel()
        _three_documents(cli, tmp_path, model)
        release = threading.Event()
        calls: list[int] = []

        def responder(body: dict[str, Any]) -> Any:
            calls.append(1)
            if len(calls) == 2:  # the second document's reply waits until the disk is full
                release.wait(60)
            return reply(model(body))

        ollama_server.default = responder
        proc = _start_run(cli)
        filler: Path | None = None
        try:
            _wait_for(lambda: len(calls) >= 2, what="the second extraction call")
            filler = _fill(disk)
        finally:
            release.set()
        _out, err = proc.communicate(timeout=60)
        assert proc.returncode != 0
        _one_line(err)
        assert "is full" in err and "free at least" in err and "nothing already stored was lost" in err
        assert "hobby" not in err, "the owner's messages were printed"
        assert filler is not None
        filler.unlink()
        assert len(cli("fragments", "--json").json()) == 3
        out_json = _check_consistent(cli, fragments=3)
        assert out_json["status"] == "done"
        assert len(cli("facts", "--json").json()) == 3
        assert cli("journal", "verify").code == 0


def test_disk_full_when_saving_settings_or_importing_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], logged_warnings: list[logging.LogRecord]
) -> None:
    with _tmpfs(tmp_path / "disk", "1m") as disk:
        cli = Cli(disk / "data", capsys)
        assert cli("fragments").code == 0
        filler = _fill(disk)
        lines = [chat_line(str(i), f"message {i} " + "x" * 200) for i in range(200)]
        result = cli("ingest", "chat", str(write_jsonl(tmp_path / "big.jsonl", lines)))
        assert result.code == 1
        _one_line(result.err)
        assert "is full" in result.err
        setting = cli("config", "set", "sleep.enabled", "true")
        assert setting.code == 1
        _one_line(setting.err)
        assert "is full" in setting.err
        assert not list((disk / "data").glob(".settings-*")), "a half-written settings file was left"
        filler.unlink()
        assert cli("ingest", "chat", str(write_jsonl(tmp_path / "big.jsonl", lines))).code == 0
        assert len(cli("fragments", "--json").json()) == 200
    # the full disk is the machine's fault, not a bug: logged as such, for the owner's report
    assert logged_warnings and all(r.getMessage().startswith("environment failure") for r in logged_warnings)


# --- locked, damaged, read-only, foreign-owned, newer ----------------------------------------


def test_a_locked_store_is_one_line(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    from persona_desktop.adapters.store import database

    assert cli("fragments").code == 0
    monkeypatch.setattr(database, "BUSY_TIMEOUT_S", 0.2)
    holder = raw_connect(cli.data_dir, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        result = cli("config", "set", "sleep.enabled", "true")  # settings only: no lock needed
        assert result.code == 0
        result = cli("forget", "day", "2026-11-20")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert result.code == 1
    _one_line(result.err)
    assert "is busy: another program holds its lock" in result.err


def _damage_fragment_pages(data_dir: Path) -> None:
    """Overwrite the middle of the file: pages of the fragments table, not the schema."""
    conn = raw_connect(data_dir)  # with the key when the store is encrypted
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page = int(conn.execute("PRAGMA page_size").fetchone()[0])  # SQLCipher answers text
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.close()
    with open(data_dir / DB_FILE, "r+b") as fh:
        for n in range(pages // 3, 2 * pages // 3):
            fh.seek(n * page)
            fh.write(b"\xa5" * page)


@pytest.mark.parametrize("encrypted", [True, False], ids=["encrypted", "plaintext"])
def test_a_damaged_store_is_named_and_then_opened_read_only(
    cli: Cli, tmp_path: Path, encrypted: bool
) -> None:
    """Encrypted, a damaged page fails its HMAC: SQLCipher reports it as SQLite reports damage
    (SQLITE_CORRUPT), never as a wrong key, and the read-only fallback opens with the key."""
    if not encrypted:
        assert cli("config", "set", "storage.encrypted", "false").code == 0
    lines = [chat_line(str(i), f"message number {i} " + "y" * 300) for i in range(600)]
    assert cli("ingest", "chat", str(write_jsonl(tmp_path / "m.jsonl", lines))).code == 0
    assert ((cli.data_dir / DB_FILE).read_bytes()[:16] != SQLITE_HEADER) is encrypted
    _damage_fragment_pages(cli.data_dir)
    result = cli("fragments")
    assert result.code == 1
    _one_line(result.err)
    assert "is damaged (database disk image is malformed)" in result.err
    assert "passphrase" not in result.err and "key" not in result.err
    # No sqlite3 shell reads an encrypted store: the way out is the read-only fallback.
    assert ("fragments --json" in result.err) is encrypted and (".recover" in result.err) is not encrypted
    again = cli("sources")
    assert "opened read-only" in again.err  # the damage is remembered: reads may still work
    facts = cli("facts", "--json")  # pages the damage did not reach still read, with the key
    assert facts.code == 0 and facts.json() == [], facts.err
    write = cli("ingest", "chat", str(write_jsonl(tmp_path / "n.jsonl", [chat_line("new", "hi")])))
    assert write.code == 1
    assert "damaged and was opened read-only" in write.err or "is damaged" in write.err
    _one_line(write.err.splitlines()[-1])


def test_an_encrypted_store_damaged_at_its_first_page_is_damaged_not_a_wrong_passphrase(
    cli: Cli, tmp_path: Path
) -> None:
    """SQLCipher cannot tell a damaged first page from a wrong key (both fail page 1's HMAC:
    "file is not a database"). The passphrase is checked first, against keyinfo.json's
    AES-GCM tag: right passphrase -> the file is damaged; wrong one -> wrong passphrase."""
    assert cli("ingest", "chat", str(write_jsonl(tmp_path / "m.jsonl", [chat_line("1", "hello")]))).code == 0
    db = cli.data_dir / DB_FILE
    with open(db, "r+b") as fh:
        fh.seek(100)  # past the salt, inside page 1's encrypted content
        fh.write(b"\xa5" * 64)
    damaged = db.read_bytes()
    result = cli("fragments")
    assert result.code == 1
    _one_line(result.err)
    assert "the passphrase is right" in result.err and "the file is damaged" in result.err
    assert "wrong passphrase" not in result.err
    wrong = cli.process("fragments", env={"PERSONA_DESKTOP_PASSPHRASE": "not the passphrase"})
    assert wrong.code == 1 and "wrong passphrase" in wrong.err and "damaged" not in wrong.err
    assert db.read_bytes() == damaged, "a refused open changed the store"


def test_a_read_only_file_system_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with _tmpfs(tmp_path / "ro", "2m") as disk:
        cli = Cli(disk / "data", capsys)
        assert cli("fragments").code == 0
        remount = subprocess.run(["mount", "-o", "remount,ro", str(disk)], capture_output=True, check=False)
        if remount.returncode != 0:
            pytest.skip("cannot remount the tmpfs read-only")
        result = cli("fragments")
        assert result.code == 1
        _one_line(result.err)
        assert f"the data dir {disk / 'data'} is on a read-only file system" in result.err


@pytest.mark.skipif(os.geteuid() != 0, reason="giving the data dir to another user needs root")
def test_a_data_dir_owned_by_someone_else_is_refused(cli: Cli) -> None:
    assert cli("fragments").code == 0
    os.chown(cli.data_dir, 65534, 65534)
    try:
        result = cli("fragments")
    finally:
        os.chown(cli.data_dir, os.getuid(), os.getgid())
    assert result.code == 1
    _one_line(result.err)
    assert f"the data dir {cli.data_dir} belongs to" in result.err and "not to you" in result.err


# --- permissions under any umask ------------------------------------------------------------


def _modes(root: Path) -> dict[str, int]:
    out = {".": os.stat(root).st_mode & 0o777}
    for path in root.rglob("*"):
        out[str(path.relative_to(root))] = os.lstat(path).st_mode & 0o777
    return out


def test_everything_is_private_from_the_first_write_under_umask_000(tmp_path: Path) -> None:
    data = tmp_path / "new" / "data"
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "persona_desktop", "--data-dir", str(data), *args],
            capture_output=True,
            text=True,
            env=env,
            preexec_fn=lambda: os.umask(0),
            check=False,
            timeout=120,
        )

    assert run("config", "set", "sleep.enabled", "true").returncode == 0
    assert _modes(data) == {".": 0o700, "settings.json": 0o600}
    assert os.stat(data.parent).st_mode & 0o777 == 0o700  # a missing parent is made private too
    chat = write_jsonl(tmp_path / "c.jsonl", [chat_line("1", "hello")])
    assert run("ingest", "chat", str(chat)).returncode == 0
    assert run("approve", "x").returncode == 1  # writes nothing, but must not open anything wider
    for name, mode in _modes(data).items():
        if (data / name).is_dir() or name == ".":
            assert mode == 0o700, name
        else:
            assert mode == 0o600, name


def test_settings_saved_in_process_under_umask_000_are_private(tmp_path: Path) -> None:
    from persona_desktop.config import Settings

    old = os.umask(0)
    try:
        settings = Settings(tmp_path / "fresh" / "settings.json")
        settings.set("sleep.enabled", True)
        settings.save()
    finally:
        os.umask(old)
    assert os.stat(tmp_path / "fresh").st_mode & 0o777 == 0o700
    assert os.stat(tmp_path / "fresh" / "settings.json").st_mode & 0o777 == 0o600
