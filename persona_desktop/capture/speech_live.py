"""A live speech session: PCM in (any thread), fragments stored (one worker thread).

The audio reader (Qt's `QAudioSource` in `ui/audio_source.py`, or `parec` in a
test) calls `feed_pcm16` with 16 kHz mono frames as they arrive; VAD cutting is
cheap and happens right there. Transcription is slow, so finished chunks go on a
queue that one worker thread drains: transcribe, build fragments, store them in one
transaction. `stop()` flushes the open chunk and waits for the queue to drain.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from persona_desktop.capture.speech import (
    SAMPLE_RATE,
    ChunkerOptions,
    SpeechChunk,
    SpeechChunker,
    new_recording_id,
)
from persona_desktop.capture.speech_clips import purge_expired_clips
from persona_desktop.capture.speech_recording import Origin, Recording, SegmentWriter
from persona_desktop.domain.model import Kind, NewFragment
from persona_desktop.errors import PersonaError
from persona_desktop.ports import MediaFiles, Transcriber, UnitOfWorkFactory
from persona_desktop.services.ingest import ingest
from persona_desktop.services.screen_retention import purge_expired_fragments

log = logging.getLogger(__name__)

FragmentsCallback = Callable[[list[NewFragment]], None]
ErrorCallback = Callable[[str], None]


@dataclass
class SessionStats:
    chunks: int = 0
    fragments: int = 0
    stored: int = 0
    errors: list[str] = field(default_factory=list)


class SpeechSession:
    """One recording from start to stop. Create a new one for each start."""

    def __init__(
        self,
        transcriber: Transcriber,
        uow_factory: UnitOfWorkFactory,
        *,
        origin: Origin = Origin.MICROPHONE,
        device: str = "",
        data_dir: Path | None = None,
        keep_audio: bool = False,
        media: MediaFiles | None = None,
        audio_retention_days: int = 7,
        text_retention_days: int | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        options: ChunkerOptions | None = None,
        on_fragments: FragmentsCallback | None = None,
        on_error: ErrorCallback | None = None,
    ) -> None:
        now = clock()
        self.recording = Recording(
            new_recording_id(now), origin, now, device=device, model=transcriber.model_name
        )
        self._transcriber = transcriber
        self._uow = uow_factory
        self._clock = clock
        self._data_dir = data_dir
        self._retention_days = audio_retention_days
        self._text_retention_days = text_retention_days
        self._writer = SegmentWriter(self.recording, data_dir, keep_audio, media=media)
        self._chunker = SpeechChunker(self.recording.recording_id, clock, options or ChunkerOptions())
        self._queue: queue.Queue[SpeechChunk | None] = queue.Queue()
        self._on_fragments = on_fragments
        self._on_error = on_error
        self._feed_lock = threading.Lock()
        self._thread = threading.Thread(
            target=self._work, name=f"speech-{self.recording.recording_id}", daemon=True
        )
        self._stopped = False
        self.stats = SessionStats()

    def connect(
        self, on_fragments: FragmentsCallback | None = None, on_error: ErrorCallback | None = None
    ) -> None:
        """Set the callbacks (called on the session's worker thread)."""
        if on_fragments is not None:
            self._on_fragments = on_fragments
        if on_error is not None:
            self._on_error = on_error

    @property
    def recording_id(self) -> str:
        return self.recording.recording_id

    def start(self) -> None:
        """Apply retention (old clips, old transcripts if `text_retention_days`), then listen."""
        now = self._clock()
        if self._data_dir is not None:
            purge_expired_clips(self._data_dir, now, self._retention_days)
        if self._text_retention_days is not None:
            purge_expired_fragments(self._uow, Kind.SPEECH, self._text_retention_days, now)
        self._thread.start()

    def feed_pcm16(self, data: bytes | bytearray | memoryview) -> None:
        with self._feed_lock:
            if self._stopped:
                return
            for chunk in self._chunker.feed_pcm16(data):
                self._queue.put(chunk)

    def stop(self, timeout: float = 120.0) -> SessionStats:
        """Close the open chunk, transcribe what is queued, and end the worker."""
        with self._feed_lock:
            if not self._stopped:
                self._stopped = True
                for chunk in self._chunker.flush():
                    self._queue.put(chunk)
                self._queue.put(None)
        if self._thread.is_alive():
            self._thread.join(timeout)
        return self.stats

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    @property
    def heard_seconds(self) -> float:
        """How much audio this recording has taken in so far."""
        return self._chunker.total_samples / SAMPLE_RATE

    def _work(self) -> None:
        while True:
            chunk = self._queue.get()
            if chunk is None:
                return
            try:
                self._process(chunk)
            except PersonaError as exc:
                self._report(str(exc))
            except Exception as exc:  # keep recording; one bad chunk must not end the session
                log.exception("speech chunk %s failed", chunk.index)
                self._report(f"speech chunk could not be transcribed: {exc}")

    def _process(self, chunk: SpeechChunk) -> None:
        self.stats.chunks += 1
        segments = self._transcriber.transcribe(chunk.samples)
        fragments = self._writer.fragments(chunk.samples, chunk.start_s, segments, chunk.started_at)
        if not fragments:
            return
        self.stats.fragments += len(fragments)
        results = ingest(self._uow, [(self.recording.source, fragments)], self._clock())
        self.stats.stored += sum(r.added for r in results)
        if self._on_fragments is not None:
            self._on_fragments(fragments)

    def _report(self, message: str) -> None:
        self.stats.errors.append(message)
        if self._on_error is not None:
            self._on_error(message)
