"""Retention of kept media (screen crops, speech clips) deletes only its own files.

Someone who can write into the data folder's media tree (or a restored backup) may plant
links there; the hourly purge must never follow one out of the folder, nor stop at one.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

from persona_desktop.capture.screen_images import purge_expired_images
from persona_desktop.capture.speech_clips import purge_expired_clips

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
OLD = datetime(2020, 1, 1, tzinfo=UTC).timestamp()


def _old_file(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x")
    os.utime(path, (OLD, OLD))
    return path


def test_an_expired_crop_goes_and_its_empty_folder_with_it(tmp_path: Path) -> None:
    screens = tmp_path / "screens"
    crop = _old_file(screens / "2020-01-01" / "a.png")
    fresh = screens / "2026-11-30" / "b.png"
    fresh.parent.mkdir(parents=True)
    fresh.write_bytes(b"y")
    assert purge_expired_images(screens, NOW, retention_days=7) == 1
    assert not crop.exists() and not crop.parent.exists()
    assert fresh.exists()


def test_a_planted_folder_link_is_not_followed_out_of_the_data_folder(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    victim = _old_file(outside / "victim.png")
    screens = tmp_path / "data" / "screens"
    screens.mkdir(parents=True)
    (screens / "evil").symlink_to(outside, target_is_directory=True)
    mine = _old_file(screens / "2020-01-01" / "mine.png")

    assert purge_expired_images(screens, NOW, retention_days=7) == 1
    assert victim.exists(), "the purge deleted a file outside the data folder"
    assert not mine.exists()
    assert (screens / "evil").is_symlink()  # left alone: not ours to judge


def test_a_planted_file_link_is_not_followed_and_its_target_stays(tmp_path: Path) -> None:
    outside = _old_file(tmp_path / "outside" / "theirs.ogg")
    clips = tmp_path / "data" / "clips" / "speech"
    day = clips / "2020-01-01"
    day.mkdir(parents=True)
    link = day / "clip.ogg"
    link.symlink_to(outside)
    os.utime(link, (OLD, OLD), follow_symlinks=False)

    assert purge_expired_clips(tmp_path / "data", NOW, retention_days=7) == 0
    assert outside.exists()
