"""OCR with the Tesseract binary through pytesseract's `image_to_data`.

One Tesseract thread (`OMP_THREAD_LIMIT=1`): with more, on two cores under load, a
single call was seen to take 46-105 s instead of under one. Small text is read again
at twice the size, which is what fixes 11-14 px UI fonts.
"""

from __future__ import annotations

import os
from collections import defaultdict
from typing import Any

import numpy as np
import pytesseract
from PIL import Image

from persona_desktop.errors import CaptureUnavailableError, ImportFormatError
from persona_desktop.ports.screen import Box, OcrLine, OcrWord, Pixels

SMALL_TEXT_PX = 12  # median word box height (px) under which the image is read again at 2x
# Stacked lines are read as one uniform block (psm 6): page layout analysis (psm 3) takes
# the word gaps that line up across stacked monospaced lines for column gutters and
# returns every word alone; it is also 2-4 times slower on such a stack.
LINES_CONFIG = "--psm 6"


def _lang_package(code: str) -> str:
    return f"tesseract-ocr-{code.replace('_', '-').lower()}"


class TesseractOcr:
    def __init__(
        self,
        languages: str = "eng",
        min_confidence: float = 50.0,
        *,
        tesseract_cmd: str | None = None,
        timeout_s: float = 60.0,
        psm: int = 3,
    ) -> None:
        os.environ["OMP_THREAD_LIMIT"] = "1"  # inherited by the tesseract child process
        if tesseract_cmd:
            pytesseract.pytesseract.tesseract_cmd = tesseract_cmd
        self.languages = languages
        self.min_confidence = min_confidence
        self._timeout = timeout_s
        self._config = f"--psm {psm}"
        self._check()

    def _check(self) -> None:
        try:
            installed = set(pytesseract.get_languages(config=""))
        except pytesseract.TesseractNotFoundError:
            raise CaptureUnavailableError(
                "the Tesseract OCR program is not installed: install the package tesseract-ocr "
                "(Debian/Ubuntu: sudo apt install tesseract-ocr)"
            ) from None
        except (pytesseract.TesseractError, OSError) as exc:
            raise CaptureUnavailableError(f"Tesseract OCR does not run: {exc}") from None
        missing = [c for c in self.languages.split("+") if c and c not in installed]
        if missing:
            pkgs = " ".join(_lang_package(c) for c in missing)
            raise CaptureUnavailableError(
                f"Tesseract language {'+'.join(missing)!s} is not installed: install the package "
                f"{pkgs} (Debian/Ubuntu: sudo apt install {pkgs})"
            )

    def read(self, image: Pixels) -> list[OcrLine]:
        return self._read(image, self._config)

    def read_lines(self, image: Pixels) -> list[OcrLine]:
        return self._read(image, LINES_CONFIG)

    def _read(self, image: Pixels, config: str) -> list[OcrLine]:
        gray = _gray(image)
        lines, heights = self._read_at(gray, 1, config)
        if heights and float(np.median(heights)) < SMALL_TEXT_PX:
            lines, _ = self._read_at(gray, 2, config)
        return lines

    def _read_at(self, gray: Pixels, scale: int, config: str) -> tuple[list[OcrLine], list[int]]:
        img = Image.fromarray(gray, mode="L")
        if scale != 1:
            img = img.resize((img.width * scale, img.height * scale), Image.Resampling.BICUBIC)
        try:
            data = pytesseract.image_to_data(
                img,
                lang=self.languages,
                config=config,
                output_type=pytesseract.Output.DICT,
                timeout=self._timeout,
            )
        except pytesseract.TesseractNotFoundError:
            raise CaptureUnavailableError(
                "the Tesseract OCR program is not installed: install the package tesseract-ocr"
            ) from None
        except RuntimeError as exc:  # pytesseract's timeout
            raise ImportFormatError(f"OCR took longer than {self._timeout:.0f} s: {exc}") from None
        return _lines(data, scale, self.min_confidence)


def _gray(image: Pixels) -> Pixels:
    if image.ndim == 2:
        return np.ascontiguousarray(image)
    rgb = image[:, :, :3].astype(np.uint16)
    # ITU-R 601 luma in integers; the caller hands RGB (BGRA frames are converted before)
    g = (rgb[:, :, 0] * 77 + rgb[:, :, 1] * 150 + rgb[:, :, 2] * 29) >> 8
    return g.astype(np.uint8)


def _lines(data: dict[str, list[Any]], scale: int, min_conf: float) -> tuple[list[OcrLine], list[int]]:
    groups: dict[tuple[int, int, int], list[OcrWord]] = defaultdict(list)
    order: list[tuple[int, int, int]] = []
    heights: list[int] = []
    for i, raw in enumerate(data["text"]):
        text = str(raw).strip()
        conf = float(data["conf"][i])
        if not text or conf < 0:
            continue
        left, top = int(data["left"][i]), int(data["top"][i])
        width, height = int(data["width"][i]), int(data["height"][i])
        heights.append(height // scale)
        box: Box = (left // scale, top // scale, -(-(left + width) // scale), -(-(top + height) // scale))
        key = (int(data["block_num"][i]), int(data["par_num"][i]), int(data["line_num"][i]))
        if key not in groups:
            order.append(key)
        groups[key].append(OcrWord(text, conf, box))
    lines: list[OcrLine] = []
    for key in order:
        words = tuple(groups[key])
        text = " ".join(w.text for w in words)
        conf = sum(w.conf for w in words) / len(words)
        if conf < min_conf or not any(ch.isalnum() for ch in text):
            continue
        box = (
            min(w.box[0] for w in words),
            min(w.box[1] for w in words),
            max(w.box[2] for w in words),
            max(w.box[3] for w in words),
        )
        lines.append(OcrLine(text, round(conf, 1), box, *key, words=words))
    return lines, heights
