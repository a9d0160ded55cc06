"""Screenshots with `grim` (wlroots' screencopy protocol): the fallback on sway, Hyprland and
other wlroots desktops whose portal has no Screenshot. grim writes the picture to a pipe (PPM,
no compression, no file left anywhere) and must finish within a deadline."""

from __future__ import annotations

import os
import shutil
import subprocess

from persona_desktop.adapters.wayland.shot_file import MAX_FILE_BYTES, ShotFileError, decode_rgb
from persona_desktop.errors import CaptureUnavailableError
from persona_desktop.ports.screen import Pixels

GRIM_TIMEOUT_S = 10.0


class GrimShooter:
    name = "grim"

    def __init__(self, timeout_s: float = GRIM_TIMEOUT_S) -> None:
        exe = shutil.which("grim")
        if exe is None:
            raise CaptureUnavailableError("grim is not installed (Debian/Ubuntu package grim)")
        if not os.environ.get("WAYLAND_DISPLAY"):
            raise CaptureUnavailableError("grim needs a Wayland session, and WAYLAND_DISPLAY is not set")
        self._exe = exe
        self.timeout_s = timeout_s

    def take(self) -> Pixels:
        try:
            proc = subprocess.run(
                [self._exe, "-t", "ppm", "-"],
                capture_output=True,
                timeout=self.timeout_s,
                check=False,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired:
            raise CaptureUnavailableError(f"grim did not finish within {self.timeout_s:g} s") from None
        except OSError as exc:
            raise CaptureUnavailableError(f"grim cannot run: {exc}") from None
        if proc.returncode != 0:
            why = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            raise CaptureUnavailableError(
                f"grim failed ({why[-1][:200] if why else f'exit {proc.returncode}'}); "
                "this compositor may not offer wlroots screencopy"
            )
        if len(proc.stdout) > MAX_FILE_BYTES:
            raise CaptureUnavailableError("grim's screenshot is larger than any screen")
        try:
            return decode_rgb(proc.stdout, "grim's screenshot")
        except ShotFileError as exc:
            raise CaptureUnavailableError(str(exc)) from None

    def close(self) -> None:
        return None
