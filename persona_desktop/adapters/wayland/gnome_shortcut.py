"""A GNOME keyboard shortcut for "Capture this screen now", added on the owner's click.

Apps get no global shortcut on GNOME before the GlobalShortcuts portal (GNOME 48), so this
adds an entry to GNOME Settings' own "Custom Shortcuts" (schema
org.gnome.settings-daemon.plugins.media-keys, written with `gsettings`): it runs
`persona-desktop capture screen`, one portal screenshot read and stored. The owner sees it,
changes or removes it in Settings > Keyboard; other custom shortcuts are kept as they are.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from collections.abc import Sequence

from persona_desktop.errors import CaptureUnavailableError

SCHEMA = "org.gnome.settings-daemon.plugins.media-keys"
RELOCATABLE = f"{SCHEMA}.custom-keybinding"
ENTRY = "/org/gnome/settings-daemon/plugins/media-keys/custom-keybindings/persona-desktop-capture/"
BINDING = "<Control><Alt>p"
SHOWN_AS = "Ctrl+Alt+P"
NAME = "Persona Desktop: capture this screen"
TIMEOUT_S = 5.0

_ITEM = re.compile(r"""\s*(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)")\s*(,|$)""")


def gvariant_string(text: str) -> str:
    """`text` as a GVariant string literal (what `gsettings set` parses)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def parse_paths(text: str) -> list[str]:
    """The `as` value `gsettings get` prints (`@as []`, `['/a/', "/it's/"]`) as a list.

    Anything else raises: an unreadable list must not be rewritten, or the owner's own
    shortcuts would be lost."""
    body = text.strip().removeprefix("@as").strip()
    if not (body.startswith("[") and body.endswith("]")):
        raise CaptureUnavailableError(
            f"GNOME's custom shortcuts could not be read ({text[:100]!r}); nothing changed"
        )
    body = body[1:-1].strip()
    out: list[str] = []
    pos = 0
    while pos < len(body):
        m = _ITEM.match(body, pos)
        if m is None:
            raise CaptureUnavailableError(
                f"GNOME's custom shortcuts could not be read ({text[:100]!r}); nothing changed"
            )
        raw = m.group(1) if m.group(1) is not None else m.group(2)
        out.append(re.sub(r"\\(.)", r"\1", raw))
        pos = m.end()
    return out


def _gsettings(*args: str) -> str:
    exe = shutil.which("gsettings")
    if exe is None:
        raise CaptureUnavailableError("gsettings is not installed (package libglib2.0-bin)")
    try:
        proc = subprocess.run([exe, *args], capture_output=True, text=True, timeout=TIMEOUT_S, check=False,
                              stdin=subprocess.DEVNULL)  # fmt: skip
    except (subprocess.TimeoutExpired, OSError) as exc:
        raise CaptureUnavailableError(f"gsettings did not run: {exc}") from None
    if proc.returncode != 0:
        why = (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1][:200]
        raise CaptureUnavailableError(f"the GNOME shortcut cannot be added: {why}")
    return proc.stdout.strip()


def install_capture_shortcut(command: Sequence[str], binding: str = BINDING) -> str:
    """Add (or update) the shortcut running `command`; returns how it is shown (Ctrl+Alt+P)."""
    paths = parse_paths(_gsettings("get", SCHEMA, "custom-keybindings"))
    if ENTRY not in paths:
        paths.append(ENTRY)
        _gsettings(
            "set", SCHEMA, "custom-keybindings", "[" + ", ".join(gvariant_string(p) for p in paths) + "]"
        )
    where = f"{RELOCATABLE}:{ENTRY}"
    _gsettings("set", where, "name", gvariant_string(NAME))
    _gsettings("set", where, "command", gvariant_string(shlex.join(command)))
    _gsettings("set", where, "binding", gvariant_string(binding))
    return SHOWN_AS if binding == BINDING else binding
