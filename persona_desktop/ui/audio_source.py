"""The microphone, read with Qt Multimedia's `QAudioSource` on its own thread.

`SpeechRecorder` is the speech `CaptureLoop` the tray's `CaptureController` drives
(start/stop/pause/resume, each returning at once). Every start opens a new
`SpeechSession` (a new recording id) from the factory the composition root gives;
the reader thread feeds the session's Qt-free VAD chunker and the session's own
worker thread transcribes and stores. Nothing here blocks the GUI thread.

No microphone (``QMediaDevices.audioInputs()`` empty), an unknown configured device,
or a device that refuses to open (``QtAudio.Error.OpenError``, e.g. no permission)
gives one clear message: `start()` raises `CaptureUnavailableError` when it can tell
at once, otherwise `failed(str)` is emitted and capture stays off.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import numpy as np
from PySide6.QtCore import QIODevice, QMetaObject, QObject, Qt, QThread, QTimer, Signal, Slot
from PySide6.QtMultimedia import QAudioDevice, QAudioFormat, QAudioSource, QMediaDevices, QtAudio

from persona_desktop.capture.speech import SAMPLE_RATE, to_mono_16k
from persona_desktop.capture.speech_live import SessionStats, SpeechSession
from persona_desktop.errors import CaptureUnavailableError

log = logging.getLogger(__name__)

# device description -> a new session (the factory picks transcriber, store, settings)
SessionFactory = Callable[[str], SpeechSession]

NO_MICROPHONE = "no microphone found: speech capture is off (connect one, or check the sound settings)"


def list_microphones() -> list[str]:
    return [d.description() for d in QMediaDevices.audioInputs()]


def find_microphone(name: str) -> QAudioDevice:
    """The configured device by description or id; empty name means the system default."""
    inputs = QMediaDevices.audioInputs()
    if not inputs:
        raise CaptureUnavailableError(NO_MICROPHONE)
    if not name:
        default = QMediaDevices.defaultAudioInput()
        return default if not default.isNull() else inputs[0]
    for device in inputs:
        if name in (device.description(), bytes(device.id().data()).decode(errors="replace")):
            return device
    names = ", ".join(d.description() for d in inputs)
    raise CaptureUnavailableError(f"microphone {name!r} not found; available: {names}")


def _format_for(device: QAudioDevice, native: bool = False) -> QAudioFormat:
    """16 kHz mono 16-bit when the device offers it, else its own format (converted here).

    Windows' shared-mode WASAPI, for one, only offers its mix format (48 kHz float stereo).
    """
    if native:
        return device.preferredFormat()
    wanted = QAudioFormat()
    wanted.setSampleRate(SAMPLE_RATE)
    wanted.setChannelCount(1)
    wanted.setSampleFormat(QAudioFormat.SampleFormat.Int16)
    return wanted if device.isFormatSupported(wanted) else device.preferredFormat()


class _Reader(QObject):
    """Lives on the reader thread: owns the QAudioSource, feeds the session."""

    opened = Signal()
    failed = Signal(str)
    finished = Signal(object, object)  # this reader, SessionStats

    def __init__(self, session: SpeechSession, device: QAudioDevice, native: bool = False) -> None:
        super().__init__()
        self._session = session
        self._device = device
        self._native = native
        self._source: QAudioSource | None = None
        self._io: QIODevice | None = None
        self._format = QAudioFormat()
        self._closed = False
        self._health = QTimer(self)
        self._health.setInterval(500)
        self._health.timeout.connect(self._check_health)

    @Slot()
    def open(self) -> None:
        self._format = _format_for(self._device, self._native)
        self._source = QAudioSource(self._device, self._format, self)
        self._source.setBufferSize(SAMPLE_RATE)  # ~0.5 s at 16 kHz/16-bit
        self._io = self._source.start()
        error = self._source.error()
        if self._io is None or error != QtAudio.Error.NoError:
            self._fail(error)
            return
        self._io.readyRead.connect(self._on_ready_read)
        self._health.start()
        self.opened.emit()

    def _fail(self, error: QtAudio.Error) -> None:
        log.info("audio source error %s", error)
        what = {
            QtAudio.Error.OpenError: "cannot be opened (in use, unplugged, or no permission)",
            QtAudio.Error.IOError: "stopped delivering audio",
            QtAudio.Error.FatalError: "failed",
        }.get(error, "failed")
        self.failed.emit(f"microphone {self._device.description()!r} {what}: speech capture is off")
        self.close()

    @property
    def audio_format(self) -> QAudioFormat:
        return self._format

    def _check_health(self) -> None:
        # Polled, not via stateChanged: that signal comes from the audio backend's own
        # thread and PySide cannot queue its QAudio::State argument.
        if self._source is None or self._closed:
            return
        error = self._source.error()
        if error != QtAudio.Error.NoError:
            self._fail(error)

    def _on_ready_read(self) -> None:
        if self._io is not None and not self._closed:
            self._feed(bytes(self._io.readAll().data()))

    def _feed(self, data: bytes) -> None:
        if not data:
            return
        fmt = self._format
        if (
            fmt.sampleRate() == SAMPLE_RATE
            and fmt.channelCount() == 1
            and fmt.sampleFormat() == QAudioFormat.SampleFormat.Int16
        ):
            self._session.feed_pcm16(data)
            return
        samples = _to_float(data, fmt.sampleFormat())
        mono = to_mono_16k(samples, fmt.sampleRate(), fmt.channelCount())
        self._session.feed_pcm16((np.clip(mono, -1, 1) * 32767).astype("<i2").tobytes())

    @Slot()
    def close(self) -> None:
        """Stop reading, then let the session transcribe what is left (on this thread)."""
        if self._closed:
            return
        self._closed = True
        self._health.stop()
        if self._source is not None:
            if self._io is not None:
                self._feed(bytes(self._io.readAll().data()))
            self._source.stop()
        stats = self._session.stop()
        self.finished.emit(self, stats)


def _to_float(data: bytes, fmt: QAudioFormat.SampleFormat) -> np.ndarray:
    if fmt == QAudioFormat.SampleFormat.Float:
        return np.frombuffer(data[: len(data) // 4 * 4], dtype="<f4")
    if fmt == QAudioFormat.SampleFormat.Int32:
        return np.frombuffer(data[: len(data) // 4 * 4], dtype="<i4").astype(np.float32) / 2**31
    if fmt == QAudioFormat.SampleFormat.UInt8:
        return (np.frombuffer(data, dtype=np.uint8).astype(np.float32) - 128) / 128
    return np.frombuffer(data[: len(data) // 2 * 2], dtype="<i2").astype(np.float32) / 32768


class SpeechRecorder(QObject):
    """The speech capture loop for the tray.

    Signals: `started(str)` the recording id once the device is open;
    `stopped(object)` a `SessionStats` after the last chunk is stored;
    `failed(str)` a message for the owner (capture is then off);
    `fragments_added(int)` after each stored batch of segments.
    """

    started = Signal(str)
    stopped = Signal(object)
    failed = Signal(str)
    fragments_added = Signal(int)

    def __init__(
        self,
        session_factory: SessionFactory,
        microphone: str = "",
        parent: QObject | None = None,
        *,
        native_format: bool = False,
    ) -> None:
        super().__init__(parent)
        self._factory = session_factory
        self.microphone = microphone
        self.native_format = native_format  # read the device's own format and convert
        self.format_used: QAudioFormat | None = None
        self._thread: QThread | None = None
        self._reader: _Reader | None = None
        self._session: SpeechSession | None = None
        self._stopping = False
        self._restart = False  # resume() came while the previous recording was still closing

    @property
    def running(self) -> bool:
        return self._thread is not None

    @property
    def recording_id(self) -> str | None:
        return self._session.recording_id if self._session is not None else None

    def heard_seconds(self) -> float:
        """Audio read from the microphone in this recording so far (0 when none runs)."""
        return self._session.heard_seconds if self._session is not None else 0.0

    def start(self) -> None:
        """Open the microphone on a new thread. Raises CaptureUnavailableError if there is none."""
        if self._thread is not None:
            if self._stopping:
                self._restart = True
            return
        device = find_microphone(self.microphone)
        session = self._factory(device.description())
        session.connect(lambda frags: self.fragments_added.emit(len(frags)), self.failed.emit)
        session.start()
        thread = QThread(self)
        thread.setObjectName("speech-reader")
        reader = _Reader(session, device, self.native_format)
        reader.moveToThread(thread)
        reader.opened.connect(self._on_opened)
        reader.failed.connect(self._on_reader_failed)
        reader.finished.connect(self._on_reader_finished)
        thread.finished.connect(reader.deleteLater)
        self._thread, self._reader, self._session = thread, reader, session
        thread.start()
        QMetaObject.invokeMethod(reader, "open", Qt.ConnectionType.QueuedConnection)

    def stop(self) -> None:
        """Ask the reader to stop; `stopped` follows once the last chunk is stored."""
        self._restart = False
        if self._reader is not None and not self._stopping:
            self._stopping = True
            QMetaObject.invokeMethod(self._reader, "close", Qt.ConnectionType.QueuedConnection)

    # A paused microphone records nothing: pause ends the recording, resume starts a new one.
    def pause(self) -> None:
        self.stop()

    def resume(self) -> None:
        self.start()

    def shutdown(self, timeout_ms: int = 60_000) -> None:
        """Blocking stop for app exit (and tests): waits for the reader thread."""
        self._restart = False
        thread, reader = self._thread, self._reader
        if thread is None or reader is None:
            return
        QMetaObject.invokeMethod(reader, "close", Qt.ConnectionType.BlockingQueuedConnection)
        thread.quit()
        if not thread.wait(timeout_ms):
            log.warning("speech reader thread did not stop in time")
        self._cleanup()

    def _on_opened(self) -> None:
        if self._reader is not None:
            self.format_used = self._reader.audio_format
        if self._session is not None:
            self.started.emit(self._session.recording_id)

    def _on_reader_failed(self, message: str) -> None:
        log.warning("speech capture: %s", message)
        self.failed.emit(message)

    def _on_reader_finished(self, reader: _Reader, stats: SessionStats) -> None:
        if reader is self._reader:  # not a late signal from a reader shutdown() already ended
            if self._thread is not None:
                self._thread.quit()
                self._thread.wait(5_000)
            self._cleanup()
        self.stopped.emit(stats)
        if self._restart and self._thread is None:
            self._restart = False
            try:
                self.start()
            except CaptureUnavailableError as exc:
                self.failed.emit(str(exc))

    def _cleanup(self) -> None:
        if self._thread is not None:
            self._thread.deleteLater()
        self._thread, self._reader, self._session = None, None, None
        self._stopping = False
