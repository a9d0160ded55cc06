"""Kept media (screen crops, speech clips) that belong to fragments, and deleting it.

Only files under the data dir are ever deleted: an ingested image's own path
(`image_path`) is the owner's file, not ours.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from persona_desktop.domain.model import Fragment

MEDIA_KEYS = ("crop_path", "clip")


def media_paths(fragments: Iterable[Fragment]) -> set[str]:
    return {str(f.locator[k]) for f in fragments for k in MEDIA_KEYS if f.locator.get(k)}


def delete_media(paths: Iterable[str], data_dir: Path) -> int:
    root = data_dir.resolve()
    deleted = 0
    for raw in paths:
        path = Path(raw)
        path = (path if path.is_absolute() else root / path).resolve()
        if not path.is_relative_to(root) or not path.is_file():
            continue
        path.unlink(missing_ok=True)
        deleted += 1
    return deleted
