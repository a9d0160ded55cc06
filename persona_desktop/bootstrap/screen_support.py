"""What screen capture can do on this desktop: cheap to ask, so the tray asks it at any time.

Kept apart from `bootstrap.screen`, whose adapters load numpy, Pillow, mss and
Tesseract's binding: a question about the desktop must not load the capture stack.
"""

from __future__ import annotations

import os
import sys

from persona_desktop.capture.screen_desktop import DesktopSession, ScreenSupport, detect, support_for
from persona_desktop.config import Settings


def current_desktop() -> DesktopSession:
    return detect(os.environ, sys.platform)


def screen_support(settings: Settings, desktop: DesktopSession | None = None) -> ScreenSupport:
    """What screen capture can do on this desktop, with the owner's choice about flashing."""
    return support_for(desktop or current_desktop(), settings.values.capture.periodic_with_flash)
