"""Real Tesseract on text the test renders: lines, order, boxes, confidences, languages."""

from __future__ import annotations

import numpy as np
import pytest

from persona_desktop.adapters.ocr_tesseract import TesseractOcr
from persona_desktop.errors import CaptureUnavailableError
from tests.screen_support import contains, render_lines

ENGLISH = [
    "Quarterly planning meeting notes",
    "Budget review moved to Thursday",
    "Send the contract draft to Maria",
]


def _union(boxes: list[tuple[int, int, int, int]]) -> tuple[int, int, int, int]:
    return (
        min(b[0] for b in boxes),
        min(b[1] for b in boxes),
        max(b[2] for b in boxes),
        max(b[3] for b in boxes),
    )


def test_english_lines_in_order_with_boxes_and_confidence() -> None:
    r = render_lines(ENGLISH, size=(900, 220))
    lines = TesseractOcr("eng", 50).read(np.asarray(r.image))
    assert [ln.text for ln in lines] == ENGLISH
    for line, rendered in zip(lines, r.words, strict=True):
        assert 80 <= line.conf <= 100
        assert contains(line.box, _union([b for _, b in rendered]))
        assert [w.text for w in line.words] == [w for w, _ in rendered]
        for word, (_, drawn) in zip(line.words, rendered, strict=True):
            assert contains(word.box, drawn), (word, drawn)
            assert 0 <= word.conf <= 100
    tops = [ln.box[1] for ln in lines]
    assert tops == sorted(tops)
    assert len({(ln.block, ln.par, ln.line) for ln in lines}) == len(lines)


def test_russian_with_eng_plus_rus() -> None:
    text = ["Встреча с Иваном в пятницу", "Купить билеты на поезд"]
    r = render_lines(text, size=(900, 160))
    lines = TesseractOcr("eng+rus", 50).read(np.asarray(r.image))
    assert [ln.text for ln in lines] == text
    for line, rendered in zip(lines, r.words, strict=True):
        assert contains(line.box, _union([b for _, b in rendered]))


def test_small_text_is_upscaled_and_read() -> None:
    text = ["Small status bar text reads fine", "Version 4.2 installed yesterday"]
    r = render_lines(text, size=(420, 70), font_px=10, left=6, top=6, gap=2.0)
    lines = TesseractOcr("eng", 50).read(np.asarray(r.image.convert("L")))
    assert [ln.text for ln in lines] == text
    for line, rendered in zip(lines, r.words, strict=True):
        assert contains(line.box, _union([b for _, b in rendered]), slack=3)


def test_blank_image_gives_no_lines_and_the_floor_drops_weak_ones() -> None:
    blank = np.full((200, 400), 255, dtype=np.uint8)
    assert TesseractOcr("eng", 50).read(blank) == []
    r = np.asarray(render_lines(ENGLISH[:1], size=(600, 80)).image)
    assert len(TesseractOcr("eng", 0).read(r)) == 1
    assert TesseractOcr("eng", 99.9).read(r) == []


def test_missing_language_names_the_package() -> None:
    with pytest.raises(CaptureUnavailableError, match=r"tesseract-ocr-qqq") as err:
        TesseractOcr("eng+qqq")
    assert "\n" not in str(err.value)


def test_missing_tesseract_names_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    import pytesseract

    monkeypatch.setattr(pytesseract.pytesseract, "tesseract_cmd", "tesseract")
    with pytest.raises(CaptureUnavailableError, match=r"install the package tesseract-ocr\b"):
        TesseractOcr("eng", tesseract_cmd="/nonexistent/tesseract")
