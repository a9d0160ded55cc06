"""The real faster-whisper (bundled tiny.en) on espeak-ng speech, silence and noise."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from persona_desktop.adapters.whisper_transcriber import (
    Thresholds,
    WhisperTranscriber,
    default_model_path,
    filter_segments,
    is_phrase_loop,
    keep_segment,
    resolve_model,
    split_on_pauses,
)
from persona_desktop.errors import CaptureUnavailableError
from persona_desktop.ports import SpeechSegment, SpokenWord
from tests.speech_support import SAMPLE_RATE, SENTENCES, read_wav, silence, synth, white_noise, word_recall

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def transcriber() -> Iterator[WhisperTranscriber]:
    t = WhisperTranscriber(idle_unload_s=0)
    yield t
    t.close()


@pytest.fixture(scope="module")
def spoken(tmp_path_factory: pytest.TempPathFactory) -> list[np.ndarray]:
    folder = tmp_path_factory.mktemp("spoken")
    return [read_wav(synth(folder / f"s{i}.wav", text)) for i, text in enumerate(SENTENCES)]


def test_sentences_are_transcribed_with_few_word_errors(
    transcriber: WhisperTranscriber, spoken: list[np.ndarray]
) -> None:
    for text, audio in zip(SENTENCES, spoken, strict=True):
        segments = transcriber.transcribe(audio)
        got = " ".join(s.text for s in segments)
        assert word_recall(text, got) >= 0.7, (text, got)
        for seg in segments:
            assert seg.words, "word timestamps are on"
            assert all(seg.start - 0.05 <= w.start <= w.end <= seg.end + 0.05 for w in seg.words)
            assert -1.0 < seg.avg_logprob <= 0 and 0 <= seg.no_speech_prob < 0.6


def test_segment_times_fall_inside_the_speech(
    transcriber: WhisperTranscriber, spoken: list[np.ndarray]
) -> None:
    # 2 s silence, sentence 0, 3 s silence, sentence 1, 2 s silence.
    parts = [silence(2.0), spoken[0], silence(3.0), spoken[1], silence(2.0)]
    audio = np.concatenate(parts)
    bounds = []
    t = 0.0
    for part in parts:
        if part.any():
            bounds.append((t, t + len(part) / SAMPLE_RATE))
        t += len(part) / SAMPLE_RATE
    segments = transcriber.transcribe(audio)
    assert segments
    slack = 0.6
    for seg in segments:
        assert any(lo - slack <= seg.start and seg.end <= hi + slack for lo, hi in bounds), (seg, bounds)
    first = [s for s in segments if s.start < bounds[0][1]]
    second = [s for s in segments if s.start >= bounds[1][0] - slack]
    assert word_recall(SENTENCES[0], " ".join(s.text for s in first)) >= 0.7
    assert word_recall(SENTENCES[1], " ".join(s.text for s in second)) >= 0.7


def _tones(kind: str, seconds: float = 10.0) -> np.ndarray:
    x = np.arange(int(seconds * SAMPLE_RATE)) / SAMPLE_RATE
    if kind == "hum":
        audio = 0.3 * np.sin(2 * np.pi * 50 * x) + 0.1 * np.sin(2 * np.pi * 150 * x)
    elif kind == "chords":
        swell = 0.5 + 0.5 * np.sin(2 * np.pi * 0.5 * x)
        audio = sum(0.1 * np.sin(2 * np.pi * f * x) for f in (261.6, 329.6, 392.0)) * swell
    else:  # clicks, like typing
        rng = np.random.default_rng(1)
        audio = np.where(np.arange(x.size) % 4000 < 40, rng.standard_normal(x.size) * 0.8, 0.0)
    return np.clip(audio, -1, 1).astype(np.float32)


@pytest.mark.parametrize(
    "audio",
    [
        silence(10.0),
        white_noise(10.0, 0.3),
        white_noise(10.0, 0.02, seed=3),
        _tones("hum"),
        _tones("chords"),
        _tones("clicks"),
    ],
    ids=["silence", "loud-noise", "faint-noise", "hum", "chords", "clicks"],
)
def test_silence_and_noise_give_no_text(transcriber: WhisperTranscriber, audio: np.ndarray) -> None:
    assert transcriber.transcribe(audio) == []


def test_too_short_audio_gives_nothing(transcriber: WhisperTranscriber) -> None:
    assert transcriber.transcribe(silence(0.05)) == []


def _seg(text: str, *, lp: float = -0.3, nsp: float = 0.05, cr: float = 1.2) -> SpeechSegment:
    return SpeechSegment(0.0, 1.0, text, lp, nsp, cr)


def test_repeated_phrase_loops_are_recognized() -> None:
    assert is_phrase_loop("Thank you. Thank you. Thank you.")
    assert is_phrase_loop("Thank you. Thank you.")  # a stock phrase twice
    assert is_phrase_loop("I'm going home. I'm going home. I'm going home. I'm going")
    assert not is_phrase_loop("No, no, no.")  # people do say that
    assert not is_phrase_loop("The meeting is at nine and the meeting is long.")
    assert not is_phrase_loop("Thank you")


def test_segment_gates() -> None:
    th = Thresholds()
    assert keep_segment(_seg("My colour is green."), th)
    assert not keep_segment(_seg("My colour is green.", lp=-1.2, nsp=0.7), th)  # Whisper's own rule
    assert not keep_segment(_seg("My colour is green.", nsp=0.9), th)
    assert not keep_segment(_seg("My colour is green.", lp=-1.8), th)
    assert not keep_segment(_seg("la la la la la la la la", cr=3.1), th)
    assert not keep_segment(_seg("Thank you. Thank you. Thank you."), th)
    assert not keep_segment(_seg("Thank you.", lp=-0.7), th)  # a stock phrase, unsure: noise
    assert keep_segment(_seg("Thank you.", lp=-0.2, nsp=0.01), th)  # said clearly: kept
    assert not keep_segment(_seg(" ... "), th)


def test_a_segment_spanning_a_long_pause_is_split() -> None:
    words = (
        SpokenWord("Hello", 0.0, 0.4, 0.9),
        SpokenWord("there.", 0.4, 0.8, 0.9),
        SpokenWord("See", 3.0, 3.3, 0.9),
        SpokenWord("you.", 3.3, 3.6, 0.9),
    )
    parts = split_on_pauses(SpeechSegment(0.0, 3.6, "Hello there. See you.", -0.2, 0.01, 1.1, words))
    assert [(p.start, p.end, p.text) for p in parts] == [(0.0, 0.8, "Hello there."), (3.0, 3.6, "See you.")]
    assert parts[1].words == words[2:]


def test_consecutive_repeats_are_dropped() -> None:
    segs = [
        _seg("Where are my keys?"),
        _seg("Where are my keys?"),
        _seg("In the kitchen."),
        _seg("Bye.", lp=-0.9),
    ]
    assert [s.text for s in filter_segments(segs)] == ["Where are my keys?", "In the kitchen."]


def test_model_resolution(tmp_path: Path) -> None:
    assert resolve_model("") == default_model_path()
    assert (Path(resolve_model("")) / "model.bin").is_file()
    assert resolve_model(str(Path(default_model_path()))) == default_model_path()
    with pytest.raises(CaptureUnavailableError, match=r"no model\.bin"):
        resolve_model(str(tmp_path))
    assert resolve_model("small") == "small"  # a name for faster-whisper's own lookup


def test_a_missing_model_is_a_clear_error(tmp_path: Path) -> None:
    t = WhisperTranscriber("no-such-model-name-xyz", idle_unload_s=0)
    with pytest.raises(CaptureUnavailableError, match="cannot be loaded"):
        t.load()
    t.close()


def test_lazy_load_and_unload_after_idle(spoken: list[np.ndarray]) -> None:
    t = WhisperTranscriber(idle_unload_s=0.3)
    try:
        assert not t.loaded
        assert t.transcribe(spoken[2])
        assert t.loaded
        deadline = time.monotonic() + 10
        while t.loaded and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not t.loaded
        assert t.transcribe(spoken[2])  # loads again on demand
    finally:
        t.close()
    assert not t.loaded


def test_threads_never_exceed_omp_thread_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    # CTranslate2 with cpu_threads=2 under OMP_THREAD_LIMIT=1 decodes garbage (measured).
    monkeypatch.setenv("OMP_THREAD_LIMIT", "1")
    assert WhisperTranscriber(cpu_threads=2).cpu_threads == 1
    monkeypatch.setenv("OMP_THREAD_LIMIT", "4")
    assert WhisperTranscriber(cpu_threads=2).cpu_threads == 2
    monkeypatch.delenv("OMP_THREAD_LIMIT")
    assert WhisperTranscriber(cpu_threads=3).cpu_threads == 3
