"""The app's icons, drawn at run time so they stay crisp at any size and need no files.

The app mark is a white four-pointed spark on a blue disc. The tray shows the state:
off (the mark greyed), capturing (a record dot), paused (two bars),
sleep cycle running (a moon), items waiting (their count, as large as the disc allows,
so it stays readable at the 22-24 px a panel gives a tray icon).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from enum import StrEnum

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QIcon, QPainter, QPainterPath, QPen, QPixmap


class TrayState(StrEnum):
    OFF = "off"
    CAPTURING = "capturing"
    PAUSED = "paused"
    RUNNING = "running"
    WAITING = "waiting"


APP_BLUE = "#2f6fd1"
_COLORS = {
    TrayState.OFF: "#6f757e",
    TrayState.CAPTURING: "#1f8f4e",
    TrayState.PAUSED: "#c98a12",
    TrayState.RUNNING: "#4a4fc4",
    TrayState.WAITING: APP_BLUE,
}

_SIZES = (16, 22, 24, 32, 48, 64, 128, 256)


def _spark(c: QPointF, r: float, waist: float = 0.28) -> QPainterPath:
    """A four-pointed star of outer radius `r`: the app's mark (a wider `waist` reads at 22 px)."""
    path = QPainterPath()
    points = []
    for i in range(8):
        radius = r if i % 2 == 0 else r * waist
        angle = math.pi / 4 * i - math.pi / 2
        points.append(QPointF(c.x() + math.cos(angle) * radius, c.y() + math.sin(angle) * radius))
    path.moveTo(points[0])
    for p in points[1:]:
        path.lineTo(p)
    path.closeSubpath()
    return path


def _disc(p: QPainter, s: float, color: str) -> QRectF:
    m = s * 0.04
    disc = QRectF(m, m, s - 2 * m, s - 2 * m)
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(QBrush(QColor(color)))
    p.drawEllipse(disc)
    return disc


def _draw_mark(p: QPainter, s: float) -> None:
    _disc(p, s, APP_BLUE)
    c = QPointF(s / 2, s / 2)
    p.setBrush(QColor("white"))
    p.drawPath(_spark(c, s * 0.3))
    p.drawPath(_spark(QPointF(s * 0.7, s * 0.3), s * 0.1))


def _draw_off(p: QPainter, s: float) -> None:
    """The app's mark, greyed: recognisably Persona, visibly doing nothing."""
    _disc(p, s, _COLORS[TrayState.OFF])
    p.setBrush(QColor("#f1f3f4"))
    p.drawPath(_spark(QPointF(s / 2, s / 2), s * 0.34, waist=0.34))


def _draw_count(p: QPainter, s: float, count: int, rect: QRectF, px: float) -> None:
    font = QFont()
    font.setBold(True)
    font.setPixelSize(max(7, round(px)))
    p.setFont(font)
    p.setPen(QColor("white"))
    p.drawText(rect, Qt.AlignmentFlag.AlignCenter, str(count) if count < 10 else "9+")


def _draw(p: QPainter, state: TrayState, s: float, badge: int) -> None:
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    p.setRenderHint(QPainter.RenderHint.TextAntialiasing)
    if state is TrayState.OFF:
        _draw_off(p, s)
        return
    disc = _disc(p, s, _COLORS[state])
    white = QColor("white")
    c = s / 2
    p.setBrush(white)
    if state is TrayState.CAPTURING:
        p.drawEllipse(QPointF(c, c), s * 0.2, s * 0.2)
    elif state is TrayState.PAUSED:
        w, h = s * 0.13, s * 0.44
        p.drawRoundedRect(QRectF(c - w * 1.5, c - h / 2, w, h), w * 0.2, w * 0.2)
        p.drawRoundedRect(QRectF(c + w * 0.5, c - h / 2, w, h), w * 0.2, w * 0.2)
    elif state is TrayState.RUNNING:
        moon = QPainterPath()
        r = s * 0.28
        moon.addEllipse(QPointF(c, c), r, r)
        cut = QPainterPath()
        cut.addEllipse(QPointF(c + r * 0.55, c - r * 0.35), r * 0.85, r * 0.85)
        p.drawPath(moon.subtracted(cut))
    elif state is TrayState.WAITING:
        if badge > 0:  # the count is the icon: as large as the disc allows
            _draw_count(p, s, badge, disc, s * (0.62 if badge < 10 else 0.46))
            return
        p.drawPath(_spark(QPointF(c, c), s * 0.3))
    if badge > 0 and s >= 16:
        r = s * 0.27
        center = QPointF(s - r, s - r)
        p.setBrush(QColor("#d32f2f"))
        p.setPen(QPen(white, max(1.0, s * 0.05)))
        p.drawEllipse(center, r, r)
        box = QRectF(center.x() - r, center.y() - r, 2 * r, 2 * r)
        _draw_count(p, s, badge, box, r * (1.45 if badge < 10 else 1.1))


def _pixmap(size: int, paint: Callable[[QPainter], object]) -> QPixmap:
    pm = QPixmap(size, size)
    pm.fill(Qt.GlobalColor.transparent)
    p = QPainter(pm)
    try:
        paint(p)
    finally:
        p.end()
    return pm


def state_pixmap(state: TrayState, size: int = 64, badge: int = 0) -> QPixmap:
    return _pixmap(size, lambda p: _draw(p, state, float(size), badge))


def state_icon(state: TrayState, badge: int = 0) -> QIcon:
    icon = QIcon()
    for size in _SIZES:
        icon.addPixmap(state_pixmap(state, size, badge))
    return icon


_APP_ICON: list[QIcon] = []


def app_pixmap(size: int = 64) -> QPixmap:
    def paint(p: QPainter) -> None:
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        _draw_mark(p, float(size))

    return _pixmap(size, paint)


def app_icon() -> QIcon:
    """The window icon of every window (drawn once per process)."""
    if not _APP_ICON:
        icon = QIcon()
        for size in _SIZES:
            icon.addPixmap(app_pixmap(size))
        _APP_ICON.append(icon)
    return _APP_ICON[0]
