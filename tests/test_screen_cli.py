"""`persona-desktop ingest screen IMAGE...`: the same OCR and provenance path on image files."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import Cli
from tests.screen_support import render_lines

TEXT = ["Dentist appointment on Friday", "Card 4111 1111 1111 1111 on file"]


def test_ingest_screen_images_bad_file_reported_others_stored(cli: Cli, tmp_path: Path) -> None:
    good = tmp_path / "shot.png"
    render_lines(TEXT, size=(900, 140)).image.save(good)
    other = tmp_path / "other.jpg"
    render_lines(["Train leaves at seven"], size=(600, 80)).image.save(other, quality=95)
    bad = tmp_path / "broken.png"
    bad.write_bytes(b"\x89PNG\r\n\x1a\n not really")
    missing = tmp_path / "nope.png"

    res = cli("ingest", "screen", str(good), str(bad), str(other), str(missing), "--json")
    assert res.code == 1
    errors = [ln for ln in res.err.splitlines() if ln]
    assert len(errors) == 2
    assert "broken.png" in errors[0] and "nope.png" in errors[1]
    assert all(ln.startswith("persona-desktop: error: ") for ln in errors)
    report = res.json()
    assert [r.get("added") for r in report] == [2, None, 1, None]

    frags = cli("fragments", "--kind", "screen", "--json").json()
    texts = sorted(f["text"] for f in frags)
    assert texts == sorted(
        ["Dentist appointment on Friday", "Card [REDACTED:card] on file", "Train leaves at seven"]
    )
    for f in frags:
        assert f["kind"] == "screen" and f["author"] == "unknown" and f["trust"] == "untrusted"
        assert f["ref"].startswith(f"scr:{f['locator']['capture_id']}:m0:l")
        assert len(f["locator"]["bbox"]) == 4 and f["locator"]["conf"] > 50
        assert f["locator"]["crop_bbox"] == f["locator"]["bbox"]  # the image file is the crop
        assert (
            f["locator"]["file"].endswith((".png", ".jpg"))
            and f["locator"]["image_path"] == f["locator"]["file"]
        )
    assert "4111" not in res.out + str(frags)

    # the same content again, even under another name: same refs, nothing new
    copy = tmp_path / "copy.png"
    copy.write_bytes(good.read_bytes())
    again = cli("ingest", "screen", str(copy))
    assert again.code == 0
    assert "0 new, 2 already known" in again.out
    assert len(cli("fragments", "--kind", "screen", "--json").json()) == 3


def test_ingest_screen_needs_an_image(cli: Cli, tmp_path: Path) -> None:
    res = cli("ingest", "screen", str(tmp_path))
    assert res.code == 1
    assert "is a folder, not a file" in res.err
