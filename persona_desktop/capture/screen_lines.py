"""Where the text lines are, without OCR: whole lines around a changed place.

Ink is where a pixel differs clearly from its left neighbour (glyph strokes do; flat
fills, gradients and horizontal rules do not). Vertical rules, such as window borders,
are long vertical runs of ink and are removed first. The rest is cut recursively
(an XY cut): at blank rows into bands, at wide blank columns into columns, until a
piece splits no further; each piece is a line (or a block whose lines touch).

A changed place is looked at through a window that grows until no line that the
change touches reaches the window's edge: what comes out is always the whole line,
at its full width, never the part of it that changed. A line's key is a hash of its
pixels, so the same line scrolled, moved or shown again has the same key.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from persona_desktop.ports.screen import Box, Pixels

INK = 32  # grey levels between neighbours that count as a stroke edge
RULE = 64  # px: a vertical ink run at least this long is a border, not a glyph
# A blank gap of 4 line heights (at least MIN, at most MAX px) separates two pieces of
# text side by side: word gaps, even justified or tabbed ones ("Total paid      126"),
# are narrower, so a line keeps its context; a sidebar and the text beside it are wider.
MIN_COLUMN_GAP = 16
COLUMN_GAP_LINES = 4.0
MAX_COLUMN_GAP = 128
DOT_FRACTION = 0.45  # a band under this share of the usual height, within DOT_GAP px of a
DOT_GAP = 3  # neighbour, is part of it (i dots, accents, underscores)
MIN_HEIGHT = 5  # px: smaller pieces are specks, not text
MIN_WIDTH = 4
REACH_X = 64  # px: how far a window first reaches beyond the change, sideways
REACH_Y = 40  # and up and down
NEAR_X = 16  # px: a line this close beside a change is touched by it (erased text, moved caret)
NEAR_Y = 2  # px: above or below
MAX_DEPTH = 40
MAX_PIECES = 4000  # pieces one cut looks at, at most

Ink = npt.NDArray[np.bool_]


@dataclass(frozen=True, slots=True)
class TextLine:
    """A line found on screen: its box in frame pixels and the key of its pixels."""

    box: Box
    key: bytes


def to_gray(pixels: Pixels, bgra: bool) -> Pixels:
    """ITU-R 601 luma in integers, from RGB or BGRA (or grey, returned as it is)."""
    if pixels.ndim == 2:
        return pixels
    r, g, b = (2, 1, 0) if bgra else (0, 1, 2)
    acc = pixels[:, :, r].astype(np.uint16) * 77
    acc += pixels[:, :, g].astype(np.uint16) * 150
    acc += pixels[:, :, b].astype(np.uint16) * 29
    gray: Pixels = (acc >> 8).astype(np.uint8)
    return gray


def ink_of(gray: Pixels) -> Ink:
    ink = np.zeros(gray.shape, dtype=bool)
    diff = gray[:, 1:].astype(np.int16) - gray[:, :-1]
    ink[:, 1:] = (diff > INK) | (diff < -INK)
    return _without_rules(ink)


def _without_rules(ink: Ink, length: int = RULE) -> Ink:
    """Ink less its vertical runs of `length` px or more (borders, scrollbar edges)."""
    if ink.shape[0] < length:
        return ink
    start = ink.copy()  # start[y]: ink in every row y .. y+k-1, for k doubling up to `length`
    k = 1
    while k < length:
        step = min(k, length - k)
        start[:-step] &= start[step:]
        start[-step:] = False
        k += step
    if not start.any():
        return ink
    cover = start.copy()  # every pixel of such a run: a start within `length - 1` rows above
    k = 1
    while k < length:
        step = min(k, length - k)
        cover[step:] |= cover[:-step]
        k += step
    out: Ink = ink & ~cover
    return out


def _runs(v: npt.NDArray[np.bool_]) -> list[tuple[int, int]]:
    edges = np.flatnonzero(np.diff(np.concatenate(([0], v.view(np.int8), [0]))))
    return list(zip(edges[::2].tolist(), edges[1::2].tolist(), strict=True))


def _join_dots(bands: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Thin bands right next to a taller one belong to it (the dots of i and j, accents)."""
    if len(bands) < 2:
        return bands
    usual = sorted(e - s for s, e in bands)[len(bands) // 2]
    out = list(bands)
    i = 0
    while i < len(out) and len(out) > 1:
        s, e = out[i]
        if e - s >= DOT_FRACTION * usual:
            i += 1
            continue
        gaps = [(s - out[i - 1][1], i - 1)] if i > 0 else []
        if i + 1 < len(out):
            gaps.append((out[i + 1][0] - e, i + 1))
        gap, j = min(gaps)
        if gap > DOT_GAP:
            i += 1
            continue
        a, b = min(i, j), max(i, j)
        out[a : b + 1] = [(out[a][0], out[b][1])]
        i = a
    return out


def column_gap(line_height: int) -> int:
    """Blank columns that separate two pieces of text standing side by side (px)."""
    return min(MAX_COLUMN_GAP, max(MIN_COLUMN_GAP, int(COLUMN_GAP_LINES * line_height)))


def _columns(cols: npt.NDArray[np.bool_], line_height: int) -> list[tuple[int, int]]:
    gap = column_gap(line_height)
    groups: list[list[int]] = []
    for s, e in _runs(cols):
        if groups and s - groups[-1][1] < gap:
            groups[-1][1] = e
        else:
            groups.append([s, e])
    return [(s, e) for s, e in groups]


def cut(ink: Ink, budget: int = MAX_PIECES) -> list[Box]:
    """The lines (tight ink boxes) of an ink mask, by recursive XY cuts. Past `budget`
    pieces looked at (a screen of specks or noise), what is left is not cut further:
    hostile pixels must not make capture expensive."""
    out: list[Box] = []
    h, w = ink.shape
    stack: list[tuple[int, int, int, int, bool, int]] = [(0, 0, w, h, True, 0)]
    while stack:
        budget -= 1
        left, top, right, bottom, rows_first, depth = stack.pop()
        sub = ink[top:bottom, left:right]
        row_any: Ink = np.asarray(sub.any(axis=1))
        if not row_any.any():
            continue
        col_any: Ink = np.asarray(sub.any(axis=0))
        if budget < 0:
            rows, cols = np.flatnonzero(row_any), np.flatnonzero(col_any)
            out.append(
                (left + int(cols[0]), top + int(rows[0]), left + int(cols[-1]) + 1, top + int(rows[-1]) + 1)
            )
            continue
        bands = _join_dots(_runs(row_any))
        cs = _runs(col_any)
        t, b = top + bands[0][0], top + bands[-1][1]
        lft, rgt = left + cs[0][0], left + cs[-1][1]
        if depth >= MAX_DEPTH:
            out.append((lft, t, rgt, b))
            continue
        if len(bands) > 1 and rows_first:
            stack.extend((lft, top + s, rgt, top + e, False, depth + 1) for s, e in reversed(bands))
            continue
        line_height = sorted(e - s for s, e in bands)[len(bands) // 2]
        columns = _columns(col_any, line_height)
        if len(columns) > 1:
            stack.extend((left + s, t, left + e, b, True, depth + 1) for s, e in reversed(columns))
            continue
        if len(bands) > 1:  # the column did not split: its rows may
            stack.extend((lft, top + s, rgt, top + e, False, depth + 1) for s, e in reversed(bands))
            continue
        out.append((lft, t, rgt, b))
    return out


def _touches(line: Box, change: Box) -> bool:
    return (
        line[0] - NEAR_X < change[2]
        and change[0] < line[2] + NEAR_X
        and line[1] - NEAR_Y < change[3]
        and change[1] < line[3] + NEAR_Y
    )


def _open_sides(line: Box, win: Box, size: tuple[int, int]) -> tuple[bool, bool, bool, bool]:
    """The window's sides (left, top, right, bottom) a line may go on past: ink could be
    beyond them within the gap that `cut` bridges. The frame's own edges close a line."""
    w, h = size
    gap = column_gap(line[3] - line[1]) + 1
    return (
        win[0] > 0 and line[0] - win[0] < gap,
        win[1] > 0 and line[1] - win[1] <= DOT_GAP + 1,
        win[2] < w and win[2] - line[2] < gap,
        win[3] < h and win[3] - line[3] <= DOT_GAP + 1,
    )


def _key(gray: Pixels) -> bytes:
    h = hashlib.blake2b(digest_size=16)
    h.update(np.asarray(gray.shape, dtype=np.int64).tobytes())
    h.update(np.ascontiguousarray(gray).data)
    return h.digest()


def lines_at(gray: Pixels, changes: list[Box]) -> list[TextLine]:
    """The whole lines that the changed boxes touch, each once, top to bottom.

    Each change is looked at through a window that reaches REACH px beyond it and grows on
    every side that a touched line might continue past (short of the frame's edge)."""
    h, w = gray.shape
    found: dict[Box, TextLine] = {}
    for change in changes:
        win = (
            max(0, change[0] - REACH_X),
            max(0, change[1] - REACH_Y),
            min(w, change[2] + REACH_X),
            min(h, change[3] + REACH_Y),
        )
        while True:
            left, top, right, bottom = win
            pieces = [
                (b[0] + left, b[1] + top, b[2] + left, b[3] + top)
                for b in cut(ink_of(gray[top:bottom, left:right]))
            ]
            touched = [p for p in pieces if _touches(p, change)]
            sides = [_open_sides(p, win, (w, h)) for p in touched]
            grow = tuple(any(s[i] for s in sides) for i in range(4))
            if not any(grow):
                break
            span_x, span_y = max(REACH_X, right - left), max(REACH_Y, bottom - top)
            win = (
                max(0, left - span_x) if grow[0] else left,
                max(0, top - span_y) if grow[1] else top,
                min(w, right + span_x) if grow[2] else right,
                min(h, bottom + span_y) if grow[3] else bottom,
            )
        for p in touched:
            if p[2] - p[0] < MIN_WIDTH or p[3] - p[1] < MIN_HEIGHT:
                continue
            if any(_inside(p, q) for q in found):
                continue  # seen through another change's window already
            for q in [q for q in found if _inside(q, p)]:
                del found[q]
            found[p] = TextLine(p, _key(gray[p[1] : p[3], p[0] : p[2]]))
    return sorted(found.values(), key=lambda t: (t.box[1], t.box[0]))


def _inside(a: Box, b: Box) -> bool:
    """Whether `a` lies within `b` (the same line cut from a wider window can come out a
    few pixels apart; a piece inside another is that line, or part of it)."""
    return a[0] >= b[0] and a[1] >= b[1] and a[2] <= b[2] and a[3] <= b[3]
