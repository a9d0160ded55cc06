"""Render the app icon (persona_desktop/resources/icons/persona-desktop.svg) to PNG, ICO and ICNS at build time.

    python packaging/render_icons.py OUT_DIR [--ico FILE] [--icns FILE]

writes OUT_DIR/<size>x<size>/apps/persona-desktop.png (the hicolor layout) with Qt's SVG
renderer (offscreen, no display needed); Pillow turns the PNGs into .ico (Windows) and
.icns (macOS).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512)
SVG = Path(__file__).resolve().parents[1] / "persona_desktop" / "resources" / "icons" / "persona-desktop.svg"


def render(out: Path) -> dict[int, Path]:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])
    renderer = QSvgRenderer(str(SVG))
    if not renderer.isValid():
        raise SystemExit(f"render_icons: {SVG} is not a valid SVG")
    written: dict[int, Path] = {}
    for size in SIZES:
        image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        renderer.render(painter)
        painter.end()
        target = out / f"{size}x{size}" / "apps" / "persona-desktop.png"
        target.parent.mkdir(parents=True, exist_ok=True)
        if not image.save(str(target), "PNG"):
            raise SystemExit(f"render_icons: cannot write {target}")
        written[size] = target
    del app
    return written


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--ico", type=Path)
    parser.add_argument("--icns", type=Path)
    args = parser.parse_args()
    pngs = render(args.out)
    if args.ico or args.icns:
        from PIL import Image

        big = Image.open(pngs[256]).convert("RGBA")
        if args.ico:
            big.save(args.ico, format="ICO", sizes=[(s, s) for s in (16, 24, 32, 48, 64, 128, 256)])
        if args.icns:
            Image.open(pngs[512]).convert("RGBA").save(args.icns, format="ICNS")
    print(f"render_icons: {len(pngs)} PNG sizes in {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
