"""Tray state icons, drawn at run time so they stay crisp at any size and need no files."""

from __future__ import annotations

from enum import StrEnum

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QIcon, QPainter, QPainterPath, QPen, QPixmap


class TrayState(StrEnum):
    OFF = "off"
    CAPTURING = "capturing"
    PAUSED = "paused"
    RUNNING = "running"
    WAITING = "waiting"


_COLORS = {
    TrayState.OFF: "#8a8f98",
    TrayState.CAPTURING: "#2e9d5b",
    TrayState.PAUSED: "#d99a1e",
    TrayState.RUNNING: "#4456c7",
    TrayState.WAITING: "#2f7fd1",
}

_SIZES = (16, 22, 24, 32, 48, 64)


def _draw(p: QPainter, state: TrayState, s: float, badge: int) -> None:
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    color = QColor(_COLORS[state])
    m = s * 0.06
    disc = QRectF(m, m, s - 2 * m, s - 2 * m)
    if state is TrayState.OFF:
        p.setPen(QPen(color, max(1.5, s * 0.1)))
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawEllipse(disc.adjusted(s * 0.05, s * 0.05, -s * 0.05, -s * 0.05))
    else:
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(QBrush(color))
        p.drawEllipse(disc)
    white = QColor("white")
    c = s / 2
    if state is TrayState.CAPTURING:
        p.setBrush(white)
        r = s * 0.17
        p.drawEllipse(QPointF(c, c), r, r)
    elif state is TrayState.PAUSED:
        p.setBrush(white)
        w, h = s * 0.12, s * 0.4
        p.drawRect(QRectF(c - w * 1.6, c - h / 2, w, h))
        p.drawRect(QRectF(c + w * 0.6, c - h / 2, w, h))
    elif state is TrayState.RUNNING:
        moon = QPainterPath()
        r = s * 0.26
        moon.addEllipse(QPointF(c, c), r, r)
        cut = QPainterPath()
        cut.addEllipse(QPointF(c + r * 0.55, c - r * 0.35), r * 0.85, r * 0.85)
        p.setBrush(white)
        p.drawPath(moon.subtracted(cut))
    elif state is TrayState.WAITING:
        p.setBrush(white)
        w = s * 0.42
        for i in range(3):
            p.drawRoundedRect(QRectF(c - w / 2, c - s * 0.2 + i * s * 0.15, w, s * 0.08), 1, 1)
    if badge > 0 and s >= 16:
        r = s * 0.24
        center = QPointF(s - r, r)
        p.setBrush(QColor("#d63a2f"))
        p.setPen(QPen(white, max(1.0, s * 0.04)))
        p.drawEllipse(center, r, r)
        if s >= 22:
            font = QFont()
            font.setBold(True)
            font.setPixelSize(max(6, int(r * 1.3)))
            p.setFont(font)
            p.setPen(white)
            text = str(badge) if badge < 10 else "9+"
            p.drawText(
                QRectF(center.x() - r, center.y() - r, 2 * r, 2 * r), Qt.AlignmentFlag.AlignCenter, text
            )


def state_pixmap(state: TrayState, size: int = 64, badge: int = 0) -> QPixmap:
    pm = QPixmap(size, size)
    pm.fill(Qt.GlobalColor.transparent)
    p = QPainter(pm)
    try:
        _draw(p, state, float(size), badge)
    finally:
        p.end()
    return pm


def state_icon(state: TrayState, badge: int = 0) -> QIcon:
    icon = QIcon()
    for size in _SIZES:
        icon.addPixmap(state_pixmap(state, size, badge))
    return icon
