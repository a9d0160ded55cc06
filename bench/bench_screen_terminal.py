"""The experiment of issue 17 on a real X server: a real terminal, the real capture loop.

Starts its own Xvfb and an xterm (Debian package `xterm`, not needed by the app or the
tests) printing "HH:MM:SS line N: the quarterly report mentions heat pumps and the
Lisbon office" every 1.5 s, runs the screen capture loop (mss, X11 window list,
Tesseract, SQLite) every 10 s for `--seconds`, then prints what was stored: whole lines,
distinct line numbers, scraps (anything else, e.g. "Lisbon" or "126;") and the loop's
CPU (this process + Tesseract) as a share of one core.

    OMP_THREAD_LIMIT=1 .venv/bin/python bench/bench_screen_terminal.py [--seconds 180]
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ["OMP_THREAD_LIMIT"] = "1"

from bench.store_modes import headless_keys
from persona_desktop.adapters.ocr_tesseract import TesseractOcr
from persona_desktop.adapters.screen_mss import MssGrabber
from persona_desktop.adapters.window_x11 import X11WindowInfo
from persona_desktop.bootstrap import open_runtime
from persona_desktop.capture.screen_loop import ScreenCaptureLoop
from persona_desktop.capture.screen_pipeline import ScreenPipeline
from persona_desktop.capture.screen_privacy import ExclusionRules
from persona_desktop.domain.model import Kind
from tests.screen_support import xvfb

LINE = re.compile(
    r"\d\d:\d\d:\d\d line (\d+): the quarterly report mentions heat pumps and the Lisbon office"
)
PRINTER = (
    'n=0; while true; do n=$((n+1)); echo "$(date +%H:%M:%S) line $n: the quarterly report '
    'mentions heat pumps and the Lisbon office"; sleep 1.5; done'
)


class Clock:
    def now(self) -> datetime:
        return datetime.now(UTC)


def cpu() -> float:
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=180)
    ap.add_argument("--interval", type=float, default=10)
    args = ap.parse_args()
    headless_keys()  # the store is encrypted: no keyring here, a passphrase of the bench's own
    if shutil.which("xterm") is None:
        print("xterm is not installed (Debian/Ubuntu: sudo apt install xterm)", file=sys.stderr)
        return 2
    with xvfb(1280, 800) as display, tempfile.TemporaryDirectory() as tmp:
        os.environ["DISPLAY"] = display
        term = subprocess.Popen(
            ["xterm", "-geometry", "100x30+20+20", "-fa", "DejaVu Sans Mono", "-fs", "11",
             "-e", "bash", "-c", PRINTER],
        )  # fmt: skip
        rt = open_runtime(Path(tmp) / "data")
        try:
            time.sleep(2)  # let the terminal map its window
            loop = ScreenCaptureLoop(
                grabber_factory=MssGrabber,
                window_info_factory=X11WindowInfo,
                pipeline=ScreenPipeline(TesseractOcr("eng", 50), ExclusionRules.of([], [])),
                uow_factory=rt.uow,
                clock=Clock(),
                interval_s=args.interval,
            )
            c0 = cpu()
            loop.start()
            time.sleep(args.seconds)
            loop.stop(5)
            spent = cpu() - c0
            with rt.uow.read() as uow:
                texts = [f.text for f in uow.fragments.all(Kind.SCREEN)]
        finally:
            rt.close()
            term.terminate()
            term.wait(5)
    whole = [int(m.group(1)) for t in texts if (m := LINE.fullmatch(t))]
    other = [t for t in texts if not LINE.fullmatch(t)]
    shown = int(args.seconds / 1.5)
    print(f"{args.seconds:.0f} s, a capture every {args.interval:.0f} s, about {shown} lines printed")
    print(f"stored {len(texts)} fragments: {len(whole)} whole lines ({len(set(whole))} distinct line numbers, "
          f"{len(whole) - len(set(whole))} stored twice), {len(other)} other "
          f"({sum(len(t) < 20 for t in other)} under 20 characters)")  # fmt: skip
    for t in other[:10]:
        print(f"  other: {t!r}")
    print(f"capture CPU: {spent:.2f} s = {100 * spent / args.seconds:.2f} % of one core")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
