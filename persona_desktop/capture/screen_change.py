"""Change detection before OCR: an unchanged frame costs one array compare, a changed one
yields the horizontal bands (full-width, since text runs along rows) that need OCR.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from persona_desktop.capture.screen_ports import Box, Pixels

TILE = 32
MARGIN = 12
FULL_FRAME_FRACTION = 0.5


@dataclass(frozen=True, slots=True)
class Change:
    changed: bool
    full: bool  # first frame, resolution change, or most of the frame changed
    bands: tuple[Box, ...]  # where to OCR, in frame pixels; the whole frame when `full`
    fraction: float  # of tile rows that changed

    @property
    def unchanged(self) -> bool:
        return not self.changed


def _as_words(pixels: Pixels) -> npt.NDArray[np.generic]:
    """One comparable value per pixel: BGRA as uint32, else the pixel rows as they are."""
    if pixels.ndim == 3 and pixels.shape[2] == 4 and pixels.flags.c_contiguous:
        return pixels.view(np.uint32).reshape(pixels.shape[0], pixels.shape[1])
    return pixels


def changed_rows(prev: Pixels, cur: Pixels, tile: int = TILE) -> npt.NDArray[np.bool_] | None:
    """Which tile rows (bands of `tile` pixel rows) changed, or None when nothing did."""
    if np.array_equal(prev, cur):  # the common case, and the cheapest test
        return None
    a, b = _as_words(prev), _as_words(cur)
    # for BGRA, ignore X11's undefined alpha byte
    diff = (np.bitwise_xor(a, b) & 0x00FFFFFF) != 0 if a.dtype == np.uint32 else a != b
    while diff.ndim > 1:
        diff = diff.any(axis=-1)
    if not diff.any():
        return None
    rows: npt.NDArray[np.bool_] = np.logical_or.reduceat(diff, np.arange(0, diff.shape[0], tile))
    return rows


def bands_of(rows: npt.NDArray[np.bool_], height: int, width: int, tile: int = TILE) -> list[Box]:
    bands: list[Box] = []
    for r in np.flatnonzero(rows):
        top = max(0, int(r) * tile - MARGIN)
        bottom = min(height, (int(r) + 1) * tile + MARGIN)
        if bands and top <= bands[-1][3]:
            bands[-1] = (0, bands[-1][1], width, bottom)
        else:
            bands.append((0, top, width, bottom))
    return bands


class ChangeDetector:
    """Remembers the last frame per key (a monitor) and reports what changed since."""

    def __init__(self, tile: int = TILE, full_fraction: float = FULL_FRAME_FRACTION) -> None:
        self._tile = tile
        self._full_fraction = full_fraction
        self._last: dict[str, Pixels] = {}

    def forget(self, key: str | None = None) -> None:
        if key is None:
            self._last.clear()
        else:
            self._last.pop(key, None)

    def compare(self, key: str, pixels: Pixels) -> Change:
        prev = self._last.get(key)
        self._last[key] = pixels
        h, w = pixels.shape[:2]
        whole: Box = (0, 0, w, h)
        if prev is None or prev.shape != pixels.shape:
            return Change(True, True, (whole,), 1.0)
        rows = changed_rows(prev, pixels, self._tile)
        if rows is None:
            return Change(False, False, (), 0.0)
        fraction = float(rows.mean())
        bands = bands_of(rows, h, w, self._tile)
        covered = sum(b[3] - b[1] for b in bands)
        if covered >= self._full_fraction * h:
            return Change(True, True, (whole,), fraction)
        return Change(True, False, tuple(bands), fraction)
