"""Window information from Hyprland: `hyprctl -j clients` and `hyprctl -j monitors`.

Not run here (Hyprland is not in Debian 12); the parsing is tested on recorded replies of the
documented shape. A window is visible when it is mapped, not hidden, and on a workspace
some monitor shows (its active or its open special workspace). Hyprland does not report the
stacking order: tiled windows come first, then floating, then fullscreen and pinned ones,
each group in focus order (the most recently focused last, i.e. on top).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Mapping, Sequence

from persona_desktop.adapters.wayland.sway import MAX_COORD, MAX_TITLE, UNPLACED, WindowListError
from persona_desktop.errors import CaptureUnavailableError
from persona_desktop.ports.screen import Box, WindowDesc, as_pid, bounds

TIMEOUT_S = 2.0
MAX_REPLY = 16 * 1024 * 1024


class HyprlandWindows:
    def __init__(self) -> None:
        exe = shutil.which("hyprctl")
        if exe is None:
            raise CaptureUnavailableError("hyprctl is not on PATH")
        self._exe = exe
        try:
            self._query("monitors")
        except WindowListError as exc:
            raise CaptureUnavailableError(f"Hyprland does not answer: {exc}") from None

    def windows(self) -> list[WindowDesc]:
        return visible_clients(self._query("clients"), self._query("monitors"))

    def layout(self) -> Box | None:
        return monitors_layout(self._query("monitors"))

    def close(self) -> None:
        return None

    def _query(self, what: str) -> object:
        try:
            proc = subprocess.run([self._exe, "-j", what], capture_output=True, timeout=TIMEOUT_S,
                                  check=False, stdin=subprocess.DEVNULL)  # fmt: skip
        except (subprocess.TimeoutExpired, OSError) as exc:
            raise WindowListError(f"hyprctl {what}: {exc}") from None
        if proc.returncode != 0 or len(proc.stdout) > MAX_REPLY:
            raise WindowListError(f"hyprctl {what} failed (exit {proc.returncode})")
        try:
            return json.loads(proc.stdout)
        except (ValueError, RecursionError) as exc:
            raise WindowListError(f"hyprctl {what}: not JSON: {exc}") from None


def _int(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or abs(value) > MAX_COORD:
        return None
    return int(value)


def _pair(value: object) -> tuple[int, int] | None:
    if not isinstance(value, Sequence) or isinstance(value, str) or len(value) != 2:
        return None
    a, b = _int(value[0]), _int(value[1])
    return None if a is None or b is None else (a, b)


def _workspace_id(value: object) -> int | None:
    return _int(value.get("id")) if isinstance(value, Mapping) else None


def _monitor_box(m: Mapping[str, object]) -> Box | None:
    """A monitor's logical box: its mode divided by its scale, swapped when rotated."""
    x, y, w, h = (_int(m.get(k)) for k in ("x", "y", "width", "height"))
    scale = m.get("scale", 1.0)
    if (
        x is None
        or y is None
        or not w
        or not h
        or not isinstance(scale, int | float)
        or not 0.1 <= scale <= 10
    ):
        return None
    transform = m.get("transform", 0)
    if isinstance(transform, int) and transform % 2 == 1:
        w, h = h, w
    return (x, y, x + round(w / scale), y + round(h / scale))


def monitors_layout(monitors: object) -> Box | None:
    if not isinstance(monitors, list):
        raise WindowListError("hyprctl monitors: not a list")
    return bounds(
        b for m in monitors if isinstance(m, Mapping) and not m.get("disabled") and (b := _monitor_box(m))
    )


def _shown_workspaces(monitors: list[object]) -> set[int]:
    shown: set[int] = set()
    for m in monitors:
        if not isinstance(m, Mapping) or m.get("disabled"):
            continue
        for key in ("activeWorkspace", "specialWorkspace"):
            wid = _workspace_id(m.get(key))
            if wid:  # 0: no special workspace open
                shown.add(wid)
    return shown


def visible_clients(clients: object, monitors: object) -> list[WindowDesc]:
    if not isinstance(clients, list) or not isinstance(monitors, list):
        raise WindowListError("hyprctl: clients or monitors is not a list")
    shown = _shown_workspaces(monitors)
    ranked: list[tuple[int, int, WindowDesc]] = []
    for n, c in enumerate(clients):
        if not isinstance(c, Mapping) or c.get("mapped") is False or c.get("hidden") is True:
            continue
        if _workspace_id(c.get("workspace")) not in shown:
            continue
        at, size = _pair(c.get("at")), _pair(c.get("size"))
        if at is None or size is None or size[0] <= 0 or size[1] <= 0:
            raise WindowListError(UNPLACED)
        focus = _int(c.get("focusHistoryID"))
        layer = 2 if c.get("fullscreen") or c.get("pinned") else 1 if c.get("floating") else 0
        desc = WindowDesc(
            title=str(c.get("title") or "")[:MAX_TITLE],
            app=str(c.get("class") or c.get("initialClass") or "")[:MAX_TITLE],
            box=(at[0], at[1], at[0] + size[0], at[1] + size[1]),
            active=focus == 0,
            wid=n + 1,
            pid=as_pid(c.get("pid")),
        )
        ranked.append((layer, -(focus if focus is not None else 1_000_000), desc))
    ranked.sort(key=lambda r: (r[0], r[1]))
    return [d for _, _, d in ranked]
