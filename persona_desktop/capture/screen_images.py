"""Where kept screen crops live (`<data dir>/screens/<capture>/...png`) and their retention."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from persona_desktop.services.media import purge_expired_files

SCREENS_DIR = "screens"


def screen_image_dir(data_dir: Path) -> Path:
    return data_dir / SCREENS_DIR


def purge_expired_images(image_dir: Path, now: datetime, retention_days: int) -> int:
    """Delete kept screen crops written more than `retention_days` ago; return how many."""
    return purge_expired_files(image_dir, "*/*.png", now, retention_days)
