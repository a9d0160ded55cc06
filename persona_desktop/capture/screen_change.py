"""Change detection before OCR.

An unchanged frame costs one array compare. For a changed one, every pixel row is cut
into cells 64 px wide and each cell is hashed; a row whose cells were all seen in one
of the last frames (at any height, in the same column) holds content already read:
scrolled text, or a window switched back to. Only the other rows are returned, as
full-width bands (text runs along rows), for OCR.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from persona_desktop.capture.screen_ports import Box, Pixels

TILE = 32  # band granularity in pixel rows
MARGIN = 12  # pixel rows added above and below a band, so a line is not cut
STRIP = 64  # cell width in pixels
HISTORY = 12  # frames whose cells count as already read
FULL_FRAME_FRACTION = 0.5
GAP = 48  # px of blank columns that end a text run (word gaps are far narrower)
PAD = 8  # px added left and right of a narrowed band

_rng = np.random.default_rng(0x5C4EE7)
_WEIGHTS = _rng.integers(1, 2**63, size=STRIP, dtype=np.uint64) | np.uint64(1)
_COLUMN_SALT = np.uint64(0x9E3779B97F4A7C15)

U64 = npt.NDArray[np.uint64]
Rows = npt.NDArray[np.bool_]


@dataclass(frozen=True, slots=True)
class Change:
    changed: bool
    full: bool  # first frame, resolution change, or most of the frame is new
    bands: tuple[Box, ...]  # where to OCR, in frame pixels; the whole frame when `full`
    fraction: float  # of pixel rows holding new content

    @property
    def unchanged(self) -> bool:
        return not self.changed


def _words(pixels: Pixels) -> npt.NDArray[np.uint32]:
    """One 24-bit value per pixel (BGRA's undefined alpha byte masked off)."""
    if pixels.ndim == 2:
        return pixels.astype(np.uint32)
    if pixels.shape[2] == 4:
        flat = np.ascontiguousarray(pixels).view(np.uint32).reshape(pixels.shape[:2])
        masked: npt.NDArray[np.uint32] = flat & np.uint32(0x00FFFFFF)
        return masked
    c = pixels.astype(np.uint32)
    packed: npt.NDArray[np.uint32] = c[:, :, 0] | (c[:, :, 1] << np.uint32(8)) | (c[:, :, 2] << np.uint32(16))
    return packed


def diff_rows(prev: Pixels, cur: Pixels) -> Rows | None:
    """Which pixel rows differ, or None when nothing did (the cheap, common case)."""
    if np.array_equal(prev, cur):
        return None
    rows: Rows = (_words(prev) != _words(cur)).any(axis=1)
    return rows if rows.any() else None


def cell_hashes(pixels: Pixels) -> U64:
    """A (rows x cells) hash of each 64-px piece of each pixel row, salted by column."""
    words = _words(pixels).astype(np.uint64)
    h, w = words.shape
    n = w // STRIP
    parts = [(words[:, : n * STRIP].reshape(h, n, STRIP) * _WEIGHTS).sum(axis=2, dtype=np.uint64)]
    if w % STRIP:
        rest = words[:, n * STRIP :]
        parts.append((rest * _WEIGHTS[: rest.shape[1]]).sum(axis=1, dtype=np.uint64)[:, None])
    hashes = np.concatenate(parts, axis=1) if len(parts) > 1 else parts[0]
    salt = np.arange(hashes.shape[1], dtype=np.uint64) * _COLUMN_SALT
    out: U64 = hashes ^ salt
    return out


def bands_of(rows: Rows, height: int, width: int, tile: int = TILE) -> list[Box]:
    """Full-width bands covering the tile rows in which any pixel row is flagged."""
    tiles = np.logical_or.reduceat(rows, np.arange(0, rows.shape[0], tile))
    bands: list[Box] = []
    for r in np.flatnonzero(tiles):
        top = max(0, int(r) * tile - MARGIN)
        bottom = min(height, (int(r) + 1) * tile + MARGIN)
        if bands and top <= bands[-1][3]:
            bands[-1] = (0, bands[-1][1], width, bottom)
        else:
            bands.append((0, top, width, bottom))
    return bands


def _narrow(band: Box, words: npt.NDArray[np.uint32], new_cells: Rows) -> Box:
    """Cut a band down to the text around its new cells: from their columns, widen while
    ink follows within GAP pixels,
    so that a line is kept whole but a clock does not drag the whole screen width along."""
    w = words.shape[1]
    cols = np.flatnonzero(new_cells)
    if cols.size == 0:
        return band
    left, right = int(cols[0]) * STRIP, min(w, (int(cols[-1]) + 1) * STRIP)
    # ink: a column where some pixel differs from its left neighbour (glyphs do; the edge
    # between a window and a full-width taskbar does not)
    ink = np.flatnonzero((words[:, 1:] != words[:, :-1]).any(axis=0)) + 1
    for c in ink[ink < left][::-1]:
        if left - int(c) > GAP:
            break
        left = int(c)
    for c in ink[ink >= right]:
        if int(c) - right > GAP:
            break
        right = int(c) + 1
    return (max(0, left - PAD), band[1], min(w, right + PAD), band[3])


class ChangeDetector:
    """Remembers, per key (a monitor), the last frame and the cells of recent frames."""

    def __init__(self, history: int = HISTORY, full_fraction: float = FULL_FRAME_FRACTION) -> None:
        self._full_fraction = full_fraction
        self._history_len = history
        self._last: dict[str, Pixels] = {}
        self._seen: dict[str, deque[U64]] = {}

    def forget(self, key: str | None = None) -> None:
        if key is None:
            self._last.clear()
            self._seen.clear()
        else:
            self._last.pop(key, None)
            self._seen.pop(key, None)

    def compare(self, key: str, pixels: Pixels) -> Change:
        prev = self._last.get(key)
        self._last[key] = pixels
        h, w = pixels.shape[:2]
        whole: Box = (0, 0, w, h)
        seen = self._seen.setdefault(key, deque(maxlen=self._history_len))
        if prev is None or prev.shape != pixels.shape:
            seen.clear()
            seen.append(np.unique(cell_hashes(pixels)))
            return Change(True, True, (whole,), 1.0)
        if diff_rows(prev, pixels) is None:
            return Change(False, False, (), 0.0)
        cells = cell_hashes(pixels)
        known = np.zeros(cells.shape, dtype=bool)
        for table in seen:  # sorted unique hashes of one earlier frame
            idx = np.searchsorted(table, cells).clip(max=table.shape[0] - 1)
            known |= table[idx] == cells
        new_rows: Rows = np.logical_not(known.all(axis=1))
        seen.append(np.unique(cells))
        fraction = float(new_rows.mean())
        if not new_rows.any():
            return Change(True, False, (), 0.0)  # moved, not new: nothing to read
        bands = bands_of(new_rows, h, w)
        if sum(b[3] - b[1] for b in bands) >= self._full_fraction * h:
            return Change(True, True, (whole,), fraction)
        words = _words(pixels)
        narrowed = tuple(
            _narrow(b, words[b[1] : b[3]], np.logical_not(known[b[1] : b[3]].all(axis=0))) for b in bands
        )
        return Change(True, False, narrowed, fraction)
