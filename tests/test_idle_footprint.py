"""The idle tray app loads no capture stack: an owner with capture off pays nothing for it.

numpy, Pillow, mss and Tesseract's binding are about 20 MB of the tray's memory
(bench/bench_ui.py measures the whole); they load when the owner first uses screen
capture. Run in a child process, since this test process has loaded them long ago.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from persona_desktop.bootstrap import open_runtime

CAPTURE_STACK = ("numpy", "PIL", "mss", "pytesseract", "faster_whisper", "ctranslate2", "sounddevice")

_START_LIKE_THE_APP = """
import json, sys, time
from pathlib import Path
from PySide6.QtWidgets import QApplication
from persona_desktop.app import build_context, build_shell
from persona_desktop.bootstrap import open_runtime
from persona_desktop.ui.main_window import MainWindow
from persona_desktop.ui.tray import Tray

app = QApplication(["persona-desktop-probe"])
rt = open_runtime(Path(sys.argv[1]))
shell = build_shell(build_context(rt), rt)
tray = Tray(shell)
window = MainWindow(shell)
window.show()
shell.start()
shell.screen_access.support()  # what the tray asks to show the screen item
end = time.monotonic() + 2.0
while time.monotonic() < end:
    app.processEvents()
    time.sleep(0.02)
print(json.dumps(sorted(m for m in sys.argv[2].split(",") if m in sys.modules)))
window.close()
shell.shutdown()
rt.close()
"""


def test_the_started_app_with_capture_off_has_not_loaded_the_capture_stack(data_dir: Path) -> None:
    open_runtime(data_dir).close()  # the store exists, as on every start but the first
    proc = subprocess.run(
        [sys.executable, "-c", _START_LIKE_THE_APP, str(data_dir), ",".join(CAPTURE_STACK)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        # offscreen even on a developer's desktop; an Ollama host that answers nothing
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen", "OLLAMA_HOST": "127.0.0.1:9"},
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == []
