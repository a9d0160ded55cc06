"""From a monitor's pixels to stored-ready screen fragments.

Order matters for privacy: excluded windows are dropped (active) or blacked out (visible)
before anything else looks at the pixels; text is redacted before it is compared, kept
or stored. Order matters for cost: an unchanged frame stops at one array compare; a
changed one is OCR'd only in the bands that changed; lines already stored for the same
monitor and application within `dedup` are not stored again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from PIL import Image

from persona_desktop.capture.screen_change import ChangeDetector
from persona_desktop.capture.screen_ports import (
    Box,
    Frame,
    Monitor,
    OcrEngine,
    OcrLine,
    Pixels,
    WindowDesc,
)
from persona_desktop.capture.screen_privacy import ExclusionRules
from persona_desktop.capture.screen_redact import RedactedLine, redact_line, redact_text
from persona_desktop.domain.model import Author, Kind, NewFragment, SourceInfo, Trust

EDGE = 2  # px: a line touching a band's cut edge is only partly inside it


@dataclass(frozen=True, slots=True)
class CaptureResult:
    """What one monitor's frame gave; `source` is None when nothing is to be stored."""

    monitor: int
    status: str  # unchanged | known | excluded | ocr
    source: SourceInfo | None = None
    fragments: list[NewFragment] = field(default_factory=list)
    lines_read: int = 0
    regions: int = 0
    forced: bool = False
    reason: str | None = None
    seen: tuple[tuple[tuple[int, str], str], ...] = ()  # (monitor, app), text: for `remember`


def capture_id(data: bytes | memoryview, salt: str = "") -> str:
    h = hashlib.blake2b(digest_size=8)
    h.update(data)
    h.update(salt.encode())
    return h.hexdigest()


def to_gray(pixels: Pixels, bgra: bool) -> Pixels:
    if pixels.ndim == 2:
        return pixels
    c = pixels.astype(np.uint16)
    r, g, b = (c[:, :, 2], c[:, :, 1], c[:, :, 0]) if bgra else (c[:, :, 0], c[:, :, 1], c[:, :, 2])
    return ((r * 77 + g * 150 + b * 29) >> 8).astype(np.uint8)


BAND_GAP = 24  # px of blank between stacked bands


def _stack(grays: Sequence[Pixels]) -> tuple[Pixels, npt.NDArray[np.int64]]:
    """Bands one under another on a white canvas; returns it and each band's top offset."""
    if len(grays) == 1:
        return grays[0], np.zeros(1, dtype=np.int64)
    width = max(g.shape[1] for g in grays)
    heights = [g.shape[0] for g in grays]
    offsets = np.cumsum([0] + [hh + BAND_GAP for hh in heights[:-1]]).astype(np.int64)
    canvas = np.full((int(offsets[-1]) + heights[-1], width), 255, dtype=np.uint8)
    for g, off in zip(grays, offsets, strict=True):
        canvas[int(off) : int(off) + g.shape[0], : g.shape[1]] = g
    return canvas, offsets


def _intersect(a: Box, b: Box) -> Box | None:
    box = (max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3]))
    return box if box[0] < box[2] and box[1] < box[3] else None


def _window_json(w: WindowDesc | None) -> dict[str, str] | None:
    """Titles are redacted too: a browser title can carry a token from the URL."""
    return None if w is None else {"title": redact_text(w.title)[0], "app": w.app}


class ScreenPipeline:
    def __init__(
        self,
        ocr: OcrEngine,
        rules: ExclusionRules,
        *,
        max_gap: timedelta = timedelta(seconds=300),
        dedup: timedelta = timedelta(hours=1),
        image_dir: Path | None = None,
        image_scale: float = 0.5,
    ) -> None:
        self.ocr = ocr
        self.rules = rules
        self.max_gap = max_gap
        self.dedup = dedup
        self.image_dir = image_dir  # None: screenshots are not kept (the default)
        self.image_scale = image_scale
        self.changes = ChangeDetector()
        self._last_ocr: dict[int, datetime] = {}
        self._seen: dict[tuple[int, str], dict[str, datetime]] = {}

    def reset(self) -> None:
        """Forget previous frames and stored lines: the next capture is read and stored in full."""
        self.forget_frames()
        self._seen.clear()

    def forget_frames(self) -> None:
        """Forget previous frames only: the next capture is read in full, known lines still skipped."""
        self.changes.forget()
        self._last_ocr.clear()

    def remember(self, result: CaptureResult, at: datetime) -> None:
        """Mark a result's lines as stored, so that they are not stored again within `dedup`."""
        for where, text in result.seen:
            self._seen.setdefault(where, {})[text] = at
        for table in self._seen.values():  # keep the memory bounded
            if len(table) > 5000:
                for k in [k for k, t in table.items() if at - t >= self.dedup]:
                    del table[k]

    # --- live frames -------------------------------------------------------------------

    def process(
        self,
        frame: Frame,
        windows: Sequence[WindowDesc],
        at: datetime,
        force: bool = False,
        remember: bool = True,
    ) -> CaptureResult:
        """One monitor's frame. With `remember=False` the caller calls `remember()` once the
        fragments are stored (a pass that is dropped must not count its lines as stored)."""
        mon = frame.monitor
        on_screen = [w for w in windows if _intersect(w.box, mon.box) is not None]
        active = next((w for w in on_screen if w.active), None)
        if active is not None and (rule := self.rules.excludes(active)) is not None:
            self.changes.forget(f"m{mon.index}")  # the next frame is compared afresh
            return CaptureResult(mon.index, "excluded", reason=rule)
        pixels = self._mask(frame, on_screen)
        change = self.changes.compare(f"m{mon.index}", pixels)
        last = self._last_ocr.get(mon.index)
        forced = force or last is None or at - last >= self.max_gap
        if change.unchanged and not forced:
            return CaptureResult(mon.index, "unchanged")
        if not (forced or change.full or change.bands):
            return CaptureResult(mon.index, "known")  # content moved (scrolled, switched back): read before
        full: Box = (0, 0, pixels.shape[1], pixels.shape[0])
        bands = (full,) if forced or change.full else change.bands
        self._last_ocr[mon.index] = at
        lines = self._read(pixels, frame.bgra, bands)
        fresh = self._fresh(mon, lines, on_screen, at)
        if not fresh:
            return CaptureResult(mon.index, "ocr", lines_read=len(lines), regions=len(bands), forced=forced)
        cid = capture_id(
            pixels.data if pixels.flags.c_contiguous else pixels.tobytes(), f"{at.isoformat()}|m{mon.index}"
        )
        image = self._keep_image(pixels, frame.bgra, fresh, cid, mon.index, at)
        source, fragments = self._build(cid, mon, at, fresh, active, image, forced)
        seen = tuple(
            ((mon.index, window.app if window else ""), " ".join(red.line.text.split()))
            for _, _, red, window in fresh
        )
        result = CaptureResult(mon.index, "ocr", source, fragments, len(lines), len(bands), forced, seen=seen)
        if remember:
            self.remember(result, at)
        return result

    def _mask(self, frame: Frame, windows: Sequence[WindowDesc]) -> Pixels:
        """Black out visible excluded windows (on a copy; mss's buffer stays untouched)."""
        mon = frame.monitor
        boxes = [b for w in self.rules.excluded(windows) if (b := _intersect(w.box, mon.box)) is not None]
        if not boxes:
            return frame.pixels
        pixels = frame.pixels.copy()
        for b in boxes:
            pixels[b[1] - mon.top : b[3] - mon.top, b[0] - mon.left : b[2] - mon.left] = 0
        return pixels

    def _read(self, pixels: Pixels, bgra: bool, bands: Sequence[Box]) -> list[tuple[int, OcrLine]]:
        """OCR the bands, stacked into one image (one Tesseract start, ~0.1 s, instead of one
        per band); lines come back in frame pixels with their band's index, partial ones dropped."""
        h = pixels.shape[0]
        grays = [to_gray(pixels[top:bottom, left:right], bgra) for left, top, right, bottom in bands]
        canvas, offsets = _stack(grays)
        out: list[tuple[int, OcrLine]] = []
        for line in self.ocr.read(canvas):
            cy = (line.box[1] + line.box[3]) // 2
            i = max(0, int(np.searchsorted(offsets, cy, side="right")) - 1)
            left, top, _, bottom = bands[i]
            local = line.shifted(0, -int(offsets[i]))
            if local.box[1] < 0 or local.box[3] > bottom - top:
                continue  # straddles two bands: cannot be a real line
            if top > 0 and local.box[1] <= EDGE:
                continue
            if bottom < h and local.box[3] >= bottom - top - EDGE:
                continue
            out.append((i, local.shifted(left, top)))
        return out

    def _fresh(
        self,
        mon: Monitor,
        lines: list[tuple[int, OcrLine]],
        windows: Sequence[WindowDesc],
        at: datetime,
    ) -> list[tuple[int, int, RedactedLine, WindowDesc | None]]:
        """(line number, band, redacted line, window) of lines not stored recently."""
        fresh = []
        for n, (band, line) in enumerate(lines, start=1):
            red = redact_line(line)
            window = self._window_at(mon, line.box, windows)
            seen = self._seen.get((mon.index, window.app if window else ""), {})
            last = seen.get(" ".join(red.line.text.split()))
            if last is not None and at - last < self.dedup:
                continue
            fresh.append((n, band, red, window))
        return fresh

    @staticmethod
    def _window_at(mon: Monitor, box: Box, windows: Sequence[WindowDesc]) -> WindowDesc | None:
        cx, cy = mon.left + (box[0] + box[2]) // 2, mon.top + (box[1] + box[3]) // 2
        for w in reversed(windows):  # topmost first
            if w.box[0] <= cx < w.box[2] and w.box[1] <= cy < w.box[3]:
                return w
        return None

    def _keep_image(
        self,
        pixels: Pixels,
        bgra: bool,
        lines: list[tuple[int, int, RedactedLine, WindowDesc | None]],
        cid: str,
        monitor: int,
        at: datetime,
    ) -> dict[str, Any] | None:
        if self.image_dir is None:
            return None
        pad = 8
        h, w = pixels.shape[:2]
        crop: Box = (
            max(0, min(r.line.box[0] for _, _, r, _ in lines) - pad),
            max(0, min(r.line.box[1] for _, _, r, _ in lines) - pad),
            min(w, max(r.line.box[2] for _, _, r, _ in lines) + pad),
            min(h, max(r.line.box[3] for _, _, r, _ in lines) + pad),
        )
        rgb = pixels[crop[1] : crop[3], crop[0] : crop[2], :3]
        rgb = np.ascontiguousarray(rgb[:, :, ::-1] if bgra else rgb)
        p = 2  # antialiased glyph edges reach past Tesseract's box
        for _, _, red, _ in lines:
            for b in red.boxes:
                top, left = max(0, b[1] - crop[1] - p), max(0, b[0] - crop[0] - p)
                rgb[top : b[3] - crop[1] + p, left : b[2] - crop[0] + p] = 0
        img = Image.fromarray(rgb, mode="RGB")
        size = (max(1, int(img.width * self.image_scale)), max(1, int(img.height * self.image_scale)))
        img = img.resize(size, Image.Resampling.LANCZOS)
        folder = self.image_dir / f"{at:%Y-%m-%d}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{cid}-m{monitor}.png"
        img.save(path, optimize=False)
        return {"path": str(path), "box": list(crop), "scale": self.image_scale}

    def _build(
        self,
        cid: str,
        mon: Monitor,
        at: datetime,
        lines: list[tuple[int, int, RedactedLine, WindowDesc | None]],
        active: WindowDesc | None,
        image: dict[str, Any] | None,
        forced: bool,
    ) -> tuple[SourceInfo, list[NewFragment]]:
        fragments = [
            screen_fragment(
                cid,
                mon.index,
                n,
                red,
                at,
                extra={
                    "monitor_box": [mon.left, mon.top, mon.width, mon.height],
                    "region": band,
                    "window": _window_json(window),
                    "active_window": _window_json(active),
                    "image": image,
                    **_crop_of(red.line.box, image),
                },
                session_part=(window.app if window and window.app else f"m{mon.index}"),
            )
            for n, band, red, window in lines
        ]
        where = f"{active.app}: {redact_text(active.title)[0]}" if active else f"monitor {mon.index}"
        source = SourceInfo(
            key=f"screen:{cid}",
            kind=Kind.SCREEN,
            label=f"screen {at:%Y-%m-%d %H:%M:%S} {where}"[:200],
            meta={
                "capture_id": cid,
                "monitor": mon.index,
                "monitor_box": [mon.left, mon.top, mon.width, mon.height],
                "captured_at": at.isoformat(),
                "active_window": _window_json(active),
                "image": image,
                "forced": forced,
            },
        )
        return source, fragments

    # --- image files (`ingest screen`) -----------------------------------------------

    def process_file_image(
        self, rgb: Pixels, cid: str, at: datetime, path: str
    ) -> tuple[SourceInfo, list[NewFragment]]:
        """OCR a whole image file: no change detection and no dedup, redaction as always."""
        lines = self.ocr.read(to_gray(rgb, bgra=False))
        fragments = [
            screen_fragment(
                cid,
                0,
                n,
                redact_line(line),
                at,
                extra={"file": path, "image_path": path, "crop_bbox": xywh(line.box)},
                session_part="file",
            )
            for n, line in enumerate(lines, start=1)
        ]
        source = SourceInfo(
            key=f"screen:{cid}",
            kind=Kind.SCREEN,
            label=f"screen image {Path(path).name}"[:200],
            meta={"capture_id": cid, "file": path, "captured_at": at.isoformat(), "lines": len(lines)},
        )
        return source, fragments


def xywh(box: Box) -> list[int]:
    """Locators hold boxes as [left, top, width, height], like Tesseract."""
    return [box[0], box[1], box[2] - box[0], box[3] - box[1]]


def _crop_of(box: Box, image: dict[str, Any] | None) -> dict[str, Any]:
    """Where the kept crop is, and the line's box in the crop's own (scaled) pixels."""
    if image is None:
        return {}
    (cl, ct, _, _), k = image["box"], image["scale"]
    x, y, w, h = xywh(box)
    return {
        "crop_path": image["path"],
        "crop_bbox": [round((x - cl) * k), round((y - ct) * k), round(w * k), round(h * k)],
    }


def screen_fragment(
    cid: str,
    monitor: int,
    n: int,
    red: RedactedLine,
    at: datetime,
    *,
    extra: dict[str, Any],
    session_part: str,
) -> NewFragment:
    line = red.line
    locator: dict[str, Any] = {
        "capture_id": cid,
        "monitor": monitor,
        "line_no": n,
        "bbox": xywh(line.box),
        "conf": line.conf,
        "block": line.block,
        "par": line.par,
        "line": line.line,
        "words": [{"text": w.text, "conf": w.conf, "bbox": xywh(w.box)} for w in line.words],
        "captured_at": at.isoformat(),
        **extra,
    }
    if red.labels:
        locator["redacted"] = list(red.labels)
    return NewFragment(
        ref=f"scr:{cid}:m{monitor}:l{n}",
        kind=Kind.SCREEN,
        author=Author.UNKNOWN,
        trust=Trust.UNTRUSTED,
        text=line.text,
        captured_at=at,
        locator=locator,
        session=f"screen:{at:%Y-%m-%d}:{session_part}",
        seq=n,
    )
