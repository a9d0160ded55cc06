"""The desktop-wide search key on X11: grabbed on the root window, off unless the owner sets one."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import pytest
from pytestqt.qtbot import QtBot

from persona_desktop.adapters.x11_key_grab import X11KeyGrab, parse_key
from persona_desktop.errors import PersonaError
from persona_desktop.ui.shell import Shell
from tests.ui_support import XServer, shell, start_xvfb, stop_xvfb, ui_ctx

__all__ = ["shell", "ui_ctx"]


@pytest.fixture
def bare_x(monkeypatch: pytest.MonkeyPatch) -> Iterator[XServer]:
    server = start_xvfb(with_tray=False)
    monkeypatch.setenv("DISPLAY", server.display)  # libX11's display; Qt itself stays offscreen
    yield server
    stop_xvfb(server)


@pytest.mark.xvfb
def test_the_key_opens_search_from_anywhere_on_the_desktop(
    bare_x: XServer, shell: Shell, qtbot: QtBot
) -> None:
    shell.ctx.settings.set("search.global_shortcut", "Ctrl+Alt+space")
    shell.start_global_shortcut()
    assert shell.global_hotkey is not None and shell.search is None
    with qtbot.waitSignal(shell.global_hotkey.pressed, timeout=10_000):
        subprocess.run(["xdotool", "key", "ctrl+alt+space"], env=bare_x.env(), check=True, timeout=20)
    qtbot.waitUntil(lambda: shell.search is not None and shell.search.isVisible(), timeout=5_000)
    shell.ctx.settings.set("search.global_shortcut", "")
    shell.start_global_shortcut()  # cleared: the grab is released
    assert shell.global_hotkey is None
    with pytest.raises(PersonaError, match="not a key"):
        X11KeyGrab("Ctrl+NoSuchKey")


def test_no_key_by_default_and_bad_keys_are_said_in_words(
    shell: Shell, monkeypatch: pytest.MonkeyPatch
) -> None:
    told: list[str] = []
    shell.notified.connect(lambda _t, m: told.append(m))
    shell.start_global_shortcut()
    assert shell.global_hotkey is None and told == []  # nothing is grabbed unless asked
    for bad in ("space", "Hyper+space", "Ctrl+"):
        with pytest.raises(PersonaError):
            parse_key(bad)
    monkeypatch.delenv("DISPLAY", raising=False)
    shell.ctx.settings.set("search.global_shortcut", "Ctrl+Alt+space")
    shell.start_global_shortcut()
    assert shell.global_hotkey is None and "X11" in told[-1]
