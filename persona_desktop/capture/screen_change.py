"""Change detection before OCR: where a frame holds new pixels, and what only moved.

An unchanged frame costs one array compare. In a changed one, the cells (8 x 32 px)
that differ from the last frame are grouped into regions. In each region a vertical
shift is looked for: a vote over row hashes finds the offset at which most of the
region's rows are the last frame's rows moved up or down (scrolling), and pixels equal
to the last frame's at that offset count as moved, not new. What is left is returned as
dirty boxes: the only places where something not seen in the last frame can be.
Where text is, and which whole lines a dirty box touches, is the line finder's job
(`screen_lines`); this module knows pixels only.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from persona_desktop.ports.screen import Box, Pixels

CELL_H = 8  # px: change granularity in rows
CELL_W = 32  # px: change granularity in columns
FULL_FRACTION = 0.6  # of the frame's cells dirty: treat the whole frame as new
MIN_SHIFT_ROWS = 24  # a region lower than this is not searched for a shift
MIN_VOTES = 4  # distinct rows that must agree on one offset
HASH_STRIDE = 2  # every 2nd column is hashed for the vote; matches are then compared in full

_rng = np.random.default_rng(0x5C4EE7)
_WEIGHTS = _rng.integers(1, 2**63, size=8192, dtype=np.uint64) | np.uint64(1)

Rows = npt.NDArray[np.bool_]
Grid = npt.NDArray[np.bool_]
Words = npt.NDArray[np.uint32]


@dataclass(frozen=True, slots=True)
class Shift:
    """Rows `box` of this frame are the last frame's rows `dy` lower (dy > 0: scrolled down)."""

    box: Box
    dy: int


@dataclass(frozen=True, slots=True)
class Change:
    changed: bool
    full: bool  # first frame, new size, or most of the frame is new: look at all of it
    dirty: tuple[Box, ...]  # where new pixels are, in frame pixels; the whole frame when `full`
    shifts: tuple[Shift, ...] = ()  # content that moved (scrolled), not new
    fraction: float = 0.0  # of the frame's cells that are dirty

    @property
    def unchanged(self) -> bool:
        return not self.changed


def words_of(pixels: Pixels) -> Words:
    """One 24-bit value per pixel (BGRA's undefined alpha byte masked off)."""
    if pixels.ndim == 2:
        return pixels.astype(np.uint32)
    if pixels.shape[2] == 4:
        flat = np.ascontiguousarray(pixels).view(np.uint32).reshape(pixels.shape[:2])
        masked: Words = flat & np.uint32(0x00FFFFFF)
        return masked
    c = pixels.astype(np.uint32)
    packed: Words = c[:, :, 0] | (c[:, :, 1] << np.uint32(8)) | (c[:, :, 2] << np.uint32(16))
    return packed


def cell_grid(diff: npt.NDArray[np.bool_]) -> Grid:
    """Which 8 x 32 px cells hold a differing pixel."""
    h, w = diff.shape
    gh, gw = -(-h // CELL_H), -(-w // CELL_W)
    padded = np.zeros((gh * CELL_H, gw * CELL_W), dtype=bool)
    padded[:h, :w] = diff
    grid: Grid = np.asarray(padded.reshape(gh, CELL_H, gw, CELL_W).any(axis=(1, 3)))
    return grid


def _runs(v: npt.NDArray[np.bool_]) -> list[tuple[int, int]]:
    edges = np.flatnonzero(np.diff(np.concatenate(([0], v.view(np.int8), [0]))))
    return list(zip(edges[::2].tolist(), edges[1::2].tolist(), strict=True))


def regions(grid: Grid) -> list[tuple[int, int, int, int]]:
    """Bounding boxes (in cells: left, top, right, bottom) of groups of set cells; cells
    one apart count as touching, so a changed word is one region, not one per letter."""
    runs: list[tuple[int, int, int]] = []  # (row, c0, c1)
    for row in np.flatnonzero(grid.any(axis=1)).tolist():
        merged: list[list[int]] = []
        for c0, c1 in _runs(grid[row]):
            if merged and c0 - merged[-1][1] <= 1:
                merged[-1][1] = c1
            else:
                merged.append([c0, c1])
        runs.extend((row, a, b) for a, b in merged)
    parent = list(range(len(runs)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    by_row: dict[int, list[int]] = defaultdict(list)
    for i, (row, _, _) in enumerate(runs):
        by_row[row].append(i)
    for i, (row, c0, c1) in enumerate(runs):
        for above in (row - 1, row - 2):
            for j in by_row.get(above, ()):
                _, d0, d1 = runs[j]
                if d0 <= c1 and c0 <= d1:  # overlapping or diagonal, one cell of slack
                    parent[find(i)] = find(j)
    boxes: dict[int, list[int]] = {}
    for i, (row, c0, c1) in enumerate(runs):
        b = boxes.setdefault(find(i), [c0, row, c1, row + 1])
        b[0], b[1], b[2], b[3] = min(b[0], c0), min(b[1], row), max(b[2], c1), max(b[3], row + 1)
    return sorted((b[0], b[1], b[2], b[3]) for b in boxes.values())


def _row_hashes(words: Words) -> npt.NDArray[np.uint64]:
    sample = words[:, ::HASH_STRIDE]
    hashes: npt.NDArray[np.uint64] = (sample.astype(np.uint64) * _WEIGHTS[: sample.shape[1]]).sum(
        axis=1, dtype=np.uint64
    )
    return hashes


def find_shift(prev: Words, cur: Words, box: Box) -> int | None:
    """The vertical offset at which most rows of `box` in `cur` are rows of `prev` (None:
    no offset is backed by MIN_VOTES rows). Only the middle half of the box's columns
    votes, so that a still margin or a scrollbar at its sides does not spoil every row."""
    left, top, right, bottom = box
    n = bottom - top
    quarter = (right - left) // 4
    left, right = left + quarter, right - quarter
    if n < MIN_SHIFT_ROWS or right - left < CELL_W or right - left > _WEIGHTS.shape[0] * HASH_STRIDE:
        return None
    lo, hi = max(0, top - n), min(prev.shape[0], bottom + n)
    cur_rows = cur[top:bottom, left:right]
    plain = (cur_rows == cur_rows[:, :1]).all(axis=1)  # blank rows match anything: no vote
    where: dict[int, list[int]] = defaultdict(list)
    for y, hv in enumerate(_row_hashes(prev[lo:hi, left:right]).tolist()):
        where[hv].append(y + lo)
    votes: Counter[int] = Counter()
    for y, hv in enumerate(_row_hashes(cur_rows).tolist()):
        if plain[y]:
            continue
        for py in where.get(hv, ())[:4]:
            if py != top + y:
                votes[py - (top + y)] += 1
    if not votes:
        return None
    dy, count = votes.most_common(1)[0]
    return dy if count >= MIN_VOTES else None


def explained(prev: Words, cur: Words, box: Box, dy: int) -> npt.NDArray[np.bool_]:
    """Which pixels of `box` in `cur` equal `prev`'s pixel `dy` rows lower: moved content."""
    left, top, right, bottom = box
    out = np.zeros((bottom - top, right - left), dtype=bool)
    y0, y1 = max(top, -dy), min(bottom, prev.shape[0] - dy)
    if y0 < y1:
        out[y0 - top : y1 - top] = cur[y0:y1, left:right] == prev[y0 + dy : y1 + dy, left:right]
    return out


class ChangeDetector:
    """Remembers, per key (a monitor), the last frame."""

    def __init__(self, full_fraction: float = FULL_FRACTION) -> None:
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
            return Change(True, True, (whole,), fraction=1.0)
        if np.array_equal(prev, pixels):
            return Change(False, False, ())
        prev_w, cur_w = words_of(prev), words_of(pixels)
        diff = prev_w != cur_w
        if not diff.any():  # only the undefined alpha byte differed
            return Change(False, False, ())
        dirty = diff
        shifts: list[Shift] = []
        for c0, r0, c1, r1 in regions(cell_grid(diff)):
            box: Box = (c0 * CELL_W, r0 * CELL_H, min(w, c1 * CELL_W), min(h, r1 * CELL_H))
            cols = np.flatnonzero(diff[box[1] : box[3], box[0] : box[2]].any(axis=0))
            box = (box[0] + int(cols[0]), box[1], box[0] + int(cols[-1]) + 1, box[3])  # the changed columns
            dy = find_shift(prev_w, cur_w, box)
            if dy is None:
                continue
            if dirty is diff:
                dirty = diff.copy()
            dirty[box[1] : box[3], box[0] : box[2]] &= ~explained(prev_w, cur_w, box, dy)
            shifts.append(Shift(box, dy))
        grid = cell_grid(dirty)
        fraction = float(grid.mean())
        if fraction >= self._full_fraction:
            return Change(True, True, (whole,), tuple(shifts), fraction)
        boxes = tuple(
            (c0 * CELL_W, r0 * CELL_H, min(w, c1 * CELL_W), min(h, r1 * CELL_H))
            for c0, r0, c1, r1 in regions(grid)
        )
        return Change(True, False, boxes, tuple(shifts), fraction)
