"""Kept media (screen crops, speech clips) that belong to fragments: reading, writing, deleting.

Only files under the data dir are ever deleted: an ingested image's own path
(`image_path`) is the owner's file, not ours. Reading goes through `MediaFiles`, so
a sealed crop or clip of an encrypted store comes back decrypted, in memory only.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from persona_desktop.domain.model import Fragment
from persona_desktop.errors import PersonaError
from persona_desktop.ports import MediaFiles

MEDIA_KEYS = ("crop_path", "clip")
IMAGE_KEYS = ("crop", "crop_path", "image", "image_path")
AUDIO_KEYS = ("clip", "clip_path", "audio")


class PlainMedia:
    """Media files as they are: what a store without encryption (and a test) uses."""

    def write(self, path: Path, data: bytes, mtime: float | None = None) -> None:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = path.with_name(f".{path.name}.tmp")
        fd = os.open(tmp, os.O_CREAT | os.O_TRUNC | os.O_WRONLY, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        if mtime is not None:
            os.utime(tmp, (mtime, mtime))
        os.replace(tmp, path)

    def read(self, path: Path) -> bytes:
        try:
            return path.read_bytes()
        except OSError as exc:
            raise PersonaError(f"{path.name}: {exc.strerror or exc}") from None


class MediaReader:
    """What the review window and memory browser use to show a crop or play a clip."""

    def __init__(self, data_dir: Path, files: MediaFiles | None = None) -> None:
        self.data_dir = data_dir
        self.files: MediaFiles = files if files is not None else PlainMedia()

    def path_of(self, locator: dict[str, Any], keys: Sequence[str]) -> Path | None:
        """The kept file a locator points at, if the owner kept it and retention has not removed it."""
        for key in keys:
            value = locator.get(key)
            if isinstance(value, str) and value:
                path = Path(value)
                path = path if path.is_absolute() else self.data_dir / path
                if path.is_file():
                    return path
        return None

    def read(self, path: Path) -> bytes | None:
        """The file's plain bytes, or None when it cannot be opened."""
        try:
            return self.files.read(path)
        except PersonaError:
            return None


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


def purge_expired_files(root: Path, pattern: str, now: datetime, retention_days: int) -> int:
    """Delete the files under `root` matching `pattern` whose modification time is more than
    `retention_days` before `now`, then the folders left empty; return how many files.

    The one retention routine of kept media, screen crops and speech clips alike: a clip's
    mtime is set to its capture time, a crop is written as it is captured."""
    if not root.is_dir():
        return 0
    cutoff = (now - timedelta(days=retention_days)).timestamp()
    removed = 0
    for path in root.glob(pattern):
        try:
            if _own_file(root, path) and path.lstat().st_mtime < cutoff:
                path.unlink()
                removed += 1
        except FileNotFoundError:
            continue
    for folder in root.iterdir():
        if folder.is_dir() and not folder.is_symlink() and not any(folder.iterdir()):
            folder.rmdir()
    return removed


def _own_file(root: Path, path: Path) -> bool:
    """A regular file reached through real folders: the app never writes a link, so a link
    under `root` (a planted one, or one from a restored backup) is neither followed nor
    counted; a purge only ever deletes inside the data folder."""
    folder = root
    for name in path.relative_to(root).parts[:-1]:
        folder = folder / name
        if folder.is_symlink():
            return False
    return stat.S_ISREG(path.lstat().st_mode)
