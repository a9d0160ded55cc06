"""Whole lines, each stored once (issue 17), with the real Tesseract on rendered frames:
a terminal scrolling one line at a time, text being typed, a window moved by a few
pixels, a font change, a number changing at the end of a tabbed line."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from persona_desktop.capture.screen_lines import cut, lines_at, to_gray
from persona_desktop.capture.screen_pipeline import CaptureResult, ScreenPipeline
from persona_desktop.capture.screen_privacy import ExclusionRules
from persona_desktop.ports.screen import Frame, Monitor, WindowDesc
from tests.screen_support import FONT, CountingOcr, StepClock

DEJAVU = FONT.parent
MONO, SERIF = DEJAVU / "DejaVuSansMono.ttf", DEJAVU / "DejaVuSerif.ttf"
RULES = ExclusionRules.of(["keepassxc"], ["password"])


@pytest.fixture
def ocr() -> CountingOcr:
    return CountingOcr()


def to_frame(img: Image.Image) -> Frame:
    rgba = np.asarray(img.convert("RGBA"))
    mon = Monitor(1, 0, 0, img.width, img.height)
    return Frame(mon, np.ascontiguousarray(rgba[:, :, [2, 1, 0, 3]]), bgra=True)


def draw_lines(
    img: Image.Image, lines: Sequence[str], xy: tuple[int, int], font: Path, px: int, pitch: int, fill: object
) -> None:
    draw, f = ImageDraw.Draw(img), ImageFont.truetype(str(font), px)
    for i, line in enumerate(lines):
        draw.text((xy[0], xy[1] + i * pitch), line, fill=fill, font=f)  # type: ignore[arg-type]


def terminal(lines: Sequence[str], size: tuple[int, int] = (900, 330)) -> Frame:
    """A dark terminal: light monospaced text, 20 px a line, the cursor under the last one."""
    img = Image.new("RGB", size, (24, 26, 30))
    draw_lines(img, lines, (10, 8), MONO, 16, 20, (214, 214, 214))
    y = 8 + len(lines) * 20
    ImageDraw.Draw(img).rectangle((10, y + 3, 19, y + 18), fill=(214, 214, 214))
    return to_frame(img)


def stored(results: Sequence[CaptureResult]) -> list[str]:
    return [f.text for r in results for f in r.fragments]


def log_line(n: int) -> str:
    return f"09:{n // 60:02d}:{n % 60:02d} line {n}: the quarterly report mentions heat pumps and the Lisbon office"


def test_terminal_scrolling_one_line_at_a_time_stores_each_line_once_and_whole(ocr: CountingOcr) -> None:
    """The issue's terminal: 95 % of what was stored were scraps ("Lisbon", "126;")."""
    clock, pipe, rows = StepClock(), ScreenPipeline(ocr, RULES), 15
    printed = [log_line(n) for n in range(101, 101 + rows + 6)]
    results = []
    for k in range(rows, len(printed) + 1):
        results.append(pipe.process(terminal(printed[max(0, k - rows) : k]), [], clock.now()))
        if k == rows:
            calls = len(ocr.shapes)
        clock.advance(10)
    assert stored(results) == printed  # every line whole, once, in order
    assert [len(r.fragments) for r in results[1:]] == [1] * 6
    assert all(r.moved_rows > 0 for r in results[2:])  # seen as a scroll, not as new text
    assert [s[0] < 40 for s in ocr.shapes[calls:]] == [True] * 6  # one line OCR'd per step


def test_text_being_typed_is_stored_as_the_whole_line_each_time_it_changes(ocr: CountingOcr) -> None:
    clock, pipe = StepClock(), ScreenPipeline(ocr, RULES)
    done = ["Notes for Friday", "Call the plumber about the kitchen tap"]
    typed = [
        "Meeting moved to",
        "Meeting moved to Thursday at",
        "Meeting moved to Thursday at noon in room B",
    ]
    then = ["Bring the", "Bring the quarterly figures"]
    screens = [[*done, t] for t in typed] + [[*done, typed[-1], t] for t in then]
    results = []
    for lines in screens:
        img = Image.new("RGB", (900, 200), "white")
        draw_lines(img, lines, (20, 16), FONT, 20, 34, "black")
        results.append(pipe.process(to_frame(img), [], clock.now()))
        clock.advance(10)
    per_frame = [[f.text for f in r.fragments] for r in results]
    assert per_frame == [[*done, typed[0]], [typed[1]], [typed[2]], [then[0]], [then[1]]]


def window_on_desktop(offset: tuple[int, int], lines: Sequence[str]) -> tuple[Frame, list[WindowDesc]]:
    img = Image.new("RGB", (1000, 420), (58, 110, 165))
    left, top = 60 + offset[0], 40 + offset[1]
    box = (left, top, left + 760, top + 300)
    draw = ImageDraw.Draw(img)
    draw.rectangle((box[0], box[1], box[2] - 1, box[3] - 1), fill="white", outline=(90, 90, 90))
    draw.rectangle((box[0] + 1, box[1] + 1, box[2] - 2, box[1] + 30), fill=(225, 228, 232))
    draw_lines(img, ["Trip plan - Notes"], (box[0] + 12, box[1] + 8), FONT, 15, 0, "black")
    draw_lines(img, lines, (box[0] + 20, box[1] + 50), FONT, 20, 34, "black")
    return to_frame(img), [WindowDesc("Trip plan - Notes", "notes", box, active=True)]


def test_a_window_moved_by_a_few_pixels_is_known_by_its_lines(ocr: CountingOcr) -> None:
    clock, pipe = StepClock(), ScreenPipeline(ocr, RULES)
    lines = [
        "Flight to Lisbon leaves at 7:40",
        "Hotel near the river, two nights",
        "Dinner with Ana on Saturday",
    ]
    first = pipe.process(*window_on_desktop((0, 0), lines), clock.now())
    assert [f.text for f in first.fragments] == ["Trip plan - Notes", *lines]
    calls = len(ocr.shapes)
    for offset in [(3, 2), (-2, 5), (40, -17)]:
        clock.advance(10)
        moved = pipe.process(*window_on_desktop(offset, lines), clock.now())
        assert moved.status == "known" and moved.fragments == [] and moved.lines_read == 4
    assert len(ocr.shapes) == calls  # no OCR at all: every line's pixels were read before


def test_a_font_change_stores_no_line_again(ocr: CountingOcr) -> None:
    clock, pipe = StepClock(), ScreenPipeline(ocr, RULES)
    lines = [
        "Quarterly report for the Lisbon office",
        "Heat pumps sold in March: 126",
        "Next review on 14 May",
    ]
    results = []
    for font, px, pitch in [(FONT, 20, 34), (SERIF, 22, 38), (MONO, 18, 30), (FONT, 26, 44)]:
        img = Image.new("RGB", (900, 200), "white")
        draw_lines(img, lines, (20, 16), font, px, pitch, "black")
        results.append(pipe.process(to_frame(img), [], clock.now()))
        clock.advance(10)
    assert stored(results) == lines
    assert all(r.status == "ocr" and r.lines_read == 3 for r in results[1:])  # read again: new pixels


def test_a_number_changing_in_a_tabbed_line_stores_the_line_not_the_number(ocr: CountingOcr) -> None:
    """Only "126" changes, a tab stop right of its label: storing "127" alone says nothing."""
    clock, pipe = StepClock(), ScreenPipeline(ocr, RULES)
    results = []
    for n in (126, 127):
        img = Image.new("RGB", (700, 120), "white")
        draw_lines(img, ["Heat pumps sold"], (20, 20), FONT, 20, 0, "black")
        draw_lines(img, [str(n)], (240, 20), FONT, 20, 0, "black")
        draw_lines(img, ["Lisbon office, March"], (20, 60), FONT, 20, 0, "black")
        results.append(pipe.process(to_frame(img), [], clock.now()))
        clock.advance(10)
    assert [f.text for f in results[1].fragments] == ["Heat pumps sold 127"]


def test_lines_are_found_whole_around_a_small_change() -> None:
    img = Image.new("RGB", (900, 160), "white")
    draw_lines(img, ["Left column text", "Another left line"], (20, 20), FONT, 18, 30, "black")
    draw_lines(img, ["Right column, far away"], (600, 20), FONT, 18, 30, "black")
    ink = ImageDraw.Draw(img).textbbox((20, 20), "Left column text", font=ImageFont.truetype(str(FONT), 18))
    gray = to_gray(np.asarray(img), bgra=False)
    [line] = lines_at(gray, [(64, 24, 96, 40)])  # a change inside "Left column text"
    left, top, right, bottom = line.box
    assert abs(left - ink[0]) <= 1 and abs(top - ink[1]) <= 1 and abs(bottom - ink[3]) <= 1
    assert 0 <= right - ink[2] <= 2  # the whole line, not the column the change was in
    [again] = lines_at(gray, [(130, 20, 140, 30)])
    assert again == line  # the same line, the same key, whatever part of it changed
    shifted = np.full_like(gray, 255)
    shifted[7:, 5:] = gray[:-7, :-5]  # moved right and down
    [moved] = lines_at(shifted, [(64, 30, 96, 46)])
    assert moved.key == line.key and moved.box == (left + 5, top + 7, right + 5, bottom + 7)


def test_a_vertical_border_next_to_text_does_not_join_the_lines() -> None:
    img = Image.new("RGB", (600, 300), "white")
    ImageDraw.Draw(img).line((12, 0, 12, 299), fill="black", width=2)  # a window border
    draw_lines(
        img, ["First line near the border", "Second line", "Third line"], (20, 20), FONT, 18, 30, "black"
    )
    gray = to_gray(np.asarray(img), bgra=False)
    found = lines_at(gray, [(0, 0, 600, 300)])
    assert len(found) == 3 and all(t.box[3] - t.box[1] < 30 for t in found)


def test_max_gap_forces_a_look_that_reads_nothing_known_again(ocr: CountingOcr) -> None:
    clock = StepClock()
    pipe = ScreenPipeline(ocr, RULES, max_gap=timedelta(seconds=60), dedup=timedelta(minutes=30))
    frame = terminal([log_line(n) for n in range(1, 6)])
    pipe.process(frame, [], clock.now())
    calls = len(ocr.shapes)
    clock.advance(61)
    forced = pipe.process(frame, [], clock.now())
    assert forced.forced and forced.lines_read == 5 and forced.fragments == []
    assert len(ocr.shapes) == calls


def test_an_app_switched_back_to_is_known_without_ocr(ocr: CountingOcr) -> None:
    clock, pipe = StepClock(), ScreenPipeline(ocr, RULES)
    notes = ["Flight to Lisbon leaves at 7:40", "Hotel near the river, two nights"]
    shell = [log_line(n) for n in range(1, 4)]
    img = Image.new("RGB", (900, 200), "white")
    draw_lines(img, notes, (20, 16), FONT, 20, 34, "black")
    for frame in (to_frame(img), terminal(shell), to_frame(img), terminal(shell)):
        calls = len(ocr.shapes)
        result = pipe.process(frame, [], clock.now())
        clock.advance(10)
    assert len(ocr.shapes) == calls and result.fragments == [] and result.lines_read == 3


def test_a_screen_of_specks_is_cut_into_a_bounded_number_of_pieces() -> None:
    """Hostile pixels (thousands of separate blobs) must not make one capture cost thousands
    of cuts and crops: past the budget, what is left is read as blocks."""
    ink = np.zeros((1000, 2000), dtype=bool)
    for y in range(0, 1000, 30):
        for x in range(0, 2000, 30):
            ink[y : y + 6, x : x + 6] = True
    assert len(cut(ink)) == 34 * 67  # within the budget every blob is its own piece
    pieces = cut(ink, budget=100)
    assert len(pieces) < 200
    covered = np.zeros_like(ink)
    for left, top, right, bottom in pieces:
        covered[top:bottom, left:right] = True
    assert covered[ink].all()  # nothing is dropped, only not cut finer


def test_the_same_pixels_under_another_app_are_stored_for_it_without_ocr(ocr: CountingOcr) -> None:
    clock, pipe = StepClock(), ScreenPipeline(ocr, RULES)
    frame, [notes] = window_on_desktop((0, 0), ["Flight to Lisbon leaves at 7:40"])
    mail = WindowDesc("Trip plan - Mail", "mail", notes.box, active=True)
    first = pipe.process(frame, [notes], clock.now())
    calls = len(ocr.shapes)
    clock.advance(10)
    switched = pipe.process(frame, [mail], clock.now())
    assert [f.text for f in switched.fragments] == [f.text for f in first.fragments]
    assert {f.locator["window"]["app"] for f in switched.fragments} == {"mail"}
    assert len(ocr.shapes) == calls
    clock.advance(10)
    assert pipe.process(frame, [mail], clock.now()).status == "unchanged"
