"""One piece of evidence, shown with its source: chat context, screen crop, speech clip."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QRectF, QSize, Qt, QUrl, Signal
from PySide6.QtGui import QColor, QMouseEvent, QPainter, QPen, QPixmap, QResizeEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from persona_desktop.domain.dates import as_local
from persona_desktop.domain.model import Fragment, Kind
from persona_desktop.services.explain import TRUST_WORDS, author_words, byline, screen_place, speech_span
from persona_desktop.services.media import AUDIO_KEYS, IMAGE_KEYS, MediaReader
from persona_desktop.services.review import EvidenceItem

CROP_WIDTH = 520  # at most; narrower when the pane is (the image scales, never runs off the edge)


def bbox_of(locator: dict[str, Any]) -> tuple[float, float, float, float] | None:
    """(x, y, w, h) from a list [x, y, w, h] or a dict with x/y/w/h or left/top/width/height."""
    box = locator.get("crop_bbox", locator.get("bbox"))
    if isinstance(box, list | tuple) and len(box) == 4:
        x, y, w, h = (float(v) for v in box)
        return x, y, w, h
    if isinstance(box, dict):
        try:
            x, y, w, h = (
                float(box.get(a, box.get(b, 0)) or 0)
                for a, b in (("x", "left"), ("y", "top"), ("w", "width"), ("h", "height"))
            )
        except (TypeError, ValueError):
            return None
        return x, y, w, h
    return None


def _when(f: Fragment) -> str:
    return as_local(f.captured_at).strftime("%Y-%m-%d %H:%M")


def _chat_html(item: EvidenceItem) -> str:
    lines = []
    for f in item.context or [item.fragment]:
        who = html.escape(author_words(f))
        text = html.escape(f.text)
        if f.id == item.fragment.id:
            lines.append(f"<div style='background:#fff3b0;color:#000;padding:2px'><b>{who}:</b> {text}</div>")
        else:
            lines.append(f"<div style='color:#5f6368'><b>{who}:</b> {text}</div>")
    return "".join(lines)


class EvidenceCard(QFrame):
    """Built on the GUI thread from an EvidenceItem the worker read."""

    def __init__(self, item: EvidenceItem, media: MediaReader, player: AudioPlayer | None) -> None:
        super().__init__()
        self.item = item
        self.setFrameShape(QFrame.Shape.StyledPanel)
        f = item.fragment
        lay = QVBoxLayout(self)
        head = QLabel(
            f"<b>{html.escape(f.kind.value.capitalize())}</b> from <b>{html.escape(item.source_label)}</b>"
            f" &middot; {_when(f)} &middot; {html.escape(byline(f))}"
            f" &middot; {TRUST_WORDS.get(f.trust.value, f.trust.value)}"
        )
        head.setWordWrap(True)
        head.setToolTip(f"Exact source: {f.ref}")
        head.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(head)
        self.image_label: ScaledImage | None = None
        self.play_button: QPushButton | None = None
        body = QLabel(_chat_html(item)) if f.kind is Kind.CHAT else QLabel(html.escape(f.text))
        body.setWordWrap(True)
        body.setTextFormat(Qt.TextFormat.RichText)
        body.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(body)
        if f.kind is Kind.SCREEN:
            self._add_screen(lay, media)
        elif f.kind is Kind.SPEECH:
            self._add_speech(lay, media, player)

    def _add_screen(self, lay: QVBoxLayout, media: MediaReader) -> None:
        loc = self.item.fragment.locator
        path = media.path_of(loc, IMAGE_KEYS)
        where = screen_place(loc)
        if where:
            lay.addWidget(_note(where, italic=False))
        if path is None:
            lay.addWidget(
                _note("The screen image was not kept (or its retention ended); the text is all there is.")
            )
            return
        pm = QPixmap()
        data = media.read(path)  # decrypted in memory when the store is encrypted
        if data is None or not pm.loadFromData(data):
            lay.addWidget(_note(f"The screen crop {path.name} cannot be read."))
            return
        box = bbox_of(loc)
        if box is not None:
            painter = QPainter(pm)
            painter.setPen(QPen(QColor("#e53935"), max(2, pm.width() // 300)))
            painter.drawRect(QRectF(*box))
            painter.end()
        self.image_label = ScaledImage(pm, CROP_WIDTH)
        self.image_label.setToolTip("Click to see the screen capture at full size")
        title = f"Screen capture, {self.item.source_label}, {_when(self.item.fragment)}"
        self.image_label.clicked.connect(lambda: self._open_full(title))
        lay.addWidget(self.image_label)

    def _open_full(self, title: str) -> None:
        from persona_desktop.ui.image_viewer import ImageViewer

        assert self.image_label is not None
        viewer = ImageViewer(self.image_label.full, title, self.window())
        viewer.open()
        self.viewer = viewer

    def _add_speech(self, lay: QVBoxLayout, media: MediaReader, player: AudioPlayer | None) -> None:
        loc = self.item.fragment.locator
        span = speech_span(loc)
        if span:
            lay.addWidget(_note(span, italic=False))
        path = media.path_of(loc, AUDIO_KEYS)
        if path is None or player is None:
            lay.addWidget(
                _note("The audio was not kept (or its retention ended); the transcript is all there is.")
            )
            return
        row = QWidget()
        h = QHBoxLayout(row)
        h.setContentsMargins(0, 0, 0, 0)
        self.play_button = QPushButton("Play")
        stop = QPushButton("Stop")
        self.play_button.clicked.connect(lambda: player.play(path, media.read(path)))
        stop.clicked.connect(player.stop)
        h.addWidget(self.play_button)
        h.addWidget(stop)
        h.addStretch(1)
        lay.addWidget(row)


class ScaledImage(QLabel):
    """An image as wide as the pane allows (at most `max_width`), kept in proportion; click for full size."""

    clicked = Signal()

    def __init__(self, pixmap: QPixmap, max_width: int) -> None:
        super().__init__()
        self.full = pixmap
        self._max = max(1, min(max_width, pixmap.width()))
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self._shown_width = 0
        self._rescale(self._max)

    def _height_for(self, width: int) -> int:
        w = max(1, min(width, self._max))
        return max(1, round(self.full.height() * w / max(1, self.full.width())))

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        return self._height_for(width)

    def sizeHint(self) -> QSize:
        return QSize(self._max, self._height_for(self._max))

    def minimumSizeHint(self) -> QSize:
        return QSize(48, self._height_for(48))

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._rescale(event.size().width())

    def _rescale(self, width: int) -> None:
        w = max(1, min(width, self._max))
        if w != self._shown_width:
            self._shown_width = w
            self.setPixmap(self.full.scaledToWidth(w, Qt.TransformationMode.SmoothTransformation))

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton and self.rect().contains(event.position().toPoint()):
            self.clicked.emit()
        super().mouseReleaseEvent(event)


def _note(text: str, italic: bool = True) -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setStyleSheet("color: #5f6368;" + (" font-style: italic;" if italic else ""))
    return label


class AudioPlayer:
    """One shared player for speech clips; QtMultimedia is loaded on first use.

    A clip is played from memory (a QBuffer), never from a decrypted copy on disk:
    an encrypted store's clips are sealed files, opened by `MediaReader.read`."""

    def __init__(self) -> None:
        self._player: Any = None
        self._output: Any = None
        self._buffer: QBuffer | None = None
        self.current: Path | None = None

    def play(self, path: Path, data: bytes | None) -> None:
        from PySide6.QtMultimedia import QAudioOutput, QMediaPlayer

        if self._player is None:
            self._player = QMediaPlayer()
            self._output = QAudioOutput()
            self._player.setAudioOutput(self._output)
        self._player.stop()
        self._release_buffer()
        buffer = QBuffer()
        buffer.setData(QByteArray(data or b""))
        buffer.open(QIODevice.OpenModeFlag.ReadOnly)
        self._buffer = buffer
        # the URL only names the format (Ogg) for the decoder; nothing is read from it
        self._player.setSourceDevice(buffer, QUrl.fromLocalFile(str(path)))
        self._player.play()
        self.current = path

    def _release_buffer(self) -> None:
        if self._buffer is not None:
            if self._player is not None:
                self._player.setSourceDevice(None)
            self._buffer.close()
            self._buffer.setData(QByteArray())
            self._buffer = None

    def stop(self) -> None:
        if self._player is not None:
            self._player.stop()
        self.current = None

    def playing(self) -> bool:
        if self._player is None:
            return False
        from PySide6.QtMultimedia import QMediaPlayer

        return bool(self._player.playbackState() == QMediaPlayer.PlaybackState.PlayingState)

    def decoded(self) -> bool:
        """The clip was read as audio (it plays or played), not refused as invalid."""
        if self._player is None:
            return False
        from PySide6.QtMultimedia import QMediaPlayer

        return bool(
            self._player.error() in (QMediaPlayer.Error.NoError, QMediaPlayer.Error.ResourceError)
            and self._player.mediaStatus() != QMediaPlayer.MediaStatus.InvalidMedia
            and (self._player.duration() > 0 or self.playing())
        )

    def finished_or_failed(self) -> bool:
        """No device, a bad file, or the clip played to its end."""
        if self._player is None:
            return False
        from PySide6.QtMultimedia import QMediaPlayer

        status = self._player.mediaStatus()
        return bool(
            self._player.error() != QMediaPlayer.Error.NoError
            or status in (QMediaPlayer.MediaStatus.EndOfMedia, QMediaPlayer.MediaStatus.InvalidMedia)
        )

    def close(self) -> None:
        self.stop()
        self._release_buffer()
        self._player = None
        self._output = None
