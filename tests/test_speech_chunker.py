"""The Qt-free VAD chunker and a live session fed PCM frames, with the real model and store."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from persona_desktop.adapters.whisper_transcriber import WhisperTranscriber
from persona_desktop.bootstrap import Runtime
from persona_desktop.bootstrap.speech import speech_sessions
from persona_desktop.capture.speech import (
    ChunkerOptions,
    SpeechChunk,
    SpeechChunker,
    to_mono_16k,
)
from persona_desktop.capture.speech_live import SpeechSession
from persona_desktop.capture.speech_recording import Origin
from persona_desktop.domain.model import Author, Kind, Trust
from tests.speech_support import SAMPLE_RATE, SENTENCES, read_wav, silence, synth, white_noise, word_recall

pytestmark = pytest.mark.timeout(120)

FRAME = 320  # 20 ms, as an audio device delivers it


class StepClock:
    """Wall clock that advances with the audio fed (as real time does while recording)."""

    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now


def feed_stream(
    chunker_feed: object, audio: np.ndarray, clock: StepClock, *, pcm16: bool = True
) -> list[SpeechChunk]:
    chunks: list[SpeechChunk] = []
    for i in range(0, len(audio), FRAME):
        frame = audio[i : i + FRAME]
        clock.now += timedelta(seconds=len(frame) / SAMPLE_RATE)
        data = (frame * 32767).astype("<i2").tobytes() if pcm16 else frame
        out = chunker_feed(data)  # type: ignore[operator]
        if out:
            chunks.extend(out)
    return chunks


@pytest.fixture(scope="module")
def spoken(tmp_path_factory: pytest.TempPathFactory) -> list[np.ndarray]:
    folder = tmp_path_factory.mktemp("spoken")
    return [read_wav(synth(folder / f"s{i}.wav", text)) for i, text in enumerate(SENTENCES)]


@pytest.fixture(scope="module")
def transcriber() -> Iterator[WhisperTranscriber]:
    t = WhisperTranscriber(idle_unload_s=0)
    yield t
    t.close()


T0 = datetime(2026, 3, 4, 10, 0, 0, tzinfo=UTC)


def _layout(spoken: list[np.ndarray]) -> tuple[np.ndarray, list[tuple[float, float]]]:
    parts = [silence(1.5), spoken[0], silence(2.5), spoken[1], silence(2.0)]
    bounds, t = [], 0.0
    for part in parts:
        if part.any():
            nz = np.flatnonzero(np.abs(part) > 0.01)
            bounds.append((t + nz[0] / SAMPLE_RATE, t + nz[-1] / SAMPLE_RATE))
        t += len(part) / SAMPLE_RATE
    return np.concatenate(parts), bounds


def test_two_sentences_make_two_chunks_with_capture_times(spoken: list[np.ndarray]) -> None:
    audio, bounds = _layout(spoken)
    clock = StepClock(T0)
    chunker = SpeechChunker("rec1", clock)
    chunks = feed_stream(chunker.feed_pcm16, audio, clock)
    chunks += chunker.flush()
    assert [c.index for c in chunks] == [0, 1]
    for chunk, (lo, hi) in zip(chunks, bounds, strict=True):
        # The chunk covers the whole sentence, padded, and not much more.
        assert chunk.start_s <= lo + 0.1 and chunk.start_s >= lo - 0.6
        end_s = chunk.start_s + chunk.duration_s
        assert end_s >= hi - 0.1 and end_s <= hi + 0.8
        # Absolute time = when that sample was captured (clock advanced with the audio).
        expected = T0 + timedelta(seconds=chunk.start_s)
        assert abs((chunk.started_at - expected).total_seconds()) < 0.05
        assert chunk.recording_id == "rec1"


def test_silence_and_noise_make_no_chunks() -> None:
    for audio in (silence(6.0), white_noise(6.0, 0.3), white_noise(6.0, 0.02, seed=5)):
        clock = StepClock(T0)
        chunker = SpeechChunker("rec", clock)
        assert feed_stream(chunker.feed_pcm16, audio, clock) + chunker.flush() == []


def test_long_speech_is_cut_below_whispers_window(spoken: list[np.ndarray]) -> None:
    trimmed = [a[np.flatnonzero(np.abs(a) > 0.01)[0] : np.flatnonzero(np.abs(a) > 0.01)[-1]] for a in spoken]
    audio = np.concatenate(trimmed * 2)  # ~16 s without a real pause
    clock = StepClock(T0)
    chunker = SpeechChunker("rec", clock, ChunkerOptions(max_chunk_s=4.0))
    chunks = feed_stream(chunker.feed, audio, clock, pcm16=False) + chunker.flush()
    assert len(chunks) >= 3
    assert all(c.duration_s <= 4.0 + 0.7 for c in chunks)
    # Consecutive chunks leave no gap in the audio.
    for a, b in itertools.pairwise(chunks):
        assert b.start_s <= a.start_s + a.duration_s + 0.05


def test_history_stays_bounded_during_long_silence() -> None:
    clock = StepClock(T0)
    chunker = SpeechChunker("rec", clock)
    feed_stream(chunker.feed_pcm16, silence(30.0), clock)
    assert chunker._history.size < SAMPLE_RATE  # only the pre-roll is kept


def test_the_wall_clock_reanchors_after_a_stall(spoken: list[np.ndarray]) -> None:
    clock = StepClock(T0)
    chunker = SpeechChunker("rec", clock)
    feed_stream(chunker.feed_pcm16, silence(1.0), clock)
    clock.now += timedelta(minutes=5)  # the device delivered nothing for 5 minutes
    chunks = feed_stream(chunker.feed_pcm16, np.concatenate([spoken[0], silence(1.5)]), clock)
    assert len(chunks) == 1
    assert chunks[0].started_at > T0 + timedelta(minutes=5)


def test_resampling_to_mono_16k() -> None:
    t = np.arange(44100) / 44100
    tone = np.sin(2 * np.pi * 440 * t).astype(np.float32)
    stereo = np.stack([tone, tone], axis=1).reshape(-1)
    out = to_mono_16k(stereo, 44100, 2)
    assert abs(len(out) - SAMPLE_RATE) <= 1
    spectrum = np.abs(np.fft.rfft(out))
    assert abs(np.argmax(spectrum) * SAMPLE_RATE / len(out) - 440) < 3


def test_a_session_stores_each_segment_as_a_fragment(
    runtime: Runtime, transcriber: WhisperTranscriber, spoken: list[np.ndarray]
) -> None:
    audio, bounds = _layout(spoken)
    clock = StepClock(T0)
    added: list[int] = []
    session = SpeechSession(
        transcriber,
        runtime.uow,
        device="Test Mic",
        data_dir=runtime.data_dir,
        keep_audio=True,
        clock=clock,
        on_fragments=lambda frags: added.append(len(frags)),
    )
    session.start()
    feeder = threading.Thread(target=feed_stream, args=(session.feed_pcm16, audio, clock))
    feeder.start()
    feeder.join(60)
    stats = session.stop()
    assert not session.running
    assert stats.errors == [] and stats.chunks == 2 and stats.stored == sum(added) >= 2

    with runtime.uow.read() as uow:
        frags = uow.fragments.all(Kind.SPEECH)
    rid = session.recording_id
    assert [f.ref for f in frags] == [f"sp:{rid}:{i}" for i in range(len(frags))]
    text = " ".join(f.text for f in frags)
    assert word_recall(SENTENCES[0], text) >= 0.7 and word_recall(SENTENCES[1], text) >= 0.7
    lo_abs = T0 + timedelta(seconds=bounds[0][0] - 0.6)
    hi_abs = T0 + timedelta(seconds=bounds[1][1] + 0.6)
    for f in frags:
        loc = f.locator
        assert f.author is Author.UNKNOWN and f.trust is Trust.UNTRUSTED
        assert (
            loc["speaker"] == "likely-owner" and loc["origin"] == "microphone" and loc["device"] == "Test Mic"
        )
        assert lo_abs <= f.captured_at <= hi_abs
        assert datetime.fromisoformat(loc["start"]) == f.captured_at
        assert datetime.fromisoformat(loc["end"]) > f.captured_at
        assert any(lo - 0.6 <= loc["start_s"] and loc["end_s"] <= hi + 0.6 for lo, hi in bounds)
        assert loc["words"] and {"word", "start_s", "end_s", "p"} <= loc["words"][0].keys()
        assert "avg_logprob" in loc and "no_speech_prob" in loc
        clip = runtime.data_dir / loc["clip"]
        assert clip.is_file() and clip.stat().st_size > 200
        assert abs(clip.stat().st_mtime - f.captured_at.timestamp()) < 1


def test_system_audio_is_authored_by_others(
    runtime: Runtime, transcriber: WhisperTranscriber, spoken: list[np.ndarray]
) -> None:
    clock = StepClock(T0)
    session = SpeechSession(transcriber, runtime.uow, origin=Origin.SYSTEM, device="Monitor", clock=clock)
    session.start()
    feed_stream(session.feed_pcm16, np.concatenate([silence(0.5), spoken[2], silence(1.5)]), clock)
    session.stop()
    with runtime.uow.read() as uow:
        frags = uow.fragments.all(Kind.SPEECH)
    assert frags and all(f.author is Author.OTHER and f.trust is Trust.UNTRUSTED for f in frags)
    assert all(f.locator["speaker"] == "other" and f.locator["clip"] is None for f in frags)


def test_feeding_after_stop_is_ignored(
    runtime: Runtime, transcriber: WhisperTranscriber, tmp_path: Path
) -> None:
    session = SpeechSession(transcriber, runtime.uow)
    session.start()
    session.stop()
    session.feed_pcm16(b"\x00\x00" * 1600)
    assert session.stop().chunks == 0


def test_starting_a_session_applies_text_retention(
    runtime: Runtime, transcriber: WhisperTranscriber, spoken: list[np.ndarray]
) -> None:
    old = StepClock(datetime.now(UTC) - timedelta(days=40))
    session = SpeechSession(transcriber, runtime.uow, clock=old)
    session.start()
    feed_stream(session.feed_pcm16, np.concatenate([spoken[2], silence(1.5)]), old)
    session.stop()
    with runtime.uow.read() as uow:
        assert len(uow.fragments.all(Kind.SPEECH)) == 1

    kept = SpeechSession(transcriber, runtime.uow, text_retention_days=60)
    kept.start()
    kept.stop()
    with runtime.uow.read() as uow:
        assert len(uow.fragments.all(Kind.SPEECH)) == 1
    purging = SpeechSession(transcriber, runtime.uow, text_retention_days=30)
    purging.start()
    purging.stop()
    with runtime.uow.read() as uow:
        assert uow.fragments.all(Kind.SPEECH) == []


def test_each_new_recording_follows_the_settings_as_they_are_then(
    runtime: Runtime, transcriber: WhisperTranscriber, spoken: list[np.ndarray]
) -> None:
    """Pause and resume start a new session from the same factory: a "Keep recordings"
    unticked in between must hold for the next recording, not only after a restart."""
    runtime.settings.set("capture.keep_audio", True)
    sessions = speech_sessions(runtime, transcriber)
    runtime.settings.set("capture.keep_audio", False)

    clock = StepClock(datetime.now(UTC))
    session = sessions("Microphone")
    session.start()
    feed_stream(session.feed_pcm16, np.concatenate([silence(0.5), spoken[2], silence(1.5)]), clock)
    session.stop()
    with runtime.uow.read() as uow:
        frags = uow.fragments.all(Kind.SPEECH)
    assert frags, "nothing was transcribed"
    assert all(f.locator["clip"] is None for f in frags), "a clip was kept after keep_audio was turned off"
    assert not list((runtime.data_dir / "clips").rglob("*.ogg"))
