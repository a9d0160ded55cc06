"""The tray app says the truth about screen capture (issue 11 item 6) and asks the desktop first
on Wayland: an all-black X11 grab and a Wayland session without a working grab switch capture
off with a message that says why and what works; never a silent empty capture."""

from __future__ import annotations

import shlex
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from persona_desktop.adapters.wayland import gnome_shortcut
from persona_desktop.app import build_shell
from persona_desktop.bootstrap import Runtime
from persona_desktop.config import Settings
from persona_desktop.domain.model import Kind
from persona_desktop.ui.context import UiContext
from persona_desktop.ui.shell import Shell
from tests.screen_support import xvfb
from tests.ui_support import ui_ctx

__all__ = ["ui_ctx"]

TIMEOUT = 30_000
SESSION_VARS = ("DISPLAY", "WAYLAND_DISPLAY", "XDG_SESSION_TYPE", "XDG_CURRENT_DESKTOP", "SWAYSOCK",
                "HYPRLAND_INSTANCE_SIGNATURE", "DBUS_SESSION_BUS_ADDRESS", "KDE_FULL_SESSION")  # fmt: skip


@pytest.fixture
def no_session(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in SESSION_VARS:
        monkeypatch.delenv(key, raising=False)


@pytest.fixture
def app_shell(ui_ctx: UiContext, runtime: Runtime, no_session: None) -> Iterator[tuple[Shell, list[str]]]:
    """The tray app's shell with the real capture loops attached, and what it told the owner."""
    sh = build_shell(ui_ctx, runtime)
    notes: list[str] = []
    sh.notified.connect(lambda _title, message: notes.append(message))
    yield sh, notes
    assert sh.shutdown()


def _saved(ctx: UiContext) -> Settings:
    return Settings.load(ctx.settings.path)  # type: ignore[arg-type]


def _screen_texts(runtime: Runtime) -> list[str]:
    with runtime.uow.read() as uow:
        return [f.text for f in uow.fragments.all(Kind.SCREEN)]


@pytest.mark.xvfb
def test_an_all_black_x11_grab_switches_capture_off_and_says_why(
    app_shell: tuple[Shell, list[str]], ui_ctx: UiContext, runtime: Runtime, qtbot: QtBot,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """An X server whose screen is black (what XWayland gives for Wayland windows)."""
    sh, notes = app_shell
    with xvfb(800, 600) as display:
        monkeypatch.setenv("DISPLAY", display)
        sh.screen_action.trigger()
        try:
            qtbot.waitUntil(lambda: any("all black" in m for m in notes), timeout=TIMEOUT)
            qtbot.waitUntil(lambda: not sh.screen_action.isChecked(), timeout=TIMEOUT)
        finally:
            sh.capture.shutdown()  # the loop's X connection must end before the X server does
    [message] = [m for m in notes if "all black" in m]
    assert "Screen capture is off" in message and "desktop portal" in message  # why, and what works
    assert _saved(ui_ctx).get("capture.screen_enabled") is False
    assert _screen_texts(runtime) == []


def test_a_wayland_session_without_a_working_grab_says_why_and_stays_off(
    app_shell: tuple[Shell, list[str]], ui_ctx: UiContext, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GNOME on Wayland with no reachable desktop portal (no session bus): the first screenshot
    is asked from the focused Enable window, fails, and capture stays off with the reason."""
    sh, notes = app_shell
    monkeypatch.setenv("XDG_SESSION_TYPE", "wayland")
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-77")
    monkeypatch.setenv("XDG_CURRENT_DESKTOP", "ubuntu:GNOME")
    access = sh.screen_access
    assert access is not None
    sh.screen_action.trigger()
    window = access.window
    assert window is not None and window.isVisible()  # the focused window comes first
    assert (
        "flashes" in window.text.text()
        and "Nothing from this first screenshot is stored" in window.text.text()
    )
    window.enable_button.click()
    qtbot.waitUntil(lambda: "D-Bus session bus" in window.status.text(), timeout=TIMEOUT)
    assert "GNOME on Wayland" in window.status.text()  # what works here
    assert not sh.screen_action.isChecked() and _saved(ui_ctx).get("capture.screen_enabled") is False
    assert not window.ask_again_button.isVisible()  # not a refusal: nothing to forget
    window.close()
    assert not sh.screen_action.isChecked()

    # once allowed earlier (say, before the portal broke), the loop itself reports it and stops
    ui_ctx.settings.set("capture.screen_confirmed", True)
    sh.screen_action.trigger()
    qtbot.waitUntil(lambda: any("D-Bus session bus" in m for m in notes), timeout=TIMEOUT)
    qtbot.waitUntil(lambda: not sh.screen_action.isChecked(), timeout=TIMEOUT)
    assert _saved(ui_ctx).get("capture.screen_enabled") is False


def test_capture_now_on_wayland_asks_from_the_enable_window_first(
    app_shell: tuple[Shell, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    sh, _notes = app_shell
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-77")
    access = sh.screen_access
    assert access is not None and access.capture_now_action in sh.menu_actions()
    access.capture_now_action.trigger()
    assert access.window is not None and access.window.isVisible()
    access.window.close()


def test_settings_and_first_run_say_what_works_here(
    app_shell: tuple[Shell, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    sh, _notes = app_shell
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-0")
    monkeypatch.setenv("XDG_CURRENT_DESKTOP", "GNOME")
    dialog = sh.open_settings()
    assert (
        "GNOME on Wayland" in dialog.screen_box.text.text()
        and not dialog.screen_box.ask_again_button.isHidden()
    )
    assert "capture.screen_confirmed" not in dialog.fields
    first = sh.open_first_run()
    assert "only when you ask" in first.screen_note.text() and "flashes" in first.screen_note.text()
    first.hide()
    dialog.hide()


def test_on_gnome_settings_adds_the_capture_shortcut_beside_the_owners_own(
    app_shell: tuple[Shell, list[str]], runtime: Runtime, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:  # fmt: skip
    """GNOME Settings' custom shortcuts, through the real gsettings and schema (keyfile backend)."""
    sh, notes = app_shell
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-0")
    monkeypatch.setenv("XDG_CURRENT_DESKTOP", "GNOME")
    monkeypatch.setenv("GSETTINGS_BACKEND", "keyfile")
    theirs = "/org/gnome/settings-daemon/plugins/media-keys/custom-keybindings/it's-mine/"
    subprocess.run(["gsettings", "set", gnome_shortcut.SCHEMA, "custom-keybindings",
                    f"[{gnome_shortcut.gvariant_string(theirs)}]"], check=True)  # fmt: skip
    dialog = sh.open_settings()
    assert not dialog.screen_box.shortcut_button.isHidden()
    for _ in range(2):  # twice: one entry, not two
        dialog.screen_box.shortcut_button.click()
        qtbot.waitUntil(lambda: any("Ctrl+Alt+P now captures" in m for m in notes), timeout=TIMEOUT)
        notes.clear()
    listed = _gsettings("get", gnome_shortcut.SCHEMA, "custom-keybindings")
    assert gnome_shortcut.parse_paths(listed) == [theirs, gnome_shortcut.ENTRY]
    where = f"{gnome_shortcut.RELOCATABLE}:{gnome_shortcut.ENTRY}"
    command = shlex.split(gnome_shortcut.parse_paths(f"[{_gsettings('get', where, 'command')}]")[0])
    assert command[-4:] == ["--data-dir", str(runtime.data_dir), "capture", "screen"]
    assert _gsettings("get", where, "binding") == "'<Control><Alt>p'"
    dialog.hide()


def _gsettings(*args: str) -> str:
    return subprocess.run(["gsettings", *args], capture_output=True, text=True, check=True).stdout.strip()
