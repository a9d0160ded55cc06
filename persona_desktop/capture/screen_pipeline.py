"""From a monitor's pixels to stored-ready screen fragments: whole lines, each once.

Order matters for privacy: excluded windows are dropped (active) or blacked out (visible)
before anything else looks at the pixels; text is redacted before it is compared, kept
or stored. Order matters for cost: an unchanged frame stops at one array compare; in a
changed one, content that only moved (scrolled) is skipped, the whole lines around
what is new are found (`screen_lines`), and only lines whose pixels were never read
are OCR'd (`screen_reader`). What is stored is always a whole line as OCR reads it,
never the part of a line that changed; a line already stored for the same monitor and
application within `dedup` (compared by `dedup_key`, so OCR's l/I/1 or O/0 slips do
not count as new text) is not stored again.
"""

from __future__ import annotations

import hashlib
import io
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from persona_desktop.capture.screen_change import ChangeDetector
from persona_desktop.capture.screen_lines import lines_at, to_gray
from persona_desktop.capture.screen_privacy import ExclusionRules
from persona_desktop.capture.screen_reader import LineReader, ReadLine
from persona_desktop.capture.screen_redact import RedactedLine, redact_line, redact_text
from persona_desktop.domain.model import Author, Kind, NewFragment, SourceInfo, Trust
from persona_desktop.ports import MediaFiles
from persona_desktop.ports.screen import (
    Box,
    Frame,
    Monitor,
    OcrEngine,
    Pixels,
    WindowDesc,
)
from persona_desktop.services.media import PlainMedia

__all__ = ["CaptureResult", "ScreenPipeline", "capture_id", "dedup_key", "screen_fragment", "to_gray", "xywh"]


@dataclass(frozen=True, slots=True)
class CaptureResult:
    """What one monitor's frame gave; `source` is None when nothing is to be stored."""

    monitor: int
    status: str  # unchanged | known | excluded | skipped | ocr (and the loop's black | unsettled)
    source: SourceInfo | None = None
    fragments: list[NewFragment] = field(default_factory=list)
    lines_read: int = 0  # lines found where the frame changed, known or OCR'd
    regions: int = 0  # of them, lines OCR'd (crops in this pass's Tesseract call)
    forced: bool = False
    reason: str | None = None
    seen: tuple[tuple[tuple[int, str], str], ...] = ()  # (monitor, app), dedup key: for `remember`
    moved_rows: int = 0  # pixel rows recognised as scrolled content


def capture_id(data: bytes | memoryview, salt: str = "") -> str:
    h = hashlib.blake2b(digest_size=8)
    h.update(data)
    h.update(salt.encode())
    return h.hexdigest()


_LOOKALIKE = str.maketrans({"0": "o", "1": "l", "i": "l", "|": "l", "!": "l", "5": "s", "8": "b"})


def dedup_key(text: str) -> str:
    """What makes two OCR'd lines the same text: case, spacing, punctuation and the
    letters OCR confuses (l/I/1/|, O/0, rn/m, S/5) do not count; digits otherwise do."""
    folded = unicodedata.normalize("NFKC", text).lower().translate(_LOOKALIKE).replace("rn", "m")
    return "".join(ch for ch in folded if ch.isalnum())


def _intersect(a: Box, b: Box) -> Box | None:
    box = (max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3]))
    return box if box[0] < box[2] and box[1] < box[3] else None


def _window_json(w: WindowDesc | None) -> dict[str, str] | None:
    """Titles are redacted too: a browser title can carry a token from the URL."""
    return None if w is None else {"title": redact_text(w.title)[0], "app": w.app}


Fresh = list[tuple[int, int, RedactedLine, WindowDesc | None]]  # line number, found line, line, window


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
        media: MediaFiles | None = None,
    ) -> None:
        self.ocr = ocr
        self.rules = rules
        self.max_gap = max_gap
        self.dedup = dedup
        self.image_dir = image_dir  # None: screenshots are not kept (the default)
        self.image_scale = image_scale
        self.media: MediaFiles = media if media is not None else PlainMedia()  # sealed when encrypted
        self.changes = ChangeDetector()
        self.reader = LineReader(ocr)
        self._last_look: dict[int, datetime] = {}
        self._layout: dict[int, tuple[tuple[str, Box], ...]] = {}
        self._seen: dict[tuple[int, str], dict[str, datetime]] = {}

    def reset(self) -> None:
        """Forget previous frames, lines read and lines stored: the next capture is read and stored in full."""
        self.forget_frames()
        self.reader.forget()
        self._seen.clear()

    def forget_frames(self) -> None:
        """Forget previous frames only: the next capture is looked at in full, known lines still skipped."""
        self.changes.forget()
        self._last_look.clear()
        self._layout.clear()

    def remember(self, result: CaptureResult, at: datetime) -> None:
        """Mark a result's lines as stored, so that they are not stored again within `dedup`."""
        for where, key in result.seen:
            self._seen.setdefault(where, {})[key] = at
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
        mask_also: Sequence[WindowDesc] = (),
    ) -> CaptureResult:
        """One monitor's frame. With `remember=False` the caller calls `remember()` once the
        fragments are stored (a pass that is dropped must not count its lines as stored).
        The excluded windows of `mask_also` (the list read after the grab) are blacked out too."""
        mon = frame.monitor
        if frame.unplaced is None:
            on_screen = [w for w in windows if _intersect(w.box, mon.box) is not None]
        else:  # where the windows are on these pixels is unknown: any may be on them
            on_screen = list(windows)
        active = next((w for w in on_screen if w.active), None)
        if active is not None and (rule := self.rules.excludes(active)) is not None:
            self.changes.forget(f"m{mon.index}")  # the next frame is compared afresh
            return CaptureResult(mon.index, "excluded", reason=rule)
        if frame.unplaced is not None and self.rules.excluded([*windows, *mask_also]):
            self.changes.forget(f"m{mon.index}")
            return CaptureResult(mon.index, "skipped", reason=f"{frame.unplaced}: nothing read while an "
                                 "excluded window is open, rather than mask it in the wrong place")  # fmt: skip
        pixels = self._mask(frame, [*on_screen, *mask_also])
        change = self.changes.compare(f"m{mon.index}", pixels)
        last = self._last_look.get(mon.index)
        forced = force or last is None or at - last >= self.max_gap
        # Windows opened, closed, moved or switched: a line whose pixels did not change may
        # now belong to another app, for which it was never stored. Look at all of it
        # (lines read before cost no OCR).
        layout = tuple((w.app, w.box) for w in on_screen)
        relaid = self._layout.get(mon.index, layout) != layout
        self._layout[mon.index] = layout
        if change.unchanged and not (forced or relaid):
            return CaptureResult(mon.index, "unchanged")
        moved = sum(s.box[3] - s.box[1] for s in change.shifts)
        self._last_look[mon.index] = at
        full: Box = (0, 0, pixels.shape[1], pixels.shape[0])
        where = [full] if forced or relaid or change.full else list(change.dirty)
        if not where:
            return CaptureResult(mon.index, "known", forced=forced, moved_rows=moved)  # scrolled only
        gray = to_gray(pixels, frame.bgra)
        found = lines_at(gray, where)
        lines, ocr_count = self.reader.read(gray, found)
        status = "ocr" if ocr_count else "known"
        fresh = self._fresh(mon, lines, on_screen, at)
        if not fresh:
            return CaptureResult(mon.index, status, lines_read=len(lines), regions=ocr_count, forced=forced,
                                 moved_rows=moved)  # fmt: skip
        # the lines' keys already hash their pixels: no second pass over the whole frame
        cid = capture_id(b"".join(t.key for t in found), f"{at.isoformat()}|m{mon.index}")
        image = self._keep_image(pixels, frame.bgra, fresh, cid, mon.index, at)
        source, fragments = self._build(cid, mon, at, fresh, active, image, forced)
        seen = tuple(
            ((mon.index, window.app if window else ""), dedup_key(red.line.text))
            for _, _, red, window in fresh
        )
        result = CaptureResult(
            mon.index, status, source, fragments, len(lines), ocr_count, forced, seen=seen, moved_rows=moved
        )
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

    def _fresh(
        self,
        mon: Monitor,
        lines: list[ReadLine],
        windows: Sequence[WindowDesc],
        at: datetime,
    ) -> Fresh:
        """(line number, found line, redacted line, window) of lines not stored recently,
        each text once even where it shows twice in this frame."""
        fresh: Fresh = []
        here: set[tuple[str, str]] = set()
        for n, read in enumerate(lines, start=1):
            red = read.red
            window = self._window_at(mon, red.line.box, windows)
            app = window.app if window else ""
            key = dedup_key(red.line.text)
            last = self._seen.get((mon.index, app), {}).get(key)
            if (last is not None and at - last < self.dedup) or (app, key) in here:
                continue
            here.add((app, key))
            fresh.append((n, read.at, red, window))
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
        lines: Fresh,
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
        path = folder / f"{cid}-m{monitor}.png"
        png = io.BytesIO()
        img.save(png, format="PNG", optimize=False)
        self.media.write(path, png.getvalue())
        return {"path": str(path), "box": list(crop), "scale": self.image_scale}

    def _build(
        self,
        cid: str,
        mon: Monitor,
        at: datetime,
        lines: Fresh,
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
                    "region": found,
                    "window": _window_json(window),
                    "active_window": _window_json(active),
                    "image": image,
                    **_crop_of(red.line.box, image),
                },
                session_part=(window.app if window and window.app else f"m{mon.index}"),
            )
            for n, found, red, window in lines
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
