"""Screen-capture test helpers: Pillow-rendered text with known word boxes, an Xvfb of the
test's own, and real X11 windows (a small PySide6 program on the xcb platform)."""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from persona_desktop.adapters.ocr_tesseract import TesseractOcr
from persona_desktop.ports.screen import OcrLine, Pixels

FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
Box = tuple[int, int, int, int]


@dataclass(frozen=True)
class Rendered:
    image: Image.Image
    words: list[list[tuple[str, Box]]]  # per line: each word and its ink box


def render_lines(
    lines: Sequence[str],
    *,
    size: tuple[int, int] = (1200, 600),
    font_px: int = 22,
    left: int = 40,
    top: int = 30,
    gap: float = 1.8,
) -> Rendered:
    font = ImageFont.truetype(str(FONT), font_px)
    img = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(img)
    boxes: list[list[tuple[str, Box]]] = []
    y = top
    for line in lines:
        x = left
        row: list[tuple[str, Box]] = []
        for word in line.split():
            draw.text((x, y), word, fill="black", font=font)
            box = draw.textbbox((x, y), word, font=font)
            row.append((word, box))
            x = box[2] + int(font.getlength(" "))
        boxes.append(row)
        y += int(font_px * gap)
    return Rendered(img, boxes)


def contains(outer: Sequence[int], inner: Sequence[int], slack: int = 4) -> bool:
    return (
        outer[0] <= inner[0] + slack
        and outer[1] <= inner[1] + slack
        and outer[2] >= inner[2] - slack
        and outer[3] >= inner[3] - slack
    )


class StepClock:
    """A clock the test moves; starts now (UTC)."""

    def __init__(self) -> None:
        self.t = datetime.now(UTC)

    def now(self) -> datetime:
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += timedelta(seconds=seconds)


class CountingOcr:
    """The real Tesseract (English), keeping the size of every image it was asked to read."""

    def __init__(self) -> None:
        self.real = TesseractOcr("eng", 50)
        self.shapes: list[tuple[int, ...]] = []

    def read(self, image: Pixels) -> list[OcrLine]:
        self.shapes.append(image.shape)
        return self.real.read(image)

    def read_lines(self, image: Pixels) -> list[OcrLine]:
        self.shapes.append(image.shape)
        return self.real.read_lines(image)


# --- Xvfb ---------------------------------------------------------------------------------


@contextmanager
def xvfb(width: int = 1280, height: int = 800, screens: int = 1) -> Iterator[str]:
    """A private X server; yields its DISPLAY. Fails (never skips) if Xvfb is missing."""
    exe = shutil.which("Xvfb")
    assert exe, "Xvfb is not installed (Debian package xvfb; scripts/install-system-deps installs it)"
    read_fd, write_fd = os.pipe()
    args = [exe, "-displayfd", str(write_fd), "-nolisten", "tcp", "-noreset"]
    for i in range(screens):
        args += ["-screen", str(i), f"{width}x{height}x24"]
    if screens > 1:
        args.append("+xinerama")
    proc = subprocess.Popen(args, pass_fds=(write_fd,), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    os.close(write_fd)
    try:
        ready, _, _ = select.select([read_fd], [], [], 15)
        assert ready, "Xvfb did not report a display within 15 s"
        number = os.read(read_fd, 64).decode().strip()
        assert number, f"Xvfb failed: {proc.stderr.read().decode() if proc.stderr else ''}"
        yield f":{number}"
    finally:
        os.close(read_fd)
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
        if proc.stderr:
            proc.stderr.close()


WINDOW_SCRIPT = textwrap.dedent(
    """
    import sys
    from PySide6.QtCore import QEvent, QObject, QTimer, Qt
    from PySide6.QtGui import QFont, QGuiApplication
    from PySide6.QtWidgets import QApplication, QLabel


    class Painted(QObject):
        # says "ready" once the window was exposed and its text painted (and flushed)

        def eventFilter(self, watched, event):
            if event.type() == QEvent.Type.Paint and not getattr(self, "told", False):
                window = watched.windowHandle()
                if window is not None and window.isExposed():
                    self.told = True
                    QTimer.singleShot(0, lambda: print("ready", flush=True))  # after the flush
            return False

    title, text, x, y, w, h, px = sys.argv[1:8]
    app = QApplication(["screen-test-window"])
    app.setApplicationName("screentest")
    if len(sys.argv) > 8:  # an app id: Wayland's, and X11's WM_CLASS class
        QGuiApplication.setDesktopFileName(sys.argv[8])
        app.setApplicationName(sys.argv[8])
    label = QLabel(text)
    label.setWindowTitle(title)
    label.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
    label.setStyleSheet("background: white; color: black; padding: 12px;")
    font = QFont("DejaVu Sans")
    font.setPixelSize(int(px))
    label.setFont(font)
    label.setGeometry(int(x), int(y), int(w), int(h))
    painted = Painted()
    label.installEventFilter(painted)
    label.show()
    app.exec()
    """
)


class XWindow:
    """A test window's process (X11 or Wayland)."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream:
                stream.close()


def show_window(
    display: str,
    title: str,
    text: str,
    box: Box,
    font_px: int = 24,
    timeout: float = 20,
    app: str | None = None,
) -> XWindow:
    """A real top-level X11 window showing `text` at `box`, until closed; `app`: its WM_CLASS class."""
    left, top, right, bottom = box
    env = {**os.environ, "DISPLAY": display, "QT_QPA_PLATFORM": "xcb"}
    env.pop("WAYLAND_DISPLAY", None)
    proc = subprocess.Popen(
        [sys.executable, "-c", WINDOW_SCRIPT, title, text, str(left), str(top), str(right - left),
         str(bottom - top), str(font_px), *([app] if app else [])],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    win = XWindow(proc)
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    line = proc.stdout.readline() if ready else ""
    if line.strip() != "ready":
        win.close()
        err = proc.stderr.read() if proc.stderr and not proc.stderr.closed else ""
        raise AssertionError(f"test window did not show: {line!r} {err}")
    return win
