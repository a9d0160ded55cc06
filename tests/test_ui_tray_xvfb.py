"""Under a real X server (Xvfb) with `trayer` as the tray host: the tray icon shows and its
menu works, in a separate process on the xcb platform."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.ui_support import XServer, run_probe, xserver

__all__ = ["xserver"]


@pytest.mark.xvfb
def test_tray_icon_and_menu_under_xvfb(xserver: XServer, tmp_path: Path) -> None:
    shots = tmp_path / "shots"
    proc = run_probe(xserver, str(tmp_path / "data"), str(shots))
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["platform"] == "xcb"
    assert out["tray_available"] is True
    assert out["icon_visible"] is True and out["icon_geometry"][2] > 0
    wanted = [
        "Capture off \u00b7 6 waiting \u00b7 sleep cycle off",  # the state in words comes first
        "Screen capture",
        "Speech capture",
        "Review 6 waiting\u2026",
        "Run sleep cycle now",
        "Memory\u2026",
        "Settings\u2026",
        "Help",
        "About Persona Desktop",
        "Quit",
    ]
    assert [item for item in out["menu"] if item in wanted] == wanted, out["menu"]
    assert out["menu"][0] == wanted[0]
    assert out["state_before"] == "waiting"
    assert "6 waiting for your review" in out["tooltip_before"]
    assert out["screen_setting_saved"] is True
    assert out["screen_fragments"] > 0  # the real loop read the review window off the screen
    assert out["speech_checked"] is False  # no microphone under Xvfb: it says so and stays off
    assert out["speech_messages"] and "no microphone" in out["speech_messages"][0]
    assert "screen capture paused until" in out["paused_tooltip"]
    assert out["review_visible"] and out["memory_visible"] and out["settings_visible"]
    assert out["quit_works"] is True and out["clean_shutdown"] is True
    for name in (
        "review-window",
        "memory-browser",
        "settings-0",
        "first-run",
        "tray-menu",
        "desktop-with-tray",
    ):
        assert (shots / f"{name}.png").stat().st_size > 1000, name
