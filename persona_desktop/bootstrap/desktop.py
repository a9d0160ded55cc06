"""The desktop integration the ui is handed as plain calls: the Ollama check, start at login,
the Wayland screenshot answer, the GNOME capture shortcut and the desktop-wide search key.

Qt-free wiring, like the rest of `bootstrap`; each adapter is imported when its call is
made (or, for the Ollama check, when the ui asks for it on the GUI thread), so the app
starts without httpx or D-Bus.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from persona_desktop.bootstrap import default_data_dir
from persona_desktop.ports import KeyGrab
from persona_desktop.services.ollama_diagnosis import Diagnosis


def data_dir_args(data_dir: Path) -> list[str]:
    """What a command started outside the app (login, a shortcut) needs to open this data dir."""
    return [] if data_dir == default_data_dir() else ["--data-dir", str(data_dir)]


def diagnoser() -> Callable[[str, str], Diagnosis]:
    """On the GUI thread: import the probe (and httpx) here, then hand a worker the plain call."""
    from persona_desktop.adapters.ollama_probe import check_ollama
    from persona_desktop.services.ollama_diagnosis import HELP_SECTION

    return lambda host, model: check_ollama(host, model, guide=HELP_SECTION)


def autostart_switch(data_dir: Path) -> Callable[[bool], None] | None:
    try:
        from persona_desktop import autostart
    except ImportError:
        return None
    # a non-default data dir must be the one the login start opens too
    extra = data_dir_args(data_dir)

    def apply(on: bool) -> None:
        if on:
            autostart.enable_autostart(extra)
        else:
            autostart.disable_autostart()

    return apply


def forget_screen_refusal() -> list[str]:
    from persona_desktop.adapters.wayland.permission import forget_screenshot_answer

    return forget_screenshot_answer()


def install_capture_shortcut(data_dir: Path) -> str:
    from persona_desktop.adapters.wayland.gnome_shortcut import install_capture_shortcut as install
    from persona_desktop.autostart import launch_command

    return install([*launch_command(), *data_dir_args(data_dir), "capture", "screen"])


def key_grabber(text: str) -> KeyGrab:
    """Grab the owner's search key on X11 (a PersonaError says why not: Wayland, no such key)."""
    from persona_desktop.adapters.x11_key_grab import X11KeyGrab

    return X11KeyGrab(text)
