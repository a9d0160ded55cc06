"""The opt-in XDG autostart entry ("Start at login"): real files under a private XDG_CONFIG_HOME."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from persona_desktop import __version__, autostart
from persona_desktop.autostart import (
    AutostartError,
    autostart_path,
    disable_autostart,
    enable_autostart,
    is_enabled,
    launch_command,
)
from tests.conftest import Cli


def _entry(path: Path) -> dict[str, str]:
    values: dict[str, str] = {}
    section = ""
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("["):
            section = line
        elif "=" in line and section == "[Desktop Entry]":
            key, _, value = line.partition("=")
            values[key] = value
    return values


def _parse_exec(value: str) -> list[str]:
    """Split an Exec value as the Desktop Entry spec defines it (quoting, escapes, %%)."""
    value = value.replace("\\\\", "\\")  # the string-level escape of the key value
    args: list[str] = []
    cur: list[str] = []
    quoted = False
    started = False
    i = 0
    while i < len(value):
        c = value[i]
        if quoted:
            if c == "\\" and i + 1 < len(value) and value[i + 1] in '"`$\\':
                cur.append(value[i + 1])
                i += 1
            elif c == '"':
                quoted = False
            else:
                cur.append(c)
        elif c == '"':
            quoted = started = True
        elif c == " ":
            if started:
                args.append("".join(cur))
            cur, started = [], False
        else:
            cur.append(c)
            started = True
        i += 1
    assert not quoted, f"unbalanced quotes in Exec={value}"
    if started:
        args.append("".join(cur))
    return [a.replace("%%", "%") for a in args]


def test_enable_writes_the_entry_under_xdg_config_home(tmp_path: Path) -> None:
    assert not is_enabled()
    path = enable_autostart()
    assert path == tmp_path / "xdg-config" / "autostart" / "persona-desktop.desktop"
    assert path == autostart_path()
    entry = _entry(path)
    assert entry["Type"] == "Application"
    assert entry["Name"] == "Persona Desktop"
    assert entry["Icon"] == "persona-desktop"
    assert _parse_exec(entry["Exec"]) == launch_command()
    if Path(launch_command()[0]).is_absolute():
        assert entry["TryExec"] == launch_command()[0]
    assert is_enabled()
    assert oct(path.stat().st_mode & 0o777) == "0o644"


def test_disable_removes_only_the_entry(tmp_path: Path) -> None:
    folder = tmp_path / "xdg-config" / "autostart"
    folder.mkdir(parents=True)
    other = folder / "someone-else.desktop"
    other.write_text("[Desktop Entry]\nType=Application\nExec=true\n")
    enable_autostart()
    assert disable_autostart() is True
    assert not autostart_path().exists()
    assert not is_enabled()
    assert disable_autostart() is False  # nothing left to remove: no error
    assert other.read_text().startswith("[Desktop Entry]")


def test_relative_or_empty_xdg_config_home_falls_back_to_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    for value in ("relative/dir", ""):
        monkeypatch.setenv("XDG_CONFIG_HOME", value)
        path = enable_autostart()
        assert path == home / ".config" / "autostart" / "persona-desktop.desktop"
        assert is_enabled()
        assert disable_autostart()


def test_switched_off_entries_count_as_disabled() -> None:
    path = enable_autostart()
    text = path.read_text()
    path.write_text(text + "Hidden=true\n")
    assert not is_enabled()
    path.write_text(text.replace("X-GNOME-Autostart-enabled=true", "X-GNOME-Autostart-enabled=false"))
    assert not is_enabled()
    path.write_text(text)
    assert is_enabled()
    path.write_bytes(b"\xff\xfe not text")
    assert not is_enabled()


def test_rewriting_is_atomic_and_leaves_no_temp_files() -> None:
    first = enable_autostart(["--data-dir", "/a"])
    second = enable_autostart(["--data-dir", "/b"])
    assert first == second
    assert _parse_exec(_entry(second)["Exec"])[-2:] == ["--data-dir", "/b"]
    assert sorted(p.name for p in second.parent.iterdir()) == ["persona-desktop.desktop"]


def test_exec_quoting_round_trips_awkward_arguments() -> None:
    args = ["--data-dir", '/tmp/my "data" dir/$HOME/`x`/100%/back\\slash', ""]
    path = enable_autostart(args, command=["/opt/persona desktop/persona-desktop"])
    entry = _entry(path)
    assert _parse_exec(entry["Exec"]) == ["/opt/persona desktop/persona-desktop", *args]
    assert entry["TryExec"] == "/opt/persona desktop/persona-desktop"


def test_the_written_command_starts_the_app(tmp_path: Path) -> None:
    """Run the Exec line as a session would (plus --version): it must reach this app."""
    data = tmp_path / "data dir with spaces"
    path = enable_autostart(["--data-dir", str(data)], command=[sys.executable, "-m", "persona_desktop"])
    argv = _parse_exec(_entry(path)["Exec"])
    proc = subprocess.run([*argv, "--version"], capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"persona-desktop {__version__}"


def test_frozen_build_starts_its_own_launcher(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", "/opt/persona-desktop/persona-desktop")
    assert launch_command() == ["/opt/persona-desktop/persona-desktop"]


def test_an_unwritable_location_gives_a_one_line_error(tmp_path: Path) -> None:
    blocker = tmp_path / "xdg-config" / "autostart"
    blocker.parent.mkdir(parents=True)
    blocker.write_text("a file where the folder should be")
    with pytest.raises(AutostartError) as info:
        enable_autostart()
    assert "\n" not in str(info.value)
    assert str(blocker) in str(info.value)
    assert blocker.read_text() == "a file where the folder should be"
    assert not is_enabled()


def test_sync_follows_the_setting() -> None:
    autostart.sync_autostart(True)
    assert is_enabled()
    autostart.sync_autostart(False)
    assert not is_enabled()


def test_entries_pass_desktop_file_validate() -> None:
    """The freedesktop.org validator (desktop-file-utils) accepts the autostart and menu entries."""
    path = enable_autostart(
        ["--data-dir", '/tmp/my "data" dir/100%'], command=["/opt/persona-desktop/persona-desktop"]
    )
    menu_entry = Path(__file__).resolve().parents[1] / "installer" / "deb" / "persona-desktop.desktop"
    for entry in (path, menu_entry):
        proc = subprocess.run(
            ["desktop-file-validate", str(entry)], capture_output=True, text=True, timeout=30, check=False
        )
        assert proc.returncode == 0 and not proc.stdout.strip(), f"{entry}: {proc.stdout}{proc.stderr}"


def test_config_set_start_at_login_writes_and_removes_the_entry(cli: Cli, data_dir: Path) -> None:
    on = cli("config", "set", "app.start_at_login", "true")
    assert on.code == 0, on.err
    assert is_enabled()
    argv = _parse_exec(_entry(autostart_path())["Exec"])
    assert argv[-2:] == ["--data-dir", str(data_dir.resolve())]  # login opens this same data dir
    assert cli("config", "get", "app.start_at_login").out.strip() == "true"
    off = cli("config", "set", "app.start_at_login", "false")
    assert off.code == 0, off.err
    assert not is_enabled()
    assert not autostart_path().exists()


def test_config_set_start_at_login_fails_cleanly_when_the_entry_cannot_be_written(
    cli: Cli, tmp_path: Path
) -> None:
    blocker = tmp_path / "xdg-config" / "autostart"
    blocker.parent.mkdir(parents=True)
    blocker.write_text("a file where the folder should be")
    result = cli("config", "set", "app.start_at_login", "true")
    assert result.code == 1
    assert result.err.count("\n") == 1 and "autostart" in result.err
    assert cli("config", "get", "app.start_at_login").out.strip() == "false"  # the setting did not change
