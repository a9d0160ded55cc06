"""Reading found lines: from memory when their pixels were read before, else by OCR.

Lines not read before are cropped whole (with a few pixels of margin), light text on
dark turned dark on light, stacked one under another and read in one Tesseract call
(one process start, ~0.1 s, instead of one per line). What a crop gave is remembered
under the line's key (a hash of its pixels), already redacted and relative to the
line's own corner: the same pixels anywhere else later (scrolled, a window moved, an
app switched back to) are known without OCR. The memory holds redacted text only.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from persona_desktop.capture.screen_lines import TextLine
from persona_desktop.capture.screen_redact import RedactedLine, redact_line
from persona_desktop.ports.screen import Box, OcrEngine, OcrLine, OcrWord, Pixels

MARGIN = 4  # px of the screen kept around a line's ink when it is cropped for OCR
SLACK = 2  # px a word's box may reach past the line's ink (antialiased edges)
GAP = 16  # px of white between stacked crops
MAX_CANVAS_ROWS = 16_000  # one OCR call reads at most this tall a stack
CAPACITY = 4096  # lines remembered (least recently seen forgotten first)


@dataclass(frozen=True, slots=True)
class ReadLine:
    at: int  # index of the found line it was read in
    red: RedactedLine  # in frame pixels


def _move_box(b: Box, dx: int, dy: int) -> Box:
    return (b[0] + dx, b[1] + dy, b[2] + dx, b[3] + dy)


def moved(red: RedactedLine, dx: int, dy: int) -> RedactedLine:
    return RedactedLine(red.line.shifted(dx, dy), red.labels, tuple(_move_box(b, dx, dy) for b in red.boxes))


def _clip(line: OcrLine, width: int, height: int) -> OcrLine:
    """A line read in a crop, its boxes kept within the found line (plus SLACK px): Tesseract
    now and then gives one word a box twice as tall, reaching into the next crop."""

    def fit(b: Box) -> Box:
        return (
            max(b[0], -SLACK),
            max(b[1], -SLACK),
            min(b[2], width + SLACK),
            min(b[3], height + SLACK),
        )

    words = tuple(OcrWord(w.text, w.conf, fit(w.box)) for w in line.words)
    return OcrLine(line.text, line.conf, fit(line.box), line.block, line.par, line.line, words)


def stack(crops: Sequence[Pixels], gap: int = GAP) -> tuple[Pixels, npt.NDArray[np.int64]]:
    """Crops one under another on a white canvas; returns it and each crop's top row."""
    width = max(c.shape[1] for c in crops)
    heights = [c.shape[0] for c in crops]
    offsets = np.cumsum([0] + [hh + gap for hh in heights[:-1]]).astype(np.int64)
    canvas = np.full((int(offsets[-1]) + heights[-1], width), 255, dtype=np.uint8)
    for c, off in zip(crops, offsets, strict=True):
        canvas[int(off) : int(off) + c.shape[0], : c.shape[1]] = c
    return canvas, offsets


def _crop(gray: Pixels, box: Box) -> tuple[Pixels, int, int]:
    """The line with its margin, dark on light; and where the crop starts, from the line's corner."""
    h, w = gray.shape
    left, top = max(0, box[0] - MARGIN), max(0, box[1] - MARGIN)
    crop = gray[top : min(h, box[3] + MARGIN), left : min(w, box[2] + MARGIN)]
    if int(np.median(crop)) < 128:
        crop = 255 - crop
    return crop, left - box[0], top - box[1]


def _chunks(heights: Sequence[int]) -> list[range]:
    out: list[range] = []
    start, rows = 0, 0
    for i, hh in enumerate(heights):
        if i > start and rows + hh > MAX_CANVAS_ROWS:
            out.append(range(start, i))
            start, rows = i, 0
        rows += hh + GAP
    out.append(range(start, len(heights)))
    return out


class LineReader:
    def __init__(self, ocr: OcrEngine, capacity: int = CAPACITY) -> None:
        self.ocr = ocr
        self._capacity = capacity
        self._known: OrderedDict[bytes, tuple[RedactedLine, ...]] = OrderedDict()

    def forget(self) -> None:
        self._known.clear()

    def read(self, gray: Pixels, found: Sequence[TextLine]) -> tuple[list[ReadLine], int]:
        """The text of each found line, in frame pixels; and how many lines needed OCR."""
        todo: dict[bytes, TextLine] = {}
        for t in found:
            if t.key in self._known:
                self._known.move_to_end(t.key)
            elif t.key not in todo:
                todo[t.key] = t
        if todo:
            self._ocr(gray, list(todo.values()))
        out: list[ReadLine] = []
        for i, t in enumerate(found):
            out.extend(ReadLine(i, moved(red, t.box[0], t.box[1])) for red in self._known[t.key])
        while len(self._known) > self._capacity:
            self._known.popitem(last=False)
        return out, len(todo)

    def _ocr(self, gray: Pixels, lines: list[TextLine]) -> None:
        crops = [_crop(gray, t.box) for t in lines]
        for part in _chunks([c[0].shape[0] for c in crops]):
            canvas, offsets = stack([crops[i][0] for i in part])
            got: list[list[OcrLine]] = [[] for _ in part]
            for line in self.ocr.read_lines(canvas):
                cy = (line.box[1] + line.box[3]) // 2
                k = max(0, int(np.searchsorted(offsets, cy, side="right")) - 1)
                _, dx, dy = crops[part[k]]
                box = lines[part[k]].box
                got[k].append(_clip(line.shifted(dx, dy - int(offsets[k])), box[2] - box[0], box[3] - box[1]))
            for k, i in enumerate(part):
                self._known[lines[i].key] = tuple(redact_line(line) for line in got[k])
