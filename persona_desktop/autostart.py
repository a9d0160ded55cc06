"""The opt-in "Start at login" entry: an XDG autostart file the app writes itself.

Qt-free, so Settings (`app.start_at_login`) and tests can both use it. The entry lives in
`$XDG_CONFIG_HOME/autostart/persona-desktop.desktop` (default `~/.config/autostart`), per the
XDG Autostart specification; nothing is installed system-wide, so the owner alone decides.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from persona_desktop.errors import PersonaError

AUTOSTART_FILE = "persona-desktop.desktop"
MARKER = "X-Persona-Desktop-Autostart=true"


class AutostartError(PersonaError):
    """The autostart entry cannot be written or removed."""


def config_home() -> Path:
    """`$XDG_CONFIG_HOME`, or `~/.config` when it is unset, empty or relative (XDG spec)."""
    value = os.environ.get("XDG_CONFIG_HOME", "")
    if value and os.path.isabs(value):
        return Path(value)
    return Path.home() / ".config"


def autostart_path() -> Path:
    return config_home() / "autostart" / AUTOSTART_FILE


def launch_command() -> list[str]:
    """How this installation is started: the frozen launcher, the installed script, or `python -m`."""
    if getattr(sys, "frozen", False):
        return [sys.executable]
    script = shutil.which("persona-desktop")
    if script:
        return [script]
    return [sys.executable, "-m", "persona_desktop"]


_RESERVED = set(" \t\n\"'\\><~|&;$*?#()`")


def _exec_arg(arg: str) -> str:
    """Quote one argument for a desktop entry's Exec key (Desktop Entry spec, "The Exec key")."""
    if not arg:
        return '""'
    arg = arg.replace("%", "%%")
    if not any(c in _RESERVED for c in arg):
        return arg
    escaped = "".join("\\" + c if c in '"`$\\' else c for c in arg)
    return f'"{escaped}"'


def _desktop_string(value: str) -> str:
    """Escape a value of a desktop entry string key (no newlines, backslashes escaped)."""
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r")


def render_entry(command: Sequence[str]) -> str:
    if not command:
        raise AutostartError("the autostart command is empty")
    exec_line = " ".join(_exec_arg(part) for part in command)
    # TryExec: once the app is uninstalled, the session skips the entry instead of failing.
    try_exec = f"TryExec={_desktop_string(command[0])}\n" if os.path.isabs(command[0]) else ""
    return (
        "[Desktop Entry]\n"
        "Type=Application\n"
        "Version=1.0\n"
        "Name=Persona Desktop\n"
        "Comment=Local-first assistant memory in the tray (started at login by your choice)\n"
        f"{try_exec}"
        f"Exec={_desktop_string(exec_line)}\n"
        "Icon=persona-desktop\n"
        "Terminal=false\n"
        "Categories=Utility;\n"
        "X-GNOME-Autostart-enabled=true\n"
        f"{MARKER}\n"
    )


def enable_autostart(extra_args: Sequence[str] = (), command: Sequence[str] | None = None) -> Path:
    """Write (or rewrite) the autostart entry; returns its path.

    `extra_args` are appended to the launch command (e.g. `["--data-dir", DIR]`);
    `command` replaces the detected launch command.
    """
    path = autostart_path()
    text = render_entry([*(command if command is not None else launch_command()), *extra_args])
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".persona-desktop-", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.chmod(tmp, 0o644)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise AutostartError(f"cannot write the autostart entry {path}: {exc.strerror or exc}") from None
    return path


def disable_autostart() -> bool:
    """Remove the autostart entry; True if there was one."""
    path = autostart_path()
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise AutostartError(f"cannot remove the autostart entry {path}: {exc.strerror or exc}") from None
    return True


def is_enabled() -> bool:
    """True when the entry exists and is not switched off (`Hidden=true` or GNOME's enabled=false)."""
    path = autostart_path()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return False
    except (OSError, UnicodeDecodeError):
        return False
    in_entry = False
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("["):
            in_entry = line == "[Desktop Entry]"
            continue
        if not in_entry or "=" not in line:
            continue
        key, _, value = line.partition("=")
        key, value = key.strip(), value.strip().lower()
        if key == "Hidden" and value == "true":
            return False
        if key == "X-GNOME-Autostart-enabled" and value == "false":
            return False
    return True


def sync_autostart(enabled: bool, extra_args: Sequence[str] = ()) -> None:
    """Make the entry match the `app.start_at_login` setting."""
    if enabled:
        enable_autostart(extra_args)
    else:
        disable_autostart()
