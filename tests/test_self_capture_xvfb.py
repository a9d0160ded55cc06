"""No self-capture: with the review window, a menu and a tooltip of the app's on screen while
screen capture runs (real Xvfb, Qt on xcb, mss and Tesseract), what they show is never stored,
while another program's window beside them is. Run in a child process: Qt runs offscreen here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.screen_support import show_window, xvfb

pytestmark = [pytest.mark.xvfb, pytest.mark.timeout(180)]

STATEMENT = "The owner keeps a pet zebra named Quintus"
CONTROL = "Another program shows Bartholomew the llama"
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def display() -> Iterator[str]:
    with xvfb(1280, 800) as name:
        control = show_window(name, "Notes", CONTROL, (60, 600, 1000, 700), font_px=22)
        try:
            yield name
        finally:
            control.close()


def _run_app(display: str, mode: str, data_dir: Path) -> dict:
    env = {**os.environ, "DISPLAY": display, "QT_QPA_PLATFORM": "xcb", "OMP_THREAD_LIMIT": "1"}
    env.pop("WAYLAND_DISPLAY", None)
    proc = subprocess.run(
        [sys.executable, "-m", "tests.self_capture_app", mode, str(data_dir), STATEMENT],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=150,
        check=False,
    )
    assert proc.stdout.strip(), proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out.get("code") == 0, (out, proc.stderr[-3000:])
    return out


def _seen(texts: list[str], *words: str) -> bool:
    joined = " ".join(texts).casefold()
    return any(w.casefold() in joined for w in words)


@pytest.mark.parametrize("mode", ["app", "rects"])
def test_the_app_never_captures_its_own_windows(display: str, tmp_path: Path, mode: str) -> None:
    out = _run_app(display, mode, tmp_path / "data")
    texts = out["screen_texts"]
    assert _seen(texts, "Bartholomew"), f"the other program's window was not read: {texts}"
    assert not _seen(texts, "Quintus", "zebra"), f"the app read its own windows: {texts}"
    assert not _seen(texts, "Approve", "Tooltip", "Waiting"), texts


def test_without_the_exclusion_the_statement_would_come_back(display: str, tmp_path: Path) -> None:
    """The control: the same setup, self-exclusion off, reads the statement off the screen."""
    out = _run_app(display, "unprotected", tmp_path / "data")
    assert _seen(out["screen_texts"], "Quintus"), out["screen_texts"]
