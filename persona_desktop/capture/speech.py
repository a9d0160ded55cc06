"""Cutting a live PCM stream into speech chunks with Silero VAD (no Qt, no threads).

Feed 16 kHz mono samples (int16 bytes or float32 arrays) as they arrive; `feed`
returns the chunks that ended. Each chunk carries its sample offsets in the
recording and the absolute wall-clock time of its first and last sample, taken
when the audio was captured (the wall clock read at `feed`, minus what was still
buffered), not when a transcript is stored.

The Silero model is the one faster-whisper ships; we run its ONNX session
directly so that its recurrent state flows across `feed` calls (the library's
helper restarts it on every call). Its probabilities match the library's
whole-file pass exactly.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
from numpy.typing import NDArray

from persona_desktop.speech_runtime import import_speech_module

SAMPLE_RATE = 16000
WINDOW = 512  # Silero's window at 16 kHz: 32 ms
CONTEXT = 64

Clock = Callable[[], datetime]


def new_recording_id(now: datetime) -> str:
    """A live session's id: sortable by start time, unique thanks to a random tail."""
    return f"m{now.astimezone(UTC):%Y%m%dT%H%M%S}-{secrets.token_hex(3)}"


def pcm16_to_float(data: bytes | bytearray | memoryview) -> NDArray[np.float32]:
    raw = np.frombuffer(bytes(data), dtype="<i2")
    return (raw.astype(np.float32) / 32768.0).astype(np.float32)


def to_mono_16k(samples: NDArray[Any], rate: int, channels: int) -> NDArray[np.float32]:
    """Down-mix and resample (linear interpolation; enough for speech recognition)."""
    audio = np.asarray(samples, dtype=np.float32)
    if channels > 1:
        audio = audio[: len(audio) - len(audio) % channels].reshape(-1, channels).mean(axis=1)
    if rate != SAMPLE_RATE and audio.size:
        n_out = round(audio.size * SAMPLE_RATE / rate)
        x_old = np.arange(audio.size, dtype=np.float64) / rate
        x_new = np.arange(n_out, dtype=np.float64) / SAMPLE_RATE
        audio = np.interp(x_new, x_old, audio).astype(np.float32)
    return audio.astype(np.float32, copy=False)


class StreamingVad:
    """Silero VAD over a stream: speech probability per 32 ms window, state kept."""

    def __init__(self) -> None:
        vad = import_speech_module("faster_whisper.vad")
        self._session = vad.get_vad_model().session
        self.reset()

    def reset(self) -> None:
        self._h = np.zeros((1, 1, 128), dtype=np.float32)
        self._c = np.zeros((1, 1, 128), dtype=np.float32)
        self._context = np.zeros(CONTEXT, dtype=np.float32)

    def probabilities(self, windows: NDArray[np.float32]) -> NDArray[np.float32]:
        """`windows` is (n, 512); returns n probabilities."""
        if windows.shape[0] == 0:
            return np.zeros(0, dtype=np.float32)
        previous = np.concatenate([self._context[None, :], windows[:-1, -CONTEXT:]], axis=0)
        batch = np.concatenate([previous, windows], axis=1).astype(np.float32)
        out, self._h, self._c = self._session.run(None, {"input": batch, "h": self._h, "c": self._c})
        self._context = windows[-1, -CONTEXT:].copy()
        return np.asarray(out, dtype=np.float32).reshape(-1)


@dataclass(frozen=True, slots=True)
class SpeechChunk:
    """A stretch of speech, padded, ready to transcribe."""

    recording_id: str
    index: int
    samples: NDArray[np.float32]
    start_sample: int
    started_at: datetime

    @property
    def start_s(self) -> float:
        return self.start_sample / SAMPLE_RATE

    @property
    def duration_s(self) -> float:
        return len(self.samples) / SAMPLE_RATE


@dataclass
class ChunkerOptions:
    threshold: float = 0.5
    neg_threshold: float = 0.35
    min_silence_s: float = 0.7  # a pause this long ends a chunk
    min_speech_s: float = 0.25  # shorter bursts (a click, a cough) are dropped
    max_chunk_s: float = 28.0  # under Whisper's 30 s window
    pad_s: float = 0.3  # audio kept either side of the speech


@dataclass
class SpeechChunker:
    """Streaming chunker. Not thread-safe: feed it from one thread."""

    recording_id: str
    clock: Clock = field(default=lambda: datetime.now(UTC))
    options: ChunkerOptions = field(default_factory=ChunkerOptions)
    vad: StreamingVad = field(default_factory=StreamingVad)
    # Re-anchor the sample clock to the wall clock when they drift this far apart
    # (a stalled device, a suspended laptop), but only between chunks.
    max_drift_s: float = 2.0

    def __post_init__(self) -> None:
        self._pending = np.zeros(0, dtype=np.float32)  # not yet a whole window
        self._samples_seen = 0  # samples given to the VAD so far
        self._anchor: datetime | None = None  # wall time of sample 0
        self._anchor_sample = 0
        self._history = np.zeros(0, dtype=np.float32)  # recent audio (pre-roll)
        self._history_start = 0
        self._in_speech = False
        self._speech_start = 0
        self._last_voice_end = 0
        self._next_index = 0
        self.total_samples = 0

    # -- time ---------------------------------------------------------------------------

    def _wall_time(self, sample: int) -> datetime:
        assert self._anchor is not None
        return self._anchor + timedelta(seconds=(sample - self._anchor_sample) / SAMPLE_RATE)

    def _observe_clock(self, new_samples: int) -> None:
        now = self.clock()
        end_sample = self.total_samples + new_samples
        implied = now - timedelta(seconds=new_samples / SAMPLE_RATE)
        if self._anchor is None:
            self._anchor, self._anchor_sample = implied, self.total_samples
            return
        drift = abs((self._wall_time(end_sample) - now).total_seconds())
        if drift > self.max_drift_s and not self._in_speech:
            self._anchor, self._anchor_sample = implied, self.total_samples

    # -- feeding ------------------------------------------------------------------------

    def feed_pcm16(self, data: bytes | bytearray | memoryview) -> list[SpeechChunk]:
        return self.feed(pcm16_to_float(data))

    def feed(self, samples: NDArray[np.float32]) -> list[SpeechChunk]:
        audio = np.asarray(samples, dtype=np.float32).reshape(-1)
        if audio.size == 0:
            return []
        self._observe_clock(audio.size)
        self.total_samples += audio.size
        self._history = np.concatenate([self._history, audio])
        buf = np.concatenate([self._pending, audio])
        n = buf.size // WINDOW
        self._pending = buf[n * WINDOW :]
        if n == 0:
            return []
        probs = self.vad.probabilities(buf[: n * WINDOW].reshape(n, WINDOW))
        chunks: list[SpeechChunk] = []
        for p in probs:
            start = self._samples_seen
            self._samples_seen += WINDOW
            chunk = self._step(float(p), start)
            if chunk is not None:
                chunks.append(chunk)
        self._trim_history()
        return chunks

    def flush(self) -> list[SpeechChunk]:
        """End of the stream: close an open chunk."""
        if not self._in_speech:
            return []
        self._in_speech = False
        chunk = self._emit(self._speech_start, self.total_samples, pad_end=False)
        return [chunk] if chunk is not None else []

    # -- the state machine --------------------------------------------------------------

    def _step(self, p: float, start: int) -> SpeechChunk | None:
        o = self.options
        end = start + WINDOW
        if not self._in_speech:
            if p >= o.threshold:
                self._in_speech = True
                self._speech_start = start
                self._last_voice_end = end
            return None
        if p >= o.neg_threshold:
            self._last_voice_end = end
        silence = (end - self._last_voice_end) / SAMPLE_RATE
        length = (end - self._speech_start) / SAMPLE_RATE
        if silence >= o.min_silence_s:
            self._in_speech = False
            return self._emit(self._speech_start, self._last_voice_end, pad_end=True)
        if length >= o.max_chunk_s:
            # Cut here and go on: the next chunk starts where this one ends.
            chunk = self._emit(self._speech_start, end, pad_end=False, pad_start=True)
            self._speech_start = end
            return chunk
        return None

    def _emit(self, start: int, end: int, *, pad_end: bool, pad_start: bool = True) -> SpeechChunk | None:
        o = self.options
        if (end - start) / SAMPLE_RATE < o.min_speech_s:
            return None
        pad = int(o.pad_s * SAMPLE_RATE)
        lo = max(self._history_start, start - pad if pad_start else start)
        hi = min(self._history_start + self._history.size, end + pad if pad_end else end)
        samples = self._history[lo - self._history_start : hi - self._history_start].copy()
        chunk = SpeechChunk(self.recording_id, self._next_index, samples, lo, self._wall_time(lo))
        self._next_index += 1
        return chunk

    def _trim_history(self) -> None:
        """Keep only what an open or next chunk can still need."""
        pad = int(self.options.pad_s * SAMPLE_RATE)
        keep_from = (self._speech_start if self._in_speech else self._samples_seen) - pad - WINDOW
        drop = keep_from - self._history_start
        if drop > 0:
            self._history = self._history[drop:]
            self._history_start += drop
