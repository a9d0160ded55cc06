"""The store's key in a real OS keyring: gnome-keyring's Secret Service on a private D-Bus.

Each test runs the CLI as child processes inside `dbus-run-session`, so the session
bus (and the keyring daemon on it) never leaks into the rest of the test run.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from persona_desktop.adapters.keys import key_info
from persona_desktop.adapters.store.cipher import SQLITE_HEADER
from persona_desktop.adapters.store.database import DB_FILE
from tests.conftest import chat_line, write_jsonl
from tests.store_support import run_without_passphrase

pytestmark = pytest.mark.skipif(
    not (shutil.which("dbus-run-session") and shutil.which("gnome-keyring-daemon")),
    reason="needs dbus-run-session and gnome-keyring-daemon (scripts/install-system-deps)",
)

SESSION = """
set -e
export HOME="$KR_HOME" XDG_RUNTIME_DIR="$KR_HOME/run"
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
eval "$(printf 'login password' | gnome-keyring-daemon --unlock --components=secrets)"
eval "$(gnome-keyring-daemon --start --components=secrets)"
for step in "$@"; do
  echo "== $step"
  eval "$step" || echo "rc=$?"
done
"""


def _in_keyring_session(tmp_path: Path, data_dir: Path, steps: list[str]) -> str:
    home = tmp_path / "kr-home"
    home.mkdir(exist_ok=True)
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHON_KEYRING_BACKEND", "PERSONA_DESKTOP_PASSPHRASE", "DBUS_SESSION_BUS_ADDRESS")
    }
    env.update(KR_HOME=str(home), PD=f"{sys.executable} -m persona_desktop --data-dir {data_dir}")
    proc = subprocess.run(
        ["dbus-run-session", "--", "sh", "-c", SESSION, "session", *steps],
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=180,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout + proc.stderr


def test_the_key_is_stored_in_the_keyring_and_found_again(tmp_path: Path, data_dir: Path) -> None:
    chat = write_jsonl(tmp_path / "c.jsonl", [chat_line("1", "kept behind the keyring")])
    out = _in_keyring_session(
        tmp_path,
        data_dir,
        [f"$PD ingest chat {chat}", "$PD fragments --json", "$PD storage --json"],
    )
    assert "rc=" not in out, out
    info = json.loads((data_dir / key_info.KEY_INFO_FILE).read_text())
    assert info["current"]["source"] == "keyring" and "wrapped_key" not in info["current"]
    assert "kept behind the keyring" in out  # the second process found the key
    assert '"key": "keyring"' in out
    assert (data_dir / DB_FILE).read_bytes()[:16] != SQLITE_HEADER
    # Outside that session the keyring is gone: one line, and nothing changes.
    before = (data_dir / DB_FILE).read_bytes()
    proc = run_without_passphrase(data_dir, "fragments")
    assert proc.returncode == 1
    [line] = proc.stderr.strip().splitlines()
    assert "OS keyring" in line and "Traceback" not in proc.stderr
    assert (data_dir / DB_FILE).read_bytes() == before


def test_moving_the_key_from_a_passphrase_into_the_keyring(tmp_path: Path, data_dir: Path) -> None:
    out = _in_keyring_session(
        tmp_path,
        data_dir,
        [
            "PERSONA_DESKTOP_PASSPHRASE=first PYTHON_KEYRING_BACKEND=keyring.backends.fail.Keyring $PD fragments",
            "PERSONA_DESKTOP_PASSPHRASE=first $PD storage keyring",
            "$PD storage --json",
        ],
    )
    assert "rc=" not in out, out
    assert json.loads((data_dir / key_info.KEY_INFO_FILE).read_text())["current"]["source"] == "keyring"
    assert '"key": "keyring"' in out and "re-keyed" in out
