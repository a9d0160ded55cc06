"""The screen pipeline on frames the test renders, with the real Tesseract: change
detection, OCR of changed bands only, dedup, exclusions, redaction, kept crops, retention."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from persona_desktop.bootstrap import Runtime
from persona_desktop.bootstrap.screen import build_screen_loop, maintenance
from persona_desktop.capture.screen_change import ChangeDetector
from persona_desktop.capture.screen_images import purge_expired_images
from persona_desktop.capture.screen_pipeline import ScreenPipeline
from persona_desktop.capture.screen_privacy import ExclusionRules, PauseState
from persona_desktop.domain.model import Author, CandidateStatus, Kind, Subject, Trust
from persona_desktop.domain.proposals import NewFact
from persona_desktop.ports.screen import Frame, Monitor, WindowDesc
from persona_desktop.services.ingest import ingest
from persona_desktop.services.screen_retention import purge_expired_fragments
from tests.screen_support import FONT, CountingOcr, StepClock, contains, render_lines

SIZE = (1000, 400)
MON = Monitor(1, 0, 0, *SIZE)
LINES = [
    "Project Falcon status report",
    "Deployment finished without errors",
    "Next review is scheduled for Monday",
]
RULES = ExclusionRules.of(["keepassxc", "bitwarden"], ["password", "incognito"])


def frame(lines: list[str], **kw: object) -> Frame:
    return bgra_frame(render_lines(lines, size=SIZE, **kw).image)  # type: ignore[arg-type]


def bgra_frame(img: Image.Image) -> Frame:
    rgba = np.asarray(img.convert("RGBA"))
    bgra = np.ascontiguousarray(rgba[:, :, [2, 1, 0, 3]])
    return Frame(MON, bgra, bgra=True)


@pytest.fixture
def ocr() -> CountingOcr:
    return CountingOcr()


def test_first_frame_gives_one_fragment_per_line_with_provenance(ocr: CountingOcr) -> None:
    clock = StepClock()
    pipe = ScreenPipeline(ocr, RULES)
    rendered = render_lines(LINES, size=SIZE)
    win = WindowDesc("Report.odt - LibreOffice", "libreoffice", (0, 0, *SIZE), active=True)
    result = pipe.process(frame(LINES), [win], clock.now())
    assert result.status == "ocr" and result.source is not None
    frags = result.fragments
    assert [f.text for f in frags] == LINES
    cid = result.source.meta["capture_id"]
    assert result.source.key == f"screen:{cid}"
    for n, (f, words) in enumerate(zip(frags, rendered.words, strict=True), start=1):
        assert f.ref == f"scr:{cid}:m1:l{n}"
        assert (f.kind, f.author, f.trust) == (Kind.SCREEN, Author.UNKNOWN, Trust.UNTRUSTED)
        assert f.captured_at == clock.now()
        assert f.session == f"screen:{clock.now():%Y-%m-%d}:libreoffice"
        loc = f.locator
        assert loc["monitor"] == 1 and loc["conf"] > 80
        assert loc["window"] == {"title": "Report.odt - LibreOffice", "app": "libreoffice"}
        x, y, w, h = loc["bbox"]  # left, top, width, height
        assert contains(
            (x, y, x + w, y + h), (words[0][1][0], words[0][1][1], words[-1][1][2], words[-1][1][3])
        )
        for word, (_, drawn) in zip(loc["words"], words, strict=True):
            wx, wy, ww, wh = word["bbox"]
            assert contains((wx, wy, wx + ww, wy + wh), drawn)
        assert [w["text"] for w in loc["words"]] == f.text.split()
        assert loc["image"] is None  # screenshots are not kept by default


def test_unchanged_frame_skips_ocr_and_a_changed_line_is_read_alone(ocr: CountingOcr) -> None:
    clock = StepClock()
    pipe = ScreenPipeline(ocr, RULES)
    first = pipe.process(frame(LINES), [], clock.now())
    assert len(first.fragments) == 3
    calls = len(ocr.shapes)

    clock.advance(10)
    again = pipe.process(frame(LINES), [], clock.now())
    assert again.status == "unchanged" and again.fragments == []
    assert len(ocr.shapes) == calls  # no OCR at all

    clock.advance(10)
    edited = [LINES[0], "Deployment failed on server seven", LINES[2]]
    changed = pipe.process(frame(edited), [], clock.now())
    assert changed.status == "ocr"
    assert [f.text for f in changed.fragments] == ["Deployment failed on server seven"]
    band_heights = [s[0] for s in ocr.shapes[calls:]]
    assert band_heights and all(h < SIZE[1] / 2 for h in band_heights)
    assert changed.fragments[0].ref.endswith(":m1:l1")  # line numbers count within this capture


def test_two_changed_places_are_read_in_one_tesseract_call(ocr: CountingOcr) -> None:
    clock = StepClock()
    pipe = ScreenPipeline(ocr, RULES)
    lines = [*LINES, "Lunch with the design team", "Renew the library card"]
    pipe.process(frame(lines, gap=2.6), [], clock.now())
    calls = len(ocr.shapes)
    clock.advance(10)
    edited = ["Project Heron status report", *lines[1:4], "Return the library books"]
    result = pipe.process(frame(edited, gap=2.6), [], clock.now())
    assert [f.text for f in result.fragments] == [edited[0], edited[4]]
    assert len(ocr.shapes) == calls + 1 and result.regions == 2
    assert result.fragments[0].locator["region"] == 0 and result.fragments[1].locator["region"] == 1
    assert result.fragments[1].locator["bbox"][1] > 200  # back in frame pixels, not canvas pixels


def test_forced_capture_after_max_gap_stores_nothing_already_stored(ocr: CountingOcr) -> None:
    clock = StepClock()
    pipe = ScreenPipeline(ocr, RULES, max_gap=timedelta(seconds=60), dedup=timedelta(minutes=30))
    pipe.process(frame(LINES), [], clock.now())
    clock.advance(61)
    forced = pipe.process(frame(LINES), [], clock.now())
    assert forced.forced and forced.status == "known" and forced.lines_read == 3  # known by their pixels
    assert forced.fragments == []
    clock.advance(31 * 60)
    later = pipe.process(frame(LINES), [], clock.now())
    assert [f.text for f in later.fragments] == LINES  # the dedup window has passed


def test_active_excluded_window_drops_the_frame_before_ocr(ocr: CountingOcr) -> None:
    clock = StepClock()
    pipe = ScreenPipeline(ocr, RULES)
    vault = WindowDesc("Passwords.kdbx - KeePassXC", "KeePassXC", (0, 0, *SIZE), active=True)
    result = pipe.process(frame(LINES), [vault], clock.now())
    assert result.status == "excluded" and result.source is None
    assert ocr.shapes == []
    private = WindowDesc("New Incognito Tab - Chromium", "chromium", (0, 0, 500, 400), active=True)
    assert pipe.process(frame(LINES), [private], clock.now()).status == "excluded"


def test_visible_excluded_window_is_blacked_out(ocr: CountingOcr) -> None:
    clock = StepClock()
    pipe = ScreenPipeline(ocr, RULES)
    text = ["Grocery list for the weekend", "Bitwarden vault SECRETVALUE entry", "Water the plants"]
    r = render_lines(text, size=SIZE)
    secret_row = r.words[1]
    box = (0, secret_row[0][1][1] - 6, SIZE[0], secret_row[-1][1][3] + 6)
    vault = WindowDesc("Bitwarden", "Bitwarden", box)
    notes = WindowDesc("notes", "gedit", (0, 0, *SIZE), active=True)
    result = pipe.process(frame(text), [notes, vault], clock.now())
    texts = [f.text for f in result.fragments]
    assert texts == [text[0], text[2]]
    assert not any("SECRET" in f.text or "SECRET" in str(f.locator) for f in result.fragments)


def test_window_titles_are_redacted(ocr: CountingOcr) -> None:
    title = "Callback?token=ghp_abcdefghijklmnopqrstuvwxyz0123456789 - Firefox"
    win = WindowDesc(title, "firefox", (0, 0, *SIZE), active=True)
    result = ScreenPipeline(ocr, RULES).process(frame(LINES[:1]), [win], StepClock().now())
    assert result.source is not None
    for where in (result.fragments[0].locator, result.source.meta, result.source.label):
        assert "ghp_" not in str(where)
    assert "[REDACTED:key]" in result.fragments[0].locator["window"]["title"]


def test_card_number_is_redacted_in_text_and_in_the_kept_image(ocr: CountingOcr, tmp_path: Path) -> None:
    clock = StepClock()
    pipe = ScreenPipeline(ocr, RULES, image_dir=tmp_path / "screens")
    text = ["Payment details", "Card 4111 1111 1111 1111 expires soon"]
    r = render_lines(text, size=SIZE)
    result = pipe.process(frame(text), [], clock.now())
    card = next(f for f in result.fragments if f.text.startswith("Card"))
    assert card.text == "Card [REDACTED:card] expires soon"
    assert card.locator["redacted"] == ["card"]
    assert "4111" not in str(card.locator)
    image = card.locator["image"]
    assert image is not None and Path(image["path"]).is_file()
    assert card.locator["crop_path"] == image["path"]
    cx, cy, cw, ch = card.locator["crop_bbox"]  # the line, in the kept crop's pixels
    bx, by, bw, bh = card.locator["bbox"]
    assert (cw, ch) == (round(bw * image["scale"]), round(bh * image["scale"]))
    assert (cx, cy) == (
        round((bx - image["box"][0]) * image["scale"]),
        round((by - image["box"][1]) * image["scale"]),
    )
    kept = np.asarray(Image.open(image["path"]).convert("L"))
    crop, scale = image["box"], image["scale"]
    for _, (x, t, rr, b) in r.words[1][1:5]:  # the four digit groups
        x0, y0 = int((x - crop[0]) * scale) + 1, int((t - crop[1]) * scale) + 1
        x1, y1 = int((rr - crop[0]) * scale) - 1, int((b - crop[1]) * scale) - 1
        assert kept[y0:y1, x0:x1].max() < 40, "digits still visible in the kept image"
    word = r.words[1][0][1]  # "Card" stays readable: not blacked out
    region = kept[int((word[1] - crop[1]) * scale) : int((word[3] - crop[1]) * scale),
                  int((word[0] - crop[0]) * scale) : int((word[2] - crop[0]) * scale)]  # fmt: skip
    assert region.max() > 200


def test_change_detector_costs_little_and_finds_the_changed_place() -> None:
    det = ChangeDetector()
    rng = np.random.default_rng(1)
    a = rng.integers(0, 255, (1080, 1920, 4), dtype=np.uint8)
    assert det.compare("m1", a).full
    b = a.copy()
    b[:, :, 3] = 7  # X11's alpha byte is undefined: it must not count as a change
    assert det.compare("m1", b).unchanged
    c = b.copy()
    c[700:705, 10:20, 1] ^= 0xFF
    change = det.compare("m1", c)
    assert change.changed and not change.full and change.shifts == ()
    [(left, top, right, bottom)] = change.dirty
    assert left <= 10 and right >= 20 and top <= 700 and bottom >= 705
    assert right - left <= 64 and bottom - top <= 16  # the cells around it, not the row


def test_scrolled_content_is_a_shift_and_only_the_revealed_rows_are_new() -> None:
    det = ChangeDetector()
    rng = np.random.default_rng(2)
    doc = rng.integers(0, 255, (1400, 800, 4), dtype=np.uint8)
    assert det.compare("m1", doc[:600].copy()).full
    scrolled = det.compare("m1", doc[90:690].copy())  # scrolled by 90 rows
    assert scrolled.changed and not scrolled.full
    [shift] = scrolled.shifts
    assert shift.dy == 90
    [(_, top, _, bottom)] = scrolled.dirty
    assert 600 - 90 - 8 <= top <= 600 - 90 and bottom == 600  # only the rows that came into view
    up = det.compare("m1", doc[40:640].copy())  # and back up by 50
    assert [s.dy for s in up.shifts] == [-50]
    [(_, top, _, bottom)] = up.dirty
    assert top == 0 and bottom <= 50 + 8


def test_a_partial_scroll_beside_a_still_sidebar_is_found() -> None:
    det = ChangeDetector()
    rng = np.random.default_rng(3)
    doc = rng.integers(0, 255, (1400, 600, 4), dtype=np.uint8)
    side = rng.integers(0, 255, (600, 200, 4), dtype=np.uint8)
    det.compare("m1", np.ascontiguousarray(np.concatenate([side, doc[:600]], axis=1)))
    change = det.compare("m1", np.ascontiguousarray(np.concatenate([side, doc[24:624]], axis=1)))
    [shift] = change.shifts
    assert shift.dy == 24 and shift.box[0] >= 192
    [(left, top, _, _)] = change.dirty
    assert left >= 192 and top >= 600 - 24 - 8


def test_a_clock_change_reads_the_clock_line_alone(ocr: CountingOcr) -> None:
    clock = StepClock()
    pipe = ScreenPipeline(ocr, RULES)
    base = render_lines(["Notes about the garden and the weekend plans"], size=SIZE).image
    font = ImageFont.truetype(str(FONT), 20)
    before, after = base.copy(), base.copy()
    ImageDraw.Draw(before).text((880, 360), "09:41", fill="black", font=font)
    ImageDraw.Draw(after).text((880, 360), "09:42", fill="black", font=font)
    pipe.process(bgra_frame(before), [], clock.now())
    calls = len(ocr.shapes)
    clock.advance(60)
    result = pipe.process(bgra_frame(after), [], clock.now())
    assert [f.text for f in result.fragments] == ["09:42"]
    [(height, width)] = ocr.shapes[calls:]
    assert width < 200 and height < 100  # the clock, not the screen's width


def test_scrolling_a_document_reads_only_the_new_lines(ocr: CountingOcr) -> None:
    clock = StepClock()
    pipe = ScreenPipeline(ocr, RULES)
    doc = [f"Paragraph {n} of the travel plan for {w}" for n, w in enumerate(
        ["Lisbon", "Porto", "Madrid", "Seville", "Valencia", "Bilbao", "Girona", "Malaga"], start=1)]  # fmt: skip
    first = pipe.process(frame(doc[:5]), [], clock.now())
    assert [f.text for f in first.fragments] == doc[:5]
    calls = len(ocr.shapes)
    clock.advance(10)
    scrolled = pipe.process(frame(doc[2:7]), [], clock.now())  # two lines up, two new at the bottom
    assert [f.text for f in scrolled.fragments] == doc[5:7]
    assert all(h < SIZE[1] / 2 for h, *_ in ocr.shapes[calls:])


def test_pause_state_expires() -> None:
    clock = StepClock()
    pause = PauseState()
    until = pause.pause(clock.now(), timedelta(minutes=15))
    assert until == clock.now() + timedelta(minutes=15)
    assert pause.is_paused(clock.now())
    clock.advance(15 * 60)
    assert not pause.is_paused(clock.now())
    pause.pause(clock.now(), None)
    clock.advance(10**6)
    assert pause.is_paused(clock.now())
    pause.resume()
    assert not pause.is_paused(clock.now())


def test_text_retention_keeps_what_a_fact_or_a_pending_candidate_cites(
    runtime: Runtime, ocr: CountingOcr
) -> None:
    clock = StepClock()
    clock.advance(-40 * 86400)
    pipe = ScreenPipeline(ocr, RULES)
    old = pipe.process(frame(LINES), [], clock.now())
    assert old.source is not None
    clock.advance(39 * 86400)
    recent = pipe.process(frame(["Fresh line captured yesterday"]), [], clock.now())
    assert recent.source is not None
    ingest(runtime.uow, [(old.source, old.fragments), (recent.source, recent.fragments)], clock.now())
    now = clock.now() + timedelta(days=1)
    refs = [f.ref for f in old.fragments]
    with runtime.uow() as uow:
        by_ref = uow.fragments.by_refs(refs)
        ids = [by_ref[r].id for r in refs]
        common = {"subject": Subject.OWNER, "category": None, "origin": "sleep", "run_id": None,
                  "proposal": NewFact(), "supersedes_fact_id": None, "created_at": now}  # fmt: skip
        applied = uow.candidates.add(statement="works on Falcon", key="falcon", **common)  # type: ignore[arg-type]
        uow.candidates.add_evidence(applied, [ids[0]], None)
        uow.facts.add(statement="works on Falcon", subject=Subject.OWNER, key="falcon", category=None,
                      candidate_id=applied, valid_from=now)  # fmt: skip
        pending = uow.candidates.add(statement="deploys", key="deploys", **common)  # type: ignore[arg-type]
        uow.candidates.add_evidence(pending, [ids[1]], None)
        rejected = uow.candidates.add(statement="reviews", key="reviews", **common)  # type: ignore[arg-type]
        uow.candidates.add_evidence(rejected, [ids[1], ids[2]], None)
        uow.candidates.set_status(rejected, CandidateStatus.REJECTED, "no", now)
        uow.commit()

    result = purge_expired_fragments(runtime.uow, Kind.SCREEN, 30, now)
    assert (result.deleted, result.kept) == (1, 2)
    with runtime.uow.read() as uow:
        left = {f.text for f in uow.fragments.all(Kind.SCREEN)}
        assert left == {LINES[0], LINES[1], "Fresh line captured yesterday"}
        assert [f.text for f in uow.candidates.evidence(rejected)] == [LINES[1]]
        assert any(r.action == "fragments.purged" for r in uow.journal.all())
    again = purge_expired_fragments(runtime.uow, Kind.SCREEN, 30, now)
    assert (again.deleted, again.kept) == (0, 2)


def test_image_retention_deletes_old_crops(tmp_path: Path) -> None:
    clock = StepClock()
    folder = tmp_path / "screens" / "2020-01-01"
    folder.mkdir(parents=True)
    old, new = folder / "a-m1.png", tmp_path / "screens" / "b-m1.png"
    old.write_bytes(b"x")
    (tmp_path / "screens" / "today").mkdir()
    new = tmp_path / "screens" / "today" / "b-m1.png"
    new.write_bytes(b"y")
    eight_days = (clock.now() - timedelta(days=8)).timestamp()
    os.utime(old, (eight_days, eight_days))
    assert purge_expired_images(tmp_path / "screens", clock.now(), 7) == 1
    assert not old.exists() and not folder.exists() and new.exists()


def test_loop_is_built_from_the_settings_and_maintenance_applies_retention(runtime: Runtime) -> None:
    s = runtime.settings
    s.set("capture.interval_seconds", 15)
    s.set("capture.keep_images", True)
    s.set("capture.exclude_titles", "secret diary")
    loop = build_screen_loop(runtime)
    assert loop.interval_s == 15
    assert loop.pipeline.image_dir == runtime.data_dir / "screens"
    assert loop.pipeline.rules.excludes(WindowDesc("My Secret Diary", "gedit", (0, 0, 1, 1)))
    assert loop.status().state == "stopped"

    clock = StepClock()
    old_at = clock.now() - timedelta(days=45)
    pipe = ScreenPipeline(CountingOcr(), RULES, image_dir=runtime.data_dir / "screens")
    old = pipe.process(frame(LINES[:1]), [], old_at)
    assert old.source is not None
    ingest(runtime.uow, [(old.source, old.fragments)], old_at)
    crop = Path(old.fragments[0].locator["crop_path"])
    os.utime(crop, (old_at.timestamp(), old_at.timestamp()))
    maintenance(runtime)(clock.now())
    assert not crop.exists()
    with runtime.uow.read() as uow:
        assert uow.fragments.all(Kind.SCREEN) == []
